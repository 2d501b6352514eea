package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/aw"
)

// TestActivityAcceptHarness checks the acceptance tests' own tools, so
// that they fail for what the binary does, not for a mistake of theirs:
// their calendar agrees with activity.Calendar on every period they check
// (the crafted daylight-saving zones included); their histories are rich
// enough for the canonical query (own classes leave time Uncategorized);
// the binary starts in a crafted zone; a session calls an existing tool
// and reads its envelope; and the privacy walk passes on the frame of the
// hostile desktop (frames already apply the rules the activity tools must).
func TestActivityAcceptHarness(t *testing.T) {
	now := time.Now()

	t.Run("calendar", func(t *testing.T) {
		zone, loc := actLocalHourZone(t, now, 22)
		x := ((22-now.UTC().Hour())%24 + 24) % 24
		if x > 13 {
			x -= 24
		}
		ty, tm, td := now.In(time.FixedZone("", x*3600)).Date()
		spring := actTZif(time.Date(ty, tm, td, 2, 0, 0, 0, time.FixedZone("", (x-1)*3600)), (x-1)*3600, x*3600, false)
		fall := actTZif(time.Date(ty, tm, td, 3, 0, 0, 0, time.FixedZone("", (x+1)*3600)), (x+1)*3600, x*3600, true)
		_, _, springLoc := actZoneDir(t, "Accept/spring", spring)
		_, _, fallLoc := actZoneDir(t, "Accept/fall", fall)
		for _, c := range []struct {
			zone     string
			loc      *time.Location
			settings aw.Settings
			cal      actCalendar
		}{
			{zone, loc, aw.Settings{}, actCalendar{loc, 4 * time.Hour, time.Monday}},
			{zone, loc, aw.Settings{StartOfDay: "09:45", StartOfWeek: "Sunday"}, actCalendar{loc, 9*time.Hour + 45*time.Minute, time.Sunday}},
			{"Accept/spring", springLoc, aw.Settings{}, actCalendar{springLoc, 4 * time.Hour, time.Monday}},
			{"Accept/fall", fallLoc, aw.Settings{}, actCalendar{fallLoc, 4 * time.Hour, time.Monday}},
		} {
			cal := activity.NewCalendar(activity.Zone{Name: c.zone, Loc: c.loc}, c.settings)
			for _, label := range []string{"today", "yesterday", "this_week", "last_7d", "last_2d", "last_3h"} {
				spec, err := activity.ParseSpec(label, "", "")
				if err != nil {
					t.Fatal(err)
				}
				at := time.Now()
				p, err := cal.Resolve(spec, at)
				if err != nil {
					t.Fatal(err)
				}
				checkPeriod(t, p, label, c.zone, c.cal, at, at)
			}
		}
		// The crafted days last what the tests expect.
		for _, c := range []struct {
			loc  *time.Location
			want float64
		}{{springLoc, 23 * 3600}, {fallLoc, 25 * 3600}} {
			s, e := actCalendar{c.loc, 4 * time.Hour, time.Monday}.expect("yesterday", now)
			if got := e.Sub(s).Seconds(); got != c.want {
				t.Errorf("%s: yesterday lasts %.0f s, want %.0f", c.loc, got, c.want)
			}
		}
	})

	t.Run("canonical query", func(t *testing.T) {
		_, loc := actLocalHourZone(t, now, 22)
		h := actDays(now, loc, 2, now.Add(-time.Minute), true)
		for _, c := range []struct {
			settings map[string]any
			classes  []actClass
		}{{nil, actDefaultClasses()}, {map[string]any{"classes": actClassesSetting(actCustomClasses)}, actCustomClasses}} {
			sim := newActSim(t, h, c.settings)
			y, m, d := now.In(loc).Date()
			start, end := time.Date(y, m, d-1, 4, 0, 0, 0, loc), now
			want := sim.canonical(t, c.classes, start, end)
			if want.Active < 3600 || len(want.Apps) < 5 || len(want.Domains) < 5 || len(want.Categories) < 2 {
				t.Fatalf("a thin history: %+v", want)
			}
			if c.settings != nil && want.Categories["Uncategorized"] == 0 {
				t.Errorf("the own classes leave nothing Uncategorized: %v", want.Categories)
			}
		}
	})

	t.Run("session", func(t *testing.T) {
		zoneinfo, _, _ := actZoneDir(t, "Accept/spring", actTZif(now.Add(-time.Hour), 3600, 7200, false))
		sim := newActSim(t, actHostileDesktop(now), nil)
		b := actSession(t, actEnv(t, sim.URL(), "ZONEINFO="+zoneinfo, "AWBRIDGE_TIMEZONE=Accept/spring",
			"AWBRIDGE_EXCLUDE_APPS="+actExcludedApp, "AWBRIDGE_TITLE_RULES="+actTitleRuleIn+" => "+actTitleRuleOut))
		var frame map[string]any
		env := actResult(b, "nowframe_build", nil, &frame)
		var v any
		if err := json.Unmarshal(env.raw, &v); err != nil {
			t.Fatal(err)
		}
		n := 0
		actWalk("", v, func(path, s string) {
			n++
			if i := strings.IndexFunc(s, actUnsafeRune); i >= 0 {
				t.Errorf("%s holds %U: %q", path, []rune(s[i:])[0], s)
			}
		})
		if n < 20 || !strings.Contains(string(env.raw), "evilapp") {
			t.Errorf("the frame of the hostile desktop's last window: %s", clipLine(string(env.raw), 800))
		}
		env, isErr := actCall(b, "nowframe_build", map[string]any{"reason": 5})
		checkRefusal(t, "nowframe_build with a number for reason", env, isErr, "reason")
		b.ping()
		b.close()
	})
}
