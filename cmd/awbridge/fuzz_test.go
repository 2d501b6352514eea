package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
