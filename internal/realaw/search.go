package realaw

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// SearchFile is the file of a recording's folder holding Searches.
const SearchFile = "search.json"

// Searches are a real server's answers to SearchQuery: how much of a
// period's canonical time a search finds, as the web UI's queries count it.
type Searches struct {
	Comment    string          `json:"comment"`
	RecordedAt time.Time       `json:"recorded_at"`
	Server     json.RawMessage `json:"server"`
	Timezone   string          `json:"timezone"`
	Host       string          `json:"host"`
	// Canonical are the statements before each search's filters
	// (canonicalQuery of the host's buckets and categories).
	Canonical []string       `json:"canonical"`
	Answers   []SearchAnswer `json:"answers"`
}

// SearchAnswer is the server's answer to one search over one period.
type SearchAnswer struct {
	Words  string    `json:"words"`  // as asked (space-separated)
	Period string    `json:"period"` // the period's name
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	// Filters are the statements after Canonical: one
	// filter_keyvals_regex per word, the total and the events.
	Filters []string `json:"filters"`
	// Duration is sum_durations of the events kept, in seconds; Events
	// counts them.
	Duration float64 `json:"duration"`
	Events   int     `json:"events"`
	// Spans are the kept events, oldest first (when at most maxSpans).
	Spans []Span `json:"spans,omitempty"`
}

// Span is a kept event's time and app.
type Span struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	App   string    `json:"app"`
}

// maxSpans bounds the spans a SearchAnswer keeps.
const maxSpans = 300

// SearchFilters keep the canonical events whose title holds every word,
// case-insensitively (aw-core's filter_keyvals_regex, one per word, the
// word quoted), and answer their total and the events, oldest first.
func SearchFilters(words []string) []string {
	var q []string
	for _, w := range words {
		q = append(q, fmt.Sprintf(`events = filter_keyvals_regex(events, "title", %s);`, Lit("(?i)"+regexp.QuoteMeta(w))))
	}
	return append(q, `events = sort_by_timestamp(events);`, `RETURN = {"duration": sum_durations(events), "events": events};`)
}

// CanonicalQuery is the web UI's canonicalEvents for one host with the
// Activity view's defaults (see DesktopQuery): events, not_afk and
// browser_events.
func CanonicalQuery(b Buckets, classes []byte) []string { return canonicalQuery(b, classes) }

// DecodeSearch reads the server's answer to Canonical plus
// SearchFilters.
func DecodeSearch(raw []byte) (duration float64, spans []Span, err error) {
	var res []struct {
		Duration float64 `json:"duration"`
		Events   []struct {
			Timestamp time.Time `json:"timestamp"`
			Duration  float64   `json:"duration"`
			Data      struct {
				App string `json:"app"`
			} `json:"data"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return 0, nil, err
	}
	if len(res) != 1 {
		return 0, nil, fmt.Errorf("%d answers for one period", len(res))
	}
	for _, e := range res[0].Events {
		start := e.Timestamp.UTC()
		spans = append(spans, Span{start, start.Add(time.Duration(e.Duration * float64(time.Second))), e.Data.App})
	}
	return res[0].Duration, spans, nil
}

// Keep fills a's Events and Spans (when few enough) from spans.
func (a *SearchAnswer) Keep(spans []Span) {
	a.Events = len(spans)
	if len(spans) <= maxSpans {
		a.Spans = spans
	}
}

// LoadSearches reads the search answers of a folder of testdata/realaw.
func LoadSearches(name string) (*Searches, error) {
	rec, err := Load(name)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(rec.Dir, SearchFile))
	if err != nil {
		return nil, err
	}
	var s Searches
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("realaw: %s/%s: %w", name, SearchFile, err)
	}
	return &s, nil
}
