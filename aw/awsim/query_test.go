package awsim

import (
	"strings"
	"testing"
	"time"
)

// TestQueryTransformsFollowAWCore pins the query functions to aw-core's
// transforms (d628a9a, the recorded server's) where an earlier port of
// them differed.
func TestQueryTransformsFollowAWCore(t *testing.T) {
	h := newHarness(t, base)
	h.createBuckets(bWindow, bWeb)
	for i, d := range []map[string]any{
		{"app": "Code", "title": "a"},
		{"app": "Slack", "title": "b"},
		{"title": "no app"},
	} {
		h.mustPost("/api/0/buckets/"+bWindow+"/events", ev(at(time.Duration(i)*time.Minute), 60, d))
	}
	h.mustPost("/api/0/buckets/"+bWeb+"/events", ev(at(0), 10, map[string]any{"url": "file:///home/a/notes.txt", "audible": true}))
	h.mustPost("/api/0/buckets/"+bWeb+"/events", ev(at(time.Hour), 10, map[string]any{"url": "https://www.x.org/", "audible": true}))
	period := "2026-11-22T09:00:00+00:00/2026-11-22T12:00:00+00:00"
	win := `w = sort_by_timestamp(query_bucket("` + bWindow + `"));`
	web := `b = sort_by_timestamp(query_bucket("` + bWeb + `"));`
	for _, c := range []struct {
		name, query, want string
	}{
		{"split_url_events names the scheme as the domain of a URL without one",
			web + `b = split_url_events(b); RETURN = b;`, ``},
		{"filter_keyvals_regex leaves out events without the key",
			win + `RETURN = filter_keyvals_regex(w, "app", "^S");`, `[[{"data":{"app":"Slack","title":"b"},"duration":60.0,"id":2,"timestamp":"2026-11-22T10:01:00+00:00"}]]`},
		{"categorize puts a string class as is",
			win + `f = limit_events(w, 1); RETURN = categorize(f, [["Work", {"regex": "Code"}]]);`, `[[{"data":{"$category":"Work","app":"Code","title":"a"},"duration":60.0,"id":1,"timestamp":"2026-11-22T10:00:00+00:00"}]]`},
		{"categorize reads no priority",
			win + `f = limit_events(w, 1); RETURN = categorize(f, [[["A", "B"], {"regex": "Code"}], [["C"], {"regex": "Code", "priority": 99}]]);`,
			`[[{"data":{"$category":["A","B"],"app":"Code","title":"a"},"duration":60.0,"id":1,"timestamp":"2026-11-22T10:00:00+00:00"}]]`},
		{"categorize fails on a matching class without len()",
			win + `RETURN = categorize(w, [[5, {"regex": "Code"}]]);`, `{"type": "QueryInterpretException", "message": "Tried to call function categorize with invalid amount of arguments"}`},
		{"period_union clears the data of an event it takes over, in every list",
			web + `u = period_union([], b); RETURN = b;`,
			`[[{"data":{},"duration":10.0,"id":4,"timestamp":"2026-11-22T10:00:00+00:00"},{"data":{},"duration":10.0,"id":5,"timestamp":"2026-11-22T11:00:00+00:00"}]]`},
	} {
		body := mustJSON(map[string]any{"timeperiods": []string{period}, "query": []string{c.query}})
		a := h.postRaw("/api/0/query/", body)
		got := strings.TrimSpace(string(a.body))
		if c.want == "" {
			if !strings.Contains(got, `"$domain":"file"`) {
				t.Errorf("%s: %d %s", c.name, a.status, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("%s\n got %d %s\nwant %s", c.name, a.status, got, c.want)
		}
	}
}

// TestFloodKeepsOverlaps is aw-core's flood on overlapping events with
// different data: both stay as they are.
func TestFloodKeepsOverlaps(t *testing.T) {
	h := newHarness(t, base)
	h.createBuckets(bWindow)
	h.mustPost("/api/0/buckets/"+bWindow+"/events", []map[string]any{
		ev(at(0), 10, map[string]any{"app": "A"}),
		ev(at(5*time.Second), 10, map[string]any{"app": "B"}),
	})
	body := mustJSON(map[string]any{"timeperiods": []string{"2026-11-22T09:00:00+00:00/2026-11-22T12:00:00+00:00"},
		"query": []string{`RETURN = sum_durations(flood(query_bucket("` + bWindow + `")));`}})
	if a := h.postRaw("/api/0/query/", body); strings.TrimSpace(string(a.body)) != "[20.0]" {
		t.Errorf("flood: %d %s, want [20.0] (two 10 s events, overlapping)", a.status, a.body)
	}
}
