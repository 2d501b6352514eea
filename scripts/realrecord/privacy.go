package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/awbridge/awbridge/internal/realaw"
)

// withPrivacy stores the privacy_filters setting read from file on the
// server (which the Python aw-server keeps as an opaque setting and never
// applies) and returns the query with its drop rules expressed in the
// query language, as aw-server-rust would have applied them on insert:
// each enabled drop rule's bucket read through exclude_keyvals of the
// values the server's own regex matched (filter_keyvals_regex over every
// event of the bucket). Redact rules cannot be expressed and are refused
// unless they are invalid (no replacement); disabled rules are left out,
// as are rules whose pattern the server refuses.
func (r *recorder) withPrivacy(file string, ids []string, query []string) ([]string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if err := r.do(http.MethodPost, "/api/0/settings/privacy_filters", raw, nil); err != nil {
		return nil, err
	}
	var rules []map[string]any
	if err := json.Unmarshal(raw, &rules); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var (
		pre  []string              // statements reading the buckets filtered
		vars = map[string]string{} // bucket id: its variable
	)
	all := []time.Time{time.Unix(0, 0).UTC(), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i, rule := range rules {
		prefix, _ := rule["bucket_prefix"].(string)
		field, _ := rule["field"].(string)
		pattern, okP := rule["pattern"].(string)
		switch {
		case rule["enabled"] != true || field == "" || !okP:
			continue
		case rule["action"] == "redact":
			if s, _ := rule["replacement"].(string); s != "" {
				return nil, fmt.Errorf("rule %d: a redact rule cannot be expressed in a query", i+1)
			}
			continue
		case rule["action"] != "drop":
			continue
		}
		for _, id := range ids {
			if !strings.HasPrefix(id, prefix) {
				continue
			}
			// The Python query parser misreads a call nested as a first
			// argument followed by others: one statement per call.
			q := []string{fmt.Sprintf(`events = query_bucket(%s);`, realaw.Lit(id)),
				fmt.Sprintf(`events = filter_keyvals_regex(events, %s, %s);`, realaw.Lit(field), realaw.Lit(pattern)),
				fmt.Sprintf(`RETURN = merge_events_by_keys(events, [%s]);`, realaw.Lit(field))}
			body, err := realaw.QueryBody(q, all[0], all[1])
			if err != nil {
				return nil, err
			}
			var answer [][]struct {
				Data map[string]any `json:"data"`
			}
			if err := r.do(http.MethodPost, "/api/0/query/", body, &answer); err != nil {
				fmt.Fprintf(os.Stderr, "rule %d: the server refuses its pattern, left out: %v\n", i+1, err)
				break
			}
			var vals []any
			for _, e := range answer[0] {
				vals = append(vals, e.Data[field])
			}
			if len(vals) == 0 {
				continue
			}
			vs, err := realaw.Marshal(vals)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(os.Stderr, "rule %d: drops %d distinct %s of %s\n", i+1, len(vals), field, id)
			v, ok := vars[id]
			if !ok {
				v = fmt.Sprintf("privacy_%d", len(vars))
				vars[id] = v
				pre = append(pre, fmt.Sprintf(`%s = query_bucket(%s);`, v, realaw.Lit(id)))
				read := fmt.Sprintf(`query_bucket(%s)`, realaw.Lit(id))
				for k, s := range query {
					query[k] = strings.ReplaceAll(s, read, v)
				}
			}
			pre = append(pre, fmt.Sprintf(`%s = exclude_keyvals(%s, %s, %s);`, v, v, realaw.Lit(field), strings.TrimSpace(string(vs))))
		}
	}
	return append(pre, query...), nil
}
