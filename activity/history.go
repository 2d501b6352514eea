package activity

import (
	"context"
	"time"
)

// Bounds of nowframe_history's arguments.
const (
	DefaultHistoryMinutes = 10
	DefaultHistoryLimit   = 50
	MaxHistoryLimit       = 500
)

// historyGap is the shortest stretch without activity a history shows as
// a switch of its own.
const historyGap = 1_000_000 // 1 s in µs

// HistoryQuery is a nowframe_history call.
type HistoryQuery struct {
	// Minutes is the stretch before now to show (0: DefaultHistoryMinutes
	// unless Period, or Start and End, are given: see ParseSpec).
	Minutes            int
	Period, Start, End string
	Limit              int      // the newest switches shown (0: DefaultHistoryLimit)
	Progress           Progress // when set, hears how far the call is
	// Host is "" (this machine), a hostname or HostAll.
	Host string
}

// History answers nowframe_history from ActivityWatch's stored events:
// the switches of focused app, title, tab and AFK state in the period,
// the newest Limit of them, oldest first. A bad argument is a *SpecError.
func (s *Service) History(ctx context.Context, q HistoryQuery) (*History, error) {
	limit, err := checkLimit(q.Limit, DefaultHistoryLimit, MaxHistoryLimit)
	if err != nil {
		return nil, err
	}
	var spec Spec
	switch {
	case q.Minutes != 0 && (q.Period != "" || q.Start != "" || q.End != ""):
		return nil, specError("minutes", "give either minutes or a period (or start and end), not both")
	case q.Minutes < 0 || q.Minutes > MaxHours*60:
		return nil, specError("minutes", "must be between 1 and %d", MaxHours*60)
	case q.Minutes > 0:
		spec = LastMinutes(q.Minutes)
	case q.Period == "" && q.Start == "" && q.End == "":
		spec = LastMinutes(DefaultHistoryMinutes)
	default:
		if spec, err = ParseSpec(q.Period, q.Start, q.End); err != nil {
			return nil, err
		}
	}
	pr, err := s.prepare(ctx, q.Host, false, spec.resolve, q.Progress)
	if err != nil {
		return nil, err
	}
	return pr.history(limit), nil
}

// state is what the person was doing: focus in a window (and tab), or a
// gap.
type state struct {
	gap string
	v   view
	tab *Tab
}

func sameTab(a, b *Tab) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// history lists the switches of the period.
func (pr *prepared) history(limit int) *History {
	f := pr.flatten()
	ps := spanOf(pr.period.Span())
	loc := pr.period.Start.Location()
	var (
		sw        []Switch
		starts    []int64
		cur       state
		lastFocus *state
		have      bool
		at        = ps.start
	)
	emit := func(t int64, st state) {
		var what []string
		sw1 := Switch{At: time.UnixMicro(t).In(loc)}
		switch {
		case st.gap != "":
			what = []string{"afk"}
			sw1.AFK = st.gap
			if st.gap == GapNoData {
				what = []string{"no_data"}
			}
		default:
			prev := lastFocus
			if have && cur.gap == GapAFK {
				what = append(what, "afk")
				sw1.AFK = "not-afk"
			}
			if prev == nil || !sameFocus(prev.v, st.v) {
				what = append(what, "app")
			}
			if prev == nil || prev.v.title != st.v.title || prev.v.withheld != st.v.withheld {
				what = append(what, "title")
			}
			// A tab that appears, or one that changes or closes in the same
			// app (leaving a browser is an app change, not a tab one).
			if (prev == nil && st.tab != nil) || (prev != nil && !sameTab(prev.tab, st.tab) && (st.tab != nil || sameFocus(prev.v, st.v))) {
				what = append(what, "tab")
			}
			sw1.App, sw1.Title, sw1.Withheld, sw1.Tab = st.v.app, st.v.title, st.v.withheld, st.tab
			c := st
			lastFocus = &c
		}
		if len(what) == 0 {
			what = []string{"afk"} // back from a short gap to the same thing
		}
		sw1.What = what
		sw, starts = append(sw, sw1), append(starts, t)
		cur, have = st, true
	}
	gapTo := func(t int64) {
		if t-at >= historyGap {
			emit(at, state{gap: f.gapKind(at, t)})
		}
	}
	for _, it := range f.items {
		start := max(it.start, at)
		if it.end <= start {
			continue
		}
		gapTo(start)
		v := f.view(it)
		// Split the window event where its browser's tab changes.
		t := start
		for t < it.end {
			tab, until := f.tabAt(t, it.end)
			st := state{v: v, tab: tab}
			if v.excluded || v.withheld {
				st.tab = nil
			}
			if !have || cur.gap != "" || cur.v != st.v || !sameTab(cur.tab, st.tab) {
				emit(t, st)
			}
			t = until
		}
		at = it.end
	}
	gapTo(ps.end)

	h := &History{Period: pr.period, Switches: []Switch{}, Source: pr.source, Freshness: pr.fresh, Notes: pr.notes}
	for i := range sw {
		end := ps.end
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		sw[i].DurationS = seconds(end - starts[i])
	}
	if len(sw) > limit {
		h.Omitted = len(sw) - limit
		sw = sw[len(sw)-limit:]
	}
	h.Switches = append(h.Switches, sw...)
	h.Count = len(h.Switches)
	return h
}

// tabAt is the tab shown at t (nil when none, or a private or excluded
// one) and until when it is, at most end.
func (f *flat) tabAt(t, end int64) (*Tab, int64) {
	var tab *Tab
	until, found := end, false
	for i := f.tabIndex(t); i < len(f.tabs) && f.tabs[i].start < end; i++ {
		x := f.tabs[i]
		if x.start > t {
			until = min(until, x.start)
			break
		}
		if x.end > t && !found {
			found, until = true, min(until, x.end)
			if tv := f.tabView(x); !tv.hidden && !tv.excluded {
				tab = &Tab{Domain: tv.domain, Title: tv.title}
			}
		}
	}
	return tab, until
}
