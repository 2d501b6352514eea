package shape

import (
	"encoding/json"
	"fmt"
	"testing"
)

// frameJSON builds a ~9 KB document shaped like a warm frame: the current
// window, browser and AFK state plus a short history.
func frameJSON(tb testing.TB) []byte {
	tb.Helper()
	window := map[string]any{
		"available": true, "bucket": "aw-watcher-window_testhost", "app": "Google-chrome",
		"title": "lofi hip hop radio - YouTube - Google Chrome", "excluded": false,
		"since": "2026-11-22T01:00:21Z", "last_seen": "2026-11-22T01:05:21Z",
		"age_seconds": 0, "stale": false, "stale_after_seconds": 15, "future_clamped": false,
	}
	history := make([]any, 78)
	for i := range history {
		history[i] = map[string]any{
			"app": fmt.Sprintf("app-%d", i), "title": fmt.Sprintf("Document %d - Editor", i),
			"start": "2026-11-22T00:00:00Z", "duration_seconds": json.Number(fmt.Sprint(60 + i)),
		}
	}
	frame := map[string]any{
		"version": 1234,
		"now": map[string]any{
			"as_of":   "2026-11-22T01:05:21Z",
			"summary": "Away since 01:00:21Z; Google-chrome (browser tab shown, playing audio) in focus",
			"stale":   false,
			"window":  window,
			"browser": map[string]any{
				"focused": true, "browser": "chrome", "bucket": "aw-watcher-web-chrome_testhost",
				"url": "https://www.youtube.com/watch", "title": "lofi hip hop radio - YouTube",
				"audible": true, "tab_count": 8, "private": false, "incognito": false,
			},
			"afk": map[string]any{"status": "afk", "since": "2026-11-22T01:00:21Z", "stale": false},
		},
		"history": history,
		"sources": map[string]any{
			"aw":      map[string]any{"status": "ok", "url": "http://127.0.0.1:5600", "circuit": "closed"},
			"sidecar": map[string]any{"status": "disabled"},
		},
	}
	b, err := json.Marshal(frame)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestFrameIsAbout9KB(t *testing.T) {
	// The benchmark's name promises a ~9 KB frame; keep it honest.
	if n := len(frameJSON(t)); n < 8<<10 || n > 10<<10 {
		t.Errorf("frame is %d bytes, want about 9 KB", n)
	}
	s, _ := Parse(json.RawMessage(`{"path":"now.window","pick":["app","title"]}`))
	r, err := s.ApplyRaw(frameJSON(t))
	if err != nil || jsonOf(t, r.Value) != `{"app":"Google-chrome","title":"lofi hip hop radio - YouTube - Google Chrome"}` {
		t.Errorf("ApplyRaw on the frame = %s, %v", jsonOf(t, r.Value), err)
	}
}

func benchSpec(b *testing.B, spec string) *Spec {
	b.Helper()
	s, err := Parse(json.RawMessage(spec))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkApplyRawPickOnFrame shapes the frame's JSON bytes without
// decoding the whole frame.
func BenchmarkApplyRawPickOnFrame(b *testing.B) {
	raw := frameJSON(b)
	s := benchSpec(b, `{"path":"now.window","pick":["app","title"]}`)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ApplyRaw(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeFrame is what ApplyRaw saves: decoding the whole frame.
func BenchmarkDecodeFrame(b *testing.B) {
	raw := frameJSON(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyMapOnFrame(b *testing.B) {
	raw := frameJSON(b)
	s := benchSpec(b, `{"path":"history","map":{"pick":["app","duration_seconds"]}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ApplyRaw(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyIdentity(b *testing.B) {
	raw := frameJSON(b)
	var s *Spec
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ApplyRaw(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	raw := json.RawMessage(`{"path":"now.window","pick":["app","title"],"missing":"null"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
