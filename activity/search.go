package activity

// Search: when did the person see something ("when did I last work on
// ACME-1234?"). It runs over the period's canonical events, the summary's
// and the timeline's (window events within not-AFK time, tabs while their
// browser has focus), as the privacy rules and the person's privacy
// filters left them: the words are looked for in what an answer would
// show (the app, the title after masking and the title rules, the tab's
// domain, the editor's project and file paths), never in the raw title,
// and an excluded app, a withheld title or a private tab never matches.

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
)

// Bounds of activity_search's arguments.
const (
	DefaultSearchPeriod = "last_30d"
	DefaultSearchLimit  = 20
	MaxSearchLimit      = 100
	MaxSearchQuery      = 200 // bytes
	maxSearchWords      = 16
)

// SearchQuery is an activity_search call.
type SearchQuery struct {
	// Query holds the words that must all match (case-insensitive, each
	// anywhere in the app, title, domain, or the editor's project or
	// file).
	Query string
	// Period, or Start and End: see ParseSpec ("" for all three:
	// DefaultSearchPeriod).
	Period, Start, End string
	Limit              int      // matches shown (0: DefaultSearchLimit)
	Progress           Progress // when set, hears how far the call is
	// Host is "" (this machine), a hostname or HostAll.
	Host string
}

// Search is the result of activity_search: the stretches of a period
// whose app, title, tab domain or editor project and file hold every
// word, newest first.
type Search struct {
	Period Period `json:"period"`
	// TotalS is the time of every match (not only those shown); Count
	// counts them.
	TotalS float64 `json:"total_s"`
	Count  int     `json:"count"`
	// Matches are the newest, at most the limit.
	Matches   []Match   `json:"matches"`
	Source    Source    `json:"source"`
	Freshness Freshness `json:"freshness"`
	Notes     []string  `json:"notes,omitempty"`
}

// Match is one stretch in one app where every word matched: consecutive
// matching events joined. Title, Domain and Project are those shown
// together longest within it.
type Match struct {
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	DurationS float64   `json:"duration_s"`
	App       string    `json:"app,omitempty"`
	Title     string    `json:"title,omitempty"`
	Domain    string    `json:"domain,omitempty"`
	Project   string    `json:"project,omitempty"`
}

// searchWords are the query's distinct words, lower-cased, or a
// *SpecError.
func searchWords(q string) ([]string, error) {
	if len(q) > MaxSearchQuery {
		return nil, specError("query", "is longer than %d bytes", MaxSearchQuery)
	}
	var words []string
	for _, w := range strings.Fields(strings.ToLower(q)) {
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	switch {
	case len(words) == 0:
		return nil, specError("query", "is empty: give the words to look for (a ticket, a page, a project)")
	case len(words) > maxSearchWords:
		return nil, specError("query", "has more than %d words", maxSearchWords)
	}
	return words, nil
}

// Search answers activity_search. A bad argument is a *SpecError;
// ActivityWatch failing is as for Summary.
func (s *Service) Search(ctx context.Context, q SearchQuery) (*Search, error) {
	words, err := searchWords(q.Query)
	if err != nil {
		return nil, err
	}
	period := q.Period
	if period == "" && q.Start == "" && q.End == "" {
		period = DefaultSearchPeriod
	}
	spec, err := ParseSpec(period, q.Start, q.End)
	if err != nil {
		return nil, err
	}
	limit, err := checkLimit(q.Limit, DefaultSearchLimit, MaxSearchLimit)
	if err != nil {
		return nil, err
	}
	pr, err := s.prepare(ctx, q.Host, true, spec.resolve, q.Progress)
	if err != nil {
		return nil, err
	}
	return pr.search(words, limit), nil
}

// wordMasks say which words each shown string holds (bit i: words[i]),
// computed once per string.
type wordMasks struct {
	words []string
	memo  map[string]uint32
}

func (w *wordMasks) of(s string) uint32 {
	if s == "" {
		return 0
	}
	m, ok := w.memo[s]
	if !ok {
		low := strings.ToLower(s)
		for i, word := range w.words {
			if strings.Contains(low, word) {
				m |= 1 << i
			}
		}
		w.memo[s] = m
	}
	return m
}

// piece is a part of a window event where every word matched, with the
// tab's domain and the editor's project shown there.
type piece struct {
	start, end      int64
	k               int // the window event (f.items)
	domain, project string
}

// search finds the matching pieces of the period's window events, joins
// consecutive ones of one app and renders the newest limit.
func (pr *prepared) search(words []string, limit int) *Search {
	f := pr.flatten()
	f.indexEditors()
	wm := &wordMasks{words: words, memo: map[string]uint32{}}
	all := uint32(1)<<len(words) - 1
	var pieces []piece
	for k, it := range f.items {
		v := f.view(it)
		if v.excluded || v.withheld {
			continue
		}
		pieces = f.matchItem(pieces, k, wm.of(v.app)|wm.of(v.title), all, wm)
	}
	out := &Search{Period: pr.period, Matches: []Match{}, Source: pr.source, Freshness: pr.fresh, Notes: pr.notes}
	var runs [][]piece
	for i := 0; i < len(pieces); {
		j := i + 1
		for j < len(pieces) && pieces[j].start-pieces[j-1].end <= focusGap &&
			sameFocus(f.view(f.items[pieces[j].k]), f.view(f.items[pieces[i].k])) {
			j++
		}
		runs = append(runs, pieces[i:j])
		i = j
	}
	var total int64
	for _, p := range pieces {
		total += p.end - p.start
	}
	out.TotalS, out.Count = seconds(total), len(runs)
	if len(runs) == 0 {
		out.Notes = appendNote(out.Notes, "nothing matched in this period: a longer one (up to last_366d) may hold it")
	}
	loc := pr.period.Start.Location()
	for i := len(runs) - 1; i >= 0 && len(out.Matches) < limit; i-- {
		out.Matches = append(out.Matches, f.renderMatch(runs[i], loc))
	}
	return out
}

// matchItem appends the pieces of window event k where every word (all)
// matched: base are the words its app and title hold; its time is cut
// where a tab or an editor event (of the editor's app) starts or ends.
// A piece under a private tab never matches.
func (f *flat) matchItem(pieces []piece, k int, base, all uint32, wm *wordMasks) []piece {
	it := f.items[k]
	v := f.view(it)
	cuts := []int64{it.start, it.end}
	for i := f.tabIndex(it.start); i < len(f.tabs) && f.tabs[i].start < it.end; i++ {
		cuts = append(cuts, f.tabs[i].start, f.tabs[i].end)
	}
	editor := f.ed.apps[v.app]
	if editor {
		for i := firstReaching(f.edits, it.start, func(t item) (int64, int64) { return t.start, t.end }); i < len(f.edits) && f.edits[i].start < it.end; i++ {
			cuts = append(cuts, f.edits[i].start, f.edits[i].end)
		}
	}
	if len(cuts) == 2 {
		if base == all {
			pieces = append(pieces, piece{start: it.start, end: it.end, k: k})
		}
		return pieces
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	for c := 0; c+1 < len(cuts); c++ {
		a, b := cuts[c], cuts[c+1]
		if a < it.start || b > it.end {
			continue
		}
		p := piece{start: a, end: b, k: k}
		m, private := base, false
		f.tabsWithin(a, b, func(tv tabView, _ int64) {
			private = private || tv.hidden || tv.excluded
			m |= wm.of(tv.domain)
			p.domain = cmp.Or(p.domain, tv.domain)
		})
		if editor {
			f.editsWithin(a, b, func(ev edView, _ int64) {
				if !ev.excluded {
					m |= wm.of(ev.project) | wm.of(ev.file)
					p.project = cmp.Or(p.project, ev.project)
				}
			})
		}
		if m == all && !private {
			pieces = append(pieces, p)
		}
	}
	return pieces
}

// renderMatch shows a run of pieces: the title and domain shown together
// longest, the project longest.
func (f *flat) renderMatch(run []piece, loc *time.Location) Match {
	type shown struct{ title, domain string }
	times, projects := map[shown]int64{}, map[string]int64{}
	var total int64
	for _, p := range run {
		d := p.end - p.start
		total += d
		times[shown{f.view(f.items[p.k]).title, p.domain}] += d
		if p.project != "" {
			projects[p.project] += d
		}
	}
	best := longest(times, func(a, b shown) int { return cmp.Or(cmp.Compare(a.title, b.title), cmp.Compare(a.domain, b.domain)) })
	first, last := run[0], run[len(run)-1]
	m := Match{Start: time.UnixMicro(first.start).In(loc), End: time.UnixMicro(last.end).In(loc), DurationS: seconds(total),
		App: f.view(f.items[first.k]).app, Title: best.title, Domain: best.domain}
	if p := longest(projects, strings.Compare); p != "" {
		m.Project = f.ed.names[p]
	}
	return m
}
