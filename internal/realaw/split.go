package realaw

import (
	"fmt"
	"math"

	"github.com/awbridge/awbridge/activity"
)

// CheckDay compares one day of a summary split by day (limit entries at
// most) with the answer recorded for that day alone: its start and end,
// its active time (editor time for the editor groupings), each top entry
// and the time beyond them, to within tol seconds.
func CheckDay(day activity.Day, a Answer, group string, limit int, tol float64) Diff {
	var d Diff
	bad := func(format string, args ...any) { d.Problems = append(d.Problems, fmt.Sprintf(format, args...)) }
	if !day.Start.Equal(a.Start) || !day.End.Equal(a.End) {
		bad("day %s .. %s, recorded %s .. %s", day.Start, day.End, a.Start, a.End)
	}
	var want map[string]float64
	whole, wantWhole, rest := day.ActiveS, a.Active, 0.0
	switch group {
	case activity.GroupByProject, activity.GroupByLanguage, activity.GroupByFile:
		if a.Editor == nil {
			return Diff{Problems: []string{"no editor answer recorded"}}
		}
		whole, want, wantWhole = day.EditorS, a.Editor.editorTotals(group), a.Editor.Duration
	default:
		want = a.totals(group)
		if group == ByTitle && a.TitlesRest != nil {
			rest = a.TitlesRest.Duration
		}
	}
	if diff := whole - wantWhole; math.Abs(diff) > tol {
		bad("%s: %.1f s, the real aw-server %.3f s (off by %.3f s)", day.Date, whole, wantWhole, diff)
	}
	r := CheckRanking(keyed(day.Top, group), day.OtherS, want, rest, limit, tol)
	for _, p := range r.Problems {
		bad("%s: top: %s", day.Date, p)
	}
	d.Max = r.Max
	return d
}
