package nowframe

import (
	"context"
	"slices"
	"testing"
	"time"
)

func frameWith(v uint64, at time.Time, app, title, url, afk string) *Frame {
	f := &Frame{Version: v, Timestamp: at}
	f.Now.Window.App, f.Now.Window.Title = app, title
	f.Now.Browser.URL, f.Now.AFK.Status = url, afk
	f.Now.Summary = "Active in " + app
	return f
}

func TestPollerRecordsSwitchesOnly(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now := t0
	p := NewPoller(nil, PollerOptions{History: 3, Now: func() time.Time { return now }})
	changed := p.Changed()
	p.Observe(frameWith(1, t0, "Code", "a.go", "", "not-afk"))
	p.Observe(frameWith(2, t0.Add(time.Second), "Code", "a.go", "", "not-afk")) // nothing changed
	select {
	case <-changed:
		t.Fatal("a frame without a switch woke subscribers")
	default:
	}
	p.Observe(frameWith(3, t0.Add(2*time.Second), "Google-chrome", "Docs", "https://x/", "not-afk"))
	select {
	case <-changed:
	default:
		t.Fatal("a switch did not wake subscribers")
	}
	p.Observe(frameWith(1, t0.Add(3*time.Second), "Slack", "", "", "afk")) // an older build finishing late
	p.Observe(frameWith(4, t0.Add(4*time.Second), "Google-chrome", "Docs", "https://x/", "afk"))
	ch := p.Changes(0, 0)
	if len(ch) != 2 || !slices.Equal(ch[0].What, []string{"app", "title", "url"}) || !slices.Equal(ch[1].What, []string{"afk"}) {
		t.Fatalf("changes %+v", ch)
	}
	// The ring keeps the newest History changes, oldest first.
	for i := range 5 {
		app := []string{"A", "B"}[i%2]
		p.Observe(frameWith(uint64(10+i), t0.Add(time.Duration(10+i)*time.Second), app, "", "", "afk"))
	}
	ch = p.Changes(0, 0)
	if len(ch) != 3 || ch[0].Version != 12 || ch[2].Version != 14 {
		t.Fatalf("ring %+v", ch)
	}
	now = t0.Add(14 * time.Second)
	if got := p.Changes(1500*time.Millisecond, 0); len(got) != 2 {
		t.Fatalf("last 1.5 s: %+v", got)
	}
	if got := p.Changes(0, 1); len(got) != 1 || got[0].Version != 14 {
		t.Fatalf("limit 1: %+v", got)
	}
}

func TestPollerRunStopsWithItsContext(t *testing.T) {
	b := NewBuilder(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error)
	go func() { done <- NewPoller(b, PollerOptions{}).Run(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run ignored its cancelled context")
	}
}
