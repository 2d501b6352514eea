package activity

import (
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// TestPreviousOf: the previous period of each kind, around the night
// Berlin's clocks went back (25 October 2026, 03:00 CEST to 02:00 CET; days
// start at 04:00, weeks on Monday): a day before is a calendar day (25
// hours there), the N days before keep the wall clock, a span's is as long
// as it.
func TestPreviousOf(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCalendar(Zone{Name: "Europe/Berlin", Loc: loc}, aw.Settings{})
	now := time.Date(2026, 10, 27, 10, 0, 0, 0, loc) // Tuesday
	for _, tc := range []struct {
		period, start, end string
		want               string    // start/end of the previous period, RFC 3339
		now                time.Time // zero: now
	}{
		{period: "yesterday", now: time.Date(2026, 10, 26, 10, 0, 0, 0, loc), want: "2026-10-24T04:00:00+02:00/2026-10-25T04:00:00+01:00"},
		{period: "today", want: "2026-10-26T04:00:00+01:00/2026-10-27T04:00:00+01:00"},
		{period: "yesterday", want: "2026-10-25T04:00:00+01:00/2026-10-26T04:00:00+01:00"},
		{period: "this_week", want: "2026-10-19T04:00:00+02:00/2026-10-26T04:00:00+01:00"},
		{period: "last_week", want: "2026-10-12T04:00:00+02:00/2026-10-19T04:00:00+02:00"},
		{period: "last_2d", want: "2026-10-23T10:00:00+02:00/2026-10-25T10:00:00+01:00"},
		{period: "last_3h", want: "2026-10-27T04:00:00+01:00/2026-10-27T07:00:00+01:00"},
		{start: "2026-10-25T04:00:00+01:00", end: "2026-10-25T05:00:00+01:00", want: "2026-10-25T03:00:00+01:00/2026-10-25T04:00:00+01:00"},
		{start: "2026-10-27T09:00:00+01:00", end: "2026-10-27T17:00:00+01:00", want: "2026-10-27T08:00:00+01:00/2026-10-27T09:00:00+01:00"}, // cut to now: 1 h
		// A day with times: the same times the date before, whether the day
		// is named, dated, today, or its times fall before the day's start.
		{period: "yesterday 14:00-16:00", want: "2026-10-25T14:00:00+01:00/2026-10-25T16:00:00+01:00"},
		{period: "2026-10-26 14:00-16:00", want: "2026-10-25T14:00:00+01:00/2026-10-25T16:00:00+01:00"},
		{period: "today 08:00-09:30", want: "2026-10-26T08:00:00+01:00/2026-10-26T09:30:00+01:00"},
		{period: "yesterday 02:00-03:00", want: "2026-10-25T02:00:00+02:00/2026-10-25T03:00:00+01:00"},
		{period: "2026-10-26 22:00-01:30", want: "2026-10-25T22:00:00+01:00/2026-10-26T01:30:00+01:00"},
	} {
		t.Run(tc.period+tc.start, func(t *testing.T) {
			spec, err := ParseSpec(tc.period, tc.start, tc.end)
			if err != nil {
				t.Fatal(err)
			}
			at := now
			if !tc.now.IsZero() {
				at = tc.now
			}
			p, err := c.Resolve(spec, at)
			if err != nil {
				t.Fatal(err)
			}
			prev, err := previousOf(spec, p)
			if err != nil {
				t.Fatal(err)
			}
			if got := prev.Start.Format(time.RFC3339) + "/" + prev.End.Format(time.RFC3339); got != tc.want {
				t.Errorf("previous of %s .. %s is %s, want %s", p.Start, p.End, got, tc.want)
			}
		})
	}
}
