package transform

import (
	"regexp"
	"slices"
	"testing"
)

// The cases of aw-core's tests/test_transforms.py and tests/test_flood.py,
// re-expressed.

const (
	sec  = Second
	hour = 3600 * Second
)

// t0 is a fixed instant (aw-core's tests use now).
const t0 = int64(1_767_225_600) * Second // 2026-01-01T00:00:00Z

func ev(start, dur int64, kv ...string) Event[Fields] {
	return Event[Fields]{Start: start, Duration: dur, Data: Strs(kv...)}
}

func durations(evs []Event[Fields]) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Duration
	}
	return out
}

func TestSimplifyTitle(t *testing.T) {
	for _, c := range []struct {
		in     string
		window bool
		want   string
	}{
		{"(99) Facebook", false, "Facebook"},
		{"(14) YouTube", false, "YouTube"},
		{"Cemu - FPS: 133.7 - BotW", true, "Cemu - FPS: ... - BotW"},
		{"● report.md - Visual Studio Code", true, "report.md - Visual Studio Code"},
		{"*test.md - gedit", true, "test.md - gedit"},
		// beyond aw-core's tests
		{"*test.md - gedit", false, "*test.md - gedit"},
		{"(3)Inbox", false, "Inbox"},
		{"() x", false, "() x"},
		{"(12 x", false, "(12 x"},
		{"a FPS: 1 b FPS:2 c FPS:  3.0.1", true, "a FPS: ... b FPS:2 c FPS: ..."},
		{"(2)\u00a0\u2003● x", true, "x"},
		{"FPS:\v9", true, "FPS: ..."},
	} {
		if got := SimplifyTitle(c.in, c.window); got != c.want {
			t.Errorf("SimplifyTitle(%q, %v) = %q, want %q", c.in, c.window, got, c.want)
		}
	}
}

func TestFilterKeyvals(t *testing.T) {
	evs := []Event[Fields]{ev(0, 0, "label", "aa"), ev(0, 0, "label", "bb"), ev(0, 0, "label", "cc")}
	in := Filter(evs, func(f Fields) bool { return f.In("label", "aa", "cc") })
	out := Filter(evs, func(f Fields) bool { return !f.In("label", "aa", "cc") })
	if len(in) != 2 || len(out) != 1 {
		t.Errorf("included %d, excluded %d; want 2, 1", len(in), len(out))
	}
}

func TestFilterRegex(t *testing.T) {
	re := regexp.MustCompile("aa|cc")
	evs := []Event[Fields]{ev(0, 0, "label", "aa"), ev(0, 0, "label", "bb"), ev(0, 0, "label", "cc")}
	if got := FilterRegex(evs, "label", re); len(got) != 2 {
		t.Errorf("%d events, want 2", len(got))
	}
	// test_filter_keyval_regex_keyerror: an event without the key is left out.
	evs = []Event[Fields]{ev(0, 0, "label", "aa"), ev(0, 0), ev(0, 0, "label", "cc"), {Data: Strs().WithJSON("label", "true")}}
	if got := FilterRegex(evs, "label", re); len(got) != 2 {
		t.Errorf("%d events, want 2", len(got))
	}
}

func TestIntersectingPairs(t *testing.T) {
	for _, c := range []struct {
		name    string
		a, b    []Event[Fields]
		pairs   int
		reverse bool
	}{
		{"identical lists", []Event[Fields]{ev(t0, hour), ev(t0+hour, hour)}, []Event[Fields]{ev(t0, hour), ev(t0+hour, hour)}, 2, false},
		{"between", []Event[Fields]{ev(t0+hour, hour)}, []Event[Fields]{ev(t0, hour), ev(t0+2*hour, hour)}, 0, false},
		{"identical to the middle", []Event[Fields]{ev(t0+hour, hour)}, []Event[Fields]{ev(t0, hour), ev(t0+hour, hour), ev(t0+2*hour, hour)}, 1, false},
		{"reversed", []Event[Fields]{ev(t0+hour, hour)}, []Event[Fields]{ev(t0, hour), ev(t0+hour, hour), ev(t0+2*hour, hour)}, 1, true},
	} {
		a, b := c.a, c.b
		if c.reverse {
			a, b = slices.Clone(a), slices.Clone(b)
			slices.Reverse(a)
			slices.Reverse(b)
		}
		if got := FilterPeriodIntersect(a, b); len(got) != c.pairs {
			t.Errorf("%s: %d intersections, want %d", c.name, len(got), c.pairs)
		}
	}
}

func TestFilterPeriodIntersect(t *testing.T) {
	m := 60 * sec
	for _, c := range []struct {
		name          string
		events, filts []Event[Fields]
		want          []int64
	}{
		{"1h with 1h at 30min", []Event[Fields]{ev(t0, hour)}, []Event[Fields]{ev(t0+30*m, hour)}, []int64{30 * m}},
		{"two 30min around a 45min", []Event[Fields]{ev(t0, 30*m), ev(t0+45*m, 30*m)}, []Event[Fields]{ev(t0+15*m, 45*m)}, []int64{15 * m, 15 * m}},
		{"reversed", []Event[Fields]{ev(t0+15*m, 45*m)}, []Event[Fields]{ev(t0, 30*m), ev(t0+45*m, 30*m)}, []int64{15 * m, 15 * m}},
	} {
		if got := durations(FilterPeriodIntersect(c.events, c.filts)); !slices.Equal(got, c.want) {
			t.Errorf("%s: durations %v, want %v", c.name, got, c.want)
		}
	}
	// The parts are copies with the data of the event, not of the filter.
	got := FilterPeriodIntersect([]Event[Fields]{{ID: 7, Start: t0, Duration: hour, Data: Strs("app", "a")}}, []Event[Fields]{ev(t0+1500, hour, "status", "not-afk")})
	if len(got) != 1 || got[0].ID != 7 || got[0].Start != t0+1000 || got[0].Duration != hour-1500 || !got[0].Data.In("app", "a") {
		t.Errorf("part %+v: want id 7 from the ms-truncated start, data of the event", got)
	}
}

func TestPeriodUnion(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []Event[Fields]
		n    int
		kept []int
	}{
		{"overlapping", []Event[Fields]{ev(t0, 10*sec)}, []Event[Fields]{ev(t0+9*sec, 10*sec)}, 1, []int{-1}},
		{"adjacent", []Event[Fields]{ev(t0, 10*sec)}, []Event[Fields]{ev(t0+10*sec, 10*sec)}, 1, []int{-1}},
		{"apart", []Event[Fields]{ev(t0+11*sec, 10*sec)}, []Event[Fields]{ev(t0, 10*sec)}, 2, []int{1, 0}},
		{"one joins, one apart", []Event[Fields]{ev(t0, 10*sec), ev(t0+60*sec, sec)}, []Event[Fields]{ev(t0+5*sec, 10*sec)}, 2, []int{-1, 1}},
		{"empty", nil, nil, 0, nil},
	} {
		got, kept := PeriodUnion(c.a, c.b)
		if len(got) != c.n || !slices.Equal(kept, c.kept) {
			t.Errorf("%s: %d events, kept %v; want %d, %v", c.name, len(got), kept, c.n, c.kept)
		}
		for _, e := range got {
			if e.Data.Len() != 0 {
				t.Errorf("%s: data %v not cleared", c.name, e.Data)
			}
		}
	}
	got, _ := PeriodUnion([]Event[Fields]{ev(t0, 10*sec, "a", "1")}, []Event[Fields]{ev(t0+5*sec, 10*sec, "b", "2")})
	if got[0].Start != t0 || got[0].Duration != 15*sec {
		t.Errorf("union %+v, want 15 s from t0", got[0])
	}
}

func TestSorts(t *testing.T) {
	evs := []Event[Fields]{ev(t0+2*sec, sec, "n", "1"), ev(t0+sec, 2*sec, "n", "2")}
	if got := SortByTime(evs); got[0].Start != t0+sec {
		t.Errorf("sort_by_timestamp: %v", got)
	}
	if got := SortByDuration(evs); got[0].Duration != 2*sec {
		t.Errorf("sort_by_duration: %v", got)
	}
	if evs[0].Start != t0+2*sec {
		t.Error("the input was reordered")
	}
	var ten []Event[Fields]
	for i := range 10 {
		ten = append(ten, ev(t0+int64(i)*sec, sec))
	}
	if got := Sum(ten); got != 10*sec {
		t.Errorf("sum_durations = %d, want 10 s", got)
	}
	for _, c := range []struct{ n, want int }{{3, 3}, {20, 10}, {0, 0}, {-3, 7}, {-20, 0}} {
		if got := len(Limit(ten, c.n)); got != c.want {
			t.Errorf("limit_events(%d): %d events, want %d", c.n, got, c.want)
		}
	}
}

func TestMergeByKeys(t *testing.T) {
	var evs []Event[Fields]
	for range 10 {
		evs = append(evs, ev(t0, sec, "label", "a"))
	}
	for range 5 {
		evs = append(evs, ev(t0, sec, "label", "b"))
	}
	if got := Totals(evs); len(got) != len(evs) {
		t.Errorf("no keys: %d events, want them all", len(got))
	}
	if got := Totals(evs, "unknown"); len(got) != 1 {
		t.Errorf("unknown key: %d events, want 1", len(got))
	}
	if got := Totals(evs, "label"); !slices.Equal(durations(got), []int64{10 * sec, 5 * sec}) {
		t.Errorf("by label: %v", durations(got))
	}

	evs = nil
	for n, kv := range [][]string{{"k1", "a", "k2", "a"}, {"k1", "a", "k2", "c"}, {"k1", "b", "k2", "a"}} {
		for range 10 - n {
			evs = append(evs, ev(t0, sec, kv...))
		}
	}
	got := Totals(evs, "k1", "k2")
	if !slices.Equal(durations(got), []int64{10 * sec, 9 * sec, 8 * sec}) {
		t.Fatalf("by k1, k2: %v", durations(got))
	}
	for i, want := range []Fields{Strs("k1", "a", "k2", "a"), Strs("k1", "a", "k2", "c"), Strs("k1", "b", "k2", "a")} {
		if !got[i].Data.Equal(want) || got[i].ID != 0 {
			t.Errorf("group %d: %+v, want data %v", i, got[i], want)
		}
	}
	// Three keys, a JSON value and a string with the same text apart.
	evs = []Event[Fields]{ev(t0, sec, "a", "1", "b", "2", "c", "3"), {Start: t0, Duration: sec, Data: Strs("a", "1", "b", "2").WithJSON("c", "3")}, ev(t0, sec, "a", "1", "b", "2", "c", "3")}
	if got := Totals(evs, "a", "b", "c"); !slices.Equal(durations(got), []int64{2 * sec, sec}) {
		t.Errorf("three keys: %v", durations(got))
	}
	// By category.
	evs = []Event[Fields]{{Duration: sec, Data: Strs("app", "x").WithClass(1)}, {Duration: 2 * sec, Data: Strs("app", "y").WithClass(1)}, {Duration: sec, Data: Strs("app", "z")}}
	if got := Totals(evs, CategoryKey); len(got) != 2 || got[0].Duration != 3*sec || got[0].Data.Class() != 1 || got[1].Data.Class() != -1 {
		t.Errorf("by category: %+v", got)
	}
}

func TestChunkByKey(t *testing.T) {
	evs := []Event[Fields]{
		ev(t0, sec, "label1", "1a", "label2", "2a"),
		ev(t0, sec, "label1", "1a", "label2", "2b"),
		ev(t0, sec, "label1", "1b", "label2", "2b"),
	}
	val := func(i int) string { s, _ := evs[i].Data.Str("label1"); return s }
	got := ChunkByKey(evs, func(i int) bool { _, ok := evs[i].Data.Str("label1"); return ok },
		func(i, j int) bool { return val(i) == val(j) }, DefaultPulsetime)
	want := []Chunk{{From: 0, To: 2, Start: t0, Duration: 2 * sec}, {From: 2, To: 3, Start: t0, Duration: sec}}
	if !slices.Equal(got, want) {
		t.Errorf("chunks %+v, want %+v", got, want)
	}
}

func TestCategorize(t *testing.T) {
	rule := func(regex string, ic bool) Rule {
		r, err := NewRule(regex, ic, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cs := Classes{
		{Name: []string{"Test"}, Rule: rule("^just", false)},
		{Name: []string{"Test", "Subtest"}, Rule: rule("subtest$", false)},
		{Name: []string{"Test", "Ignorecase"}, Rule: rule("ignorecase", true)},
	}
	for _, c := range []struct {
		data Fields
		want string
	}{
		{Strs("key", "just a test"), "Test"},
		{Strs("key", "just a subtest"), "Test > Subtest"},
		{Strs("key", "just a IGNORECASE test"), "Test > Ignorecase"},
		{Strs(), Uncategorized},
	} {
		if got := cs.Label(cs.Categorize(c.data)); got != c.want {
			t.Errorf("%v: %q, want %q", c.data, got, c.want)
		}
	}
	tags := Classes{{Name: []string{"Test"}, Rule: rule("value$", false)}, {Name: []string{"Test"}, Rule: rule("^just", false)}}
	if got := tags.Tag(Strs("key", "just a test value")); len(got) != 2 {
		t.Errorf("tags %v, want 2", got)
	}
	if got := tags.Tag(Strs()); len(got) != 0 {
		t.Errorf("tags %v, want none", got)
	}
	// Ties go to the later class; select_keys limits the values tested;
	// a rule without a regex matches nothing.
	sel, _ := NewRule("x", false, []string{"title"})
	cs = Classes{{Name: []string{"A"}, Rule: rule("x", false)}, {Name: []string{"B"}, Rule: rule("x", false)}, {Name: []string{"C", "D"}, Rule: sel}, {Name: []string{"E", "F", "G"}, Rule: rule("", false)}}
	if got := cs.Categorize(Strs("app", "x")); got != 1 {
		t.Errorf("tie: class %d, want 1", got)
	}
	if got := cs.Categorize(Strs("app", "y", "title", "x")); got != 2 {
		t.Errorf("select_keys: class %d, want 2", got)
	}
	if _, err := NewRule("(?<=a)b", false, nil); err == nil {
		t.Error("a look-behind compiled")
	}
}

func TestUnionNoOverlap(t *testing.T) {
	mk := func(start, dur int64, v string) Event[Fields] { return ev(start, dur, "test", v) }
	var e1, e2 []Event[Fields]
	for i := range int64(3) {
		e1 = append(e1, mk(t0+2*i*hour, hour, "1"))
		e2 = append(e2, mk(t0+2*i*hour+hour/2, hour, "2"))
	}
	for _, c := range []struct {
		name string
		a, b []Event[Fields]
		want int64
	}{
		{"1 over 2", e1, e2, 4*hour + hour/2},
		{"2 over 1", e2, e1, 4*hour + hour/2},
		{"one long", e1, []Event[Fields]{mk(t0, 5*hour, "2")}, 5 * hour},
	} {
		got := UnionNoOverlap(c.a, c.b)
		if Sum(got) != c.want {
			t.Errorf("%s: %d µs, want %d", c.name, Sum(got), c.want)
		}
		if !slices.IsSortedFunc(got, byStart) {
			t.Errorf("%s: not in start order", c.name)
		}
	}
}

func TestFlood(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []Event[Fields]
		want []Event[Fields]
	}{
		{"forward", []Event[Fields]{ev(t0, 10*sec, "a", "0"), ev(t0+15*sec, 5*sec, "b", "1")},
			[]Event[Fields]{ev(t0, 15*sec, "a", "0"), ev(t0+15*sec, 5*sec, "b", "1")}},
		{"forward merge", []Event[Fields]{ev(t0, 10*sec), ev(t0+15*sec, 5*sec)}, []Event[Fields]{ev(t0, 20*sec)}},
		{"backward", []Event[Fields]{ev(t0, 5*sec, "a", "0"), ev(t0+10*sec, 10*sec, "b", "1")},
			[]Event[Fields]{ev(t0, 5*sec, "a", "0"), ev(t0+5*sec, 15*sec, "b", "1")}},
		{"backward merge", []Event[Fields]{ev(t0, 5*sec), ev(t0+10*sec, 10*sec)}, []Event[Fields]{ev(t0, 20*sec)}},
		{"negative gap, same data", []Event[Fields]{ev(t0, 100*sec, "a", "0"), ev(t0, 5*sec, "a", "0")}, []Event[Fields]{ev(t0, 100*sec, "a", "0")}},
		{"negative gap, differing data", []Event[Fields]{ev(t0, 5*sec, "a", "0"), ev(t0, 100*sec, "b", "1")},
			[]Event[Fields]{ev(t0, 5*sec, "a", "0"), ev(t0, 100*sec, "b", "1")}},
		{"small negative gap, differing data", []Event[Fields]{ev(t0, 100*sec, "b", "1"), ev(t0+99_990*Millisecond, 100*sec, "a", "0")},
			[]Event[Fields]{ev(t0, 99_990*Millisecond, "b", "1"), ev(t0+99_990*Millisecond, 100*sec, "a", "0")}},
		{"gap beyond pulsetime", []Event[Fields]{ev(t0, sec, "a", "0"), ev(t0+7*sec, sec, "a", "0")},
			[]Event[Fields]{ev(t0, sec, "a", "0"), ev(t0+7*sec, sec, "a", "0")}},
		{"start truncated to ms", []Event[Fields]{ev(t0, 1500, "a", "0"), ev(t0+sec, 2*sec, "b", "1")},
			[]Event[Fields]{ev(t0, 1500, "a", "0"), ev(t0+1000, 3*sec-1000, "b", "1")}},
	} {
		got := Flood(c.in, DefaultPulsetime)
		if !sameEvents(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}

func sameEvents(a, b []Event[Fields]) bool {
	return slices.EqualFunc(a, b, func(x, y Event[Fields]) bool {
		return x.ID == y.ID && x.Start == y.Start && x.Duration == y.Duration && x.Data.Equal(y.Data)
	})
}
