package transform

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

func TestDecoder(t *testing.T) {
	id := int64(42)
	at := time.Date(2026, 11, 22, 1, 0, 0, 123_000_000, time.UTC)
	data := json.RawMessage(`{"app":"Code","title":"a \"b\" \u00e9","audible":true,"tabCount":7,"x":null}`)
	var d Decoder
	e1 := d.Event(aw.Event{ID: &id, Timestamp: at, Duration: 180.001, Data: data})
	e2 := d.Event(aw.Event{Timestamp: at, Duration: 0.0000005, Data: append(json.RawMessage(nil), data...)})
	if e1.ID != 42 || e1.Start != at.UnixMicro() || e1.Duration != 180_001_000 {
		t.Errorf("event %+v", e1)
	}
	if e2.ID != 0 || e2.Duration != 0 {
		t.Errorf("event %+v: want no id and 0.5 µs rounded half to even", e2)
	}
	if s, ok := e1.Data.Str("title"); !ok || s != `a "b" é` {
		t.Errorf("title %q, %v", s, ok)
	}
	if v, ok := e1.Data.Bool("audible"); !v || !ok {
		t.Error("audible is not true")
	}
	if _, ok := e1.Data.Str("tabCount"); ok {
		t.Error("a number reads as a string")
	}
	if x, _ := e1.Data.Get("tabCount"); x.Value != "7" || !x.JSON {
		t.Errorf("tabCount %+v", x)
	}
	if &e1.Data.kv[0] != &e2.Data.kv[0] {
		t.Error("identical data is not shared")
	}
	other := d.Event(aw.Event{Timestamp: at, Data: json.RawMessage(`{"title":"a \"b\" é","app":"Code","audible":true,"tabCount":7,"x":null}`)})
	if !other.Data.Equal(e1.Data) || other.Data.Equal(strs("app", "Code")) || other.Data.Equal(e1.Data.WithClass(2)) {
		t.Error("Equal is not Python's dict equality")
	}
	if f := d.Event(aw.Event{Timestamp: at, Data: json.RawMessage(`[1]`)}); f.Data.Len() != 0 {
		t.Errorf("list data decoded as %v", f.Data)
	}
	g := e1.Data.With("title", "new").With("$domain", "x")
	if s, _ := e1.Data.Str("title"); s != `a "b" é` {
		t.Error("With changed the original")
	}
	if s, _ := g.Str("title"); s != "new" || g.Len() != e1.Data.Len()+1 {
		t.Errorf("With: %v", g)
	}
}

func TestFieldsURL(t *testing.T) {
	data := strs("url", "https://www.example.org/a;b?c#d", "$domain", "old", "title", "t")
	evs := splitURLs([]Event{{Data: data}, {Data: data}})
	f := evs[0].Data
	var keys []string
	for _, x := range f.kv {
		keys = append(keys, x.Key+"="+x.Value)
	}
	want := "url=https://www.example.org/a;b?c#d $domain=example.org title=t $protocol=https $path=/a $params=b $options=c $identifier=d"
	if got := strings.Join(keys, " "); got != want || f.Len() != 8 {
		t.Errorf("fields %q (%d), want %q", got, f.Len(), want)
	}
	if &evs[1].Data.kv[0] != &f.kv[0] {
		t.Error("events with the same data do not share its split")
	}
	g := f.With("title", "u")
	if g.Len() != 8 || !g.With("title", "t").Equal(f) || f.Equal(g) {
		t.Errorf("With: %v", g)
	}
	n := 0
	f.anyString(func(string) bool { n++; return false })
	if n != 8 {
		t.Errorf("%d strings", n)
	}
}

// A week's tabs hold thousands of distinct data (title, tabCount) over a
// few hundred URLs: each URL is split once and each data gets its keys in
// one copy (six copies per data had doubled BenchmarkCanonicalWeek's
// memory, 16.6 to 40.8 MB).
func TestSplitURLsAllocs(t *testing.T) {
	const n = 200
	evs := make([]Event, n)
	for i := range evs {
		evs[i].Data = strs("url", "https://www.example.org/a;b?c#d", "title", "t", "tabCount", strings.Repeat("1", i+1))
	}
	splitURLs(evs)
	if allocs := testing.AllocsPerRun(5, func() { splitURLs(evs) }); allocs > 1.2*n {
		t.Errorf("%v allocations for %d events with distinct data and one URL, want at most %v", allocs, n, 1.2*n)
	}
}
