package redact

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestWriter(t *testing.T) {
	r := New(Options{MaxString: 100})
	var buf bytes.Buffer
	w := r.Writer(&buf)
	lines := []struct{ in, want string }{
		// A zerolog event: member order kept, sensitive key and inline
		// secret masked.
		{`{"level":"info","token":"abc","msg":"login password=hunter2","time":"2026-11-22T01:36:06Z"}` + "\n",
			`{"level":"info","token":"[REDACTED]","msg":"login password=[REDACTED]","time":"2026-11-22T01:36:06Z"}` + "\n"},
		// A flag under a sensitive key says whether a token is set, and
		// is kept; a number (a numeric password) is masked, as in results.
		{`{"level":"debug","token":true,"api_key":null,"password":123456,"msg":"auth"}` + "\n",
			`{"level":"debug","token":true,"api_key":null,"password":"[REDACTED]","msg":"auth"}` + "\n"},
		// Console output is text.
		{"01:36:06 INF upstream failed url=https://u:hunter2@aw:5600/ error=\"Bearer abcdef123456 rejected\"\n",
			"01:36:06 INF upstream failed url=https://u:[REDACTED]@aw:5600/ error=\"Bearer [REDACTED] rejected\"\n"},
		// Not JSON after all: text rules still apply.
		{"{not json token=abc\n", "{not json token=[REDACTED]\n"},
		{"plain line\n", "plain line\n"},
		// A key split by an invisible character in console text.
		{"01:36:06 WRN got s\u200bk-ant-api03-Xy7Qp2Lm9Rt4\u200eVw8Zb1Nc6Df3Gh5Jk0 back\n", "01:36:06 WRN got sk-…[REDACTED] back\n"},
		// A huge field is bounded, with no artifact.
		{`{"msg":"` + strings.Repeat("y", 200) + `"}` + "\n", `{"msg":{"truncated":true,"bytes":200,"sha256":"` + sha(strings.Repeat("y", 200)) + `","preview":"` + strings.Repeat("y", 50) + `","tail":"` + strings.Repeat("y", 25) + `","artifact":null}}` + "\n"},
	}
	for _, l := range lines {
		buf.Reset()
		n, err := w.Write([]byte(l.in))
		if err != nil || n != len(l.in) {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if buf.String() != l.want {
			t.Errorf("wrote %q\n want %q", buf.String(), l.want)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterError(t *testing.T) {
	w := New(Options{}).Writer(failWriter{})
	if n, err := w.Write([]byte("x\n")); err == nil || n != 0 {
		t.Errorf("Write = %d, %v", n, err)
	}
}
