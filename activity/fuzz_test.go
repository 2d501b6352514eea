package activity

import (
	"errors"
	"testing"
	"time"
)

// FuzzParseSpec feeds arbitrary arguments to the period parser: it never
// panics, fails only with a short *SpecError, and a named period reads
// back from its label.
func FuzzParseSpec(f *testing.F) {
	for _, s := range [][3]string{
		{"today", "", ""}, {"last_8760h", "", ""}, {"last_366d", "", ""}, {"last_0d", "", ""}, {"last_1e3h", "", ""},
		{"last_١h", "", ""}, {"", "2026-11-22T09:00:00+01:00", "2026-11-22T10:00:00+01:00"},
		{"", "2026-11-22T09:00:00.123456789-23:59", "9999-12-31T23:59:59Z"}, {"", "1970-01-01T00:00:00Z", "1971-01-02T00:00:00Z"},
		{"", "2026-11-22T09:00", "2026-11-22 10:00:00.5"}, {"yesterday 14:00-16:00", "", ""}, {"2026-11-25 from 9:05 to 1:30", "", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, period, start, end string) {
		spec, err := ParseSpec(period, start, end)
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("%T is not a *SpecError", err)
			}
			if len(err.Error()) > 240 {
				t.Errorf("error text is %d bytes: it must not echo the input", len(err.Error()))
			}
			return
		}
		if spec.label == LabelCustom {
			if spec.startWall == nil && spec.endWall == nil && (!spec.start.Before(spec.end) || spec.end.Sub(spec.start) > MaxRange) {
				t.Errorf("range %v..%v accepted", spec.start, spec.end)
			}
			return
		}
		back, err := ParseSpec(spec.String(), "", "")
		if err == nil && spec.day != nil && back.day != nil && *back.day == *spec.day {
			back.day = spec.day // the same day and times
		}
		spec.label = spec.String() // "" is today
		if err != nil || back != spec {
			t.Errorf("%q reads back as %v, %v", spec.String(), back, err)
		}
	})
}

// fuzzZones are zones with daylight-saving rules of every kind: none,
// northern and southern, a 30-minute shift, a change at midnight, a zone
// that skipped a whole day.
var fuzzZones = []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago",
	"America/Havana", "Asia/Kolkata", "Pacific/Apia", "America/St_Johns"}

// FuzzResolve checks, for any instant, zone, day start, week start and
// named period: the period ends at or before now, starts no later than it
// ends, and its days tile it exactly, each inner boundary a local day
// start and no day longer than 26 hours; yesterday and last_week are whole
// days and weeks ending at today's and this week's start.
func FuzzResolve(f *testing.F) {
	f.Add(int64(1774746000), uint8(1), uint16(240), uint8(1), uint8(2))  // Berlin, spring change day
	f.Add(int64(1793052000), uint8(2), uint16(0), uint8(0), uint8(3))    // New York, autumn
	f.Add(int64(1325239200), uint8(7), uint16(150), uint8(6), uint8(4))  // Apia, the skipped day
	f.Add(int64(1680000000), uint8(5), uint16(1439), uint8(3), uint8(7)) // Havana, 23:59 day start
	f.Fuzz(func(t *testing.T, unix int64, zi uint8, dayStartMin uint16, weekday uint8, which uint8) {
		if unix < 0 || unix > 4102444800 { // 1970..2100
			return
		}
		z, err := LoadZone(fuzzZones[int(zi)%len(fuzzZones)])
		if err != nil {
			t.Fatal(err)
		}
		c := Calendar{Zone: z, DayStart: time.Duration(dayStartMin%1440) * time.Minute, WeekStart: time.Weekday(weekday % 7)}
		names := []string{"today", "yesterday", "this_week", "last_week", "last_1h", "last_25h", "last_1d", "last_30d"}
		name := names[int(which)%len(names)]
		spec, err := ParseSpec(name, "", "")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(unix, 0)
		p, err := c.Resolve(spec, now)
		if err != nil {
			t.Fatal(err)
		}
		if p.End.After(now) || p.Start.After(p.End) {
			t.Fatalf("%s at %v: [%v, %v)", name, now, p.Start, p.End)
		}
		days := p.Days()
		cursor := p.Start
		for i, d := range days {
			if !d.Start.Equal(cursor) || !d.Start.Before(d.End) {
				t.Fatalf("%s at %v: day %d %v..%v does not follow %v", name, now, i, d.Start, d.End, cursor)
			}
			if i > 0 && !c.DayOf(d.Start).Start.Equal(d.Start) {
				t.Errorf("%s at %v: day %d starts at %v, not a day start", name, now, i, d.Start)
			}
			if d.End.Sub(d.Start) > 26*time.Hour {
				t.Errorf("%s at %v: day %d lasts %v", name, now, i, d.End.Sub(d.Start))
			}
			cursor = d.End
		}
		if !cursor.Equal(p.End) && p.Start.Before(p.End) {
			t.Fatalf("%s at %v: days end at %v, period at %v", name, now, cursor, p.End)
		}
		switch spec.String() {
		case LabelToday, LabelYesterday:
			today := c.DayOf(now).Start
			if spec.String() == LabelToday && !p.Start.Equal(today) {
				t.Errorf("today starts %v, want %v", p.Start, today)
			}
			if spec.label == LabelYesterday && (!p.End.Equal(today) || len(days) != 1 || !c.DayOf(p.End.Add(-time.Nanosecond)).Start.Equal(p.Start)) {
				t.Errorf("yesterday = [%v, %v), today starts %v", p.Start, p.End, today)
			}
		case LabelThisWeek, LabelLastWeek:
			// The start of a week is the start of its first weekday (where a
			// zone skipped that date, the instant it would have started).
			if !c.DayOf(p.Start).Start.Equal(p.Start) || !c.startOn(c.startOfWeek(c.dateOf(p.Start))).Equal(p.Start) {
				t.Errorf("%s starts %v, not a %v day start", name, p.Start, c.WeekStart)
			}
			if spec.label == LabelLastWeek && (len(days) < 6 || len(days) > 7) {
				t.Errorf("last_week has %d days", len(days))
			}
		}
	})
}

// FuzzWallAt places any wall-clock time of 1970..2100 in zones of every
// kind: a time that exists reads back as itself (a repeated one as the
// first of its instants, the other one later the same wall time); a
// skipped one lands later, within a day.
func FuzzWallAt(f *testing.F) {
	f.Add(int64(1774747800), uint8(1)) // Berlin 02:30 on the spring change day
	f.Add(int64(1792895400), uint8(1)) // Berlin 02:30 on the autumn one
	f.Add(int64(1325239200), uint8(7)) // Apia, the skipped day
	f.Fuzz(func(t *testing.T, unix int64, zi uint8) {
		if unix < 0 || unix > 4102444800 {
			return
		}
		loc, err := time.LoadLocation(fuzzZones[int(zi)%len(fuzzZones)])
		if err != nil {
			t.Fatal(err)
		}
		naive := time.Unix(unix, 0).UTC() // read as a wall time
		y, m, d := naive.Date()
		w := wall{date{y, m, d}, naive.Sub(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))}
		got, shifted, repeated := w.at(loc)
		shown := time.Date(got.Year(), got.Month(), got.Day(), got.Hour(), got.Minute(), got.Second(), got.Nanosecond(), time.UTC)
		switch {
		case shifted && (!shown.After(naive) || shown.Sub(naive) > 24*time.Hour):
			t.Fatalf("%v skipped in %v: placed at %v", naive, loc, got)
		case !shifted && !shown.Equal(naive):
			t.Fatalf("%v in %v: placed at %v", naive, loc, got)
		case repeated:
			for _, later := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
				if l := got.Add(later).In(loc); l.Hour() == got.Hour() && l.Minute() == got.Minute() {
					return
				}
			}
			t.Fatalf("%v in %v: placed at %v, said repeated, but no later instant shows it", naive, loc, got)
		}
	})
}
