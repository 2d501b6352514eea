package activity

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/nowframe"
)

// Fixed keys of rankings, timelines and switches.
const (
	// KeyExcluded stands for every app the privacy settings exclude
	// (privacy.exclude_apps) and every password manager: their time only.
	KeyExcluded = "excluded"
	// KeyWithheld stands for the titles of private browser windows (and
	// of windows showing a private tab or a password vault), per app.
	KeyWithheld = "withheld"
	// KeyAFK is the AFK entry of a summary with include_afk.
	KeyAFK = "afk"
)

// excludedMark is the data key that marks the tab events of a browser
// the privacy settings exclude, before the canonical computation (which
// mixes all browsers' tabs).
const excludedMark = "$awbridge_excluded"

// margin is how much of the neighbouring time a unit is computed with, so
// that flooding and the intersections near its bounds see what a
// computation of the whole period sees; the unit's results are then cut
// to the unit.
const margin = 15 * 60 * transform.Second

// focusGap is the largest gap between two events of one app that still
// counts as one unbroken stretch (flooded events meet exactly).
const focusGap = transform.Millisecond

// view is how a window event is shown, privacy applied.
type view struct {
	app, title string
	category   string
	excluded   bool // app is KeyExcluded; title and category empty
	withheld   bool // title withheld (private window, private tab, vault)
}

// tabView is how a browser tab event is shown, privacy applied.
type tabView struct {
	domain, url, title string
	hidden             bool // private tab or password vault: never shown
	excluded           bool // the browser is excluded: its time only
}

// gkey keys the maps of aggregates: a name (and a second one for
// titles), with flags.
type gkey struct {
	a, b  string
	flags uint8
}

const (
	flagExcluded uint8 = 1 << iota
	flagWithheld
)

// stretch is an unbroken stretch in one app, with its titles' time.
type stretch struct {
	app        string
	excluded   bool
	start, end int64
	titles     map[string]int64
}

func (s *stretch) clone() *stretch {
	c := *s
	c.titles = maps.Clone(s.titles)
	return &c
}

// join extends s by o (o follows s).
func (s *stretch) join(o *stretch) {
	s.end = o.end
	for k, v := range o.titles {
		s.titles[k] += v
	}
}

// title is the title the stretch spent most time on ("" when withheld or
// excluded); ties go to the smaller title, so results are stable.
func (s *stretch) title() string { return longest(s.titles, strings.Compare) }

// longest is m's key with the most time, the smallest by compare on a tie
// (the zero key for an empty m).
func longest[K comparable](m map[K]int64, compare func(a, b K) int) K {
	var (
		best K
		n    int64 = -1
	)
	for k, d := range m {
		if d > n || d == n && compare(k, best) < 0 {
			best, n = k, d
		}
	}
	return best
}

// aggregates are a unit's (or a period's) totals, privacy applied.
type aggregates struct {
	active, afk   int64
	apps, titles  map[gkey]int64
	cats, domains map[gkey]int64
	urls          map[gkey]int64
	// Editor time (editor.go): its sum, by project, language, and file
	// and language.
	editor                     int64
	projects, languages, files map[gkey]int64
	switches                   int
	first, last                view // of the first and last event (when any)
	firstAt, lastAt            int64
	any                        bool
	// Stretches: the first and last (which may be one), and the longest.
	firstS, lastS, longest *stretch
}

func newAggregates() aggregates {
	return aggregates{apps: map[gkey]int64{}, titles: map[gkey]int64{}, cats: map[gkey]int64{}, domains: map[gkey]int64{}, urls: map[gkey]int64{},
		projects: map[gkey]int64{}, languages: map[gkey]int64{}, files: map[gkey]int64{}}
}

// unitResult is the canonical computation of one unit of time (a closed
// day, or an hour of a day still open), cut to the unit, privacy applied.
// Immutable once built.
type unitResult struct {
	span   span64
	events []ev     // window events within active time, by start
	views  []uint32 // views[i] is events[i]'s view, an index into vs
	vs     []view
	tabs   []ev     // browser tab events that count, by start
	tviews []uint32 // tviews[i] is tabs[i]'s, an index into tvs
	tvs    []tabView
	away   []span64 // AFK time (the AFK watcher's "afk", flooded), by start
	edits  []ev     // editor events (editor.go), by start
	eviews []uint32 // eviews[i] is edits[i]'s, an index into evs
	evs    []edView
	agg    aggregates
}

func (u *unitResult) bytes() int64 {
	n := int64(len(u.events)+len(u.tabs)+len(u.edits))*bytesPerResultEvt + int64(len(u.away))*16
	n += int64(len(u.vs)+len(u.tvs)+len(u.evs)) * 96
	n += int64(len(u.agg.apps)+len(u.agg.titles)+len(u.agg.cats)+len(u.agg.domains)+len(u.agg.urls)) * 96
	n += int64(len(u.agg.projects)+len(u.agg.languages)+len(u.agg.files)) * 96
	return n + 512
}

// privacyRules apply the frames' privacy to stored events.
type privacyRules struct {
	p nowframe.Privacy
}

// browserExcluded reports whether the settings exclude a browser (the web
// UI's name): one of its app names is excluded, or an excluded app
// matches its pattern. Its tabs then show as KeyExcluded.
func (pr *privacyRules) browserExcluded(browser string) bool {
	names, pattern, known := transform.BrowserApps(browser)
	if !known {
		return false
	}
	if slices.ContainsFunc(names, pr.p.Excluded) {
		return true
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return false
	}
	for _, x := range pr.p.ExcludeApps {
		if x = strings.TrimSpace(x); x != "" && re.MatchString(x) {
			return true
		}
	}
	return false
}

// window is how a window with this app and title is shown: excluded apps
// and password managers as KeyExcluded, private windows' titles withheld,
// everything else as frames show it.
func (pr *privacyRules) window(app, title string) view {
	if _, pm := nowframe.PasswordManager(app, title); pm || pr.p.Excluded(app) {
		return view{app: KeyExcluded, excluded: true}
	}
	v := view{app: pr.p.App(app)}
	if nowframe.PrivateWindowTitle(title) {
		v.withheld = true
	} else {
		v.title = pr.p.Title(title)
	}
	return v
}

// tab is how a tab is shown.
func (pr *privacyRules) tab(rawURL, title string, incognito, excluded bool) tabView {
	switch {
	case incognito || nowframe.PasswordManagerURL(rawURL):
		return tabView{hidden: true}
	case excluded:
		return tabView{excluded: true}
	}
	tv := tabView{url: pr.p.URL(rawURL), title: pr.p.Title(title)}
	if tv.url != "" {
		if parts, err := transform.SplitURL(tv.url); err == nil {
			tv.domain = nowframe.SanitizeTitle(parts.Domain, 253)
		}
	}
	return tv
}

// computeUnit runs ActivityWatch's canonical computation over each
// bucket's events of the unit and its margins and cuts the result to span. It fails with ctx's error when ctx ends
// while the events are categorized (a classes setting of many rules over
// thousands of titles takes seconds).
func computeUnit(ctx context.Context, ins []transform.Input, span span64, opt transform.Options, pr *privacyRules) (*unitResult, error) {
	res, away, err := canonical(ctx, ins, opt)
	if err != nil {
		return nil, err
	}
	u := &unitResult{span: span}
	u.events = clipEvents(res.Events, span)
	u.tabs = clipEvents(res.Browser, span)
	for _, a := range clipEvents(away, span) {
		u.away = append(u.away, span64{a.Start, a.End()})
	}

	// Views, one per distinct app and title (and category).
	type wkey struct {
		app, title string
		class      int
	}
	byKey := map[wkey]uint32{}
	labels := map[int]string{}
	label := func(class int) string {
		l, seen := labels[class]
		if !seen {
			l = nowframe.SanitizeTitle(res.Classes.Label(class), 0)
			labels[class] = l
		}
		return l
	}
	// A withheld title never shows, nor does the category it matched: a
	// withheld window is categorized by its app alone.
	appClass := func(app string) int { return res.Classes.Categorize(transform.Fields{}.With("app", app)) }
	u.views = make([]uint32, len(u.events))
	for i, e := range u.events {
		app, _ := e.Data.Str("app")
		title, _ := e.Data.Str("title")
		k := wkey{app, title, e.Data.Class()}
		idx, ok := byKey[k]
		if !ok {
			v := pr.window(app, title)
			if !v.excluded {
				class := k.class
				if v.withheld {
					class = appClass(app)
				}
				v.category = label(class)
			}
			idx = uint32(len(u.vs))
			u.vs = append(u.vs, v)
			byKey[k] = idx
		}
		u.views[i] = idx
	}

	// Tab views.
	type tkey struct {
		url, title          string
		incognito, excluded bool
	}
	byTab := map[tkey]uint32{}
	u.tviews = make([]uint32, len(u.tabs))
	for i, e := range u.tabs {
		url, _ := e.Data.Str("url")
		title, _ := e.Data.Str("title")
		incognito, _ := e.Data.Bool("incognito")
		_, excluded := e.Data.Get(excludedMark)
		k := tkey{url, title, incognito, excluded}
		idx, ok := byTab[k]
		if !ok {
			idx = uint32(len(u.tvs))
			u.tvs = append(u.tvs, pr.tab(url, title, incognito, excluded))
			byTab[k] = idx
		}
		u.tviews[i] = idx
	}
	u.withholdUnderHiddenTabs(func(app string) string { return label(appClass(app)) })
	u.aggregate()
	return u, nil
}

// withholdUnderHiddenTabs withholds the title of every window event that
// shows a private tab or a password vault (a browser's window title
// repeats its tab's): it overlaps one for more than a pulsetime, or
// lies within one. category is the category of a withheld window of an
// app.
func (u *unitResult) withholdUnderHiddenTabs(category func(app string) string) {
	withheld := map[uint32]uint32{}
	j := 0
	for t, tab := range u.tabs {
		if !u.tvs[u.tviews[t]].hidden {
			continue
		}
		for j > 0 && u.events[j-1].End() > tab.Start {
			j-- // an earlier window event may reach into this tab
		}
		for ; j < len(u.events) && u.events[j].Start < tab.End(); j++ {
			e := u.events[j]
			// Flooding stretches a tab up to a pulsetime over the next
			// window: only a real overlap counts.
			overlap := min(e.End(), tab.End()) - max(e.Start, tab.Start)
			if overlap <= 0 || (overlap <= transform.DefaultPulsetime && overlap < e.Duration) {
				continue
			}
			v := u.vs[u.views[j]]
			if v.excluded || v.withheld {
				continue
			}
			w, ok := withheld[u.views[j]]
			if !ok {
				app, _ := e.Data.Str("app")
				v.title, v.withheld, v.category = "", true, category(app)
				w = uint32(len(u.vs))
				u.vs = append(u.vs, v)
				withheld[u.views[j]] = w
			}
			u.views[j] = w
		}
	}
}

// clipEvents keeps the parts of evs (by start) within span.
func clipEvents(evs []ev, span span64) []ev {
	out := make([]ev, 0, len(evs))
	for _, e := range evs {
		if c, ok := clip64(e, span.start, span.end); ok && c.Duration > 0 {
			out = append(out, c)
		}
	}
	return slices.Clip(out)
}

// sameFocus reports whether two views are one app, for stretches.
func sameFocus(a, b view) bool { return a.excluded == b.excluded && a.app == b.app }

// aggregate computes u.agg: time per view first, then per key; the
// stretches as event ranges, with titles only for those kept.
func (u *unitResult) aggregate() {
	u.agg = newAggregates()
	a := &u.agg
	perView := make([]int64, len(u.vs))
	type run struct {
		lo, hi     int
		start, end int64
	}
	var (
		cur                  run
		first, last, longest run
		haveCur, haveLongest bool
		prev                 uint32
	)
	closeRun := func() {
		if !haveCur {
			return
		}
		if first.hi == 0 {
			first = cur
		}
		last = cur
		if !haveLongest || cur.end-cur.start > longest.end-longest.start {
			longest, haveLongest = cur, true
		}
	}
	for i, e := range u.events {
		vi := u.views[i]
		v := &u.vs[vi]
		perView[vi] += e.Duration
		a.active += e.Duration
		if i == 0 {
			a.any, a.firstAt = true, e.Start
		} else if vi != prev && u.vs[prev] != *v {
			a.switches++
		}
		prev = vi
		a.lastAt = max(a.lastAt, e.End())
		if haveCur && sameFocus(u.vs[u.views[cur.lo]], *v) && e.Start-cur.end <= focusGap {
			cur.hi, cur.end = i+1, max(cur.end, e.End())
			continue
		}
		closeRun()
		cur, haveCur = run{i, i + 1, e.Start, e.End()}, true
	}
	closeRun()
	if a.any {
		a.first, a.last = u.vs[u.views[0]], u.vs[prev]
		mk := func(r run) *stretch {
			v := u.vs[u.views[r.lo]]
			s := &stretch{app: v.app, excluded: v.excluded, start: r.start, end: r.end, titles: map[string]int64{}}
			for k := r.lo; k < r.hi; k++ {
				s.titles[u.vs[u.views[k]].title] += u.events[k].Duration
			}
			return s
		}
		a.firstS = mk(first)
		a.lastS, a.longest = a.firstS, a.firstS
		if last != first {
			a.lastS = mk(last)
		}
		switch longest {
		case first:
		case last:
			a.longest = a.lastS
		default:
			a.longest = mk(longest)
		}
	}
	for vi, d := range perView {
		if d == 0 {
			continue
		}
		switch v := u.vs[vi]; {
		case v.excluded:
			k := gkey{a: KeyExcluded, flags: flagExcluded}
			a.apps[k], a.titles[k], a.cats[k] = a.apps[k]+d, a.titles[k]+d, a.cats[k]+d
		default:
			a.apps[gkey{a: v.app}] += d
			a.cats[gkey{a: v.category}] += d
			if v.withheld {
				a.titles[gkey{a: v.app, b: KeyWithheld, flags: flagWithheld}] += d
			} else {
				a.titles[gkey{a: v.app, b: v.title}] += d
			}
		}
	}
	for _, s := range u.away {
		a.afk += s.end - s.start
	}
	perTab := make([]int64, len(u.tvs))
	for i, e := range u.tabs {
		perTab[u.tviews[i]] += e.Duration
	}
	for ti, d := range perTab {
		switch tv := u.tvs[ti]; {
		case d == 0 || tv.hidden:
		case tv.excluded:
			a.domains[gkey{a: KeyExcluded, flags: flagExcluded}] += d
		default:
			if tv.domain != "" {
				a.domains[gkey{a: tv.domain}] += d
			}
			if tv.url != "" {
				a.urls[gkey{a: tv.url}] += d
			}
		}
	}
}
