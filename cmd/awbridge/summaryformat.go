package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/awbridge/awbridge/activity"
)

// Output formats of `awbridge today` and `awbridge summary` (--format;
// --json is formatJSON).
const (
	formatText     = "text"     // for a person at a terminal (printSummary)
	formatCSV      = "csv"      // for a spreadsheet (RFC 4180), hours to 0.01
	formatMarkdown = "markdown" // a pipe table, for a note
	formatJSON     = "json"     // the tool's result alone
)

// formatFlag checks --format (and --json beside it): one of the formats.
func formatFlag(format string, asJSON bool) (string, error) {
	switch {
	case asJSON && format != formatText:
		return "", fmt.Errorf("give --json or --format, not both")
	case asJSON:
		return formatJSON, nil
	case format == formatText, format == formatCSV, format == formatMarkdown:
		return format, nil
	}
	return "", fmt.Errorf("--format: unknown format %q (expected text, csv or markdown)", fitWidth(format, 20))
}

// printSummaryAs writes s in format: text as printSummary, csv and
// markdown as a table of the days (split by day) or of the top entries.
func printSummaryAs(w io.Writer, s *activity.Summary, format string) error {
	switch format {
	case formatCSV:
		return summaryCSV(w, s)
	case formatMarkdown:
		summaryMarkdown(w, s)
	default:
		printSummary(w, s)
	}
	return nil
}

// printDays writes the days of a summary split by day, one row each: the
// date, the active time and as many top entries as the line holds (a day
// only partly within the period says which hours). For example:
//
//	Day          Active     Top apps
//	Mon 23 Nov   9 h 42 min Code 3 h 45 min, Google-chrome 3 h 22 min, Slack…
func printDays(w io.Writer, s *activity.Summary, loc *time.Location) {
	const dateW, activeW = 12, 12
	fmt.Fprintf(w, "\n%-*s%-*s%s\n", dateW, "Day", activeW, "Active", "Top "+groupNoun(s.GroupBy))
	for _, d := range s.Days {
		top := dayCell(d, s.GroupBy, loc, textOf)
		fmt.Fprintln(w, fitWidth(fmt.Sprintf("%-*s%-*s%s", dateW, d.Start.In(loc).Format("Mon 2 Jan"), activeW, span(seconds(d.ActiveS)), top), summaryWidth))
	}
	fmt.Fprintf(w, "%-*s%s\n", dateW, "Total", span(seconds(s.ActiveS)))
}

// dayCell is a day's top entries in a line, names passed through esc:
// name and time, comma-separated, after the hours of a day only partly
// within the period.
func dayCell(d activity.Day, groupBy string, loc *time.Location, esc func(string) string) string {
	parts := make([]string, 0, len(d.Top)+1)
	if h := partHours(d, loc); h != "" {
		parts = append(parts, "("+h+")")
	}
	for _, e := range d.Top {
		parts = append(parts, esc(entryName(e, groupBy))+" "+span(seconds(e.DurationS))+",")
	}
	return strings.TrimSuffix(strings.Join(parts, " "), ",")
}

// partHours is the hours of a day only partly within the period
// ("12:00-24:00"), "" for a whole day.
func partHours(d activity.Day, loc *time.Location) string {
	if day := d.End.Sub(d.Start); day >= 23*time.Hour && d.Start.In(loc).Format("15:04") == d.End.In(loc).Format("15:04") {
		return ""
	}
	return d.Start.In(loc).Format("15:04") + "-" + d.End.In(loc).Format("15:04")
}

// hours is seconds as hours to 0.01, for a spreadsheet.
func hours(s float64) string { return strconv.FormatFloat(s/3600, 'f', 2, 64) }

// summaryCSV writes the days (one row each: date, start, end, active
// hours, then each top entry and its hours) or, without days, the top
// entries (name, the app of a title or the language of a file, hours,
// share). Times are RFC 3339 in the period's zone, durations hours to
// 0.01.
func summaryCSV(w io.Writer, s *activity.Summary) error {
	cw := csv.NewWriter(w)
	loc := summaryZone(s.Period)
	noun := strings.TrimSuffix(groupNoun(s.GroupBy), "s")
	if len(s.Days) > 0 {
		n := 0
		for _, d := range s.Days {
			n = max(n, len(d.Top))
		}
		head := []string{"date", "start", "end", "active_h"}
		for i := range n {
			head = append(head, fmt.Sprintf("%s%d", noun, i+1), fmt.Sprintf("%s%d_h", noun, i+1))
		}
		_ = cw.Write(head)
		for _, d := range s.Days {
			row := []string{d.Date, d.Start.In(loc).Format(time.RFC3339), d.End.In(loc).Format(time.RFC3339), hours(d.ActiveS)}
			for _, e := range d.Top {
				row = append(row, csvText(entryName(e, s.GroupBy)), hours(e.DurationS))
			}
			_ = cw.Write(append(row, make([]string, len(head)-len(row))...)) // every row as long
		}
	} else {
		extra := map[string]string{activity.GroupByTitle: "app", activity.GroupByFile: "language"}[s.GroupBy]
		head := []string{noun, "hours", "share"}
		if extra != "" {
			head = []string{noun, extra, "hours", "share"}
		}
		_ = cw.Write(head)
		for _, e := range s.Top {
			row := []string{csvText(entryName(e, s.GroupBy)), hours(e.DurationS), strconv.FormatFloat(e.Share, 'f', 3, 64)}
			switch extra {
			case "app":
				row = append([]string{row[0], csvText(textOf(e.App))}, row[1:]...)
			case "language":
				row = append([]string{row[0], csvText(textOf(e.Language))}, row[1:]...)
			}
			_ = cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvText keeps a spreadsheet from reading a name as a formula: one
// starting with = + - @ (or a tab or carriage return) gets a leading '.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// summaryMarkdown writes the period's line, then the days (date, active
// time, top entries) or, without days, the active time and the top
// entries as a pipe table; names are escaped so that a title cannot make
// a link, an image, HTML or another cell.
func summaryMarkdown(w io.Writer, s *activity.Summary) {
	loc := summaryZone(s.Period)
	fmt.Fprintln(w, mdText(summaryHeadline(s, loc)))
	fmt.Fprintln(w)
	if len(s.Days) > 0 {
		fmt.Fprintln(w, "| Day | Active | Top "+groupNoun(s.GroupBy)+" |")
		fmt.Fprintln(w, "|---|---:|---|")
		for _, d := range s.Days {
			top := dayCell(d, s.GroupBy, loc, mdText)
			fmt.Fprintf(w, "| %s | %s | %s |\n", d.Start.In(loc).Format("Mon 2 Jan"), span(seconds(d.ActiveS)), top)
		}
		fmt.Fprintf(w, "| Total | %s | |\n", span(seconds(s.ActiveS)))
		return
	}
	fmt.Fprintln(w, span(seconds(s.ActiveS))+" active, "+span(seconds(s.AFKS))+" away")
	fmt.Fprintln(w)
	title := groupNoun(s.GroupBy)
	fmt.Fprintln(w, "| "+strings.ToUpper(title[:1])+title[1:]+" | Time | Share |")
	fmt.Fprintln(w, "|---|---:|---:|")
	for _, e := range s.Top {
		fmt.Fprintf(w, "| %s | %s | %s |\n", mdText(entryName(e, s.GroupBy)), span(seconds(e.DurationS)), percent(e.Share))
	}
}

// mdText escapes the characters that make Markdown of text.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range textOf(s) {
		if strings.ContainsRune("\\`*_[]<>|~#!&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
