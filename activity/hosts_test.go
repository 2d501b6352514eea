package activity_test

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/internal/realaw"
)

// TestHostsMatchRealAW asks activity_summary of the recording of four
// devices (testdata/realaw/hosts: this machine "vm", "laptop-2" of
// week.py --second-host, a "work-laptop" active while vm is, and an
// Android "phone" without AFK watcher) for every recorded period, for
// this machine and each other host, grouped by app, title and category:
// totals and rankings equal what the real aw-server answered to the web
// UI's query for that host. For "all" they equal the hosts' answers less
// the parts the real server says earlier hosts cover (realaw.Union: the
// web UI's multi-device query itself counts some of that time twice,
// logged). The timeline's focus blocks hold the same active time.
func TestHostsMatchRealAW(t *testing.T) {
	rec, s := realService(t, "hosts")
	zero := 0
	union := recordedFor(rec, realaw.AllHosts)
	for _, p := range rec.Periods {
		groups := []string{realaw.ByApp, realaw.ByTitle, realaw.ByCategory}
		switch p.Host {
		case realaw.CoveredHosts:
			continue
		case realaw.AllHosts:
			webUI := p.Active
			p = union[p.Name]
			t.Logf("%s: the web UI's multi-device query counts %.3f s, %.3f s of it twice", p.Name, webUI, webUI-p.Active)
			groups = []string{realaw.ByApp, realaw.ByCategory} // the recordings cut titles
		}
		t.Run(p.Name+"/"+cmpHost(p.Host), func(t *testing.T) {
			for _, g := range groups {
				sum, err := s.Summary(t.Context(), activity.SummaryQuery{Start: p.Start.Format(time.RFC3339Nano),
					End: p.End.Format(time.RFC3339Nano), GroupBy: g, Limit: activity.MaxSummaryLimit, Host: p.Host})
				if err != nil {
					t.Fatal(err)
				}
				for _, msg := range realaw.CheckSummary(sum, p, g, realTolerance).Problems {
					t.Errorf("group_by %s: %s", g, msg)
				}
				if g == realaw.ByApp {
					t.Logf("active %.1f s (real %.3f), afk %.1f s (real %.3f), hosts %v", sum.ActiveS, p.Active, sum.AFKS, p.AFK, sum.Source.Hosts)
				}
			}
			focus, _, _ := realTimeline(t.Context(), t, s, p, &zero)
			if d := focus - p.Active; d > 2 || d < -2 {
				t.Errorf("the focus blocks hold %.3f s, the real aw-server's active time is %.3f s", focus, p.Active)
			}
		})
	}
}

func cmpHost(h string) string {
	if h == "" {
		return "default"
	}
	return h
}

// TestHostArgument: the answer names whose buckets it read and which
// hosts have data in the period, this machine first; an unknown host is
// an *UnknownHostError naming the hosts there are; a cursor of one host
// does not page another's timeline.
func TestHostArgument(t *testing.T) {
	rec, s := realService(t, "hosts")
	var day realaw.Answer
	for _, p := range rec.Periods {
		if p.Name == "day" {
			day = p
		}
	}
	q := func(host string) activity.SummaryQuery {
		return activity.SummaryQuery{Start: day.Start.Format(time.RFC3339), End: day.End.Format(time.RFC3339), Host: host}
	}
	for _, tc := range []struct {
		host, source string
		buckets      []string
	}{
		{"", "vm", []string{"aw-watcher-window_vm", "aw-watcher-afk_vm", "aw-watcher-web-chrome_vm"}},
		{"LAPTOP-2", "laptop-2", []string{"aw-watcher-window_laptop-2", "aw-watcher-afk_laptop-2"}},
		{"phone", "phone", []string{"aw-watcher-android-test"}},
		{"all", "all", []string{"aw-watcher-window_vm", "aw-watcher-afk_vm", "aw-watcher-web-chrome_vm",
			"aw-watcher-window_laptop-2", "aw-watcher-afk_laptop-2", "aw-watcher-window_work-laptop",
			"aw-watcher-afk_work-laptop", "aw-watcher-android-test"}},
	} {
		sum, err := s.Summary(t.Context(), q(tc.host))
		if err != nil {
			t.Fatalf("host %q: %v", tc.host, err)
		}
		var ids []string
		for _, b := range sum.Source.Buckets {
			ids = append(ids, b.ID)
		}
		if sum.Source.Host != tc.source || !slices.Equal(ids, tc.buckets) {
			t.Errorf("host %q: source %q reading %v, want %q reading %v", tc.host, sum.Source.Host, ids, tc.source, tc.buckets)
		}
		if want := []string{"vm", "laptop-2", "work-laptop", "phone"}; !slices.Equal(sum.Source.Hosts, want) {
			t.Errorf("host %q: hosts with data %v, want %v", tc.host, sum.Source.Hosts, want)
		}
	}
	evening := q("")
	evening.Start, evening.End = "2026-11-26T19:00:00+09:00", "2026-11-26T22:00:00+09:00"
	if sum, err := s.Summary(t.Context(), evening); err != nil || !slices.Equal(sum.Source.Hosts, []string{"vm", "laptop-2"}) {
		t.Errorf("evening: hosts with data %v (%v), want vm and laptop-2", sum.Source.Hosts, err)
	}

	_, err := s.Summary(t.Context(), q("desktop-9"))
	var he *activity.UnknownHostError
	if !errors.As(err, &he) || he.Host != "desktop-9" || !slices.Equal(he.Hosts, []string{"vm", "laptop-2", "work-laptop", "phone"}) {
		t.Fatalf("unknown host: %v, want an UnknownHostError naming the four hosts", err)
	}
	t.Log(err)

	tl, err := s.Timeline(t.Context(), activity.TimelineQuery{Start: day.Start.Format(time.RFC3339), End: day.End.Format(time.RFC3339),
		Limit: 5, Host: "all"})
	if err != nil || tl.NextCursor == "" {
		t.Fatalf("timeline: %v, cursor %q", err, tl.NextCursor)
	}
	if _, err := s.Timeline(t.Context(), activity.TimelineQuery{Cursor: tl.NextCursor, Host: "laptop-2"}); err == nil {
		t.Error("the cursor of host all paged laptop-2's timeline")
	}
	if _, err := s.Timeline(t.Context(), activity.TimelineQuery{Cursor: tl.NextCursor, Host: "all"}); err != nil {
		t.Errorf("the next page of host all: %v", err)
	}
}

// TestHostsShareKeptDays: the days one host's reading keeps serve every
// reading of that host's buckets (its own, "all", its name): after this
// machine's day and then "all", reading each host again reads nothing.
func TestHostsShareKeptDays(t *testing.T) {
	var (
		mu    sync.Mutex
		reads = map[string]int{}
	)
	rec, s := realService(t, "hosts", func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if bucket, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/api/0/buckets/"), "/events"); ok {
				mu.Lock()
				reads[bucket]++
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
	})
	day := rec.Periods[0]
	read := func(host string) map[string]int {
		mu.Lock()
		clear(reads)
		mu.Unlock()
		if _, err := s.Summary(t.Context(), activity.SummaryQuery{Start: day.Start.Format(time.RFC3339),
			End: day.End.Format(time.RFC3339), Host: host}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(reads)
	}
	if got := read(""); got["aw-watcher-window_vm"] == 0 || got["aw-watcher-window_laptop-2"] != 0 {
		t.Fatalf("this machine's day read %v", got)
	}
	if got := read("all"); got["aw-watcher-window_vm"] != 0 || got["aw-watcher-window_laptop-2"] == 0 || got["aw-watcher-android-test"] == 0 {
		t.Errorf("all after this machine read %v: want only the other hosts' buckets", got)
	}
	for _, host := range []string{"", "laptop-2", "phone", "all"} {
		if got := read(host); len(got) != 0 {
			t.Errorf("host %q read again: %v", host, got)
		}
	}
}
