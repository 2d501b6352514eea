package activity

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Local times: start and end without an offset ("2026-11-25T14:00") and a
// day with clock times as period ("yesterday 14:00-16:00") are wall-clock
// times, read in the calendar's zone when the period is resolved.

// wall is a wall-clock time: a date and the time since its midnight.
type wall struct {
	date
	clock time.Duration
}

// localLayouts are the forms of a time without an offset.
var localLayouts = [...]string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999999"}

// parseWall reads a time without an offset ("2026-11-25T14:00", seconds
// and fractions optional, a space for the T allowed).
func parseWall(s string) (wall, bool) {
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	for _, l := range localLayouts {
		if t, err := time.Parse(l, s); err == nil {
			y, m, d := t.Date()
			return wall{date{y, m, d}, t.Sub(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))}, true
		}
	}
	return wall{}, false
}

// at is the instant loc's clocks show w. A time a spring change skips is
// moved forward by the gap (02:30 on the day Berlin skips 02:00-03:00 is
// 03:30 CEST), as day starts are and as the web UI's moment.js does; a
// time an autumn change repeats is the first of its two instants (02:30
// CEST, not CET). Go's time.Date leaves both to the zone (its doc: "not
// guaranteed"): it gives Berlin's repeated 02:30 as CET (the second) but
// New York's repeated 01:30 as EDT (the first), and New York's skipped
// 02:30 as 01:30 EST (moved back), so the choice is made here, alike in
// every zone. shifted reports a skipped time, repeated a repeated one.
func (w wall) at(loc *time.Location) (t time.Time, shifted, repeated bool) {
	naive := time.Date(w.y, w.m, w.d, 0, 0, 0, 0, time.UTC).Add(w.clock)
	offsetAt := func(u time.Time) time.Duration { _, o := u.In(loc).Zone(); return time.Duration(o) * time.Second }
	// The offsets a day before and after: a zone changes at most once
	// within them.
	before, after := offsetAt(naive.Add(-24*time.Hour)), offsetAt(naive.Add(24*time.Hour))
	first, second := naive.Add(-before), naive.Add(-after)
	ok1, ok2 := offsetAt(first) == before, offsetAt(second) == after
	switch {
	case ok1 && ok2 && !first.Equal(second):
		if second.Before(first) {
			first = second
		}
		return first.In(loc), false, true
	case ok1:
		return first.In(loc), false, false
	case ok2:
		return second.In(loc), false, false
	}
	// In a gap: read with the offset before it, the time lands after it.
	return first.In(loc), true, false
}

// dayClock is a period of one day between two clock times ("yesterday
// 14:00-16:00"): the times are on the day's date, an end before the start
// on the next date (22:00-02:00).
type dayClock struct {
	day      string // LabelToday, LabelYesterday, or "" for date
	date     date
	from, to time.Duration
}

// dayClockExample is the form a period with clock times takes.
const dayClockExample = "yesterday 14:00-16:00"

// parseDayClock reads "DAY HH:MM-HH:MM" (or "DAY from HH:MM to HH:MM"),
// DAY today, yesterday or YYYY-MM-DD, and its label as written in the
// first form. matched reports that period starts with a day and a space,
// so that a problem with the times can be named.
func parseDayClock(period string) (dc dayClock, label string, matched, ok bool) {
	day, times, found := strings.Cut(period, " ")
	switch {
	case !found:
		return dayClock{}, "", false, false
	case day == LabelToday || day == LabelYesterday:
		dc.day = day
	default:
		t, err := time.Parse(time.DateOnly, day)
		if err != nil {
			return dayClock{}, "", false, false
		}
		y, m, d := t.Date()
		dc.date = date{y, m, d}
	}
	from, to, found := strings.Cut(times, "-")
	if !found {
		from, to, found = strings.Cut(strings.TrimPrefix(times, "from "), " to ")
	}
	f, ok1 := parseClock(from)
	t, ok2 := parseClock(to)
	if !found || !ok1 || !ok2 || f == t {
		return dayClock{}, "", true, false
	}
	dc.from, dc.to = f, t
	return dc, day + " " + clockText(f) + "-" + clockText(t), true, true
}

// parseClock reads HH:MM (or H:MM), 00:00 to 23:59.
func parseClock(s string) (time.Duration, bool) {
	h, m, found := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !found || err1 != nil || err2 != nil || len(h) < 1 || len(h) > 2 || len(m) != 2 || h[0] == '+' || h[0] == '-' || m[0] == '+' || m[0] == '-' || hh > 23 || mm > 59 {
		return 0, false
	}
	return time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute, true
}

// clockText is a time of day as "HH:MM".
func clockText(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// walls are the wall-clock start and end of dc, today being the date of
// the day containing now.
func (c Calendar) walls(dc dayClock, today date) (wall, wall) {
	d := dc.date
	switch dc.day {
	case LabelToday:
		d = today
	case LabelYesterday:
		d = c.prevDate(today)
	}
	end := wall{d, dc.to}
	if dc.to < dc.from {
		end.date = d.add(1)
	}
	return wall{d, dc.from}, end
}

// placeWalls reads spec's wall-clock times in the calendar's zone, with a
// note on a time a clock change skipped or repeated.
func (c Calendar) placeWalls(spec Spec, today date) (Spec, string, error) {
	var note string
	place := func(arg string, w wall) time.Time {
		t, shifted, repeated := w.at(c.Zone.loc())
		switch {
		case shifted:
			note = joinNote(note, arg+" "+clockText(w.clock)+" does not exist (clock change): read as "+t.Format("15:04Z07:00"))
		case repeated:
			note = joinNote(note, arg+" "+clockText(w.clock)+" happens twice (clock change): read as the first, "+t.Format("15:04Z07:00"))
		}
		return t
	}
	if spec.day != nil {
		from, to := c.walls(*spec.day, today)
		spec.start, spec.end = place("start", from), place("end", to)
		if !spec.start.Before(spec.end) { // a time a spring change skips, moved on past the other
			return spec, note, specError("period", "%s does not end after it starts in %s: %s", quote(spec.label), c.Zone.loc(), note)
		}
	}
	if spec.startWall != nil {
		spec.start = place("start", *spec.startWall)
	}
	if spec.endWall != nil {
		spec.end = place("end", *spec.endWall)
	}
	return spec, note, checkRange(spec.start, spec.end)
}

// joinNote joins two notes of a period.
func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
