package activity

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"time"
)

// Limits of the summary's rankings.
const (
	DefaultSummaryLimit = 10
	MaxSummaryLimit     = 100
)

// SummaryQuery is an activity_summary call.
type SummaryQuery struct {
	// Period, or Start and End: see ParseSpec ("" for all three: today).
	Period, Start, End string
	GroupBy            string   // GroupByApp (""), GroupByTitle, GroupByDomain or GroupByCategory
	Limit              int      // each ranking's (0: DefaultSummaryLimit)
	IncludeAFK         bool     // AFK time is one of the top entries
	Split              string   // "" or SplitDay: the days too (split.go)
	Progress           Progress // when set, hears how far the call is
	// Host is "" (this machine), a hostname or HostAll.
	Host string
	// Compare is "" or ComparePrevious (compare.go); Category a category
	// to drill into, with its subcategories (drill.go).
	Compare, Category string
}

// checkLimit applies a default and bounds to a limit argument.
func checkLimit(n, def, maxN int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0 || n > maxN:
		return 0, specError("limit", "must be between 1 and %d", maxN)
	}
	return n, nil
}

// Summary answers activity_summary: where the time of a period went.
// A bad argument is a *SpecError; ActivityWatch failing is an
// *upstream.Error, a *ReadError or a *nowframe.UnreadableError.
func (s *Service) Summary(ctx context.Context, q SummaryQuery) (*Summary, error) {
	spec, err := ParseSpec(q.Period, q.Start, q.End)
	if err != nil {
		return nil, err
	}
	groupBy := q.GroupBy
	switch groupBy {
	case "":
		groupBy = GroupByApp
	case GroupByApp, GroupByTitle, GroupByDomain, GroupByCategory, GroupByProject, GroupByLanguage, GroupByFile:
	default:
		return nil, specError("group_by", "unknown grouping %s (expected app, title, domain, category, project, language or file)", quote(groupBy))
	}
	limit, err := checkLimit(q.Limit, DefaultSummaryLimit, MaxSummaryLimit)
	if err != nil {
		return nil, err
	}
	if err := cmp.Or(checkCompare(q.Compare), checkDrill(q)); err != nil {
		return nil, err
	}
	resolve, err := splitResolve(q.Split, spec, limit)
	if err != nil {
		return nil, err
	}
	if isEditorGroup(groupBy) {
		if err := s.needEditor(ctx, groupBy, q.Host); err != nil {
			return nil, err
		}
	}
	keep, err := s.drill(ctx, q.Category)
	if err != nil {
		return nil, err
	}
	fn := q.Progress
	if q.Compare != "" {
		fn = halves(q.Progress, 0)
	}
	pr, err := s.prepare(ctx, q.Host, isEditorGroup(groupBy), resolve, fn)
	if err != nil {
		return nil, err
	}
	kept := pr.only(keep)
	sum := kept.summary(groupBy, limit, q.IncludeAFK)
	if q.Split != "" {
		sum.Days = kept.days(groupBy, limit, q.IncludeAFK)
	}
	if q.Compare != "" {
		prev, err := s.prepare(ctx, q.Host, isEditorGroup(groupBy), func(Calendar, time.Time) (Period, error) { return previousOf(spec, pr.period) }, halves(q.Progress, 1))
		if err != nil {
			return nil, err
		}
		sum.compare(prev.only(keep), q.IncludeAFK)
	}
	return sum, nil
}

// total merges the units' aggregates: sums, switches between units, and
// stretches joined across units (its first and last stretches are not
// set).
func (pr *prepared) total() aggregates {
	t := newAggregates()
	var cur *stretch
	consider := func(s *stretch) {
		if s != nil && (t.longest == nil || s.end-s.start > t.longest.end-t.longest.start) {
			t.longest = s
		}
	}
	for _, u := range pr.units {
		a := &u.agg
		t.active += a.active
		t.afk += a.afk
		t.editor += a.editor
		for _, m := range []struct{ into, from map[gkey]int64 }{
			{t.apps, a.apps}, {t.titles, a.titles}, {t.cats, a.cats}, {t.domains, a.domains}, {t.urls, a.urls},
			{t.projects, a.projects}, {t.languages, a.languages}, {t.files, a.files}} {
			for k, v := range m.from {
				m.into[k] += v
			}
		}
		if !a.any {
			continue
		}
		if t.any && t.last != a.first {
			t.switches++
		}
		if !t.any {
			t.firstAt = a.firstAt
		}
		t.any, t.last, t.switches, t.lastAt = true, a.last, t.switches+a.switches, max(t.lastAt, a.lastAt)

		f := a.firstS
		if cur != nil && cur.app == f.app && cur.excluded == f.excluded && f.start-cur.end <= focusGap {
			cur.join(f)
		} else {
			consider(cur)
			cur = f.clone()
		}
		if a.firstS == a.lastS {
			continue
		}
		consider(cur)
		consider(a.longest)
		cur = a.lastS.clone()
	}
	consider(cur)
	return t
}

// seconds is a duration in microseconds as seconds to 0.1 s.
func seconds(us int64) float64 { return math.Round(float64(us)/1e5) / 10 }

// share is part over whole to 0.001 (0 when whole is 0).
func share(part, whole int64) float64 {
	if whole <= 0 {
		return 0
	}
	return math.Round(float64(part)/float64(whole)*1000) / 1000
}

// ranked is one ranking entry before rendering.
type ranked struct {
	k  gkey
	us int64
}

// rank orders m longest first (then by key), and returns the first limit
// and the total of the rest.
func rank(m map[gkey]int64, limit int) ([]ranked, int64) {
	all := make([]ranked, 0, len(m))
	for k, v := range m {
		if v > 0 {
			all = append(all, ranked{k, v})
		}
	}
	slices.SortFunc(all, func(x, y ranked) int {
		if c := cmp.Compare(y.us, x.us); c != 0 {
			return c
		}
		if c := cmp.Compare(x.k.a, y.k.a); c != 0 {
			return c
		}
		if c := cmp.Compare(x.k.b, y.k.b); c != 0 {
			return c
		}
		return cmp.Compare(x.k.flags, y.k.flags)
	})
	var rest int64
	if len(all) > limit {
		for _, r := range all[limit:] {
			rest += r.us
		}
		all = all[:limit]
	}
	return all, rest
}

// entries render a ranking: by name (app, domain, URL or category), or
// by title (a key's b) with its app.
func entries(rs []ranked, whole int64, byTitle bool) []Entry {
	out := make([]Entry, 0, len(rs))
	for _, r := range rs {
		e := Entry{Key: r.k.a, DurationS: seconds(r.us), Share: share(r.us, whole)}
		if byTitle {
			e.Key, e.App = r.k.b, r.k.a
		}
		switch {
		case r.k.a == afkKey:
			e.Key, e.App, e.AFK = KeyAFK, "", true
		case r.k.flags&flagExcluded != 0:
			e.Key, e.App, e.Excluded = KeyExcluded, "", true
		case r.k.flags&flagWithheld != 0:
			e.Key, e.Withheld = KeyWithheld, true
		}
		out = append(out, e)
	}
	return out
}

// afkKey is the AFK entry's key in a ranking: never a real one.
const afkKey = "\x00afk"

// group is the totals of a grouping, with the AFK entry's when
// includeAFK.
func (t *aggregates) group(groupBy string, includeAFK bool) map[gkey]int64 {
	group := map[string]map[gkey]int64{GroupByApp: t.apps, GroupByTitle: t.titles, GroupByDomain: t.domains, GroupByCategory: t.cats,
		GroupByProject: t.projects, GroupByLanguage: t.languages, GroupByFile: t.files}[groupBy]
	if includeAFK {
		group = maps.Clone(group)
		group[gkey{a: afkKey}] = t.afk
	}
	return group
}

// summary renders the period's totals.
func (pr *prepared) summary(groupBy string, limit int, includeAFK bool) *Summary {
	t := pr.total()
	loc := pr.period.Start.Location()
	at := func(x int64) *time.Time { v := time.UnixMicro(x).In(loc); return &v }
	sum := &Summary{Period: pr.period, GroupBy: groupBy, ActiveS: seconds(t.active), AFKS: seconds(t.afk),
		Switches: t.switches, Source: pr.source, Freshness: pr.fresh, Notes: pr.notes}
	whole := t.active
	if isEditorGroup(groupBy) {
		// Editor time is not cut by AFK time: an AFK entry beside it
		// would count some minutes twice.
		whole, sum.EditorS, includeAFK = t.editor, seconds(t.editor), false
	}
	if includeAFK {
		whole += t.afk
	}
	group := t.group(groupBy, includeAFK)
	top, rest := rank(group, limit)
	sum.Top, sum.OtherS, sum.ranked = entries(top, whole, groupBy == GroupByTitle), seconds(rest), top
	if isEditorGroup(groupBy) {
		editorEntries(sum.Top, top, group, groupBy)
	}
	ranking := func(m map[gkey]int64) []Entry {
		r, _ := rank(m, limit)
		return entries(r, t.active, false)
	}
	if groupBy != GroupByDomain {
		sum.TopDomains = ranking(t.domains)
	}
	if groupBy == GroupByTitle {
		sum.TopURLs = ranking(t.urls)
	}
	sum.domainNote()
	if groupBy != GroupByCategory {
		sum.Categories = ranking(t.cats)
	}
	if t.any {
		sum.FirstActivity, sum.LastActivity = at(t.firstAt), at(t.lastAt)
	} else {
		sum.Notes = appendNote(sum.Notes, "no activity in this period")
	}
	if s := t.longest; s != nil {
		sum.LongestFocus = &Focus{App: s.app, Title: s.title(), Start: *at(s.start), DurationS: seconds(s.end - s.start), Excluded: s.excluded}
	}
	return sum
}
