package jsonw

import (
	"encoding/json"
	"os"
	"testing"
)

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\"back\\slash", "\x00\x1f\u2028<script>&", "\xff\xfe", "日本語 — ok", "\u202Egnp.exe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s is not JSON: %v", s, got, err)
		}
		want, _ := Marshal(s)
		if string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, Marshal says %s", s, got, want)
		}
	})
}

func BenchmarkAppendStringFrame(b *testing.B) {
	raw, err := os.ReadFile("../../engine/testdata/frame_recorded.golden.json")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 3*len(raw))
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		buf = AppendString(buf[:0], raw)
	}
}
