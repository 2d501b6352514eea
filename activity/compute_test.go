package activity

import (
	"context"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw/transform"
)

// TestUnitsWithMargins: a gap of 3 s that flooding fills lies across the
// boundary of two units; computed with the time around them and cut, the
// units add up to the whole, where computed alone they lose the gap.
func TestUnitsWithMargins(t *testing.T) {
	s := transform.Second
	e := func(start, end int64, app string) ev {
		return ev{ID: start + 1, Start: start * s, Duration: (end - start) * s, Data: transform.Fields{}.With("app", app).With("title", app)}
	}
	in := transform.Input{
		Window: []ev{e(0, 100, "A"), e(103, 200, "B")},
		AFK:    []ev{{ID: 1, Start: 0, Duration: 200 * s, Data: transform.Fields{}.With("status", "not-afk")}},
	}
	pr := &privacyRules{}
	whole := mustCompute(t, in, span64{0, 200 * s}, pr).agg.apps
	if whole[gkey{a: "A"}] != 103*s || whole[gkey{a: "B"}] != 97*s {
		t.Fatalf("whole: %v", whole)
	}
	cut := func(lo, hi int64) transform.Input {
		var c transform.Input
		for _, x := range in.Window {
			if y, ok := clip64(x, lo, hi); ok {
				c.Window = append(c.Window, y)
			}
		}
		for _, x := range in.AFK {
			if y, ok := clip64(x, lo, hi); ok {
				c.AFK = append(c.AFK, y)
			}
		}
		return c
	}
	sum := func(a, b map[gkey]int64) map[gkey]int64 {
		out := map[gkey]int64{}
		for k, v := range a {
			out[k] += v
		}
		for k, v := range b {
			out[k] += v
		}
		return out
	}
	b := 101 * s
	withMargins := sum(mustCompute(t, cut(0, b+margin), span64{0, b}, pr).agg.apps,
		mustCompute(t, cut(b-margin, 200*s), span64{b, 200 * s}, pr).agg.apps)
	if withMargins[gkey{a: "A"}] != whole[gkey{a: "A"}] || withMargins[gkey{a: "B"}] != whole[gkey{a: "B"}] {
		t.Errorf("units with margins: %v, the whole: %v", withMargins, whole)
	}
	alone := sum(mustCompute(t, cut(0, b), span64{0, b}, pr).agg.apps,
		mustCompute(t, cut(b, 200*s), span64{b, 200 * s}, pr).agg.apps)
	if alone[gkey{a: "A"}] == whole[gkey{a: "A"}] {
		t.Errorf("units alone match the whole too: the test no longer shows what margins are for")
	}
}

// TestPlan: closed days are one unit each, the open day one per hour;
// each unit is computed with up to 15 minutes around it, within the
// period only.
func TestPlan(t *testing.T) {
	c := calendar(t, "Europe/Berlin", "", "")
	now := at(t, "2026-11-25T10:30:00+01:00")
	s := NewService(ServiceOptions{})
	p := resolve(t, c, "", "2026-11-23T20:00:00+01:00", "2026-11-25T10:30:00+01:00", now)
	days, units := s.plan(p, now)
	if len(days) != 3 {
		t.Fatalf("%d days", len(days))
	}
	type u struct {
		start, end    string
		whole         bool
		before, after bool
	}
	var gotU []u
	for _, x := range units {
		f := func(v int64) string { return time.UnixMicro(v).In(c.Zone.Loc).Format("02T15:04") }
		gotU = append(gotU, u{f(x.span.start), f(x.span.end), x.whole, x.before, x.after})
		wantMargin := span64{x.span.start, x.span.end}
		if x.before {
			wantMargin.start -= margin
		}
		if x.after {
			wantMargin.end = min(wantMargin.end+margin, us(p.End))
		}
		if x.margin != wantMargin {
			t.Errorf("unit %v: margin %v, want %v", gotU[len(gotU)-1], x.margin, wantMargin)
		}
	}
	want := []u{
		{"23T20:00", "24T04:00", false, false, true}, // a closed day's part: one unit, not kept
		{"24T04:00", "25T04:00", true, true, true},   // a closed day
		{"25T04:00", "25T05:00", true, true, true},   // the open day by hours
	}
	for i, w := range want {
		if gotU[i] != w {
			t.Errorf("unit %d: %+v, want %+v", i, gotU[i], w)
		}
	}
	last := gotU[len(gotU)-1]
	if len(gotU) != 2+7 || last != (u{"25T10:00", "25T10:30", false, true, false}) {
		t.Errorf("units: %+v", gotU)
	}
}

// mustCompute is computeUnit with the default options and no deadline.
func mustCompute(t *testing.T, in transform.Input, span span64, pr *privacyRules) *unitResult {
	t.Helper()
	u, err := computeUnit(context.Background(), []transform.Input{in}, span, transform.Options{}, pr)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
