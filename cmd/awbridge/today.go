package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/toolbus"
	"github.com/awbridge/awbridge/toolbus/redact"
)

const (
	// summaryTool is the tool `awbridge today` and `awbridge summary` call.
	summaryTool = engine.ToolSummary
	// summaryWidth is a terminal's 80 columns, less one (a line that fills
	// the last column wraps on some terminals).
	summaryWidth = 79
)

func cmdToday(ctx context.Context, e *env, args []string) int {
	return runSummary(ctx, e, "today", args)
}

func cmdSummary(ctx context.Context, e *env, args []string) int {
	return runSummary(ctx, e, "summary", args)
}

// runSummary is `awbridge today` and `awbridge summary`: it calls
// activity_summary and prints the summary, or with --json the tool's
// result alone.
func runSummary(ctx context.Context, e *env, name string, args []string) int {
	fs := newFlags(e, name)
	var period, start, end *string
	if name == "summary" {
		period = fs.String("period", activity.LabelToday, "`period`: today, yesterday, this_week, last_week, last_Nh (last_2h) or last_Nd (last_7d)")
		start = fs.String("start", "", "the period's start, RFC 3339 (with --end, instead of --period)")
		end = fs.String("end", "", "the period's end, RFC 3339")
	}
	groupBy := fs.String("group-by", "", "what the top entries are: app (default), title, domain, category, or an editor's project, language or file")
	limit := fs.Int("limit", 0, "how many top entries (default: the tool's, 10)")
	host := fs.String("host", "", "whose activity: this machine (default), another device's hostname, or all")
	by := fs.String("by", "", "day: one row per day, its active time and top entries (a timesheet)")
	format := fs.String("format", formatText, "text, csv (a spreadsheet: hours to 0.01) or markdown (a note)")
	asJSON := fs.Bool("json", false, "print the tool's result alone on stdout")
	noRelay := fs.Bool("no-relay", false, "summarize in this process even when the service runs")
	l, log, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	out, err := formatFlag(*format, *asJSON)
	if err != nil {
		fmt.Fprintf(e.stderr, "awbridge %s: %v\n", name, err)
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	targs := map[string]any{}
	switch {
	case name == "today":
		targs["period"] = activity.LabelToday
	case set["start"] || set["end"]:
		targs["start"], targs["end"] = *start, *end
		if set["period"] {
			targs["period"] = *period // the tool says they do not go together
		}
	default:
		targs["period"] = *period
	}
	if set["group-by"] {
		targs["group_by"] = *groupBy
	}
	if set["limit"] {
		targs["limit"] = *limit
	}
	if set["host"] {
		targs["host"] = *host
	}
	if set["by"] {
		targs["split"] = *by
	}
	raw, _ := json.Marshal(targs)
	c, via := openCaller(e, name, l, log, engine.Deps{}, *noRelay)
	if c == nil {
		return exitUsage
	}
	defer c.Close()
	return summarize(ctx, e, name, c, via, raw, out)
}

// summarize calls activity_summary with args and prints what it says in
// format, with a progress line on a terminal's stderr. Exit 0 with a
// summary, 1 when the tool could not summarize (ActivityWatch down), 2
// when the call was refused or could not be made.
func summarize(ctx context.Context, e *env, name string, c caller, via string, args json.RawMessage, format string) int {
	pl := &progressLine{w: e.stderr, on: stderrIsTerminal(e), prefix: "awbridge " + name + ": "}
	out := c.Call(ctx, toolbus.Request{Name: summaryTool, Args: args, Progress: pl.update})
	pl.end()
	if out.Err != nil {
		code := sayFailed(e, name, callRefusal(out.Err))
		if out.Stage == toolbus.StageExecute && out.Err.Kind != toolbus.ContractError &&
			out.Err.Code != "ServiceUnavailable" && out.Err.Code != toolbus.CodeCancelled {
			return exitDegraded // ActivityWatch did not answer, or a bucket was unreadable
		}
		return code
	}
	var env struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(out.Body, &env); err != nil || len(env.Result) == 0 {
		fmt.Fprintf(e.stderr, "awbridge %s: the tool's answer was unreadable\n", name)
		return exitUsage
	}
	if format == formatJSON {
		fmt.Fprintln(e.stdout, string(withServedBy(env.Result, via)))
		return exitOK
	}
	var s activity.Summary
	if err := json.Unmarshal(env.Result, &s); err != nil {
		fmt.Fprintf(e.stderr, "awbridge %s: the summary was unreadable\n", name)
		return exitUsage
	}
	if err := printSummaryAs(e.stdout, &s, format); err != nil {
		fmt.Fprintf(e.stderr, "awbridge %s: %v\n", name, err)
		return exitUsage
	}
	return exitOK
}

// progressLine draws a call's progress on one terminal line, redrawn in
// place, and erases it when the call ends. No update comes in a call's
// first second, so a quick call draws nothing.
type progressLine struct {
	w      io.Writer
	on     bool
	prefix string
	mu     sync.Mutex
	drawn  bool
	ended  bool
}

func (p *progressLine) update(u toolbus.ProgressUpdate) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	msg := textOf(u.Message)
	if msg == "" {
		msg = "working"
	}
	if u.Total > 0 {
		msg += fmt.Sprintf(" (%d%%)", int(math.Round(100*min(u.Progress/u.Total, 1))))
	}
	fmt.Fprint(p.w, "\r\x1b[2K"+fitWidth(p.prefix+msg, summaryWidth))
	p.drawn = true
}

// end erases the line, if one was drawn; no update draws after it.
func (p *progressLine) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
}

// printSummary writes a summary for a person to read at a glance, in the
// period's time zone, within summaryWidth columns. For example:
//
//	Today: Sun 22 Nov 2026, 04:00 to 15:04 (Europe/Berlin)
//	7 h 0 min active, 1 h 30 min away; first activity 08:01, last 15:04; 412 switches
//
//	Top apps
//	  Code            ██████████████▍               3 h 20 min  48%
//	...
func printSummary(w io.Writer, s *activity.Summary) {
	loc := summaryZone(s.Period)
	multiDay := !sameDate(s.Period.Start.In(loc), s.Period.End.Add(-time.Nanosecond).In(loc))
	fmt.Fprintln(w, fitWidth(summaryHeadline(s, loc), summaryWidth))

	if s.ActiveS > 0 || s.AFKS > 0 {
		fmt.Fprintln(w, span(seconds(s.ActiveS))+" active, "+span(seconds(s.AFKS))+" away")
	}
	var when []string
	if s.FirstActivity != nil && s.LastActivity != nil {
		when = append(when, "first activity "+clock(*s.FirstActivity, loc, multiDay)+", last "+clock(*s.LastActivity, loc, multiDay))
	}
	if s.Switches > 0 {
		when = append(when, fmt.Sprintf("%d switches", s.Switches))
	}
	if len(when) > 0 {
		line := strings.Join(when, "; ")
		fmt.Fprintln(w, fitWidth(strings.ToUpper(line[:1])+line[1:], summaryWidth))
	}
	if len(s.Days) > 0 {
		printDays(w, s, loc)
	}

	if len(s.Top) == 0 && s.ActiveS <= 0 {
		fmt.Fprintln(w, "No active time in this period.")
	} else {
		fmt.Fprintln(w, "\nTop "+groupNoun(s.GroupBy))
		rows := append([]activity.Entry(nil), s.Top...)
		if s.OtherS > 0 {
			rows = append(rows, activity.Entry{Key: "(the rest)", DurationS: s.OtherS})
		}
		printRanking(w, rows, s.ActiveS, s.GroupBy)
	}

	if f := s.LongestFocus; f != nil {
		app, title := fitWidth(textOf(f.App), 28), textOf(f.Title)
		if app == "excluded" && title == "" {
			app = "[an excluded app]"
		}
		line := "Longest focus: " + span(seconds(f.DurationS)) + " in " + app + " from " + clock(f.Start, loc, multiDay)
		// The title gets the room the rest leaves on the line.
		if room := summaryWidth - width(line) - len(" ()"); title != "" && room >= 8 {
			line += " (" + fitWidth(title, room) + ")"
		}
		fmt.Fprintln(w, "\n"+line)
	}

	if len(s.Categories) > 0 && s.GroupBy != activity.GroupByCategory {
		fmt.Fprintln(w, "\nCategories")
		printRanking(w, s.Categories, s.ActiveS, activity.GroupByCategory)
	}

	var lines []string
	for _, id := range s.Freshness.StaleWatchers {
		lines = append(lines, fitWidth("Stale: "+textOf(id)+" has sent nothing lately", summaryWidth))
	}
	for _, n := range append([]string{s.Period.Note, s.Source.Note}, s.Notes...) {
		if n = textOf(n); n != "" {
			lines = append(lines, "Note: "+n)
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w)
		for _, l := range lines {
			for _, part := range wrapWidth(l, summaryWidth, "  ") {
				fmt.Fprintln(w, part)
			}
		}
	}
}

// printRanking writes entries, each with a bar as long as its share of
// the active time (the whole bar is all of it), its time and its share.
func printRanking(w io.Writer, rows []activity.Entry, active float64, groupBy string) {
	const durW, shareW = 11, 4
	names := make([]string, len(rows))
	nameW := 8
	for i, r := range rows {
		names[i] = entryName(r, groupBy)
		nameW = max(nameW, width(names[i]))
	}
	nameW = min(nameW, 28)
	barW := summaryWidth - 2 - nameW - 2 - 2 - durW - 2 - shareW
	for i, r := range rows {
		share := r.Share
		if share == 0 && active > 0 {
			share = r.DurationS / active
		}
		share = min(max(share, 0), 1)
		fmt.Fprintf(w, "  %s  %s  %*s  %*s\n", padWidth(fitWidth(names[i], nameW), nameW), bar(share, barW),
			durW, span(seconds(r.DurationS)), shareW, percent(share))
	}
}

// entryName is how an entry is named on the terminal.
func entryName(r activity.Entry, groupBy string) string {
	switch {
	case r.Excluded && groupBy == activity.GroupByApp:
		return "[excluded apps]"
	case r.Excluded:
		return "[excluded]"
	case r.Key == "":
		return "[unnamed]"
	}
	return textOf(r.Key)
}

func groupNoun(groupBy string) string {
	nouns := map[string]string{activity.GroupByTitle: "titles", activity.GroupByDomain: "domains", activity.GroupByCategory: "categories",
		activity.GroupByProject: "projects", activity.GroupByLanguage: "languages", activity.GroupByFile: "files"}
	return cmp.Or(nouns[groupBy], "apps")
}

// bar is share (0 to 1) of n columns in blocks, to an eighth of a column.
func bar(share float64, n int) string {
	eighths := int(math.Round(share * float64(n*8)))
	if share > 0 && eighths == 0 {
		eighths = 1 // a sliver: there is some
	}
	full, part := eighths/8, eighths%8
	b := strings.Repeat("█", full)
	cols := full
	if part > 0 {
		b += string([]rune("▏▎▍▌▋▊▉")[part-1])
		cols++
	}
	return b + strings.Repeat(" ", max(n-cols, 0))
}

func percent(share float64) string {
	if p := math.Round(100 * share); share <= 0 || p >= 1 {
		return strconv.Itoa(int(p)) + "%"
	}
	return "<1%"
}

func seconds(s float64) time.Duration {
	return time.Duration(math.Round(max(s, 0))) * time.Second
}

// summaryHeadline names the period, and whose time it is when a host was
// asked.
func summaryHeadline(s *activity.Summary, loc *time.Location) string {
	line := periodLine(s.Period, loc)
	if s.Source.HostSource == activity.HostFromArgument {
		line += ", on " + textOf(s.Source.Host)
		if s.Source.Host == activity.HostAll {
			line += " devices"
		}
	}
	return line
}

// periodLine names the period and when it is.
func periodLine(p activity.Period, loc *time.Location) string {
	start, end := p.Start.In(loc), p.End.In(loc)
	var when string
	switch {
	case sameDate(start, end):
		when = start.Format("Mon 2 Jan 2006, 15:04") + " to " + end.Format("15:04")
	case start.Year() == end.Year():
		when = start.Format("Mon 2 Jan 15:04") + " to " + end.Format("Mon 2 Jan 2006 15:04")
	default:
		when = start.Format("Mon 2 Jan 2006 15:04") + " to " + end.Format("Mon 2 Jan 2006 15:04")
	}
	if tz := textOf(p.Timezone); tz != "" && tz != "Local" {
		when += " (" + tz + ")"
	}
	return periodName(p.Label) + ": " + when
}

// periodName is a period's label in words.
func periodName(label string) string {
	names := map[string]string{activity.LabelToday: "Today", activity.LabelYesterday: "Yesterday",
		activity.LabelThisWeek: "This week", activity.LabelLastWeek: "Last week", activity.LabelCustom: "From", "": "From"}
	if name, ok := names[label]; ok {
		return name
	}
	if n, ok := strings.CutPrefix(label, "last_"); ok && len(n) > 1 {
		unit := map[byte]string{'h': "hour", 'd': "day"}[n[len(n)-1]]
		if v, err := strconv.Atoi(n[:len(n)-1]); err == nil && unit != "" {
			if v == 1 {
				return "Last " + unit
			}
			return fmt.Sprintf("Last %d %ss", v, unit)
		}
	}
	return textOf(label)
}

// summaryZone is the period's time zone, else its start's offset.
func summaryZone(p activity.Period) *time.Location {
	switch p.Timezone {
	case "Local":
		return time.Local
	case "":
	default:
		if loc, err := time.LoadLocation(p.Timezone); err == nil {
			return loc
		}
	}
	return p.Start.Location()
}

func sameDate(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

// clock is a time of day, with its weekday when the period spans days.
func clock(t time.Time, loc *time.Location, withDay bool) string {
	if withDay {
		return t.In(loc).Format("Mon 15:04")
	}
	return t.In(loc).Format("15:04")
}

// textOf makes text from a result fit for one terminal line: unsafe
// characters are removed again (a terminal does not take the service's
// word for it), line and tab breaks become spaces.
func textOf(s string) string {
	return strings.Join(strings.Fields(redact.Clean(s)), " ")
}

// width is how many terminal columns s takes: wide characters two,
// combining marks none.
func width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case r == 0x200D || unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0x303E, r >= 0x3041 && r <= 0x33FF,
		r >= 0x3400 && r <= 0x4DBF, r >= 0x4E00 && r <= 0x9FFF, r >= 0xA000 && r <= 0xA4CF,
		r >= 0xAC00 && r <= 0xD7A3, r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F,
		r >= 0xFF00 && r <= 0xFF60, r >= 0xFFE0 && r <= 0xFFE6, r >= 0x1F300 && r <= 0x1F64F,
		r >= 0x1F900 && r <= 0x1F9FF, r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}

// fitWidth cuts s to at most n columns on a character boundary, ending
// with "…" when cut.
func fitWidth(s string, n int) string {
	if width(s) <= n {
		return s
	}
	cols := 0
	for i, r := range s {
		rw := runeWidth(r)
		if cols+rw > n-1 {
			return s[:i] + "…"
		}
		cols += rw
	}
	return s
}

// wrapWidth breaks s at spaces into lines of at most n columns, the
// later ones indented.
func wrapWidth(s string, n int, indent string) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case width(line)+1+width(word) <= n:
			line += " " + word
		default:
			out = append(out, fitWidth(line, n))
			line = indent + word
		}
	}
	if line != "" {
		out = append(out, fitWidth(line, n))
	}
	return out
}

// padWidth pads s with spaces to n columns.
func padWidth(s string, n int) string {
	return s + strings.Repeat(" ", max(n-width(s), 0))
}
