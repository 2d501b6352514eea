package activity

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// TestResultShapes pins the JSON names of the tools' results with one
// example of each (go test -update rewrites testdata/results.golden.json),
// so tools and docs can be written against them.
func TestResultShapes(t *testing.T) {
	c := calendar(t, "Europe/Berlin", "", "")
	now := at(t, "2026-11-22T15:04:05+01:00")
	p := resolve(t, c, "today", "", "", now)
	ts := func(s string) time.Time { return at(t, s).In(c.Zone.Loc) }
	tp := func(s string) *time.Time { v := ts(s); return &v }
	age := 4.2
	newest := ts("2026-11-22T15:04:00.8+01:00")
	source := Source{Host: "laptop", HostSource: "aw_hostname", Buckets: []BucketRead{
		{ID: "aw-watcher-window_laptop", Role: RoleWindow, Events: 1834, NewestEnd: &newest, AgeS: &age},
		{ID: "aw-watcher-afk_laptop", Role: RoleAFK, Events: 9, NewestEnd: &newest, AgeS: &age},
		{ID: "aw-watcher-web-firefox_laptop", Role: RoleWeb, Events: 0, Stale: true, Unreadable: true},
	}}
	fresh := Freshness{AsOf: now.In(c.Zone.Loc), StaleWatchers: []string{"aw-watcher-web-firefox_laptop"}}
	results := map[string]any{
		"summary": Summary{
			Period: p, GroupBy: GroupByApp, ActiveS: 25210.4, AFKS: 5400,
			Top: []Entry{
				{Key: "Code", DurationS: 12000.5, Share: 0.476},
				{Key: "Google-chrome", DurationS: 8000, Share: 0.317},
				{Key: "excluded", DurationS: 600, Share: 0.024, Excluded: true},
			},
			OtherS:        4609.9,
			TopDomains:    []Entry{{Key: "github.com", DurationS: 3000, Share: 0.119}},
			Categories:    []Entry{{Key: "Work > Programming", DurationS: 15000, Share: 0.595}, {Key: "Uncategorized", DurationS: 10210.4, Share: 0.405}},
			Switches:      412,
			LongestFocus:  &Focus{App: "Code", Title: "fetch.go — awbridge — Visual Studio Code", Start: ts("2026-11-22T09:12:00+01:00"), DurationS: 3120},
			FirstActivity: tp("2026-11-22T08:01:46.113+01:00"), LastActivity: tp("2026-11-22T15:04:00.8+01:00"),
			Source: source, Freshness: fresh,
			Notes: []string{"a browser bucket could not be read: its tabs are missing"},
		},
		"timeline": Timeline{
			Period: p,
			Blocks: []Block{
				{App: "Code", Title: "fetch.go — awbridge — Visual Studio Code", Start: ts("2026-11-22T09:00:00+01:00"), End: ts("2026-11-22T09:52:00+01:00"), DurationS: 3120, Folded: 3},
				{Gap: GapAFK, Start: ts("2026-11-22T09:52:00+01:00"), End: ts("2026-11-22T10:10:00+01:00"), DurationS: 1080},
				{App: "Google-chrome", Title: "Pull requests · awbridge/awbridge · GitHub", Domain: "github.com", Start: ts("2026-11-22T10:10:00+01:00"), End: ts("2026-11-22T10:25:00+01:00"), DurationS: 900},
				{App: "excluded", Excluded: true, Start: ts("2026-11-22T10:25:00+01:00"), End: ts("2026-11-22T10:27:00+01:00"), DurationS: 120},
				{Gap: GapNoData, Start: ts("2026-11-22T10:27:00+01:00"), End: ts("2026-11-22T11:00:00+01:00"), DurationS: 1980},
			},
			NextCursor: "b:2026-11-22T11:00:00+01:00",
			Source:     source, Freshness: fresh,
		},
		"history": History{
			Period: p, Count: 3,
			Switches: []Switch{
				{At: ts("2026-11-22T14:58:00+01:00"), What: []string{"app", "title"}, App: "Code", Title: "period.go — awbridge — Visual Studio Code", DurationS: 240},
				{At: ts("2026-11-22T15:02:00+01:00"), What: []string{"app", "title", "tab"}, App: "Google-chrome", Title: "time package - Go Packages - Google Chrome",
					Tab: &Tab{Domain: "pkg.go.dev", Title: "time package - Go Packages"}, DurationS: 60},
				{At: ts("2026-11-22T15:03:00+01:00"), What: []string{"afk"}, AFK: "afk", DurationS: 65},
			},
			Source: source, Freshness: fresh,
		},
	}
	got, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "results.golden.json"), append(got, '\n'))
}
