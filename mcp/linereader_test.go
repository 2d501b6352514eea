package mcp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll drains lr into a transcript: "L:<line>" or "TOO:<prefix>".
func readAll(t testing.TB, lr *lineReader) ([]string, error) {
	t.Helper()
	var got []string
	for i := 0; ; i++ {
		if i > 1<<20 {
			t.Fatal("line reader does not end")
		}
		line, tooLong, err := lr.next()
		if err != nil {
			return got, err
		}
		if tooLong {
			got = append(got, "TOO:"+string(line))
			continue
		}
		if len(line) > lr.max {
			t.Fatalf("line of %d bytes over the limit %d", len(line), lr.max)
		}
		got = append(got, "L:"+string(line))
	}
}

func TestLineReader(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		max   int
		want  []string
		wantE error
	}{
		{"simple", "a\nb\n", 10, []string{"L:a", "L:b"}, io.EOF},
		{"crlf", "a\r\nb\r\n", 10, []string{"L:a", "L:b"}, io.EOF},
		{"only one CR is a terminator", "a\r\r\n", 10, []string{"L:a\r"}, io.EOF},
		{"final line without newline", "a\nlast", 10, []string{"L:a", "L:last"}, io.EOF},
		{"final line with CR only", "a\nlast\r", 10, []string{"L:a", "L:last"}, io.EOF},
		{"blank lines ignored", "\n\r\n  \t \n\nx\n \r\n", 10, []string{"L:x"}, io.EOF},
		{"empty input", "", 10, nil, io.EOF},
		{"exactly max", "12345\n", 5, []string{"L:12345"}, io.EOF},
		{"exactly max with CRLF", "12345\r\n", 5, []string{"L:12345"}, io.EOF},
		{"max plus one", "123456\nok\n", 5, []string{"TOO:123456", "L:ok"}, io.EOF},
		{"long line skipped to its newline", "1234567890abc\nok\n", 5, []string{"TOO:1234567", "L:ok"}, io.EOF},
		{"long final line", "ok\n1234567890", 5, []string{"L:ok", "TOO:1234567"}, io.EOF},
		{"long blank line is still too long", "          \nok\n", 5, []string{"TOO:       ", "L:ok"}, io.EOF},
		{"two long lines", "aaaaaaaaaa\nbbbbbbbbbbb\nc\n", 3, []string{"TOO:aaaaa", "TOO:bbbbb", "L:c"}, io.EOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "onebyte"} {
				var r io.Reader = strings.NewReader(tc.in)
				if mode == "onebyte" {
					r = iotest.OneByteReader(r)
				}
				got, err := readAll(t, newLineReader(r, tc.max))
				if !errors.Is(err, tc.wantE) {
					t.Errorf("%s: err = %v, want %v", mode, err, tc.wantE)
				}
				// The prefix of a too-long line depends on chunking;
				// compare it as "some prefix of the line".
				if len(got) != len(tc.want) {
					t.Fatalf("%s: got %q, want %q", mode, got, tc.want)
				}
				for i := range got {
					g, w := got[i], tc.want[i]
					if strings.HasPrefix(w, "TOO:") {
						line := strings.SplitN(tc.in[strings.Index(tc.in, w[4:]):], "\n", 2)[0]
						if !strings.HasPrefix(g, "TOO:") || !strings.HasPrefix(line, g[4:]) {
							t.Errorf("%s: #%d = %q, want a too-long report of a prefix of %q", mode, i, g, line)
						}
						continue
					}
					if g != w {
						t.Errorf("%s: #%d = %q, want %q", mode, i, g, w)
					}
				}
			}
		})
	}
}

func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("a\npartial"), iotest.ErrReader(boom))
	got, err := readAll(t, newLineReader(r, 100))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if want := []string{"L:a", "L:partial"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLineReaderNoProgress(t *testing.T) {
	_, _, err := newLineReader(zeroReader{}, 100).next()
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// genReader produces head, then n filler bytes, then tail, without ever
// holding the filler: the test itself stays small.
type genReader struct {
	head, tail []byte
	n          int64
	fill       byte
}

func (g *genReader) Read(p []byte) (int, error) {
	switch {
	case len(g.head) > 0:
		n := copy(p, g.head)
		g.head = g.head[n:]
		return n, nil
	case g.n > 0:
		k := len(p)
		if int64(k) > g.n {
			k = int(g.n)
		}
		for i := range p[:k] {
			p[i] = g.fill
		}
		g.n -= int64(k)
		return k, nil
	case len(g.tail) > 0:
		n := copy(p, g.tail)
		g.tail = g.tail[n:]
		return n, nil
	}
	return 0, io.EOF
}

// A line far over the limit is reported once and skipped while the reader
// holds no more than the limit (plus the id prefix), never the line.
func TestLineReaderBoundedMemory(t *testing.T) {
	const limit = 64 << 10
	g := &genReader{
		head: []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"x":"`),
		n:    32 << 20, // 32 MiB, 512 times the limit
		fill: 'A',
		tail: []byte("\"}}\n{\"jsonrpc\":\"2.0\",\"id\":43,\"method\":\"ping\"}\n"),
	}
	lr := newLineReader(g, limit)
	line, tooLong, err := lr.next()
	if err != nil || !tooLong {
		t.Fatalf("first = tooLong %v, err %v; want a too-long line", tooLong, err)
	}
	if id := idFromPrefix(line); string(id) != "42" {
		t.Errorf("id from the prefix = %q, want 42", id)
	}
	line, tooLong, err = lr.next()
	if err != nil || tooLong || !strings.Contains(string(line), `"id":43`) {
		t.Fatalf("second = %q tooLong %v err %v; want the ping", line, tooLong, err)
	}
	if _, _, err := lr.next(); err != io.EOF {
		t.Fatalf("third err = %v, want EOF", err)
	}
	if got, max := cap(lr.buf)+cap(lr.prefix), limit+2+idPrefixBytes; got > max {
		t.Fatalf("reader holds %d bytes after a 32 MiB line, want at most %d", got, max)
	}
}

// FuzzLineReader checks the reader against a simple model (split on '\n',
// drop one trailing '\r', too long before blank, blank lines dropped) for
// arbitrary input, limits and read chunkings.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nb\r\n\n  \nlast"), uint16(3), uint8(0))
	f.Add([]byte("1234567890\nab\r\r\n"), uint16(4), uint8(2))
	f.Add([]byte("\r\n\r\n\r"), uint16(1), uint8(1))
	f.Add(bytes.Repeat([]byte("x"), 5000), uint16(100), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, max16 uint16, chunk uint8) {
		max := int(max16%512) + 1
		lr := newLineReader(&chunkReader{data: data, chunk: int(chunk%16) + 1}, max)
		got, err := readAll(t, lr)
		if err != io.EOF {
			t.Fatalf("err = %v, want EOF", err)
		}
		var want []string
		segs := bytes.Split(data, []byte("\n"))
		for _, raw := range segs {
			s := bytes.TrimSuffix(raw, []byte("\r"))
			switch {
			case len(s) > max:
				want = append(want, "TOO:"+string(raw)) // the prefix may hold the '\r'

			case len(bytes.TrimLeft(s, " \t\r")) == 0:
			default:
				want = append(want, "L:"+string(s))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("got %d lines %q, want %d %q", len(got), got, len(want), want)
		}
		for i := range got {
			if strings.HasPrefix(want[i], "TOO:") {
				if !strings.HasPrefix(got[i], "TOO:") || !strings.HasPrefix(want[i][4:], got[i][4:]) || len(got[i])-4 > idPrefixBytes {
					t.Fatalf("#%d = %q, want a bounded prefix of %q", i, got[i], want[i])
				}
				continue
			}
			if got[i] != want[i] {
				t.Fatalf("#%d = %q, want %q", i, got[i], want[i])
			}
		}
		if cap(lr.buf)+cap(lr.prefix) > max+2+idPrefixBytes {
			t.Fatalf("buffer grew to %d for limit %d", cap(lr.buf)+cap(lr.prefix), max)
		}
	})
}

type chunkReader struct {
	data  []byte
	chunk int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.chunk, len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}
