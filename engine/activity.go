package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/toolbus"
	"github.com/awbridge/awbridge/upstream"
)

// activityTimeout bounds one activity call: a cold year from the real
// aw-server takes minutes (each read has its own deadline).
const activityTimeout = 10 * time.Minute

// The tools that read ActivityWatch's history.
const (
	ToolSummary  = "activity_summary"
	toolTimeline = "activity_timeline"
	toolHistory  = "nowframe_history"
)

// ReadsHistory reports whether tool reads ActivityWatch's stored events
// (a read may take up to activitywatch.history_timeout silently).
func ReadsHistory(tool string) bool {
	switch tool {
	case ToolSummary, toolTimeline, toolHistory, toolSearch:
		return true
	}
	return false
}

// zoneOf is the zone activity.timezone names, else the machine's.
func zoneOf(name string, d Deps) (func() activity.Zone, error) {
	if name != "" {
		zone, err := activity.LoadZone(name)
		if err != nil {
			return nil, fmt.Errorf("engine: activity.timezone: %w", err)
		}
		return func() activity.Zone { return zone }, nil
	}
	if d.MachineZone != nil {
		return d.MachineZone, nil
	}
	return activity.NewMachineZone(activity.MachineZoneOptions{Now: d.Now}).Zone, nil
}

// frameZone is the zone a frame built at t names: the activity tools'.
func frameZone(zone func() activity.Zone) func(t time.Time) nowframe.Zone {
	return func(t time.Time) nowframe.Zone {
		z := zone()
		return nowframe.Zone{Name: z.Name, UTCOffset: z.OffsetAt(t)}
	}
}

// periodParams are the period arguments the activity tools share.
func periodParams(defaultPeriod string) []toolbus.Param {
	return []toolbus.Param{
		{Name: "period", Type: "string", Description: defaultPeriod + "yesterday|this_week|last_week|last_Nh|last_Nd"},
		{Name: "start", Type: "string", Description: "RFC 3339 or local"},
		{Name: "end", Type: "string"},
		{Name: "host", Type: "string"}, // described in Instructions
	}
}

func intArg(call *toolbus.Call, name string) int {
	v, _ := call.Args[name].(int64)
	return int(v)
}

// activityTools are the tools over ActivityWatch's history (without
// dataNotInstructions, for the tools/list budget).
func (e *Engine) activityTools() []*toolbus.Tool {
	return []*toolbus.Tool{
		{
			Name:  ToolSummary,
			Title: "Where the time of a period went",
			Description: "A period's active/AFK time, top apps, titles, " +
				"domains, categories or projects, switches, longest focus, split by day: \"what did I do today\", \"time in Slack this week\".",
			Params: append(periodParams("today (default)|"),
				toolbus.Param{Name: "group_by", Type: "string", Enum: []string{activity.GroupByApp, activity.GroupByTitle,
					activity.GroupByDomain, activity.GroupByCategory, activity.GroupByProject, activity.GroupByLanguage, activity.GroupByFile}},
				toolbus.Param{Name: "limit", Type: "integer", Min: 1, Max: activity.MaxSummaryLimit, Description: "Default 10"},
				toolbus.Param{Name: "include_afk", Type: "boolean"},
				toolbus.Param{Name: "compare", Type: "string", Enum: []string{activity.ComparePrevious}},
				toolbus.Param{Name: "category", Type: "string", Description: "Only its time"},
				toolbus.Param{Name: "split", Type: "string", Enum: []string{activity.SplitDay}}),
			ResultSchema: json.RawMessage(`{"type":"object","required":["period","group_by","active_s","afk_s","top","switches","source","freshness"]}`),
			ReadOnly:     true, Idempotent: true, Timeout: activityTimeout,
			Example: &toolbus.Example{
				Arguments: json.RawMessage(`{"period":"today","limit":3,"output":{"pick":["active_s","top"]}}`),
				Result:    json.RawMessage(`{"active_s":25210.4,"top":[{"key":"Code","duration_s":12000.5,"share":0.476},{"key":"Google-chrome","duration_s":8000,"share":0.317},{"key":"excluded","duration_s":600,"share":0.024,"excluded":true}]}`),
			},
			Run: e.runSummary,
		},
		{
			Name:  toolTimeline,
			Title: "What the person did when",
			Description: "A period's focus blocks (app, title, domain, start, end) and AFK gaps, short ones folded: " +
				"\"what was I doing between 2 and 4\". More: cursor=next_cursor.",
			Params: append(periodParams("today (default)|"),
				toolbus.Param{Name: "min_block_s", Type: "integer", Min: 0, Max: activity.MaxMinBlockS, Description: "Default 60"},
				toolbus.Param{Name: "limit", Type: "integer", Min: 1, Max: activity.MaxTimelineLimit, Description: "Default 50"},
				toolbus.Param{Name: "cursor", Type: "string"}), // the service bounds it
			ResultSchema: json.RawMessage(`{"type":"object","required":["period","blocks","source","freshness"]}`),
			ReadOnly:     true, Idempotent: true, Timeout: activityTimeout,
			Example: &toolbus.Example{
				Arguments: json.RawMessage(`{"start":"2026-11-22T14:00:00+01:00","end":"2026-11-22T16:00:00+01:00","output":{"path":"blocks","map":{"pick":["app","title","start","gap"]}}}`),
				Result:    json.RawMessage(`[{"app":"Code","title":"fetch.go — awbridge","start":"2026-11-22T14:00:00+01:00"},{"start":"2026-11-22T14:52:00+01:00","gap":"afk"}]`),
			},
			Run: e.runTimeline,
		},
		e.searchTool(),
		{
			Name:  toolHistory,
			Title: "What the person switched between recently",
			Description: "Recent switches of app, title, tab or AFK state, each with its length: " +
				"\"what was I just doing\".",
			Params: append([]toolbus.Param{{Name: "minutes", Type: "integer", Min: 1, Max: 1440, Description: "Default 10"}},
				append(periodParams("today|"),
					toolbus.Param{Name: "limit", Type: "integer", Min: 1, Max: activity.MaxHistoryLimit, Description: "Default 50"})...),
			ResultSchema: json.RawMessage(`{"type":"object","required":["period","count","switches","source","freshness"]}`),
			ReadOnly:     true, Idempotent: true, Timeout: activityTimeout,
			Example: &toolbus.Example{Arguments: json.RawMessage(`{"minutes":30,"output":{"path":"switches","map":{"pick":["at","what","app"]}}}`),
				Result: json.RawMessage(`[{"at":"2026-11-22T10:02:11+01:00","what":["app","title"],"app":"Code"}]`)},
			Run: e.runHistory,
		},
	}
}

func (e *Engine) runSummary(ctx context.Context, call *toolbus.Call) (toolbus.Result, error) {
	include, _ := call.Args["include_afk"].(bool)
	sum, err := e.activity.Summary(ctx, activity.SummaryQuery{
		Period: call.String("period", ""), Start: call.String("start", ""), End: call.String("end", ""),
		GroupBy: call.String("group_by", ""), Limit: intArg(call, "limit"), IncludeAFK: include, Progress: call.Progress,
		Host: call.String("host", ""), Compare: call.String("compare", ""), Category: call.String("category", ""),
		Split: call.String("split", ""),
	})
	if err == nil && call.Compact {
		sum.Shorten()
	}
	return e.activityResult(ctx, sum, err)
}

func (e *Engine) runTimeline(ctx context.Context, call *toolbus.Call) (toolbus.Result, error) {
	q := activity.TimelineQuery{
		Period: call.String("period", ""), Start: call.String("start", ""), End: call.String("end", ""),
		Limit: intArg(call, "limit"), Cursor: call.String("cursor", ""), Progress: call.Progress,
		Host: call.String("host", ""),
	}
	if _, ok := call.Args["min_block_s"]; ok {
		n := intArg(call, "min_block_s")
		q.MinBlockS = &n
	}
	if call.Compact {
		// A page the bus's cap on arrays leaves whole: compact shortens
		// blocks, never drops them.
		q.Limit = min(cmp.Or(q.Limit, activity.DefaultTimelineLimit), toolbus.CompactLimit)
	}
	tl, err := e.activity.Timeline(ctx, q)
	if err == nil && call.Compact {
		tl.Shorten()
	}
	return e.activityResult(ctx, tl, err)
}

func (e *Engine) runHistory(ctx context.Context, call *toolbus.Call) (toolbus.Result, error) {
	q := activity.HistoryQuery{
		Minutes: intArg(call, "minutes"),
		Period:  call.String("period", ""), Start: call.String("start", ""), End: call.String("end", ""),
		Limit: intArg(call, "limit"), Progress: call.Progress,
		Host: call.String("host", ""),
	}
	if call.Compact {
		// The newest switches the bus's cap on arrays keeps.
		q.Limit = min(cmp.Or(q.Limit, activity.DefaultHistoryLimit), toolbus.CompactLimit)
	}
	h, err := e.activity.History(ctx, q)
	if err == nil && call.Compact {
		h.Shorten()
	}
	return e.activityResult(ctx, h, err)
}

// activityResult renders an activity result or types its error: a bad
// argument or too dense a period is an InvalidArgument; ActivityWatch
// failing is classified as for frames; the call's end is the bus's.
func (e *Engine) activityResult(ctx context.Context, v any, err error) (toolbus.Result, error) {
	circuit := e.histSrc.Circuit().String()
	if err != nil {
		var (
			se *activity.SpecError
			de *activity.DenseError
			he *activity.UnknownHostError
			re *activity.ReadError
		)
		switch {
		case errors.As(err, &se):
			return toolbus.Result{}, &toolbus.ToolError{Kind: toolbus.ContractError, Code: toolbus.CodeInvalidArgument,
				Message: se.Error(), Details: map[string]any{"argument": se.Arg}}
		case errors.As(err, &he):
			return toolbus.Result{}, &toolbus.ToolError{Kind: toolbus.ContractError, Code: toolbus.CodeInvalidArgument,
				Message: he.Error(), Hint: "details.hosts are the hosts ActivityWatch has, this machine first",
				Details: map[string]any{"argument": "host", "hosts": he.Hosts}}
		case errors.As(err, &de):
			return toolbus.Result{Circuit: circuit}, &toolbus.ToolError{Kind: toolbus.ContractError, Code: toolbus.CodeInvalidArgument,
				Message: de.Error(), Hint: "ask a shorter period (a day, or some hours of it)",
				Details: map[string]any{"argument": "period", "max_events": de.Max}}
		case ctx.Err() != nil:
			return toolbus.Result{Circuit: circuit}, ctx.Err()
		case errors.As(err, &re) && answered(re):
			hint := hintHistoryFailed
			if re.TimedOut() {
				hint = hintHistorySlow
			}
			ms := int64(1000)
			if ue := new(upstream.Error); errors.As(err, &ue) && ue.RetryAfter > 0 {
				ms = ue.RetryAfter.Milliseconds() // this failure opened the circuit
			}
			return toolbus.Result{Circuit: circuit}, (&toolbus.ToolError{Kind: toolbus.ExecutionError,
				Code: toolbus.CodeAwEventsUnreadable, Retryable: true, Message: err.Error(), Hint: hint, RetryAfterMs: &ms,
				Details: map[string]any{"source": e.histSrc.Name(), "circuit": circuit, "timed_out": re.TimedOut()}}).WithCause(err)
		}
		return toolbus.Result{Circuit: circuit}, e.upstreamError(err)
	}
	b, err := jsonw.Marshal(v)
	return toolbus.Result{Body: b, Circuit: circuit}, err
}

// answered reports whether ActivityWatch answered the read that failed
// (slowly, or with an error of its own), as opposed to not at all.
func answered(re *activity.ReadError) bool {
	switch aw.KindOf(re) {
	case aw.Timeout, aw.HTTPStatus, aw.Malformed, aw.TooLarge, aw.NotFound:
		return true
	}
	return false
}
