// Package realaw owns the recordings of a real ActivityWatch server
// (testdata/realaw, written by scripts/realrecord), the oracle of the
// activity tests: their format, loading their events into the simulator,
// and comparing the activity tools' answers with the recorded ones.
package realaw

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/aw/awsim"
)

// Recording is a folder's answers.json.
type Recording struct {
	Comment    string          `json:"comment"`
	RecordedAt time.Time       `json:"recorded_at"`
	Server     json.RawMessage `json:"server"` // GET /api/0/info
	Timezone   string          `json:"timezone"`
	Host       string          `json:"host"`
	Buckets    Buckets         `json:"buckets"`
	Settings   json.RawMessage `json:"settings"` // GET /api/0/settings
	Classes    json.RawMessage `json:"classes"`  // as passed to categorize()
	Query      []string        `json:"query"`    // the statements POSTed for every period
	// EditorQuery is EditorQuery(Buckets.Editor), when the host has editor buckets.
	EditorQuery []string `json:"editor_query,omitempty"`
	// Hosts, when recorded with -hosts, are Host and the other hosts in
	// the multi-device order; Queries the statements POSTed for each
	// other host and for AllHosts, whose answers name their host.
	Hosts   []string            `json:"hosts,omitempty"`
	Queries map[string][]string `json:"queries,omitempty"`
	Periods []Answer            `json:"periods"`

	// Dir is the folder the recording was loaded from (not recorded).
	Dir string `json:"-"`
}

// Buckets are the buckets the query reads.
type Buckets struct {
	Window string   `json:"window"`
	AFK    string   `json:"afk"`
	Web    []string `json:"web"`
	Editor []string `json:"editor,omitempty"` // app.editor.activity
}

// Answer is the query's answer for one period, in seconds.
type Answer struct {
	Name string `json:"name"`
	// Host is whose buckets the answer counts: "" for the recording's
	// Host, another of Hosts, or AllHosts.
	Host    string    `json:"host,omitempty"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Active  float64   `json:"active"`  // window time within not-AFK time
	Browser float64   `json:"browser"` // sum_durations(browser_events)
	NotAFK  float64   `json:"not_afk"`
	AFK     float64   `json:"afk"` // the flooded AFK watcher's "afk" time
	// AFKUnion is CoveredQuery's joined AFK time (AFK is the part of it
	// within the joined active time).
	AFKUnion   float64    `json:"afk_union,omitempty"`
	Apps       []App      `json:"apps"`
	Titles     []Title    `json:"titles"`
	TitlesRest *Rest      `json:"titles_rest,omitempty"`
	Categories []Category `json:"categories"`
	Domains    []Domain   `json:"domains"`
	QueryMS    int64      `json:"query_ms"`
	// Editor is the answer to EditorQuery.
	Editor *EditorAnswer `json:"editor,omitempty"`
}

// App is the time of one app.
type App struct {
	App      string  `json:"app"`
	Duration float64 `json:"duration"`
}

// Title is the time of one app's window title.
type Title struct {
	App      string  `json:"app"`
	Title    string  `json:"title"`
	Duration float64 `json:"duration"`
}

// Category is the time of one category ($category, a name list).
type Category struct {
	Category []string `json:"category"`
	Duration float64  `json:"duration"`
}

// Domain is the time of one browser domain; nil for tab events without a
// $domain (aw-core's period_union clears the data of an audible tab event
// it takes over on its own).
type Domain struct {
	Domain   *string `json:"domain"`
	Duration float64 `json:"duration"`
}

// Rest is what was left out of a long list.
type Rest struct {
	Count    int     `json:"count"`
	Duration float64 `json:"duration"`
}

// Hosts of the answers of a recording of several hosts: AllHosts is
// MultiDeviceQuery's (the web UI's multi-device query), CoveredHosts
// CoveredQuery's.
const (
	AllHosts     = "all"
	CoveredHosts = "all:covered"
)

// Union is the hosts' answers joined without counting time twice: each
// host's answer (in hosts' order) less what covered (CoveredQuery's
// answer) says earlier hosts cover of it; titles are left out (the
// recordings cut them). Entries left with under a millisecond are dropped.
func Union(hosts []Answer, covered Answer) Answer {
	u := Answer{Name: covered.Name, Host: AllHosts, Start: covered.Start, End: covered.End,
		AFK: covered.AFKUnion - covered.AFK}
	apps, cats, domains := map[string]float64{}, map[string]float64{}, map[string]float64{}
	add := func(a Answer, sign float64) {
		u.Active += sign * a.Active
		u.NotAFK += sign * a.NotAFK
		u.Browser += sign * a.Browser
		for _, e := range a.Apps {
			apps[e.App] += sign * e.Duration
		}
		for _, e := range a.Categories {
			cats[strings.Join(e.Category, "\x00")] += sign * e.Duration
		}
		for _, e := range a.Domains {
			if e.Domain != nil {
				domains[*e.Domain] += sign * e.Duration
			}
		}
	}
	for _, h := range hosts {
		add(h, 1)
	}
	add(covered, -1)
	const least = 0.001
	for _, k := range slices.Sorted(maps.Keys(apps)) {
		if apps[k] >= least {
			u.Apps = append(u.Apps, App{App: k, Duration: apps[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cats)) {
		if cats[k] >= least {
			u.Categories = append(u.Categories, Category{Category: strings.Split(k, "\x00"), Duration: cats[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(domains)) {
		if domains[k] >= least {
			u.Domains = append(u.Domains, Domain{Domain: &k, Duration: domains[k]})
		}
	}
	return u
}

// Groupings of totals, as activity_summary names them.
const (
	ByApp      = "app"
	ByTitle    = "title"
	ByDomain   = "domain"
	ByCategory = "category"
)

// titleKey is the key of an app's title in totals(ByTitle).
func titleKey(app, title string) string { return app + "\x00" + title }

// entryKey is the key of a summary's entry grouped by group in the
// recorded totals: a title's with its app (titleKey), a file's with its
// language after a NUL (editorTotals).
func entryKey(e activity.Entry, group string) string {
	switch group {
	case ByTitle:
		return titleKey(e.App, e.Key)
	case activity.GroupByFile:
		return e.Key + "\x00" + e.Language
	}
	return e.Key
}

// keyed are a summary's entries grouped by group, keyed by entryKey for
// CheckRanking.
func keyed(list []activity.Entry, group string) []Entry {
	got := make([]Entry, len(list))
	for i, e := range list {
		got[i] = Entry{Key: entryKey(e, group), DurationS: e.DurationS}
	}
	return got
}

// totals are the recorded seconds of a grouping by key: apps, titles,
// categories as the web UI shows them ("Work > Programming") and domains
// (tab time without a domain is left out). Titles beyond a recording's
// cut are not in it (see Answer.TitlesRest).
func (a Answer) totals(group string) map[string]float64 {
	m := map[string]float64{}
	switch group {
	case ByApp:
		for _, e := range a.Apps {
			m[e.App] += e.Duration
		}
	case ByTitle:
		for _, e := range a.Titles {
			m[titleKey(e.App, e.Title)] += e.Duration
		}
	case ByCategory:
		for _, e := range a.Categories {
			m[strings.Join(e.Category, " > ")] += e.Duration
		}
	case ByDomain:
		for _, e := range a.Domains {
			if e.Domain != nil {
				m[*e.Domain] += e.Duration
			}
		}
	}
	return m
}

// QueryBody is the body of POST /api/0/query/ running query over
// [start, end).
func QueryBody(query []string, start, end time.Time) ([]byte, error) {
	return Marshal(map[string]any{
		"timeperiods": []string{start.Format(time.RFC3339Nano) + "/" + end.Format(time.RFC3339Nano)},
		"query":       query,
	})
}

// DecodeAnswer reads the server's answer to the query for one period
// (without name, period and timing); titles > 0 keeps that many titles
// and sums the rest.
func DecodeAnswer(raw []byte, titles int) (Answer, error) {
	type event struct {
		Duration float64                    `json:"duration"`
		Data     map[string]json.RawMessage `json:"data"`
	}
	str := func(e event, key string) string {
		var s string
		_ = json.Unmarshal(e.Data[key], &s)
		return s
	}
	var res []struct {
		Window struct {
			Apps       []event `json:"app_events"`
			Titles     []event `json:"title_events"`
			Categories []event `json:"cat_events"`
			NotAFK     float64 `json:"not_afk_duration"`
			Duration   float64 `json:"duration"`
			AFK        float64 `json:"afk_duration"`
			AFKUnion   float64 `json:"afk_union"`
		} `json:"window"`
		Browser struct {
			Domains  []event `json:"domains"`
			Duration float64 `json:"duration"`
		} `json:"browser"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return Answer{}, err
	}
	if len(res) != 1 {
		return Answer{}, fmt.Errorf("%d answers for one period", len(res))
	}
	w := res[0].Window
	a := Answer{Active: w.Duration, Browser: res[0].Browser.Duration, NotAFK: w.NotAFK, AFK: w.AFK, AFKUnion: w.AFKUnion}
	for _, e := range w.Apps {
		a.Apps = append(a.Apps, App{App: str(e, "app"), Duration: e.Duration})
	}
	for i, e := range w.Titles {
		if titles > 0 && i >= titles {
			if a.TitlesRest == nil {
				a.TitlesRest = &Rest{}
			}
			a.TitlesRest.Count++
			a.TitlesRest.Duration += e.Duration
			continue
		}
		a.Titles = append(a.Titles, Title{App: str(e, "app"), Title: str(e, "title"), Duration: e.Duration})
	}
	for _, e := range w.Categories {
		var c []string
		if err := json.Unmarshal(e.Data["$category"], &c); err != nil {
			return Answer{}, fmt.Errorf("$category: %w", err)
		}
		a.Categories = append(a.Categories, Category{Category: c, Duration: e.Duration})
	}
	for _, e := range res[0].Browser.Domains {
		d := Domain{Duration: e.Duration}
		if _, ok := e.Data["$domain"]; ok {
			s := str(e, "$domain")
			d.Domain = &s
		}
		a.Domains = append(a.Domains, d)
	}
	return a, nil
}

// Location is the recording's time zone.
func (r *Recording) Location() (*time.Location, error) { return time.LoadLocation(r.Timezone) }

// Load reads the recording of a folder of testdata/realaw ("week", "dst"),
// found from this file's place in the source tree.
func Load(name string) (*Recording, error) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "realaw", name)
	data, err := os.ReadFile(filepath.Join(dir, "answers.json"))
	if err != nil {
		return nil, err
	}
	var r Recording
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("realaw: %s: %w", name, err)
	}
	r.Dir = dir
	return &r, nil
}

// Simulator is a simulator holding the recording's buckets and events
// (events.json.gz, aw-server's export shape, through POST /api/0/import)
// and its settings, with the recorded host as its hostname.
func (r *Recording) Simulator(ctx context.Context, opts awsim.Options) (*awsim.Server, error) {
	f, err := os.Open(filepath.Join(r.Dir, "events.json.gz"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:5600/api/0/import", zr)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	opts.Hostname = r.Host
	sim := awsim.New(opts)
	rec := httptest.NewRecorder()
	sim.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("realaw: POST /api/0/import: %d %s", rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	var settings map[string]json.RawMessage // the recorded settings (privacy_filters, category_sets...), stored as the server held them
	if err := json.Unmarshal(r.Settings, &settings); err != nil {
		return nil, fmt.Errorf("realaw: settings: %w", err)
	}
	for _, key := range slices.Sorted(maps.Keys(settings)) {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/0/settings/"+url.PathEscape(key), strings.NewReader(string(settings[key])))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		if sim.ServeHTTP(rec, req); rec.Code/100 != 2 {
			return nil, fmt.Errorf("realaw: POST /api/0/settings/%s: %d", key, rec.Code)
		}
	}
	return sim, nil
}

// Entry is one line of a ranking under test.
type Entry struct {
	Key       string
	DurationS float64
}

// Diff is the outcome of a check.
type Diff struct {
	Problems []string // where the answer disagrees with the recording
	Max      float64  // the largest difference of a shown entry, in seconds
}

// CheckRanking compares a ranking (largest first, cut to limit entries)
// with recorded totals, to within tol seconds: each entry's time, none
// twice, the largest shown, min(limit, len(want)) of them, and, when
// otherS >= 0, the time left out (rest: recorded time beyond want's
// entries, Answer.TitlesRest).
func CheckRanking(got []Entry, otherS float64, want map[string]float64, rest float64, limit int, tol float64) Diff {
	var d Diff
	bad := func(format string, args ...any) { d.Problems = append(d.Problems, fmt.Sprintf(format, args...)) }
	if n := min(limit, len(want)); len(got) != n {
		bad("%d entries, want %d (limit %d, %d recorded)", len(got), n, limit, len(want))
	}
	seen := map[string]bool{}
	smallest := math.Inf(1)
	for i, e := range got {
		w, ok := want[e.Key]
		switch {
		case seen[e.Key]:
			bad("%q shown twice", e.Key)
		case !ok:
			bad("%q: %.1f s, not in the recording", e.Key, e.DurationS)
		default:
			diff := math.Abs(e.DurationS - w)
			d.Max = max(d.Max, diff)
			if diff > tol {
				bad("%q: %.1f s, recorded %.3f s (off by %.3f s)", e.Key, e.DurationS, w, e.DurationS-w)
			}
		}
		if i > 0 && e.DurationS > got[i-1].DurationS {
			bad("%q (%.1f s) ranked below %q (%.1f s)", e.Key, e.DurationS, got[i-1].Key, got[i-1].DurationS)
		}
		seen[e.Key] = true
		smallest = min(smallest, e.DurationS)
	}
	var left float64
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if seen[k] {
			continue
		}
		left += want[k]
		if want[k] > smallest+tol {
			bad("%q (recorded %.3f s) left out, though %.1f s made the list", k, want[k], smallest)
		}
	}
	if otherS >= 0 {
		if diff := math.Abs(otherS - (left + rest)); diff > tol {
			bad("other_s %.1f s, recorded %.3f s beyond the entries shown", otherS, left+rest)
		}
	}
	return d
}

// CheckSummary compares an activity_summary of a recorded period, grouped
// by group, with the recording: active time, AFK time, the top ranking and
// the time beyond it, and the category and domain rankings beside it, each
// to within tol seconds.
func CheckSummary(s *activity.Summary, a Answer, group string, tol float64) Diff {
	var d Diff
	if !s.Period.Start.Equal(a.Start) || !s.Period.End.Equal(a.End) {
		d.Problems = append(d.Problems, fmt.Sprintf("period %s .. %s, recorded %s .. %s", s.Period.Start, s.Period.End, a.Start, a.End))
	}
	if diff := s.ActiveS - a.Active; math.Abs(diff) > tol {
		d.Problems = append(d.Problems, fmt.Sprintf("active_s %.1f, the real aw-server %.3f s (off by %.3f s)", s.ActiveS, a.Active, diff))
	}
	if diff := s.AFKS - a.AFK; math.Abs(diff) > tol {
		d.Problems = append(d.Problems, fmt.Sprintf("afk_s %.1f, the real aw-server's flooded AFK time %.3f s (off by %.3f s)", s.AFKS, a.AFK, diff))
	}
	for _, c := range []struct {
		what   string
		got    []activity.Entry
		group  string
		otherS float64
	}{
		{"top", s.Top, group, s.OtherS},
		{"categories", s.Categories, ByCategory, -1},
		{"top_domains", s.TopDomains, ByDomain, -1},
	} {
		if c.what != "top" && c.group == group {
			continue // top ranks them; the list beside it is left out
		}
		var rest float64
		if c.group == ByTitle && a.TitlesRest != nil {
			rest = a.TitlesRest.Duration
		}
		r := CheckRanking(keyed(c.got, c.group), c.otherS, a.totals(c.group), rest, activity.MaxSummaryLimit, tol)
		for _, p := range r.Problems {
			d.Problems = append(d.Problems, c.what+": "+p)
		}
		d.Max = max(d.Max, r.Max)
	}
	return d
}

// FocusSeconds is the time of a timeline's focus blocks (every block but
// the gaps), from their edges.
func FocusSeconds(blocks []activity.Block) float64 {
	var s float64
	for _, b := range blocks {
		if b.Gap == "" {
			s += b.End.Sub(b.Start).Seconds()
		}
	}
	return s
}
