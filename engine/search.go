package engine

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/toolbus"
)

// toolSearch finds when something was on screen.
const toolSearch = "activity_search"

// searchTool is activity_search: the stretches whose app, title, domain or
// editor project and file hold every word of query.
func (e *Engine) searchTool() *toolbus.Tool {
	return &toolbus.Tool{
		Name:         toolSearch,
		Title:        "When something was on screen",
		Description:  "When were these words on screen (default last_30d): \"when did I last work on ACME-1234\".",
		Params:       searchParams(),
		ResultSchema: json.RawMessage(`{"type":"object","required":["period","total_s","count","matches","source","freshness"]}`),
		ReadOnly:     true, Idempotent: true, Timeout: activityTimeout,
		Example: &toolbus.Example{
			Arguments: json.RawMessage(`{"query":"ACME-1234","limit":1,"output":{"pick":["total_s","matches"]}}`),
			Result:    json.RawMessage(`{"total_s":5400.2,"matches":[{"start":"2026-11-26T14:02:10+01:00","end":"2026-11-26T14:40:31+01:00","duration_s":2301,"app":"Google-chrome","title":"ACME-1234 Retries - Jira","domain":"acme.atlassian.net"}]}`),
		},
		Run: e.runSearch,
	}
}

// searchParams are activity_search's arguments, described in as few
// bytes as the tools/list budget leaves: the service checks them (an
// empty query, a limit beyond 1..MaxSearchLimit are InvalidArgument).
func searchParams() []toolbus.Param {
	ps := periodParams("")
	for i := range ps {
		ps[i].Description = ""
	}
	return append([]toolbus.Param{{Name: "query", Type: "string"}}, append(ps, toolbus.Param{Name: "limit", Type: "integer"})...)
}

func (e *Engine) runSearch(ctx context.Context, call *toolbus.Call) (toolbus.Result, error) {
	q := activity.SearchQuery{
		Query:  call.String("query", ""),
		Period: call.String("period", ""), Start: call.String("start", ""), End: call.String("end", ""),
		Limit: intArg(call, "limit"), Progress: call.Progress, Host: call.String("host", ""),
	}
	if _, given := call.Args["limit"]; given && q.Limit == 0 {
		q.Limit = -1 // refused as out of range, not read as the default
	}
	if call.Compact {
		// The newest matches the bus's cap on arrays keeps.
		q.Limit = min(cmp.Or(q.Limit, activity.DefaultSearchLimit), toolbus.CompactLimit)
	}
	r, err := e.activity.Search(ctx, q)
	return e.activityResult(ctx, r, err)
}
