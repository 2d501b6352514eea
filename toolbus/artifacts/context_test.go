package artifacts

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func decodeFile(t testing.TB, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil || !json.Valid(b) {
		t.Fatalf("%s: not JSON (%v)", name, err)
	}
	return b
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clamp brings arbitrary limits (a fuzzer's) within what the renderer
// needs: zero takes the default, depth at most 64, lines at least 64
// bytes, a document room for the legend and four lines.
func clamp(l limits) limits {
	d := contextLimits
	pick := func(v, def int) int {
		if v <= 0 {
			return def
		}
		return v
	}
	l.maxDepth = min(pick(l.maxDepth, d.maxDepth), 64)
	l.maxItems, l.maxKeys = pick(l.maxItems, d.maxItems), pick(l.maxKeys, d.maxKeys)
	l.maxLineBytes = max(pick(l.maxLineBytes, d.maxLineBytes), 64)
	l.maxBytes = max(pick(l.maxBytes, d.maxBytes), len(contextLegend)+4*(l.maxLineBytes+1))
	return l
}

var legendLines = strings.Split(strings.TrimSuffix(contextLegend, "\n"), "\n")

// checkDoc asserts the shape every .context document has: the legend, the
// call's line, then A, N and R lines in that order, each one line of valid
// UTF-8 within the limits.
func checkDoc(t testing.TB, doc []byte, l limits) {
	t.Helper()
	if len(doc) > l.maxBytes {
		t.Errorf("document of %d bytes, limit %d", len(doc), l.maxBytes)
	}
	if !utf8.Valid(doc) {
		t.Errorf("document is not valid UTF-8")
	}
	if !bytes.HasPrefix(doc, []byte(contextLegend)) {
		t.Fatalf("document does not start with the legend:\n%s", doc)
	}
	if !bytes.HasSuffix(doc, []byte("\n")) {
		t.Errorf("document does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(string(doc), "\n"), "\n")
	for i, want := range legendLines {
		if lines[i] != want {
			t.Fatalf("legend line %d = %q, want %q", i, lines[i], want)
		}
	}
	body := lines[len(legendLines):]
	if len(body) == 0 || !strings.HasPrefix(body[0], "A: tool=") {
		t.Fatalf("no call line after the legend")
	}
	order := map[string]int{"A: ": 0, "N: ": 1, "R: ": 2}
	last := 0
	for _, line := range body {
		if len(line) < 3 {
			t.Fatalf("short line %q", line)
		}
		o, ok := order[line[:3]]
		if !ok {
			t.Fatalf("line %q does not start with A:, N: or R:", line)
		}
		if o < last {
			t.Errorf("line %q out of order", line)
		}
		last = o
		if len(line) > l.maxLineBytes {
			t.Errorf("line of %d bytes, limit %d: %q", len(line), l.maxLineBytes, line)
		}
		if strings.ContainsAny(line, "\r\u2028\u2029\u0085\u202e\u200b\x00") {
			t.Errorf("line %q holds a raw line break or invisible character", line)
		}
	}
}

func TestRenderContextGolden(t *testing.T) {
	tests := []struct {
		name string
		c    Context
		l    limits
	}{
		{"small", Context{
			Tool: "system_health", Status: "Ok", Trace: "0190b1c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d", Span: "call-1",
			Answer: decodeFile(t, "small.json"),
			Notes:  []string{"answered from the last status of each source (0.4 s old)"},
			Refs: []string{
				"artifact://runs/0190b1c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d/tool_calls/call-1/result.json",
				`system_health {"trace_id":"0190b1c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d"}`,
			},
		}, contextLimits},
		{"frame", Context{
			Tool: "nowframe_build", Status: "Ok", Trace: "run", Span: "frame.2",
			Answer: decodeFile(t, "frame.json"),
			Notes:  []string{"served from the warm frame 4172 (0.4 s old)", "redacted: omni_probe.session.user"},
			Refs:   []string{"artifact://runs/run/tool_calls/frame.2/result.json"},
		}, contextLimits},
		{"overlimit", Context{
			Tool: "test.tool", Status: "Retryable", Trace: "t", Span: "s",
			Answer: decodeFile(t, "overlimit.json"),
			Notes:  []string{"note one", "multi\nline note", "note three", "note four"},
			Refs:   []string{"artifact://runs/t/tool_calls/s/result.json", "artifact://runs/t/tool_calls/s/spill-0.txt", "ref three", "ref four"},
		}, limits{maxDepth: 3, maxItems: 3, maxKeys: 16, maxLineBytes: 100, maxBytes: 1500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(tt.c, tt.l)
			checkDoc(t, got, tt.l)
			golden := filepath.Join("testdata", tt.name+".context")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("RenderContext differs from %s (run with -update to accept):\n%s", golden, got)
			}
		})
	}
}

func TestRenderContextValues(t *testing.T) {
	tests := []struct {
		answer string
		want   string // the A lines after the call's line
	}{
		{``, "A: . = null\n"},
		{`null`, "A: . = null\n"},
		{`"plain"`, "A: . = plain\n"},
		{`12.5`, "A: . = 12.5\n"},
		{`true`, "A: . = true\n"},
		{`{}`, "A: . = {}\n"},
		{`[]`, "A: . = []\n"},
		{`["a",1]`, "A: [0] = a\nA: [1] = 1\n"},
		{`{"b":"2","a":{"x y":[null]}}`, "A: a[\"x y\"][0] = null\nA: b = \"2\"\n"},
		{`{"n":1e3,"s":"x"}`, "A: n = 1e3\nA: s = x\n"},
		{`{"n":`, "A: . = null\nN: part of the answer could not be encoded as JSON and is shown as null\n"},
	}
	for _, tt := range tests {
		doc := string(RenderContext(Context{Tool: "t", Status: "Ok", Trace: "t", Span: "s", Answer: json.RawMessage(tt.answer)}))
		body := strings.TrimPrefix(doc, contextLegend+"A: tool=t status=Ok trace=t span=s\n")
		if body != tt.want {
			t.Errorf("answer %s:\n%s\nwant\n%s", tt.answer, body, tt.want)
		}
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Google-chrome", "Google-chrome"},
		{"https://pkg.go.dev/encoding/json?q=a b", "https://pkg.go.dev/encoding/json?q=a b"},
		{"café — ok 😀", "café — ok 😀"},
		{"", `""`},
		{" padded", `" padded"`},
		{"padded ", `"padded "`},
		{"true", `"true"`},
		{"null", `"null"`},
		{"-1.5e3", `"-1.5e3"`},
		{"007", "007"}, // not a JSON number
		{`"q"`, `"\"q\""`},
		{"{x", `"{x"`},
		{"[x", `"[x"`},
		{"a\nb", `"a\nb"`},
		{"a\r\tb\x00\x7f", `"a\r\tb\u0000\u007f"`},
		{"a\u2028b\u0085c", `"a\u2028b\u0085c"`},
		{"abc\u202egnp.exe", `"abc\u202egnp.exe"`},
		{"zero\u200bwidth", `"zero\u200bwidth"`},
		{"nb\u00a0sp", `"nb\u00a0sp"`},
		{"tag\U000E0041", `"tag\udb40\udc41"`},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
		{`back\slash`, `back\slash`},
	}
	for _, tt := range tests {
		got := string(appendString(nil, tt.in, 1<<20))
		if got != tt.want {
			t.Errorf("appendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if strings.HasPrefix(got, `"`) {
			var back string
			if err := json.Unmarshal([]byte(got), &back); err != nil {
				t.Errorf("appendString(%q) = %s is not a JSON string: %v", tt.in, got, err)
			} else if utf8.ValidString(tt.in) && back != tt.in {
				t.Errorf("appendString(%q) decodes to %q", tt.in, back)
			}
		}
	}
}

func TestRenderContextLimits(t *testing.T) {
	// A value far over every limit, with the default limits.
	big := map[string]any{}
	for i := range 200 {
		row := make([]any, 200)
		for j := range row {
			row[j] = strings.Repeat("v", 40)
		}
		big[strings.Repeat("k", 3)+string(rune('a'+i%26))+strings.Repeat("x", i)] = row
	}
	big["huge"] = strings.Repeat("é", 1<<20)
	doc := RenderContext(Context{Tool: "t", Status: "Ok", Trace: "t", Span: "s", Answer: mustJSON(t, big),
		Refs: []string{"artifact://runs/t/tool_calls/s/result.json"}})
	checkDoc(t, doc, contextLimits)
	if len(doc) < contextLimits.maxBytes-2*contextLimits.maxLineBytes {
		t.Errorf("document of %d bytes: the budget was not used", len(doc))
	}
	for _, want := range []string{
		"N: the answer: 151 keys beyond the first 50 were left out\n",
		"N: the answer stopped at this document's limit of 65536 bytes",
		"R: artifact://runs/t/tool_calls/s/result.json\n",
	} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("document lacks %q", want)
		}
	}

	// The reference survives even when the answer fills everything.
	if !bytes.HasSuffix(doc, []byte("R: artifact://runs/t/tool_calls/s/result.json\n")) {
		t.Errorf("the reference is not the last line")
	}

	// One long line is cut at a rune boundary and noted.
	short := contextLimits
	short.maxLineBytes = 101
	doc = render(Context{Answer: mustJSON(t, map[string]any{"s": strings.Repeat("é", 2000)})}, short)
	checkDoc(t, doc, short)
	if !bytes.Contains(doc, []byte(cutMarker+"\n")) || !bytes.Contains(doc, []byte("N: 1 line longer than 101 bytes was cut, the first at s\n")) {
		t.Errorf("no cut line or note:\n%s", doc)
	}

	// Too many notes and references.
	many := make([]string, 60)
	for i := range many {
		many[i] = "item"
	}
	doc = RenderContext(Context{Notes: many, Refs: many})
	checkDoc(t, doc, contextLimits)
	for _, want := range []string{"N: 10 notes were left out\n", "N: 10 references were left out\n"} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("document lacks %q", want)
		}
	}
}

func FuzzRenderContext(f *testing.F) {
	for _, name := range []string{"small.json", "frame.json", "overlimit.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "note", "ref", uint8(0), uint8(0), uint8(0), uint16(0))
		f.Add(b, "a\nb", "", uint8(2), uint8(2), uint8(70), uint16(800))
	}
	f.Add([]byte(`"\u2028\u202e\x00"`), "\xff", "\"", uint8(1), uint8(1), uint8(1), uint16(1))
	f.Add([]byte(`[[[[[[[[[[[[1]]]]]]]]]]]]`), "", "", uint8(64), uint8(1), uint8(0), uint16(0))
	f.Add([]byte("not json"), "", "", uint8(0), uint8(0), uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, note, ref string, depth, items, line uint8, maxBytes uint16) {
		l := clamp(limits{maxDepth: int(depth), maxItems: int(items), maxKeys: int(items), maxLineBytes: int(line), maxBytes: int(maxBytes)})
		doc := render(Context{Tool: note, Status: ref, Trace: "t", Span: "s", Answer: data,
			Notes: []string{note, note}, Refs: []string{ref}}, l)
		checkDoc(t, doc, l)
	})
}

func BenchmarkRenderContext(b *testing.B) {
	frame := decodeFile(b, "frame.json")
	c := Context{Tool: "nowframe_build", Status: "Ok", Trace: "run", Span: "frame.2", Answer: frame,
		Refs: []string{"artifact://runs/run/tool_calls/frame.2/result.json"}}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(RenderContext(c))
	}
	b.SetBytes(int64(n))
}

func BenchmarkWriteCall(b *testing.B) {
	s := newStore(b, Options{Root: b.TempDir()})
	frame, err := os.ReadFile(filepath.Join("testdata", "frame.json"))
	if err != nil {
		b.Fatal(err)
	}
	doc := RenderContext(Context{Tool: "nowframe_build", Status: "Ok", Trace: "run", Span: "x", Answer: frame})
	b.ReportAllocs()
	b.SetBytes(int64(len(frame) + len(doc)))
	i := 0
	for b.Loop() {
		i++
		if _, _, err := s.WriteCall("run", "span-"+strconv.Itoa(i), doc, frame); err != nil {
			b.Fatal(err)
		}
	}
}
