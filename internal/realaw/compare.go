package realaw

import (
	"fmt"
	"math"
	"strings"

	"github.com/awbridge/awbridge/activity"
)

// CategoryTotal is the recorded time of a category with its
// subcategories ("Work" holds "Work > Programming").
func (a Answer) CategoryTotal(name string) float64 {
	var s float64
	for k, v := range a.totals(ByCategory) {
		if k == name || strings.HasPrefix(k, name+" > ") {
			s += v
		}
	}
	return s
}

// TitleTotals are the recorded titles' seconds keyed as TitleKey keys
// them.
func (a Answer) TitleTotals() map[string]float64 { return a.totals(ByTitle) }

// TitleKey keys an entry of a summary grouped by title in TitleTotals.
func TitleKey(e activity.Entry) string { return entryKey(e, ByTitle) }

// CheckPrevious compares a summary's comparison (compare "previous",
// grouped by group) with the recorded answer of the previous period: its
// bounds, its active time and each top entry's previous_s, to within tol
// seconds. An entry the recording has not (a title beyond its cut) is
// checked only when nothing was cut.
func CheckPrevious(s *activity.Summary, prev Answer, group string, tol float64) Diff {
	var d Diff
	bad := func(format string, args ...any) { d.Problems = append(d.Problems, fmt.Sprintf(format, args...)) }
	p := s.Previous
	if p == nil {
		bad("no previous period")
		return d
	}
	if !p.Start.Equal(prev.Start) || !p.End.Equal(prev.End) {
		bad("previous %s .. %s, recorded %s .. %s", p.Start, p.End, prev.Start, prev.End)
	}
	if diff := p.ActiveS - prev.Active; math.Abs(diff) > tol {
		bad("previous active_s %.1f, the real aw-server %.3f s", p.ActiveS, prev.Active)
	}
	want := prev.totals(group)
	for _, e := range s.Top {
		key := entryKey(e, group)
		w, ok := want[key]
		switch {
		case e.PreviousS == nil:
			bad("%q has no previous_s", key)
		case !ok && prev.TitlesRest != nil:
		case math.Abs(*e.PreviousS-w) > tol:
			bad("%q: previous_s %.1f, recorded %.3f s", key, *e.PreviousS, w)
		default:
			d.Max = max(d.Max, math.Abs(*e.PreviousS-w))
		}
	}
	return d
}
