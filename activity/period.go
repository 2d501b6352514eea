package activity

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of relative periods and ranges.
const (
	MaxHours = 8760 // last_8760h: a year of hours
	MaxDays  = 366  // last_366d
	// MaxRange bounds start..end: 366 days plus a day of slack for
	// daylight-saving changes and day starts.
	MaxRange = (MaxDays + 1) * 24 * time.Hour
	// maxTimeArg bounds an RFC 3339 argument before parsing it.
	maxTimeArg = 64
)

// Period labels.
const (
	LabelToday     = "today"
	LabelYesterday = "yesterday"
	LabelThisWeek  = "this_week"
	LabelLastWeek  = "last_week"
	LabelCustom    = "custom" // start and end given
)

// Spec is a period as asked for, checked for syntax but not yet placed on
// a calendar (Calendar.Resolve does that). The zero value is "today". A
// plain value.
type Spec struct {
	label      string        // "" is today
	last       time.Duration // last_Nh, last_Nm: the time before now
	days       int           // last_Nd
	start, end time.Time     // a range (custom)
	// startWall, endWall replace start or end given without an offset;
	// day is a day with clock times. Both are read in the calendar's zone.
	startWall, endWall *wall
	day                *dayClock
}

// String is the spec's label: "today", "last_2h", "custom", ...
func (s Spec) String() string { return cmp.Or(s.label, LabelToday) }

// LastMinutes is the spec of the n minutes before now ("last_10m"), n at
// least 1 and at most MaxHours*60.
func LastMinutes(n int) Spec {
	n = min(max(n, 1), MaxHours*60)
	return Spec{label: "last_" + strconv.Itoa(n) + "m", last: time.Duration(n) * time.Minute}
}

// SpecError is a period argument that cannot be used. Arg names the
// argument ("period", "start" or "end"); Problem says what is wrong and
// what is expected, quoting at most a short, escaped prefix of the value.
type SpecError struct {
	Arg     string
	Problem string
}

func (e *SpecError) Error() string { return e.Arg + ": " + e.Problem }

func specError(arg, format string, args ...any) error {
	return &SpecError{Arg: arg, Problem: fmt.Sprintf(format, args...)}
}

// quote quotes untrusted input for an error: escaped, at most ~40 bytes
// of quoted text.
func quote(s string) string {
	const max = 40
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		q := strconv.Quote(s[i : i+size])
		i += size
		if b.Len()+len(q)-2 > max {
			b.WriteString("…")
			break
		}
		b.WriteString(q[1 : len(q)-1])
	}
	b.WriteByte('"')
	return b.String()
}

const periodsExpected = "today, yesterday, this_week, last_week, last_Nh (1 to 8760), last_Nd (1 to 366) or a day with times: " + dayClockExample

// ParseSpec reads the period arguments of the activity tools: period
// (today, yesterday, this_week, last_week, last_Nh with N 1 to 8760,
// last_Nd with N 1 to 366, a day with clock times: "yesterday
// 14:00-16:00", see parseDayClock), or start and end (RFC 3339, or a
// local time without an offset read in the calendar's zone; both or
// neither, start before end). All three empty is "today". It returns a
// *SpecError.
func ParseSpec(period, start, end string) (Spec, error) {
	if start != "" || end != "" {
		switch {
		case period != "":
			return Spec{}, specError("period", "give either period or start and end, not both")
		case start == "":
			return Spec{}, specError("start", "is missing: give start with end (e.g. 2026-11-22T09:00 local, or RFC 3339)")
		case end == "":
			return Spec{}, specError("end", "is missing: give end with start (e.g. 2026-11-22T17:00 local, or RFC 3339)")
		}
		spec := Spec{label: LabelCustom}
		var err error
		if spec.start, spec.startWall, err = parseTime("start", start); err != nil {
			return Spec{}, err
		}
		if spec.end, spec.endWall, err = parseTime("end", end); err != nil {
			return Spec{}, err
		}
		if spec.startWall == nil && spec.endWall == nil {
			return spec, checkRange(spec.start, spec.end)
		}
		return spec, nil
	}
	switch period {
	case "", LabelToday, LabelYesterday, LabelThisWeek, LabelLastWeek:
		return Spec{label: period}, nil
	}
	if dc, label, matched, ok := parseDayClock(period); ok {
		if dc.day == "" && (dc.date.y < 1970 || dc.date.y > 9999) {
			return Spec{}, specError("period", "%s is outside the years 1970 to 9999", quote(period))
		}
		return Spec{label: label, day: &dc}, nil
	} else if matched {
		return Spec{}, specError("period", "%s is not a day with times (e.g. %s; 24-hour HH:MM)", quote(period), dayClockExample)
	}
	if rest, ok := strings.CutPrefix(period, "last_"); ok && len(rest) >= 2 {
		num, unit := rest[:len(rest)-1], rest[len(rest)-1]
		n, err := strconv.Atoi(num)
		valid := err == nil && num[0] >= '1' && num[0] <= '9' && len(num) <= 4 && !strings.ContainsAny(num, "+-_")
		switch {
		case valid && unit == 'h' && n <= MaxHours:
			return Spec{label: period, last: time.Duration(n) * time.Hour}, nil
		case valid && unit == 'd' && n <= MaxDays:
			return Spec{label: period, days: n}, nil
		case valid && (unit == 'h' || unit == 'd'):
			return Spec{}, specError("period", "%s is too long (at most last_%dh or last_%dd)", quote(period), MaxHours, MaxDays)
		}
	}
	return Spec{}, specError("period", "unknown period %s (expected %s)", quote(period), periodsExpected)
}

// parseTime reads an RFC 3339 time with an offset or Z, or a local time
// without one (see parseWall), returned as a wall clock time.
func parseTime(arg, s string) (time.Time, *wall, error) {
	if len(s) > maxTimeArg {
		return time.Time{}, nil, specError(arg, "is too long for a time")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		w, ok := parseWall(s)
		if !ok {
			return time.Time{}, nil, specError(arg, "%s is not a time (e.g. 2026-11-22T09:00 local, or RFC 3339 with an offset)", quote(s))
		}
		if w.y < 1970 || w.y > 9999 {
			return time.Time{}, nil, specError(arg, "%s is outside the years 1970 to 9999", quote(s))
		}
		return time.Time{}, &w, nil
	}
	if y := t.UTC().Year(); y < 1970 || y > 9999 {
		return time.Time{}, nil, specError(arg, "%s is outside the years 1970 to 9999", quote(s))
	}
	return t, nil, nil
}

// checkRange checks a range's start and end.
func checkRange(start, end time.Time) error {
	switch {
	case !start.Before(end):
		return specError("end", "must be after start")
	case end.Sub(start) > MaxRange:
		return specError("end", "is more than %d days after start", MaxDays)
	}
	return nil
}

// Period is a resolved stretch of time [Start, End) with the calendar it
// was resolved on. Start and End are in the calendar's zone, so they
// render with its UTC offset. A plain value.
type Period struct {
	// Label is what was asked for ("today", "last_2h", "custom"...).
	Label string `json:"label"`
	// Start and End bound it [Start, End).
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	DurationS float64   `json:"duration_s"`
	// Timezone is the zone's IANA name ("Local" when unknown); UTCOffset
	// its offset at Start, UTCOffsetChanges its changes within the period.
	Timezone         string         `json:"timezone"`
	UTCOffset        string         `json:"utc_offset"`
	UTCOffsetChanges []OffsetChange `json:"utc_offset_changes,omitempty"`
	// DayStart is when days start, "HH:MM" local time, from
	// DayStartSource (FromActivityWatch or FromDefault).
	DayStart       string `json:"day_start"`
	DayStartSource string `json:"day_start_source"`
	// WeekStart is the weekday weeks start on, for this_week and
	// last_week only.
	WeekStart string `json:"week_start,omitempty"`
	// Note says how the period was adjusted (fixed text).
	Note string `json:"note,omitempty"`
	// Calendar is what the period was resolved on; Days splits on it.
	Calendar Calendar `json:"-"`
	// byDay computes it day by day (split.go): no unit sees past its day.
	byDay bool
}

// Span is the period as a plain span.
func (p Period) Span() Span { return Span{Start: p.Start, End: p.End} }

// Days splits the period at the calendar's day starts (see
// Calendar.Days).
func (p Period) Days() []Span { return p.Calendar.Days(p.Start, p.End) }

// span is the period [start, end) labelled label on the calendar.
func (c Calendar) span(label string, start, end time.Time, weekStart bool) Period {
	loc := c.Zone.loc()
	p := Period{Label: label, Start: start.In(loc), End: end.In(loc), Timezone: cmp.Or(c.Zone.Name, loc.String()),
		DayStart: c.DayStartText(), DayStartSource: c.DayStartSource, Calendar: c}
	if weekStart {
		p.WeekStart = c.WeekStart.String()
	}
	p.DurationS = p.End.Sub(p.Start).Seconds()
	p.offsets()
	return p
}

// OffsetChange is a change of the zone's UTC offset within a period.
type OffsetChange struct {
	At        time.Time `json:"at"`
	UTCOffset string    `json:"utc_offset"`
}

// maxOffsetChanges bounds Period.UTCOffsetChanges: a year has two in
// zones with daylight saving.
const maxOffsetChanges = 8

// offsets sets the offset at Start and its changes until End.
func (p *Period) offsets() {
	p.UTCOffset = UTCOffset(p.Start)
	p.UTCOffsetChanges = nil
	_, off := p.Start.Zone()
	// Zone periods may also change only the abbreviation: bound the walk.
	for t, i := p.Start, 0; i < 4*maxOffsetChanges && len(p.UTCOffsetChanges) < maxOffsetChanges; i++ {
		_, next := t.ZoneBounds()
		if next.IsZero() || !next.After(t) || !next.Before(p.End) {
			return
		}
		next = next.In(p.Start.Location())
		if _, o := next.Zone(); o != off {
			p.UTCOffsetChanges = append(p.UTCOffsetChanges, OffsetChange{At: next, UTCOffset: UTCOffset(next)})
			off = o
		}
		t = next
	}
}

// resolve is Calendar.Resolve of s.
func (s Spec) resolve(c Calendar, now time.Time) (Period, error) { return c.Resolve(s, now) }

// Resolve places spec on the calendar at now: today is from the start of
// the day containing now until now; yesterday the whole day before; this_week
// from the start of the week containing now until now; last_week the whole
// week before; last_Nh the N hours before now; last_Nd from the same wall
// clock time N days ago until now; a range as given, its end cut to now
// when later. Day and week starts follow the calendar, so across a
// daylight-saving change a day lasts 23 or 25 hours. now is truncated to
// the millisecond (ActivityWatch's precision). A range that starts at or
// after now is a *SpecError.
func (c Calendar) Resolve(spec Spec, now time.Time) (Period, error) {
	now = now.Truncate(time.Millisecond).In(c.Zone.loc())
	start, end, note := time.Time{}, now, ""
	today := c.dateOf(now)
	label, kind := spec.String(), spec.String()
	if spec.day != nil || spec.startWall != nil || spec.endWall != nil {
		var err error
		if spec, note, err = c.placeWalls(spec, today); err != nil {
			return Period{}, err
		}
		kind = LabelCustom
	}
	switch kind {
	case LabelToday:
		start = c.startOn(today)
	case LabelYesterday:
		start, end = c.startOn(c.prevDate(today)), c.startOn(today)
	case LabelThisWeek:
		start = c.startOn(c.startOfWeek(today))
	case LabelLastWeek:
		w := c.startOfWeek(today)
		start, end = c.startOn(w.add(-7)), c.startOn(w)
	case LabelCustom:
		if !spec.start.Before(now) {
			arg := "start"
			if spec.day != nil {
				arg = "period"
			}
			return Period{}, specError(arg, "is not in the past: there is no activity to read yet")
		}
		start, end = spec.start, spec.end
		if end.After(now) {
			end, note = now, joinNote(note, "the end was in the future: the period ends now")
		}
	default: // last_N
		start = now.Add(-spec.last)
		if spec.days > 0 {
			start = now.AddDate(0, 0, -spec.days) // the same wall clock time
		}
	}
	p := c.span(label, start, end, label == LabelThisWeek || label == LabelLastWeek)
	p.Note = note
	return p, nil
}
