package activity

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestPrivacyFiltersReread: the person's privacy filters are read with
// the other settings, so a rule written while awbridge runs applies to
// the next call (the days kept are computed again): a drop rule takes the
// matching window's time out, a redact rule keeps its time under the
// replacement, and without rules the title shows again.
func TestPrivacyFiltersReread(t *testing.T) {
	at := time.Date(2026, 3, 24, 9, 0, 0, 0, time.UTC)
	env, clk := reviewDesktop(t, at.Add(25*time.Hour))
	insert(t, env, "aw-watcher-afk_testhost", ev1(at, 3600, `{"status":"not-afk"}`))
	insert(t, env, "aw-watcher-window_testhost",
		ev1(at, 2400, `{"app":"Code","title":"main.go - billing-api"}`),
		ev1(at.Add(40*time.Minute), 1200, `{"app":"Firefox","title":"My Bank - Online Banking"}`))
	s := reviewService(env, clk, ServiceOptions{MetaTTL: -1})
	for _, tc := range []struct {
		name, setting string
		active        float64
		titles        []string
	}{
		{"no rules", `[]`, 3600, []string{"My Bank - Online Banking", "main.go - billing-api"}},
		{"drop", `[{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"(?i)banking","action":"drop"}]`,
			2400, []string{"main.go - billing-api"}},
		{"redact", `[{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"(?i)banking","action":"redact","replacement":"REDACTED"}]`,
			3600, []string{"REDACTED", "main.go - billing-api"}},
		{"another bucket", `[{"enabled":true,"bucket_prefix":"aw-watcher-web","field":"title","pattern":"(?i)banking","action":"drop"}]`,
			3600, []string{"My Bank - Online Banking", "main.go - billing-api"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			postSetting(t, env, "privacy_filters", tc.setting)
			sum, err := s.Summary(context.Background(), SummaryQuery{Period: "yesterday", GroupBy: GroupByTitle, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var titles []string
			for _, e := range sum.Top {
				titles = append(titles, e.Key)
			}
			slices.Sort(titles)
			if sum.ActiveS != tc.active || !slices.Equal(titles, tc.titles) {
				t.Errorf("active %.0f s, titles %q; want %.0f s, %q", sum.ActiveS, titles, tc.active, tc.titles)
			}
		})
	}
}
