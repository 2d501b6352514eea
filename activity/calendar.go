package activity

import (
	"fmt"
	"strings"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// DefaultDayStart is when a day starts when ActivityWatch has no startOfDay
// setting: the web UI's own default, so that days match its dashboard.
const DefaultDayStart = 4 * time.Hour

// DefaultWeekStart is the weekday a week starts on when ActivityWatch has
// no startOfWeek setting (the web UI's default).
const DefaultWeekStart = time.Monday

// Where a Calendar's day and week starts come from.
const (
	FromActivityWatch = "activitywatch" // ActivityWatch's settings (the web UI's, stored on the server)
	FromDefault       = "default"       // the web UI's defaults: 04:00, Monday
)

// Zone is a time zone and the name it is reported by. A plain value.
type Zone struct {
	// Name is the IANA name ("Europe/Berlin"), or "Local" when the
	// machine's zone has no name the process can learn.
	Name string
	// Loc is the zone's rules; nil means UTC.
	Loc *time.Location
}

func (z Zone) loc() *time.Location {
	if z.Loc == nil {
		return time.UTC
	}
	return z.Loc
}

// LoadZone returns the zone of the activity.timezone setting, an IANA name
// (when it is unset, the machine's zone is followed: MachineZone).
func LoadZone(name string) (Zone, error) {
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" || name == "" {
		return Zone{}, fmt.Errorf("activity: unknown time zone %s", quote(name))
	}
	return Zone{Name: name, Loc: loc}, nil
}

// zoneNameOfPath names the zone of a zone file's path (or link target) by
// what follows "zoneinfo/" ("/usr/share/zoneinfo/Europe/Berlin",
// "/var/db/timezone/zoneinfo/America/New_York",
// "../usr/share/zoneinfo/Asia/Kolkata"), when the zone database knows that
// name; else "Local".
func zoneNameOfPath(path string) string {
	if _, after, found := strings.Cut(path, "zoneinfo/"); found {
		return knownZone(after)
	}
	return "Local"
}

func knownZone(name string) string {
	if name == "" || name == "Local" || len(name) > 255 {
		return "Local"
	}
	if _, err := time.LoadLocation(name); err != nil {
		return "Local"
	}
	return name
}

// Calendar says where days and weeks start: in a zone, days at DayStart
// after local midnight, weeks on WeekStart. A plain value; the zero value
// is UTC days from midnight, weeks from Sunday (use NewCalendar).
type Calendar struct {
	Zone Zone
	// DayStart is the offset of a day's start from local midnight, in
	// whole minutes, 0 <= DayStart < 24h.
	DayStart time.Duration
	// DayStartSource is FromActivityWatch or FromDefault.
	DayStartSource string
	// WeekStart is the weekday a week starts on.
	WeekStart time.Weekday
}

// NewCalendar is the calendar of zone with ActivityWatch's startOfDay and
// startOfWeek settings, each falling back to the web UI's default
// (DefaultDayStart, DefaultWeekStart) when not set.
func NewCalendar(zone Zone, s aw.Settings) Calendar {
	c := Calendar{Zone: zone, DayStart: DefaultDayStart, DayStartSource: FromDefault, WeekStart: DefaultWeekStart}
	if d, ok := s.DayStart(); ok {
		c.DayStart, c.DayStartSource = d, FromActivityWatch
	}
	if wd, ok := s.WeekStart(); ok {
		c.WeekStart = wd
	}
	return c
}

// DayStartText is DayStart as "HH:MM".
func (c Calendar) DayStartText() string {
	return clockText(c.DayStart)
}

// date is a civil date in the calendar's zone.
type date struct {
	y int
	m time.Month
	d int
}

// add returns the date n days later (n may be negative).
func (d date) add(n int) date {
	t := time.Date(d.y, d.m, d.d+n, 12, 0, 0, 0, time.UTC)
	y, m, dd := t.Date()
	return date{y, m, dd}
}

func (d date) weekday() time.Weekday {
	return time.Date(d.y, d.m, d.d, 12, 0, 0, 0, time.UTC).Weekday()
}

// startOn is when the day of date d starts: DayStart after its local
// midnight, by the wall clock, placed as wall.at places local times (a
// skipped start moved forward by the gap, as the web UI's moment.js does).
func (c Calendar) startOn(d date) time.Time {
	t, _, _ := wall{d, c.DayStart}.at(c.Zone.loc())
	return t
}

// dateOf is the date of the day containing t.
func (c Calendar) dateOf(t time.Time) date {
	y, m, dd := t.In(c.Zone.loc()).Date()
	d := date{y, m, dd}
	// Before the day's start: the day before (twice where a zone skipped
	// a whole date, whose start is shifted into the next one).
	for i := 0; i < 3 && c.startOn(d).After(t); i++ {
		d = d.add(-1)
	}
	return d
}

// prevDate is the date of the day before d's: normally d-1, earlier where
// a zone skipped a date (its start shifted onto d's).
func (c Calendar) prevDate(d date) date {
	start := c.startOn(d)
	p := d.add(-1)
	for i := 0; i < 2 && !c.startOn(p).Before(start); i++ {
		p = p.add(-1)
	}
	return p
}

// startOfWeek is the first date of the week containing date d.
func (c Calendar) startOfWeek(d date) date {
	back := (int(d.weekday()) - int(c.WeekStart) + 7) % 7
	return d.add(-back)
}

// Days splits [start, end) at the starts of days: the first and last
// spans may be partial days, each other one a whole day (23 or 25 hours
// across a daylight-saving change). It returns nil when end is not after
// start.
func (c Calendar) Days(start, end time.Time) []Span {
	if !start.Before(end) {
		return nil
	}
	var out []Span
	d := c.dateOf(start)
	for s := start; s.Before(end); {
		d = d.add(1)
		next := c.startOn(d)
		if !next.After(s) {
			continue // a day the zone skipped (Pacific/Apia, 2011-12-30)
		}
		e := next
		if e.After(end) {
			e = end
		}
		out = append(out, Span{Start: s.In(c.Zone.loc()), End: e.In(c.Zone.loc())})
		s = e
	}
	return out
}

// Span is a half-open stretch of time [Start, End).
type Span struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// DayOf is the whole day containing t: from its start to the next day's
// (23 or 25 hours across a daylight-saving change).
func (c Calendar) DayOf(t time.Time) Span {
	start := c.startOn(c.dateOf(t))
	return c.Days(start, start.Add(50*time.Hour))[0]
}
