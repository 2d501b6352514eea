package activity_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/internal/realaw"
)

// TestSearchMatchesRealAW asks activity_search, over the week's recorded
// periods, for what the real aw-server answered to its web UI's canonical
// events filtered by title (testdata/realaw/week/search.json): the time
// matched equals the server's, to within realTolerance; where the server's
// events are few, the matches are its events joined where they touch in
// one app,
// newest first, each to the millisecond and in its app. The recorded words sit in titles
// only (no app, domain or editor holds them), so the server's title filter
// counts what the search counts.
func TestSearchMatchesRealAW(t *testing.T) {
	_, s := realService(t, "week")
	srch, err := realaw.LoadSearches("week")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range srch.Answers {
		t.Run(a.Period+"/"+a.Words, func(t *testing.T) {
			r, err := s.Search(t.Context(), activity.SearchQuery{Query: a.Words, Start: a.Start.Format(time.RFC3339Nano),
				End: a.End.Format(time.RFC3339Nano), Limit: activity.MaxSearchLimit})
			if err != nil {
				t.Fatal(err)
			}
			if d := r.TotalS - a.Duration; math.Abs(d) > realTolerance {
				t.Errorf("total_s %.1f, the real aw-server %.3f s (off by %.3f s)", r.TotalS, a.Duration, d)
			}
			t.Logf("total %.1f s (real %.3f s), %d matches of %d events", r.TotalS, a.Duration, r.Count, a.Events)
			if a.Spans == nil && a.Events > 0 {
				return
			}
			var runs []realaw.Span // the server's events, joined where they touch in one app
			for _, sp := range a.Spans {
				if n := len(runs); n > 0 && sp.App == runs[n-1].App && sp.Start.Sub(runs[n-1].End) <= time.Millisecond {
					runs[n-1].End = sp.End
					continue
				}
				runs = append(runs, sp)
			}
			if r.Count != len(runs) {
				t.Errorf("%d matches, the real aw-server's events make %d stretches", r.Count, len(runs))
				return
			}
			for i, m := range r.Matches {
				w := runs[len(runs)-1-i]
				if m.Start.Sub(w.Start).Abs() > time.Millisecond || m.End.Sub(w.End).Abs() > time.Millisecond || m.App != w.App {
					t.Errorf("match %d: %s %s .. %s, the real aw-server's %s %s .. %s", i, m.App, m.Start, m.End, w.App, w.Start, w.End)
				}
			}
		})
	}
}

// TestSearchHostsRealAW: over the four devices' week, a search reads the
// host asked for: a title only laptop-2 shows matches nothing on this
// machine, all of its recorded time on laptop-2 (the real aw-server's
// total of that title), some with all devices; an unknown host is an
// *UnknownHostError.
func TestSearchHostsRealAW(t *testing.T) {
	rec, s := realService(t, "hosts")
	const title = "The Go Blog — Mozilla Firefox"
	for _, p := range rec.Periods {
		if p.Name != "week" || p.Host != "laptop-2" {
			continue
		}
		want := -1.0
		for _, e := range p.Titles {
			if e.Title == title {
				want = e.Duration
			}
		}
		for _, c := range []struct {
			host string
			ok   func(total float64) bool
		}{
			{"", func(total float64) bool { return total == 0 }},
			{"laptop-2", func(total float64) bool { return math.Abs(total-want) <= realTolerance }},
			{activity.HostAll, func(total float64) bool { return total > 0 && total <= want+realTolerance }},
		} {
			r, err := s.Search(t.Context(), activity.SearchQuery{Query: "go blog", Start: p.Start.Format(time.RFC3339Nano),
				End: p.End.Format(time.RFC3339Nano), Host: c.host})
			if err != nil {
				t.Fatal(err)
			}
			if !c.ok(r.TotalS) {
				t.Errorf("host %q: total_s %.1f; laptop-2's recorded time of %q is %.3f s", c.host, r.TotalS, title, want)
			}
		}
		_, err := s.Search(t.Context(), activity.SearchQuery{Query: "go blog", Host: "nowhere"})
		if he := new(activity.UnknownHostError); !errors.As(err, &he) {
			t.Errorf("host nowhere: %v, want an UnknownHostError", err)
		}
		return
	}
	t.Fatal("the hosts recording has no week answer for laptop-2")
}
