package transform

import (
	"context"
	"regexp"
	"slices"
	"strings"
)

// The browsers ActivityWatch's web UI knows, in its order: the app names of
// their windows and a pattern for the process names, as aw-core receives it
// (the web UI's JSON escapes are not undone: "Arc" matches, "Arc.exe" not).
var webUIBrowsers = []struct {
	name  string
	apps  []string
	regex string
}{
	{"chrome", []string{"com.google.Chrome", "com.google.ChromeDev", "org.chromium.Chromium"}, `(?i)^(google[-_ ]?chrome|chrome|chromium)`},
	{"firefox", []string{"org.mozilla.firefox", "io.gitlab.librewolf-community", "net.waterfox.waterfox"}, `(?i)(firefox|librewolf|waterfox|nightly)`},
	{"opera", []string{"com.opera.Opera"}, `(?i)(opera)`},
	{"brave", []string{"com.brave.Browser"}, `(?i)(brave)`},
	{"edge", []string{"com.microsoft.Edge", "com.microsoft.EdgeDev"}, `(?i)^(microsoft[-_ ]?edge|msedge)`},
	{"arc", nil, `(?i)^arc(\\.exe)?$`},
	{"vivaldi", []string{"com.vivaldi.Vivaldi"}, `(?i)(vivaldi)`},
	{"orion", []string{"Orion"}, `(?i)(orion)`},
	{"yandex", []string{"ru.yandex.Browser"}, `(?i)(yandex)`},
	{"zen", []string{"app.zen_browser.zen"}, `(?i)(zen)`},
	{"floorp", []string{"one.ablaze.floorp"}, `(?i)(floorp)`},
	{"helium", []string{"net.imput.helium"}, `(?i)(helium)`},
}

// BrowserBucket is a browser and the bucket of its tab events.
type BrowserBucket struct {
	Browser  string // the web UI's name: "chrome", "firefox", ...
	BucketID string
}

// BrowserBuckets picks the tab-event buckets as the web UI does: for each
// browser it knows, in its order, the first of bucketIDs (the host's
// web.tab.current buckets) whose id contains the browser's name.
func BrowserBuckets(bucketIDs []string) []BrowserBucket {
	var out []BrowserBucket
	for _, b := range webUIBrowsers {
		for _, id := range bucketIDs {
			if strings.Contains(id, b.name) {
				out = append(out, BrowserBucket{b.name, id})
				break
			}
		}
	}
	return out
}

// BrowserApps returns the app names and the app-name pattern by which the
// web UI recognises the windows of a browser ("chrome", ...); ok is false
// for a browser it does not know.
func BrowserApps(browser string) (names []string, pattern string, ok bool) {
	for _, b := range webUIBrowsers {
		if b.name == browser {
			return slices.Clone(b.apps), b.regex, true
		}
	}
	return nil, "", false
}

// Browser is one browser's tab events (a web.tab.current bucket).
type Browser struct {
	Name   string // as BrowserBuckets names it; an unknown name matches no window
	Events []Event
}

// Input is what CanonicalContext reads: the raw events of one host's
// buckets over a period, in any order (it sorts).
type Input struct {
	Window   []Event   // aw-watcher-window (currentwindow)
	AFK      []Event   // aw-watcher-afk (afkstatus)
	Browsers []Browser // in BrowserBuckets's order
	// NoAFK marks a host without an AFK watcher (ActivityWatch's Android
	// app): its window events all count as active, as the web UI's Android
	// view counts them.
	NoAFK bool
}

// Options are the web UI's query options; the zero value is its default
// view (AFK time excluded, audible tabs active, no stopwatch).
type Options struct {
	// AlwaysActivePattern is the always_active_pattern setting; "" for none.
	// A pattern that does not compile is ignored.
	AlwaysActivePattern string
	// Classes categorize the window events; nil means DefaultClasses().
	Classes Classes
}

// Result is the canonical events of a period.
type Result struct {
	Events  []Event // window events within active time, each in a category (Fields.Class)
	NotAFK  []Event // the active time, with empty data
	Browser []Event // tab events while their browser had focus, URLs split ($domain...)
	Classes Classes // the classes the events were categorized with
}

// CanonicalContext is ActivityWatch's canonical desktop query as its web
// UI runs it by default (canonicalEvents and browserEvents of aw-webui's
// queries.ts, with the full desktop query's final split of tab URLs), on
// events already fetched:
//
//  1. window events are flooded (DefaultPulsetime);
//  2. active time is the flooded not-afk events, joined with the windows
//     whose app or title matches AlwaysActivePattern;
//  3. each browser's flooded tab events are cut to the time a window of
//     that browser (by app name or pattern) had focus, and their URLs
//     split; the time of audible tabs joins the active time;
//  4. window events are cut to the active time;
//  5. window events are categorized.
//
// Every result list is in start order. It reproduces the query's quirks
// too: a window matched by a browser's names and by its pattern counts
// twice for its tabs, and an event that period_union takes over on its own
// (an audible tab or an always-active window that touches no other active
// time) loses its data, as aw-core clears it in place. The input is not
// changed. It stops with ctx's error when ctx ends while the window events
// are categorized, the costly step (every rule for each distinct title).
func CanonicalContext(ctx context.Context, in Input, opt Options) (Result, error) {
	pulse := DefaultPulsetime
	classes := opt.Classes
	if classes == nil {
		classes = DefaultClasses()
	}
	events := Flood(in.Window, pulse)
	notAFK := Filter(Flood(in.AFK, pulse), func(f Fields) bool { return f.In("status", "not-afk") })
	if in.NoAFK {
		notAFK, _ = PeriodUnion(events, nil)
	}

	if opt.AlwaysActivePattern != "" {
		if re, err := regexp.Compile(opt.AlwaysActivePattern); err == nil {
			for _, key := range []string{"app", "title"} {
				notAFK = unionInto(notAFK, events, matching(events, regexOn(key, re)))
			}
		}
	}

	var browser []Event
	for _, b := range in.Browsers {
		names, pattern, known := BrowserApps(b.Name)
		if !known {
			continue
		}
		tabs := Flood(b.Events, pulse)
		windows := Filter(events, func(f Fields) bool { return f.In("app", names...) })
		if pattern != "" {
			windows = joinByStart(windows, Filter(events, regexOn("app", regexp.MustCompile(pattern))))
		}
		browser = joinByStart(browser, splitURLs(FilterPeriodIntersect(tabs, windows)))
	}
	notAFK = unionInto(notAFK, browser, matching(browser, func(f Fields) bool {
		v, ok := f.Bool("audible")
		return ok && v
	}))
	events = FilterPeriodIntersect(events, notAFK)
	memo := make(map[*Field]int)
	for i := range events {
		f := events[i].Data
		c, ok := 0, false
		if f.Len() > 0 {
			c, ok = memo[&f.kv[0]]
		}
		if !ok {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
			c = classes.Categorize(f)
			if f.Len() > 0 {
				memo[&f.kv[0]] = c
			}
		}
		events[i].Data = f.WithClass(c)
	}
	return Result{Events: events, NotAFK: notAFK, Browser: browser, Classes: classes}, nil
}

// regexOn is filter_keyvals_regex's test of the value under key, with
// one match per distinct value (a week holds a dozen apps, thousands of
// times each).
func regexOn(key string, re *regexp.Regexp) func(Fields) bool {
	byValue := make(map[string]bool)
	return func(f Fields) bool {
		s, ok := f.Str(key)
		if !ok {
			return false
		}
		m, known := byValue[s]
		if !known {
			m = re.MatchString(s)
			byValue[s] = m
		}
		return m
	}
}

// matching returns the indexes of the events whose data keep accepts.
func matching(evs []Event, keep func(Fields) bool) []int {
	var idx []int
	for i, e := range evs {
		if keep(e.Data) {
			idx = append(idx, i)
		}
	}
	return idx
}

// unionInto is not_afk = period_union(not_afk, [list[i] for i in idx]):
// the members of list that period_union takes over on their own lose their
// data in list too, as aw-core clears them in place.
func unionInto(notAFK, list []Event, idx []int) []Event {
	sel := make([]Event, len(idx))
	for k, i := range idx {
		sel[k] = list[i]
	}
	union, kept := PeriodUnion(notAFK, sel)
	for _, k := range kept {
		if k >= len(notAFK) { // one of sel, taken over on its own
			list[idx[k-len(notAFK)]].Data = Fields{}
		}
	}
	return union
}

// splitURLs is split_url_events: each event whose "url" is a string that
// SplitURL accepts gets its parts under $protocol, $domain, $path, $params,
// $options and $identifier. evs is changed in place and returned.
func splitURLs(evs []Event) []Event {
	split := make(map[*Field]Fields)  // by data: events that share it share its split
	parts := make(map[string][]Field) // by URL: each split once (nil: not a URL)
	for i := range evs {
		f := evs[i].Data
		u, ok := f.Str("url")
		if !ok {
			continue
		}
		g, done := split[&f.kv[0]]
		if !done {
			p, known := parts[u]
			if !known {
				if sp, err := SplitURL(u); err == nil {
					p = []Field{{Key: "$protocol", Value: sp.Protocol}, {Key: "$domain", Value: sp.Domain},
						{Key: "$path", Value: sp.Path}, {Key: "$params", Value: sp.Params},
						{Key: "$options", Value: sp.Options}, {Key: "$identifier", Value: sp.Identifier}}
				}
				parts[u] = p
			}
			g = f.with(p...)
			split[&f.kv[0]] = g
		}
		evs[i].Data = g
	}
	return evs
}
