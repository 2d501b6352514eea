package activity

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// zone loads an IANA zone or fails the test.
func zone(t testing.TB, name string) Zone {
	t.Helper()
	z, err := LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// calendar is the calendar of zone with ActivityWatch settings dayStart
// ("" unset) and weekStart ("" unset).
func calendar(t testing.TB, zoneName, dayStart, weekStart string) Calendar {
	t.Helper()
	return NewCalendar(zone(t, zoneName), aw.Settings{StartOfDay: dayStart, StartOfWeek: weekStart})
}

// at parses an RFC 3339 instant or fails the test.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func resolve(t testing.TB, c Calendar, period, start, end string, now time.Time) Period {
	t.Helper()
	spec, err := ParseSpec(period, start, end)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Resolve(spec, now)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func rfc(t time.Time) string { return t.Format(time.RFC3339) }

// TestDaylightSavingDays checks that a day across a daylight-saving change
// lasts 23 or 25 hours and that yesterday's bounds are local day starts,
// for both transitions in Berlin and New York, with days starting at
// midnight and at the web UI's default 04:00.
func TestDaylightSavingDays(t *testing.T) {
	tests := []struct {
		name, zone, dayStart, now string
		wantStart, wantEnd        string
		wantHours                 float64
	}{
		{"berlin spring, midnight", "Europe/Berlin", "00:00", "2026-03-30T10:00:00+02:00",
			"2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00", 23},
		{"berlin spring, 04:00: the short day is the one before the change", "Europe/Berlin", "", "2026-03-29T10:00:00+02:00",
			"2026-03-28T04:00:00+01:00", "2026-03-29T04:00:00+02:00", 23},
		{"berlin spring, 04:00: the change day itself is whole", "Europe/Berlin", "", "2026-03-30T10:00:00+02:00",
			"2026-03-29T04:00:00+02:00", "2026-03-30T04:00:00+02:00", 24},
		{"berlin autumn, midnight", "Europe/Berlin", "00:00", "2026-10-26T10:00:00+01:00",
			"2026-10-25T00:00:00+02:00", "2026-10-26T00:00:00+01:00", 25},
		{"berlin autumn, 04:00", "Europe/Berlin", "", "2026-10-25T10:00:00+01:00",
			"2026-10-24T04:00:00+02:00", "2026-10-25T04:00:00+01:00", 25},
		{"new york spring, midnight", "America/New_York", "00:00", "2026-03-09T10:00:00-04:00",
			"2026-03-08T00:00:00-05:00", "2026-03-09T00:00:00-04:00", 23},
		{"new york autumn, midnight", "America/New_York", "00:00", "2026-11-02T10:00:00-05:00",
			"2026-11-01T00:00:00-04:00", "2026-11-02T00:00:00-05:00", 25},
		{"new york autumn, 04:00", "America/New_York", "04:00", "2026-11-01T10:00:00-05:00",
			"2026-10-31T04:00:00-04:00", "2026-11-01T04:00:00-05:00", 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := calendar(t, tt.zone, tt.dayStart, "")
			p := resolve(t, c, "yesterday", "", "", at(t, tt.now))
			if rfc(p.Start) != tt.wantStart || rfc(p.End) != tt.wantEnd {
				t.Errorf("yesterday = [%s, %s), want [%s, %s)", rfc(p.Start), rfc(p.End), tt.wantStart, tt.wantEnd)
			}
			if p.DurationS != tt.wantHours*3600 {
				t.Errorf("yesterday lasts %v h, want %v", p.DurationS/3600, tt.wantHours)
			}
			if got := c.DayOf(p.End.Add(-time.Nanosecond)).Start; !got.Equal(p.Start) {
				t.Errorf("the day before the end starts at %s, not at the period's start", rfc(got))
			}
			today := resolve(t, c, "today", "", "", at(t, tt.now))
			if !today.Start.Equal(p.End) || !today.End.Equal(at(t, tt.now)) {
				t.Errorf("today = [%s, %s), want [%s, now)", rfc(today.Start), rfc(today.End), tt.wantEnd)
			}
		})
	}
}

// TestWeeksAcrossDaylightSaving checks this_week and last_week land on
// local day starts of the week's first weekday when a daylight-saving
// change falls inside, and that last_week's days are seven local days, one
// of them 23 hours long.
func TestWeeksAcrossDaylightSaving(t *testing.T) {
	c := calendar(t, "Europe/Berlin", "", "")
	now := at(t, "2026-03-31T12:00:00+02:00") // a Tuesday
	this := resolve(t, c, "this_week", "", "", now)
	if rfc(this.Start) != "2026-03-30T04:00:00+02:00" || this.WeekStart != "Monday" {
		t.Errorf("this_week starts %s (%s), want Monday 2026-03-30T04:00:00+02:00", rfc(this.Start), this.WeekStart)
	}
	last := resolve(t, c, "last_week", "", "", now)
	if rfc(last.Start) != "2026-03-23T04:00:00+01:00" || rfc(last.End) != "2026-03-30T04:00:00+02:00" {
		t.Errorf("last_week = [%s, %s)", rfc(last.Start), rfc(last.End))
	}
	if last.DurationS != (7*24-1)*3600 {
		t.Errorf("last_week lasts %v h, want 167", last.DurationS/3600)
	}
	days := last.Days()
	if len(days) != 7 {
		t.Fatalf("%d days, want 7: %v", len(days), days)
	}
	for i, d := range days {
		if local := d.Start.In(c.Zone.Loc); local.Hour() != 4 || local.Minute() != 0 {
			t.Errorf("day %d starts at %s, not 04:00 local", i, rfc(d.Start))
		}
		want := 24 * time.Hour
		if i == 5 { // Saturday 28th 04:00 -> Sunday 29th 04:00 loses the hour
			want = 23 * time.Hour
		}
		if d.End.Sub(d.Start) != want {
			t.Errorf("day %d (%s) lasts %v, want %v", i, rfc(d.Start), d.End.Sub(d.Start), want)
		}
	}

	// Autumn, New York, weeks from Sunday, days from midnight.
	ny := calendar(t, "America/New_York", "00:00", "Sunday")
	lastNY := resolve(t, ny, "last_week", "", "", at(t, "2026-11-03T09:00:00-05:00"))
	if rfc(lastNY.Start) != "2026-10-25T00:00:00-04:00" || rfc(lastNY.End) != "2026-11-01T00:00:00-04:00" {
		t.Errorf("new york last_week = [%s, %s)", rfc(lastNY.Start), rfc(lastNY.End))
	}
	thisNY := resolve(t, ny, "this_week", "", "", at(t, "2026-11-03T09:00:00-05:00"))
	if rfc(thisNY.Start) != "2026-11-01T00:00:00-04:00" || thisNY.WeekStart != "Sunday" {
		t.Errorf("new york this_week starts %s (%s)", rfc(thisNY.Start), thisNY.WeekStart)
	}
	if d := thisNY.Days(); len(d) != 3 || d[0].End.Sub(d[0].Start) != 25*time.Hour {
		t.Errorf("new york this_week days %v, want 3 with a first of 25 h", d)
	}
}

// TestDayStartBoundaries checks a time before the day's start belongs to
// the day before, for today and for the week.
func TestDayStartBoundaries(t *testing.T) {
	c := calendar(t, "Europe/Berlin", "", "Sunday")
	// Sunday 02:00 is still Saturday's day, so still the week that began
	// the Sunday before.
	p := resolve(t, c, "today", "", "", at(t, "2026-06-14T02:00:00+02:00"))
	if rfc(p.Start) != "2026-06-13T04:00:00+02:00" {
		t.Errorf("today at 02:00 starts %s, want the day before at 04:00", rfc(p.Start))
	}
	w := resolve(t, c, "this_week", "", "", at(t, "2026-06-14T02:00:00+02:00"))
	if rfc(w.Start) != "2026-06-07T04:00:00+02:00" {
		t.Errorf("this_week at Sunday 02:00 starts %s, want the Sunday before", rfc(w.Start))
	}
	w = resolve(t, c, "this_week", "", "", at(t, "2026-06-14T04:00:00+02:00"))
	if rfc(w.Start) != "2026-06-14T04:00:00+02:00" || w.DurationS != 0 {
		t.Errorf("this_week at its very start = [%s, %s)", rfc(w.Start), rfc(w.End))
	}
}

// TestDayStartInGap checks a day start that the spring change skips
// (02:30 in Berlin) still gives contiguous days that start where the clock
// jumped over it.
func TestDayStartInGap(t *testing.T) {
	c := calendar(t, "Europe/Berlin", "02:30", "")
	last := resolve(t, c, "last_week", "", "", at(t, "2026-04-01T12:00:00+02:00"))
	days := last.Days()
	for i, d := range days {
		if i > 0 && !d.Start.Equal(days[i-1].End) {
			t.Errorf("day %d does not follow day %d", i, i-1)
		}
		if rfc(d.Start) == "2026-03-29T03:30:00+02:00" && d.End.Sub(d.Start) != 23*time.Hour {
			t.Errorf("the change day lasts %v", d.End.Sub(d.Start))
		}
	}
	if got := rfc(days[6].Start); got != "2026-03-29T03:30:00+02:00" {
		t.Errorf("the Sunday of the change starts %s, want 02:30 shifted by the gap (03:30)", got)
	}

	// Havana skips midnight to 01:00: a day starting at 00:25 starts at
	// 01:25 that day, not late the evening before.
	havana := calendar(t, "America/Havana", "00:25", "")
	y := resolve(t, havana, "yesterday", "", "", at(t, "2023-03-13T12:00:00-04:00"))
	if rfc(y.Start) != "2023-03-12T01:25:00-04:00" || y.DurationS != 23*3600 {
		t.Errorf("havana yesterday = [%s, %s)", rfc(y.Start), rfc(y.End))
	}
	// Samoa skipped 2011-12-30 entirely: the day before the 31st is the
	// 29th, and no day is empty.
	apia := calendar(t, "Pacific/Apia", "00:00", "")
	y = resolve(t, apia, "yesterday", "", "", at(t, "2011-12-31T12:00:00+14:00"))
	if rfc(y.Start) != "2011-12-29T00:00:00-10:00" || rfc(y.End) != "2011-12-31T00:00:00+14:00" {
		t.Errorf("apia yesterday = [%s, %s)", rfc(y.Start), rfc(y.End))
	}
}

// TestRelativeAndCustom checks last_Nh counts elapsed hours, last_Nd wall
// clock days, and a custom range is kept, converted to the zone, and cut
// at now.
func TestRelativeAndCustom(t *testing.T) {
	c := calendar(t, "Europe/Berlin", "", "")
	now := at(t, "2026-10-25T03:30:00+01:00") // after the autumn change
	p := resolve(t, c, "last_2h", "", "", now)
	if p.DurationS != 7200 || rfc(p.Start) != "2026-10-25T02:30:00+02:00" {
		t.Errorf("last_2h = [%s, %s) (%v s)", rfc(p.Start), rfc(p.End), p.DurationS)
	}
	d := resolve(t, c, "last_7d", "", "", at(t, "2026-03-31T10:00:00+02:00"))
	if rfc(d.Start) != "2026-03-24T10:00:00+01:00" || d.DurationS != (7*24-1)*3600 {
		t.Errorf("last_7d = [%s, %s)", rfc(d.Start), rfc(d.End))
	}
	r := resolve(t, c, "", "2026-03-31T06:00:00Z", "2026-03-31T09:30:00.5Z", at(t, "2026-03-31T10:00:00+02:00"))
	if rfc(r.Start) != "2026-03-31T08:00:00+02:00" || r.End.Format(time.RFC3339Nano) != "2026-03-31T10:00:00+02:00" ||
		r.Note == "" || r.Label != "custom" {
		t.Errorf("range = %+v, want its end cut to now with a note", r)
	}
	spec, err := ParseSpec("", "2026-04-01T00:00:00Z", "2026-04-02T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	var se *SpecError
	if _, err := c.Resolve(spec, at(t, "2026-03-31T10:00:00Z")); !errors.As(err, &se) || se.Arg != "start" {
		t.Errorf("a future range: %v, want a start error", err)
	}
	// A day with times whose start a spring change skips, moved on by the
	// gap to its end or past it: the error is on period (the argument
	// given), not on an end the caller never gave.
	for _, period := range []string{"2026-03-29 02:30-03:30", "2026-03-29 02:30-03:15"} {
		spec, err := ParseSpec(period, "", "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Resolve(spec, at(t, "2026-03-31T10:00:00Z"))
		if !errors.As(err, &se) || se.Arg != "period" || !strings.Contains(err.Error(), "does not exist (clock change)") {
			t.Errorf("%s: %v, want a period error saying the clock change", period, err)
		}
	}
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		period, start, end string
		want               string // label, or the error
	}{
		{"", "", "", "today"},
		{"today", "", "", "today"},
		{"yesterday", "", "", "yesterday"},
		{"this_week", "", "", "this_week"},
		{"last_week", "", "", "last_week"},
		{"last_1h", "", "", "last_1h"},
		{"last_8760h", "", "", "last_8760h"},
		{"last_366d", "", "", "last_366d"},
		{"", "2026-11-22T09:00:00+01:00", "2026-11-22T17:00:00.250+01:00", "custom"},
		{"last_8761h", "", "", `period: "last_8761h" is too long (at most last_8760h or last_366d)`},
		{"last_367d", "", "", `period: "last_367d" is too long`},
		{"last_0h", "", "", `period: unknown period "last_0h"`},
		{"last_02h", "", "", "unknown period"},
		{"last_-2h", "", "", "unknown period"},
		{"last_+2h", "", "", "unknown period"},
		{"last_2w", "", "", "unknown period"},
		{"last_h", "", "", "unknown period"},
		{"Today", "", "", "unknown period"},
		{" today", "", "", "unknown period"},
		{"last_99999999999999999999h", "", "", "unknown period"},
		{"\x1b[31mred\nline", "", "", `period: unknown period "\x1b[31mred\nline"`},
		{strings.Repeat("x", 500), "", "", `…"`},
		{"today", "2026-11-22T09:00:00Z", "2026-11-22T10:00:00Z", "period: give either period or start and end, not both"},
		{"", "2026-11-22T09:00:00Z", "", "end: is missing"},
		{"", "", "2026-11-22T09:00:00Z", "start: is missing"},
		{"", "2026-11-22T09:00:00", "2026-11-22T10:00:00Z", "custom"},
		{"", "2026-11-22T09:00", "2026-11-22 10:00:00.5", "custom"},
		{"", "2026-11-22T10:00", "2026-11-22T09:00", "custom"}, // checked once placed
		{"", "2026-11-22T25:00", "2026-11-22T09:00", `start: "2026-11-22T25:00" is not a time`},
		{"", "0001-01-01T00:00", "2026-11-22T09:00", "outside the years 1970 to 9999"},
		{"", "yesterday", "2026-11-22T10:00:00Z", "start: \"yesterday\" is not a time"},
		{"yesterday 14:00-16:00", "", "", "yesterday 14:00-16:00"},
		{"today from 9:05 to 12:30", "", "", "today 09:05-12:30"},
		{"2026-11-25 22:00-02:00", "", "", "2026-11-25 22:00-02:00"},
		{"yesterday 14:00-14:00", "", "", `period: "yesterday 14:00-14:00" is not a day with times (e.g. yesterday 14:00-16:00`},
		{"yesterday 2pm-4pm", "", "", "is not a day with times"},
		{"yesterday 14:00-24:00", "", "", "is not a day with times"},
		{"yesterday 14:0-16:00", "", "", "is not a day with times"},
		{"yesterday -1:00-16:00", "", "", "is not a day with times"},
		{"2026-13-01 14:00-16:00", "", "", "unknown period"},
		{"0000-01-01 14:00-16:00", "", "", `period: "0000-01-01 14:00-16:00" is outside the years 1970 to 9999`}, // not an AwUnavailable from the client
		{"1969-12-31 14:00-16:00", "", "", "outside the years 1970 to 9999"},
		{"1970-01-01 14:00-16:00", "", "", "1970-01-01 14:00-16:00"},
		{"last_week 14:00-16:00", "", "", "unknown period"},
		{"", "2026-11-22T10:00:00Z", "2026-11-22T10:00:00Z", "end: must be after start"},
		{"", "2026-11-22T10:00:00Z", "2026-11-22T09:00:00Z", "end: must be after start"},
		{"", "2024-11-22T10:00:00Z", "2026-11-22T09:00:00Z", "end: is more than 366 days after start"},
		{"", "0001-01-01T00:00:00Z", "2026-11-22T09:00:00Z", "outside the years 1970 to 9999"},
		{"", strings.Repeat("1", 65), "2026-11-22T09:00:00Z", "start: is too long"},
	}
	for _, tt := range tests {
		spec, err := ParseSpec(tt.period, tt.start, tt.end)
		got := spec.String()
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Errorf("ParseSpec(%q, %q, %q): %T is not a *SpecError", tt.period, tt.start, tt.end, err)
			}
			got = err.Error()
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("ParseSpec(%s, %q, %q) = %q, want %q", quote(tt.period), tt.start, tt.end, got, tt.want)
		}
	}
}

func TestLoadZone(t *testing.T) {
	if _, err := LoadZone("Mars/Base"); err == nil {
		t.Error("LoadZone accepted an unknown zone")
	}
	if _, err := LoadZone(""); err == nil {
		t.Errorf("LoadZone accepted no name")
	}
}

// goldenCase is one resolution pinned in testdata/periods.golden.json.
type goldenCase struct {
	Name      string `json:"name"`
	Zone      string `json:"zone"`
	Settings  string `json:"aw_settings"`
	Now       string `json:"now"`
	Period    string `json:"period,omitempty"`
	Start     string `json:"start,omitempty"`
	End       string `json:"end,omitempty"`
	Resolved  Period `json:"resolved"`
	DayStarts []Span `json:"days"`
}

// TestResolveGolden pins the JSON a tool would show for a spread of
// periods, zones and settings (go test -update rewrites it).
func TestResolveGolden(t *testing.T) {
	cases := []goldenCase{
		{Name: "today, defaults", Zone: "Europe/Berlin", Settings: `{}`, Now: "2026-11-22T15:04:05.678901+01:00", Period: "today"},
		{Name: "today before the day start", Zone: "Europe/Berlin", Settings: `{}`, Now: "2026-11-22T03:00:00+01:00", Period: "today"},
		{Name: "yesterday with ActivityWatch's start of day", Zone: "Asia/Kolkata", Settings: `{"startOfDay": "05:30"}`, Now: "2026-11-22T12:00:00+05:30", Period: "yesterday"},
		{Name: "this_week on a Sunday, weeks from Monday", Zone: "UTC", Settings: `{"startOfDay": "00:00"}`, Now: "2026-11-22T12:00:00Z", Period: "this_week"},
		{Name: "last_week, weeks from Saturday", Zone: "America/New_York", Settings: `{"startOfWeek": "Saturday"}`, Now: "2026-11-04T12:00:00-05:00", Period: "last_week"},
		{Name: "last_2h", Zone: "Australia/Lord_Howe", Settings: `{}`, Now: "2026-04-05T02:15:00+10:30", Period: "last_2h"},
		{Name: "last_3d across the autumn change", Zone: "Europe/Berlin", Settings: `{"startOfDay": "00:00"}`, Now: "2026-10-26T08:00:00+01:00", Period: "last_3d"},
		{Name: "custom range in another offset", Zone: "Europe/Berlin", Settings: `{}`, Now: "2026-11-22T15:00:00+01:00",
			Start: "2026-11-21T22:00:00-05:00", End: "2026-11-22T09:30:00Z"},
		{Name: "custom range ending in the future", Zone: "UTC", Settings: `{}`, Now: "2026-11-22T15:00:00Z",
			Start: "2026-11-22T14:00:00Z", End: "2026-11-22T16:00:00Z"},
		{Name: "local times", Zone: "Asia/Kolkata", Settings: `{}`, Now: "2026-11-26T12:00:00+05:30",
			Start: "2026-11-25T14:00", End: "2026-11-25T16:30:00"},
		{Name: "local start, RFC 3339 end", Zone: "America/New_York", Settings: `{}`, Now: "2026-11-26T12:00:00-05:00",
			Start: "2026-11-25T14:00", End: "2026-11-25T22:00:00Z"},
		{Name: "yesterday with times", Zone: "Europe/Berlin", Settings: `{}`, Now: "2026-11-26T10:00:00+01:00", Period: "yesterday 14:00-16:00"},
		{Name: "a date's evening across midnight", Zone: "Europe/Berlin", Settings: `{}`, Now: "2026-11-26T10:00:00+01:00", Period: "2026-11-24 from 22:00 to 01:30"},
		{Name: "today with times, until now", Zone: "UTC", Settings: `{}`, Now: "2026-11-26T10:00:00Z", Period: "today 09:00-17:00"},
		{Name: "local start skipped by the spring change", Zone: "Europe/Berlin", Settings: `{}`, Now: "2026-04-01T12:00:00+02:00",
			Start: "2026-03-29T02:30", End: "2026-03-29T05:00"},
		{Name: "local times repeated by the autumn change", Zone: "Europe/Berlin", Settings: `{}`, Now: "2026-10-26T12:00:00+01:00", Period: "2026-10-25 02:30-02:45"},
		{Name: "local start repeated, west of UTC", Zone: "America/New_York", Settings: `{}`, Now: "2026-11-02T12:00:00-05:00",
			Start: "2026-11-01T01:30", End: "2026-11-01T03:00"},
		{Name: "local start skipped, west of UTC", Zone: "America/New_York", Settings: `{}`, Now: "2026-03-09T12:00:00-04:00",
			Start: "2026-03-08T02:30", End: "2026-03-08T04:00"},
	}
	for i := range cases {
		gc := &cases[i]
		var s aw.Settings
		if err := json.Unmarshal([]byte(gc.Settings), &s); err != nil {
			t.Fatal(err)
		}
		c := NewCalendar(zone(t, gc.Zone), s)
		gc.Resolved = resolve(t, c, gc.Period, gc.Start, gc.End, at(t, gc.Now))
		gc.DayStarts = gc.Resolved.Days()
		if gc.DayStarts == nil {
			gc.DayStarts = []Span{}
		}
	}
	got, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	checkGolden(t, filepath.Join("testdata", "periods.golden.json"), got)
}

// checkGolden compares got with the file at path (-update rewrites it).
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", path, got)
	}
}
