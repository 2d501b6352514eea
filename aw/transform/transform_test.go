package transform

import (
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

func ev(start, dur int64, kv ...string) Event {
	return Event{Start: start, Duration: dur, Data: strs(kv...)}
}

// strs builds data holding only string values, from key, value pairs.
func strs(kv ...string) Fields {
	var f Fields
	for i := 0; i+1 < len(kv); i += 2 {
		f = f.With(kv[i], kv[i+1])
	}
	return f
}

func durations(evs []Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Duration
	}
	return out
}

func TestFilterKeyvals(t *testing.T) {
	evs := []Event{ev(0, 0, "label", "aa"), ev(0, 0, "label", "bb"), ev(0, 0, "label", "cc")}
	in := Filter(evs, func(f Fields) bool { return f.In("label", "aa", "cc") })
	out := Filter(evs, func(f Fields) bool { return !f.In("label", "aa", "cc") })
	if len(in) != 2 || len(out) != 1 {
		t.Errorf("included %d, excluded %d; want 2, 1", len(in), len(out))
	}
}

func TestIntersectingPairs(t *testing.T) {
	for _, c := range []struct {
		name    string
		a, b    []Event
		pairs   int
		reverse bool
	}{
		{"identical lists", []Event{ev(t0, hour), ev(t0+hour, hour)}, []Event{ev(t0, hour), ev(t0+hour, hour)}, 2, false},
		{"between", []Event{ev(t0+hour, hour)}, []Event{ev(t0, hour), ev(t0+2*hour, hour)}, 0, false},
		{"identical to the middle", []Event{ev(t0+hour, hour)}, []Event{ev(t0, hour), ev(t0+hour, hour), ev(t0+2*hour, hour)}, 1, false},
		{"reversed", []Event{ev(t0+hour, hour)}, []Event{ev(t0, hour), ev(t0+hour, hour), ev(t0+2*hour, hour)}, 1, true},
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
		events, filts []Event
		want          []int64
	}{
		{"1h with 1h at 30min", []Event{ev(t0, hour)}, []Event{ev(t0+30*m, hour)}, []int64{30 * m}},
		{"two 30min around a 45min", []Event{ev(t0, 30*m), ev(t0+45*m, 30*m)}, []Event{ev(t0+15*m, 45*m)}, []int64{15 * m, 15 * m}},
		{"reversed", []Event{ev(t0+15*m, 45*m)}, []Event{ev(t0, 30*m), ev(t0+45*m, 30*m)}, []int64{15 * m, 15 * m}},
	} {
		if got := durations(FilterPeriodIntersect(c.events, c.filts)); !slices.Equal(got, c.want) {
			t.Errorf("%s: durations %v, want %v", c.name, got, c.want)
		}
	}
	// The parts are copies with the data of the event, not of the filter.
	got := FilterPeriodIntersect([]Event{{ID: 7, Start: t0, Duration: hour, Data: strs("app", "a")}}, []Event{ev(t0+1500, hour, "status", "not-afk")})
	if len(got) != 1 || got[0].ID != 7 || got[0].Start != t0+1000 || got[0].Duration != hour-1500 || !got[0].Data.In("app", "a") {
		t.Errorf("part %+v: want id 7 from the ms-truncated start, data of the event", got)
	}
}

func TestPeriodUnion(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []Event
		n    int
		kept []int
	}{
		{"overlapping", []Event{ev(t0, 10*sec)}, []Event{ev(t0+9*sec, 10*sec)}, 1, []int{-1}},
		{"adjacent", []Event{ev(t0, 10*sec)}, []Event{ev(t0+10*sec, 10*sec)}, 1, []int{-1}},
		{"apart", []Event{ev(t0+11*sec, 10*sec)}, []Event{ev(t0, 10*sec)}, 2, []int{1, 0}},
		{"one joins, one apart", []Event{ev(t0, 10*sec), ev(t0+60*sec, sec)}, []Event{ev(t0+5*sec, 10*sec)}, 2, []int{-1, 1}},
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
	got, _ := PeriodUnion([]Event{ev(t0, 10*sec, "a", "1")}, []Event{ev(t0+5*sec, 10*sec, "b", "2")})
	if got[0].Start != t0 || got[0].Duration != 15*sec {
		t.Errorf("union %+v, want 15 s from t0", got[0])
	}
}

func TestSorts(t *testing.T) {
	evs := []Event{ev(t0+2*sec, sec, "n", "1"), ev(t0+sec, 2*sec, "n", "2")}
	if got := inOrder(evs); got[0].Start != t0+sec {
		t.Errorf("sort_by_timestamp: %v", got)
	}
	if evs[0].Start != t0+2*sec {
		t.Error("the input was reordered")
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
		{strs("key", "just a test"), "Test"},
		{strs("key", "just a subtest"), "Test > Subtest"},
		{strs("key", "just a IGNORECASE test"), "Test > Ignorecase"},
		{strs(), Uncategorized},
	} {
		if got := cs.Label(cs.Categorize(c.data)); got != c.want {
			t.Errorf("%v: %q, want %q", c.data, got, c.want)
		}
	}
	// Ties go to the later class; select_keys limits the values tested;
	// a rule without a regex matches nothing.
	sel, _ := NewRule("x", false, []string{"title"})
	cs = Classes{{Name: []string{"A"}, Rule: rule("x", false)}, {Name: []string{"B"}, Rule: rule("x", false)}, {Name: []string{"C", "D"}, Rule: sel}, {Name: []string{"E", "F", "G"}, Rule: rule("", false)}}
	if got := cs.Categorize(strs("app", "x")); got != 1 {
		t.Errorf("tie: class %d, want 1", got)
	}
	if got := cs.Categorize(strs("app", "y", "title", "x")); got != 2 {
		t.Errorf("select_keys: class %d, want 2", got)
	}
	if _, err := NewRule("(?<=a)b", false, nil); err == nil {
		t.Error("a look-behind compiled")
	}
}

func TestFlood(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []Event
		want []Event
	}{
		{"forward", []Event{ev(t0, 10*sec, "a", "0"), ev(t0+15*sec, 5*sec, "b", "1")},
			[]Event{ev(t0, 15*sec, "a", "0"), ev(t0+15*sec, 5*sec, "b", "1")}},
		{"forward merge", []Event{ev(t0, 10*sec), ev(t0+15*sec, 5*sec)}, []Event{ev(t0, 20*sec)}},
		{"backward", []Event{ev(t0, 5*sec, "a", "0"), ev(t0+10*sec, 10*sec, "b", "1")},
			[]Event{ev(t0, 5*sec, "a", "0"), ev(t0+5*sec, 15*sec, "b", "1")}},
		{"backward merge", []Event{ev(t0, 5*sec), ev(t0+10*sec, 10*sec)}, []Event{ev(t0, 20*sec)}},
		{"negative gap, same data", []Event{ev(t0, 100*sec, "a", "0"), ev(t0, 5*sec, "a", "0")}, []Event{ev(t0, 100*sec, "a", "0")}},
		{"negative gap, differing data", []Event{ev(t0, 5*sec, "a", "0"), ev(t0, 100*sec, "b", "1")},
			[]Event{ev(t0, 5*sec, "a", "0"), ev(t0, 100*sec, "b", "1")}},
		{"small negative gap, differing data", []Event{ev(t0, 100*sec, "b", "1"), ev(t0+99_990*Millisecond, 100*sec, "a", "0")},
			[]Event{ev(t0, 99_990*Millisecond, "b", "1"), ev(t0+99_990*Millisecond, 100*sec, "a", "0")}},
		{"gap beyond pulsetime", []Event{ev(t0, sec, "a", "0"), ev(t0+7*sec, sec, "a", "0")},
			[]Event{ev(t0, sec, "a", "0"), ev(t0+7*sec, sec, "a", "0")}},
		{"start truncated to ms", []Event{ev(t0, 1500, "a", "0"), ev(t0+sec, 2*sec, "b", "1")},
			[]Event{ev(t0, 1500, "a", "0"), ev(t0+1000, 3*sec-1000, "b", "1")}},
	} {
		got := Flood(c.in, DefaultPulsetime)
		if !sameEvents(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
}

func sameEvents(a, b []Event) bool {
	return slices.EqualFunc(a, b, func(x, y Event) bool {
		return x.ID == y.ID && x.Start == y.Start && x.Duration == y.Duration && x.Data.Equal(y.Data)
	})
}
