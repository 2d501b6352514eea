package activity_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/internal/realaw"
)

// TestDomainNoteOnRealAW: on the real aw-server's recorded day, domain
// time adds up to more than the browser's active time (the web UI's query
// keeps a focused tab's time while the person is away), as awbridge
// counts it too; so a summary that shows domains says so in a note, and
// one that shows none does not.
func TestDomainNoteOnRealAW(t *testing.T) {
	rec, s := realService(t, "week")
	p := rec.Periods[slices.IndexFunc(rec.Periods, func(p realaw.Answer) bool { return p.Name == "day" })]
	q := activity.SummaryQuery{Start: p.Start.Format(time.RFC3339), End: p.End.Format(time.RFC3339), Limit: activity.MaxSummaryLimit}
	byApp, err := s.Summary(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	q.GroupBy = activity.GroupByDomain
	byDomain, err := s.Summary(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	chrome, domains := 0.0, 0.0
	for _, e := range byApp.Top {
		if e.Key == "Google-chrome" {
			chrome = e.DurationS
		}
	}
	for _, e := range byDomain.Top {
		domains += e.DurationS
	}
	t.Logf("domains %.1f s, Chrome active %.1f s (the real aw-server: 14141.3 and 12134.8)", domains, chrome)
	if domains <= chrome {
		t.Errorf("domains %.1f s, not over Chrome's active %.1f s: the recording no longer shows what the note explains", domains, chrome)
	}
	for _, sum := range []*activity.Summary{byApp, byDomain} {
		if !slices.ContainsFunc(sum.Notes, func(n string) bool { return strings.Contains(n, "even while away") }) {
			t.Errorf("group_by %s: no note on domain time: %q", sum.GroupBy, sum.Notes)
		}
	}
	q.Start, q.End = "2026-11-21T01:00", "2026-11-21T01:30" // a night: no domain
	q.GroupBy = activity.GroupByApp
	night, err := s.Summary(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(night.TopDomains) != 0 || slices.ContainsFunc(night.Notes, func(n string) bool { return strings.Contains(n, "even while away") }) {
		t.Errorf("a night without domains (%d shown) notes them: %q", len(night.TopDomains), night.Notes)
	}
}
