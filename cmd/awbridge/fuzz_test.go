package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// FuzzSetID: the relay's id rewrite (the client's initialize replayed to
// an in-process engine) never panics, and on a valid request object it
// changes the id and nothing else: the line stays valid JSON with the
// same members, and the reply to it is the one the relay drops.
func FuzzSetID(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n",
		`{"jsonrpc":"2.0","id":"a\"b","method":"initialize"}`, `{ "id" : -1.5e3 , "method":"x"}`, `{"params":{"id":9},"id":null}`,
		`{"id":{"a":[1]},"method":"x"}`, `{"\u0069d":1,"id":2}`, `{"id":1,"id":2}`, `{"method":"x"}`, `[{"id":1}]`, `"id"`,
		`{"id":1`, `{"id"`, `{"a.b":1,"id":"x"}`, "{\"id\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		out, err := setID(line, replayID)
		if err != nil {
			if out != nil {
				t.Fatal("a line with an error")
			}
			return
		}
		if !json.Valid(bytes.TrimSpace(line)) || bytes.TrimSpace(line)[0] != '{' {
			return // the relay passes what it cannot read on untouched; only valid requests matter here
		}
		if !json.Valid(bytes.TrimSpace(out)) {
			t.Fatalf("setID(%q) = %q: not JSON", line, out)
		}
		if got := gjson.GetBytes(out, "id").Raw; got != replayID {
			t.Fatalf("setID(%q) = %q: id %s", line, out, got)
		}
		before, after := members(t, line), members(t, out)
		if len(before) != len(after) {
			t.Fatalf("setID(%q) = %q: %d members, then %d", line, out, len(before), len(after))
		}
		replaced := 0
		for i := range before {
			if before[i][0] != after[i][0] {
				t.Fatalf("setID(%q) = %q: member %d renamed", line, out, i)
			}
			if before[i][1] != after[i][1] {
				if before[i][0] != "id" || after[i][1] != replayID {
					t.Fatalf("setID(%q) = %q: member %q changed", line, out, before[i][0])
				}
				replaced++
			}
		}
		if replaced > 1 {
			t.Fatalf("setID(%q) = %q: %d ids replaced", line, out, replaced)
		}
	})
}

// members lists the top-level members of a valid object, in order.
func members(t *testing.T, b []byte) [][2]string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%q: not an object", b)
	}
	var out [][2]string
	for dec.More() {
		k, _ := dec.Token()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]string{k.(string), string(v)})
	}
	return out
}

// FuzzReadToken feeds arbitrary bytes as the http-token file: readToken
// never panics, refuses with a fixed text (never the file's contents),
// and what it accepts is the file's trimmed text, visible ASCII within
// the bounds.
func FuzzReadToken(f *testing.F) {
	for _, s := range []string{
		strings.Repeat("ab", 32) + "\n", "short\n", "  " + strings.Repeat("x", 16) + " \r\n", strings.Repeat("y", 257),
		strings.Repeat("z", 20) + " inner space", "\xff" + strings.Repeat("a", 20), "",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, httpTokenFile)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := readToken(path)
		if err != nil {
			if tok != "" {
				t.Fatal("a token with an error")
			}
			if want := "http token: " + path + " does not hold a token"; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q", err)
			}
			return
		}
		if tok != string(bytes.TrimSpace(data)) || len(tok) < minTokenLen || len(tok) > maxTokenLen {
			t.Fatalf("token %q from %q", tok, data)
		}
		for i := 0; i < len(tok); i++ {
			if tok[i] < 0x21 || tok[i] > 0x7e {
				t.Fatalf("token %q has byte %#x", tok, tok[i])
			}
		}
	})
}
