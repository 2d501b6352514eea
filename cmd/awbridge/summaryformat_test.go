package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity"
)

// TestSummaryFormatsGolden: a summary (and one split by day, whose names
// include a spreadsheet formula, Markdown links, an image, HTML, a pipe, a
// newline and a bidi override) as CSV and Markdown. The CSV is RFC 4180 a
// reader takes back (every row as long as the header), no cell a formula;
// the Markdown tables keep their columns, and no name makes a link, an
// image or HTML.
func TestSummaryFormatsGolden(t *testing.T) {
	for _, name := range []string{"normal-day", "split-week"} {
		var s activity.Summary
		if err := json.Unmarshal(summaryJSON(t, name), &s); err != nil {
			t.Fatal(err)
		}
		t.Run(name+"/csv", func(t *testing.T) {
			var out bytes.Buffer
			if err := printSummaryAs(&out, &s, formatCSV); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(strings.NewReader(out.String())).ReadAll()
			if err != nil {
				t.Fatalf("the CSV does not read back: %v\n%s", err, out.String())
			}
			if want := max(len(s.Days), len(s.Top)) + 1; len(rows) != want {
				t.Errorf("%d rows, want %d", len(rows), want)
			}
			for _, r := range rows[1:] {
				for _, c := range r {
					if c != "" && strings.ContainsRune("=+-@", rune(c[0])) {
						t.Errorf("a cell a spreadsheet reads as a formula: %q", c)
					}
				}
			}
			checkGolden(t, filepath.Join("testdata", "summary", name+".csv"), out.String())
		})
		t.Run(name+"/markdown", func(t *testing.T) {
			var out bytes.Buffer
			if err := printSummaryAs(&out, &s, formatMarkdown); err != nil {
				t.Fatal(err)
			}
			cols := -1
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if !strings.HasPrefix(l, "|") {
					continue
				}
				n := strings.Count(l, "|") - strings.Count(l, `\|`)
				if cols == -1 {
					cols = n
				} else if n != cols {
					t.Errorf("a row of %d cells' pipes, the header has %d: %q", n, cols, l)
				}
			}
			unescaped := regexp.MustCompile(`\\.`).ReplaceAllString(out.String(), "")
			if i := strings.IndexAny(unescaped, "[]<>`*\u202e"); i >= 0 {
				t.Errorf("%q reaches the Markdown unescaped", unescaped[i:min(i+20, len(unescaped))])
			}
			checkGolden(t, filepath.Join("testdata", "summary", name+".md"), out.String())
		})
	}
}

// TestSummaryFormatFlags: --format takes text, csv or markdown, and not
// beside --json; --by is the tool's split, refused by the tool when it is
// not "day".
func TestSummaryFormatFlags(t *testing.T) {
	for _, tc := range []struct {
		format string
		json   bool
		want   string
	}{
		{"text", false, formatText}, {"csv", false, formatCSV}, {"markdown", false, formatMarkdown}, {"text", true, formatJSON},
		{"html", false, ""}, {"csv", true, ""},
	} {
		got, err := formatFlag(tc.format, tc.json)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("--format %s, --json %v: %q, %v; want %q", tc.format, tc.json, got, err, tc.want)
		}
	}
}

// TestSummaryCommandSplit runs `awbridge summary --by day` over the week
// recorded from the real aw-server (testdata/realaw/split): the text
// table has a row per day with the day's active time as the real server
// counted that day alone, and so has the CSV (hours to 0.01, the top app
// its longest) and the Markdown table; a split other than day is refused.
func TestSummaryCommandSplit(t *testing.T) {
	rec, srv := recordedRealAW(t, "split")
	env := actEnv(t, srv.URL, "AWBRIDGE_TIMEZONE="+rec.Timezone)
	answers := map[string]int{}
	for i, a := range rec.Periods {
		answers[a.Name] = i
	}
	week := rec.Periods[answers["week"]]
	args := []string{"summary", "--start", week.Start.Format(time.RFC3339), "--end", week.End.Format(time.RFC3339), "--by", "day", "--limit", "3"}
	days := []string{"sat", "sun", "mon", "tue", "wed", "thu", "fri"}

	code, out, errs := runBin(t, env, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, name := range days {
		a := rec.Periods[answers[name]]
		row := fmt.Sprintf("%-12s%-12s", a.Start.Format("Mon 2 Jan"), span(seconds(a.Active)))
		if !strings.Contains(out, "\n"+row) {
			t.Errorf("no row %q:\n%s", row, out)
		}
	}

	code, out, errs = runBin(t, env, append(args, "--format", "csv")...)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != len(days)+1 {
		t.Fatalf("csv: exit %d (%s), %v, %d rows:\n%s", code, errs, err, len(rows), out)
	}
	if h := strings.Join(rows[0][:6], ","); h != "date,start,end,active_h,app1,app1_h" {
		t.Errorf("csv header %s", h)
	}
	for i, name := range days {
		a, r := rec.Periods[answers[name]], rows[i+1]
		h, _ := strconv.ParseFloat(r[3], 64)
		top, topH := "", 0.0
		for _, app := range a.Apps {
			if app.Duration > topH*3600 {
				top, topH = app.App, app.Duration/3600
			}
		}
		if r[0] != a.Start.Format("2006-01-02") || math.Abs(h-a.Active/3600) > 0.0051 || r[4] != top || r[5] != strconv.FormatFloat(topH, 'f', 2, 64) {
			t.Errorf("csv row %v; the real aw-server: %s, %.4f h, top %s %.4f h", r, a.Start.Format("2006-01-02"), a.Active/3600, top, topH)
		}
	}

	code, out, _ = runBin(t, env, append(args, "--format", "markdown")...)
	if n := strings.Count(out, "\n| "); code != 0 || n != len(days)+2 {
		t.Errorf("markdown: exit %d, %d table rows, want %d:\n%s", code, n, len(days)+2, out)
	}

	code, _, errs = runBin(t, env, "summary", "--period", "last_7d", "--by", "week")
	if code != exitUsage || !strings.Contains(errs, "split") {
		t.Errorf("--by week: exit %d, stderr %q", code, errs)
	}
}
