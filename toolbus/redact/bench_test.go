package redact

import (
	"os"
	"strings"
	"testing"
)

func loadClean(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/clean.json")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkJSONClean is the common case: a ~9 KB envelope (a frame built
// from the recorded aw-server fixtures) with nothing to redact.
func BenchmarkJSONClean(b *testing.B) {
	r := New(Options{})
	raw := loadClean(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		out, _, err := r.JSON("result", raw, nil)
		if err != nil || len(out) != len(raw) {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSONDirty: the same document with a sensitive key, a planted
// key in a title and a 64 KiB string to bound.
func BenchmarkJSONDirty(b *testing.B) {
	r := New(Options{})
	raw := string(loadClean(b))
	raw = strings.Replace(raw, `"reason":"mcp"`, `"reason":"mcp","api_key":"abc123","note":"`+strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit; ", 1200)+`"`, 1)
	raw = strings.Replace(raw, `"title":"rest.go - aw-bridge`, `"title":"token=ghp_0123456789abcdefghijABCDEFGHIJ012345 rest.go - aw-bridge`, 1)
	in := []byte(raw)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		_, rep, err := r.JSON("result", in, func(string, string) string { return "artifact://x" })
		if err != nil || rep.RedactedTotal != 2 || rep.BoundedTotal != 1 {
			b.Fatal(err, rep)
		}
	}
}

// BenchmarkStringClean: a log line with nothing to mask.
func BenchmarkStringClean(b *testing.B) {
	r := New(Options{})
	s := `2026-11-22T01:36:06Z INF upstream aw ok latency_ms=3 url=http://127.0.0.1:5600/api/0/buckets/ title="rest.go - aw-bridge - Visual Studio Code" app=Code attempts=1 breaker=closed`
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		if _, changed := r.Text(s); changed {
			b.Fatal("changed")
		}
	}
}
