package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/awbridge/awbridge/toolbus"
)

// TestActivityCompactAnswers: in compact mode the activity tools leave out
// the buckets they read and the freshness detail (as_of), and keep whose
// time it is (source.host); the default mode keeps both.
func TestActivityCompactAnswers(t *testing.T) {
	e := hostileActivity(t)
	for _, c := range []struct{ tool, args string }{
		{"activity_summary", `"period":"last_2h"`},
		{"activity_timeline", `"period":"last_2h"`},
		{"nowframe_history", `"minutes":120`},
	} {
		sizes := map[bool]int{}
		for _, compact := range []bool{false, true} {
			args := `{` + c.args + `}`
			if compact {
				args = `{` + c.args + `,"response_mode":"compact"}`
			}
			out := e.Call(context.Background(), toolbus.Request{Name: c.tool, Args: json.RawMessage(args)})
			if out.Err != nil {
				t.Fatalf("%s %s: %+v", c.tool, args, out.Err)
			}
			var env struct {
				Result struct {
					Source struct {
						Host    string          `json:"host"`
						Buckets json.RawMessage `json:"buckets"`
					} `json:"source"`
					Freshness struct {
						AsOf string `json:"as_of"`
					} `json:"freshness"`
				} `json:"result"`
			}
			if err := json.Unmarshal(out.Body, &env); err != nil {
				t.Fatal(err)
			}
			r := env.Result
			if r.Source.Host == "" || (r.Source.Buckets != nil) == compact || (r.Freshness.AsOf != "") == compact {
				t.Errorf("%s %s: source %s (host %q), as_of %q: compact %v leaves out the buckets and as_of, the default keeps them",
					c.tool, args, r.Source.Buckets, r.Source.Host, r.Freshness.AsOf, compact)
			}
			sizes[compact] = len(out.Body)
		}
		t.Logf("%s: %d bytes, compact %d", c.tool, sizes[false], sizes[true])
	}
}

// TestEveryZoneHasItsOffset: wherever an answer names a time zone (a
// period's "timezone", a frame's timezone object), its UTC offset stands
// beside it, in every activity tool's answer and the frame's, nested
// periods included.
func TestEveryZoneHasItsOffset(t *testing.T) {
	e := hostileActivity(t)
	for _, c := range []struct{ tool, args string }{
		{"activity_summary", `{"period":"last_2h","group_by":"category"}`},
		{"activity_summary", `{"period":"today 09:00-09:30","response_mode":"compact"}`},
		{"activity_summary", `{"period":"last_2d","split":"day","compare":"previous"}`},
		{"activity_search", `{"query":"a","period":"last_2h"}`},
		{"activity_timeline", `{"start":"2026-11-24T09:00","end":"2026-11-24T09:40"}`},
		{"nowframe_history", `{"minutes":120}`},
		{"nowframe_build", `{}`},
		{"aw_get_state", `{}`},
	} {
		out := e.Call(context.Background(), toolbus.Request{Name: c.tool, Args: json.RawMessage(c.args)})
		if out.Err != nil {
			t.Fatalf("%s %s: %+v", c.tool, c.args, out.Err)
		}
		var v any
		if err := json.Unmarshal(out.Body, &v); err != nil {
			t.Fatal(err)
		}
		zones := 0
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch x := v.(type) {
			case map[string]any:
				switch z := x["timezone"].(type) {
				case string:
					zones++
					if off, _ := x["utc_offset"].(string); off == "" {
						t.Errorf("%s %s: %s names the zone %q without utc_offset beside it", c.tool, c.args, path, z)
					}
				case map[string]any:
					zones++
					if off, _ := z["utc_offset"].(string); off == "" {
						t.Errorf("%s %s: %s.timezone %v has no utc_offset", c.tool, c.args, path, z)
					}
				}
				for k, e := range x {
					walk(path+"."+k, e)
				}
			case []any:
				for _, e := range x {
					walk(path+"[]", e)
				}
			}
		}
		walk("$", v)
		if zones == 0 {
			t.Errorf("%s %s names no zone: %s", c.tool, c.args, out.Body)
		}
	}
}
