package activity_test

// The activity tools checked against a real ActivityWatch server: the
// events a real aw-server held (testdata/realaw, recorded by
// scripts/realrecord) are loaded into the simulator, and the summary and
// the timeline of each recorded period must give what that server
// answered to its web UI's canonical desktop query. The recordings, not
// awbridge's transforms, are the oracle.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
	_ "time/tzdata" // the recordings' zones, on machines without a zone database

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/internal/realaw"
	"github.com/awbridge/awbridge/upstream"
)

// realTolerance is how far a total may be from the recorded one, in
// seconds, per entry. Both sides add the same millisecond timestamps, but
// awbridge rounds its durations to 0.1 s and the server sums floats;
// anything past a second is a different count of time, not rounding.
const realTolerance = 1.0

// realRecordings are the folders of testdata/realaw.
var realRecordings = []string{"week", "dst", "privacy", "catsets", "editor", "split", "localtime"}

// realService is an activity.Service reading the recording's events from
// a simulator, in the recording's zone, with awbridge's privacy defaults
// (the recorded desktops hold no password manager, private window or
// excluded app, so they change nothing), a day after the last period;
// wrap, when given, wraps the simulator.
func realService(t *testing.T, name string, wrap ...func(http.Handler) http.Handler) (*realaw.Recording, *activity.Service) {
	t.Helper()
	return realServiceAt(t, name, time.Time{}, wrap...)
}

// realServiceAt is realService with its clock at now (zero: a day after
// the last period).
func realServiceAt(t *testing.T, name string, now time.Time, wrap ...func(http.Handler) http.Handler) (*realaw.Recording, *activity.Service) {
	t.Helper()
	rec, err := realaw.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	if now.IsZero() {
		for _, p := range rec.Periods {
			if p.End.After(now) {
				now = p.End
			}
		}
		now = now.Add(24 * time.Hour)
	}
	return rec, realServiceOn(t, rec, func() time.Time { return now }, wrap...)
}

// realServiceOn is a Service reading rec from a simulator (wrapped by
// wrap), both on clock.
func realServiceOn(t *testing.T, rec *realaw.Recording, clock func() time.Time, wrap ...func(http.Handler) http.Handler) *activity.Service {
	t.Helper()
	loc, err := rec.Location()
	if err != nil {
		t.Fatal(err)
	}
	sim, err := rec.Simulator(t.Context(), awsim.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = sim
	for _, w := range wrap {
		h = w(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := aw.New(aw.Options{BaseURL: srv.URL, AttemptTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	src := upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Deadline: time.Minute, Now: clock})
	return activity.NewService(activity.ServiceOptions{
		AW: c, Source: src, Now: clock,
		Zone: func() activity.Zone { return activity.Zone{Name: rec.Timezone, Loc: loc} },
	})
}

// TestSummaryMatchesRealAW asks activity_summary for every recorded
// period (explicit start and end), grouped by app, title, domain and
// category at the largest limit: active time, AFK time, each entry of the
// top ranking and of the category and domain rankings beside it, and the
// time beyond the limit equal what the real aw-server answered, to within
// realTolerance. Tab time whose data aw-core cleared (a null domain in
// the recording) has no domain to compare and is left out on both sides.
func TestSummaryMatchesRealAW(t *testing.T) {
	for _, name := range realRecordings {
		t.Run(name, func(t *testing.T) {
			rec, s := realService(t, name)
			for _, p := range rec.Periods {
				for _, g := range []string{realaw.ByApp, realaw.ByTitle, realaw.ByDomain, realaw.ByCategory} {
					t.Run(p.Name+"/"+g, func(t *testing.T) {
						sum, err := s.Summary(t.Context(), activity.SummaryQuery{Start: p.Start.Format(time.RFC3339Nano),
							End: p.End.Format(time.RFC3339Nano), GroupBy: g, Limit: activity.MaxSummaryLimit})
						if err != nil {
							t.Fatal(err)
						}
						d := realaw.CheckSummary(sum, p, g, realTolerance)
						for _, msg := range d.Problems {
							t.Error(msg)
						}
						t.Logf("active %.1f s (real %.3f), %d entries, largest difference %.3f s", sum.ActiveS, p.Active, len(sum.Top), d.Max)
					})
				}
			}
		})
	}
}

// TestTimelineTotalsMatchRealAW pages through activity_timeline over every
// recorded period: the focus blocks (every block but the gaps) cover the
// active time the real aw-server answered, to within 2 s (the blocks'
// edges are rounded to the millisecond, the server's sum is of floats).
// It runs at min_block_s 0 (nothing folded) and at the default: folding
// moves time between blocks, never between activity and gaps.
func TestTimelineTotalsMatchRealAW(t *testing.T) {
	zero := 0
	for _, name := range realRecordings {
		t.Run(name, func(t *testing.T) {
			rec, s := realService(t, name)
			for _, p := range rec.Periods {
				for _, mb := range []struct {
					name string
					v    *int
				}{{"min_block_s=0", &zero}, {"default", nil}} {
					t.Run(p.Name+"/"+mb.name, func(t *testing.T) {
						focus, pages, blocks := realTimeline(t.Context(), t, s, p, mb.v)
						d := focus - p.Active
						if d > 2 || d < -2 {
							t.Errorf("the focus blocks hold %.3f s, the real aw-server's active time is %.3f s (off by %.3f s; %d blocks, %d pages)",
								focus, p.Active, d, blocks, pages)
						}
					})
				}
			}
		})
	}
}

// realTimeline sums the focus blocks of a period's timeline (of the
// answer's host), all pages.
func realTimeline(ctx context.Context, t *testing.T, s *activity.Service, p realaw.Answer, minBlock *int) (focus float64, pages, blocks int) {
	t.Helper()
	q := activity.TimelineQuery{Start: p.Start.Format(time.RFC3339Nano), End: p.End.Format(time.RFC3339Nano),
		MinBlockS: minBlock, Limit: activity.MaxTimelineLimit, Host: p.Host}
	for {
		tl, err := s.Timeline(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		blocks += len(tl.Blocks)
		focus += realaw.FocusSeconds(tl.Blocks)
		if tl.NextCursor == "" || pages > 1000 {
			return focus, pages, blocks
		}
		q = activity.TimelineQuery{Cursor: tl.NextCursor, MinBlockS: minBlock, Limit: activity.MaxTimelineLimit, Host: p.Host}
	}
}

// TestEditorMatchesRealAW asks activity_summary for every period of the
// editor recording (VS Code and a second editor, two projects sharing a
// folder name) grouped by project, language and file: the editor time,
// each entry (projects and files by their folder's name, or enough of
// their path to tell them apart) and the time beyond the limit equal
// what the real aw-server answered to its web UI's editor query.
func TestEditorMatchesRealAW(t *testing.T) {
	rec, s := realService(t, "editor")
	for _, p := range rec.Periods {
		for _, g := range []string{activity.GroupByProject, activity.GroupByLanguage, activity.GroupByFile} {
			t.Run(p.Name+"/"+g, func(t *testing.T) {
				sum, err := s.Summary(t.Context(), activity.SummaryQuery{Start: p.Start.Format(time.RFC3339Nano),
					End: p.End.Format(time.RFC3339Nano), GroupBy: g, Limit: activity.MaxSummaryLimit})
				if err != nil {
					t.Fatal(err)
				}
				d := realaw.CheckEditor(sum, p, g, realTolerance)
				for _, msg := range d.Problems {
					t.Error(msg)
				}
				t.Logf("editor %.1f s (real %.3f), %d entries, largest difference %.3f s", sum.EditorS, p.Editor.Duration, len(sum.Top), d.Max)
			})
		}
	}
}

// TestTimelineProjectRealAW: over the editor recording's day, every block
// of VS Code's app carries one of the projects the real aw-server
// recorded, and no other app's block does (the editors wrote beside other
// apps too: flooding, and the second editor).
func TestTimelineProjectRealAW(t *testing.T) {
	rec, s := realService(t, "editor")
	p := rec.Periods[0]
	names := p.Editor.ProjectNames()
	zero := 0
	for _, mb := range []*int{&zero, nil} {
		tl, err := s.Timeline(t.Context(), activity.TimelineQuery{Start: p.Start.Format(time.RFC3339Nano), End: p.End.Format(time.RFC3339Nano),
			MinBlockS: mb, Limit: activity.MaxTimelineLimit})
		if err != nil {
			t.Fatal(err)
		}
		code := 0
		for _, b := range tl.Blocks {
			switch {
			case b.App == "Code" && !names[b.Project]:
				t.Errorf("a Code block at %s shows project %q, not one recorded (%v)", b.Start, b.Project, names)
			case b.App != "Code" && b.Project != "":
				t.Errorf("a %s block at %s shows project %q", b.App, b.Start, b.Project)
			}
			if b.App == "Code" {
				code++
			}
		}
		if code == 0 || tl.NextCursor != "" {
			t.Errorf("%d Code blocks, next_cursor %q: want a day's blocks on one page", code, tl.NextCursor)
		}
	}
}
