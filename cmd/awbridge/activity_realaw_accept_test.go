package main

// The binary's activity tools against a real ActivityWatch server's
// recorded answers (testdata/realaw, recorded by scripts/realrecord): the
// events that server held are loaded into the simulator, and what the
// binary answers over stdio for each recorded period must be what the
// real server answered to its web UI's canonical desktop query. These
// recordings are the oracle; the other acceptance tests compare with the
// simulator's query engine.

import (
	"context"
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/internal/realaw"
)

// TestActivitySummaryMatchesRealAW runs the binary in each recording's
// time zone (AWBRIDGE_TIMEZONE, the engine's default privacy) and asks
// activity_summary for every recorded period by explicit start and end,
// grouped by app, title, domain and category at the largest limit: active
// and AFK time, every entry of the top ranking and of the category and
// domain rankings beside it, and other_s match the real aw-server to within 1 s
// per entry (awbridge rounds to 0.1 s; more is a different count of
// time). Then the focus blocks of activity_timeline (the default
// min_block_s: folding never moves active time into a gap) cover the
// recorded active time to within 2 s.
func TestActivitySummaryMatchesRealAW(t *testing.T) {
	for _, name := range []string{"week", "dst"} {
		t.Run(name, func(t *testing.T) {
			rec, err := realaw.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), faultCeiling)
			defer cancel()
			sim, err := rec.Simulator(ctx, awsim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(sim)
			t.Cleanup(srv.Close)
			b := actSession(t, actEnv(t, srv.URL, "AWBRIDGE_TIMEZONE="+rec.Timezone))
			for _, p := range rec.Periods {
				if time.Now().Before(p.End) { // only on the day of a recording
					t.Logf("%s: skipped: it ends in the future (%s), and the binary cuts a period at now", p.Name, p.End)
					continue
				}
				span := map[string]any{"start": p.Start.Format(time.RFC3339Nano), "end": p.End.Format(time.RFC3339Nano)}
				for _, g := range []string{realaw.ByApp, realaw.ByTitle, realaw.ByDomain, realaw.ByCategory} {
					t.Run(p.Name+"/"+g, func(t *testing.T) {
						defer actBind(b, t)()
						var s activity.Summary
						actResult(b, "activity_summary", map[string]any{"start": span["start"], "end": span["end"],
							"group_by": g, "limit": activity.MaxSummaryLimit}, &s)
						if s.Period.Timezone != rec.Timezone {
							t.Errorf("time zone %q, want %q", s.Period.Timezone, rec.Timezone)
						}
						for _, msg := range realaw.CheckSummary(&s, p, g, 1).Problems {
							t.Error(msg)
						}
					})
				}
				t.Run(p.Name+"/timeline", func(t *testing.T) {
					defer actBind(b, t)()
					blocks, _, _ := actTimelinePages(b, span, activity.MaxTimelineLimit)
					focus := realaw.FocusSeconds(blocks)
					if d := focus - p.Active; math.Abs(d) > 2 {
						t.Errorf("the focus blocks of %d hold %.3f s, the real aw-server's active time is %.3f s (off by %.3f s)", len(blocks), focus, p.Active, d)
					}
				})
			}
			b.close()
		})
	}
}
