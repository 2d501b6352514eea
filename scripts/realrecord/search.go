package main

// -search records how much of each period's canonical time a search finds,
// as the web UI's queries count it: the canonical events whose title holds
// every word (realaw.SearchFilters), into <out>/search.json, beside a
// recording whose events the server holds (load them with -import):
//
//	go run ./scripts/realrecord -url http://127.0.0.1:5661 -import testdata/realaw/week/events.json.gz \
//	    -tz Etc/GMT+10 -out testdata/realaw/week -search ACME-725 -search "grafana profiling" ... \
//	    -period day=2026-11-24T04:00/2026-11-25T04:00 -period week=2026-11-21T04:00/2026-11-28T04:00

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/awbridge/awbridge/internal/realaw"
)

func (r *recorder) recordSearches(out string, loc *time.Location, rec *realaw.Recording, periods []string) error {
	s := realaw.Searches{
		Comment:    "answers of a real aw-server to the web UI's canonical events filtered by title (scripts/realrecord -search); the oracle of activity_search",
		RecordedAt: time.Now().UTC().Truncate(time.Second),
		Server:     rec.Server, Timezone: rec.Timezone, Host: rec.Host,
		Canonical: realaw.CanonicalQuery(rec.Buckets, rec.Classes),
	}
	for _, p := range periods {
		name, start, end, err := parsePeriod(p, loc)
		if err != nil {
			return err
		}
		for _, words := range r.searches {
			a := realaw.SearchAnswer{Words: words, Period: name, Start: start, End: end, Filters: realaw.SearchFilters(strings.Fields(words))}
			body, err := realaw.QueryBody(append(append([]string{}, s.Canonical...), a.Filters...), start, end)
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if err := r.do(http.MethodPost, "/api/0/query/", body, &raw); err != nil {
				return fmt.Errorf("search %q over %s: %w", words, name, err)
			}
			d, spans, err := realaw.DecodeSearch(raw)
			if err != nil {
				return fmt.Errorf("search %q over %s: %w", words, name, err)
			}
			a.Duration = d
			a.Keep(spans)
			fmt.Fprintf(os.Stderr, "%s %q: %.3f s in %d events\n", name, words, d, len(spans))
			s.Answers = append(s.Answers, a)
		}
	}
	b, err := realaw.Marshal(s)
	if err != nil {
		return err
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, b, "", " "); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, realaw.SearchFile), append(indented.Bytes(), '\n'), 0o644)
}
