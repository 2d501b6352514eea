package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/toolbus"
	"github.com/awbridge/awbridge/toolbus/redact"
)

// hostileHost is the hostname of the hostile desktop: a bidi override,
// an instruction and a terminal escape.
const hostileHost = "vm\u202e " + injection + "\u001b[2J"

// secretKey is an API key in a window title: the redactor masks it.
const secretKey = "sk-ant-api03-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"

// hostileActivity is an engine over a simulator holding an hour of the
// hostile and private desktop of TestUntrustedTextStaysData: hostile
// titles, tabs and hostname, an excluded app, a password manager, a
// private tab, a secret in a title.
func hostileActivity(t *testing.T) *Engine {
	t.Helper()
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	now := at.Add(time.Hour)
	sim := awsim.New(awsim.Options{Hostname: hostileHost, Now: func() time.Time { return now }})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	post := poster(t, srv.URL)
	host, _ := json.Marshal(hostileHost)
	for id, typ := range map[string]string{"aw-watcher-window_h": aw.TypeWindow, "aw-watcher-afk_h": aw.TypeAFK, "aw-watcher-web-chrome_h": aw.TypeWeb} {
		post("/api/0/buckets/"+id, fmt.Sprintf(`{"client":"test","type":%q,"hostname":%s}`, typ, host))
	}
	ev := func(min, dur int, data string) string {
		return fmt.Sprintf(`{"timestamp":%q,"duration":%d,"data":%s}`, at.Add(time.Duration(min)*time.Minute).Format(time.RFC3339), dur, data)
	}
	hostileTitle, _ := json.Marshal("Invoice \u202egpj.exe\u001b]0;x\u0007 " + injection + "\U000E0041")
	hostileApp, _ := json.Marshal("Code\u200b\u001b[31m")
	tabTitle, _ := json.Marshal("tab \u2028" + injection)
	tabURL, _ := json.Marshal("https://evil.test/\u2066" + strings.ReplaceAll(injection, " ", "-") + "?session=abc123")
	post("/api/0/buckets/aw-watcher-afk_h/events", "["+ev(0, 3600, `{"status":"not-afk"}`)+"]")
	post("/api/0/buckets/aw-watcher-window_h/events", "["+strings.Join([]string{
		ev(0, 600, `{"app":"Google-chrome","title":`+string(hostileTitle)+`}`),
		ev(10, 600, `{"app":`+string(hostileApp)+`,"title":"key `+secretKey+` in main.go"}`),
		ev(20, 600, `{"app":"Secret App","title":"plans for the merger"}`),
		ev(30, 600, `{"app":"1Password","title":"Vault - 1Password"}`),
		ev(40, 600, `{"app":"Google-chrome","title":"Bank - Google Chrome (Incognito)"}`),
		ev(50, 600, `{"app":"Code","title":"main.go"}`),
	}, ",")+"]")
	post("/api/0/buckets/aw-watcher-web-chrome_h/events", "["+strings.Join([]string{
		ev(0, 600, `{"url":`+string(tabURL)+`,"title":`+string(tabTitle)+`,"audible":false,"incognito":false}`),
		ev(40, 600, `{"url":"https://bank.example/account","title":"Bank","audible":false,"incognito":true}`),
	}, ",")+"]")

	c := config.Defaults()
	c.AW.URL, c.AW.Timeout = srv.URL, 5*time.Second
	c.Privacy.ExcludeApps = "Secret App"
	c.Activity.Timezone = "UTC"
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// poster returns a function that POSTs JSON to the ActivityWatch at base
// and fails the test unless it answers 200.
func poster(t *testing.T, base string) func(path, body string) {
	return func(path, body string) {
		t.Helper()
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s", path, resp.Status)
		}
	}
}

// TestActivityUntrustedTextStaysData plants the hostile and private
// desktop in ActivityWatch and checks every string of the activity tools'
// answers: no unsafe characters, the instruction only in data fields,
// the secret masked, excluded apps, the password manager and the private
// tab never shown.
func TestActivityUntrustedTextStaysData(t *testing.T) {
	e := hostileActivity(t)
	ctx := context.Background()
	var calls []toolbus.Request
	for _, g := range []string{"app", "title", "domain", "category"} {
		calls = append(calls, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"last_2h","group_by":"` + g + `","include_afk":true}`)},
			toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"today","group_by":"` + g + `","split":"day"}`)})
	}
	calls = append(calls,
		toolbus.Request{Name: "activity_timeline", Args: json.RawMessage(`{"period":"today","min_block_s":0}`)},
		toolbus.Request{Name: "activity_timeline", Args: json.RawMessage(`{"period":"today"}`)},
		toolbus.Request{Name: "nowframe_history", Args: json.RawMessage(`{"minutes":120}`)})
	for _, req := range calls {
		t.Run(req.Name+string(req.Args), func(t *testing.T) {
			out := e.Call(ctx, req)
			if out.Err != nil {
				t.Fatalf("%+v", out.Err)
			}
			var v any
			if err := json.Unmarshal(out.Body, &v); err != nil {
				t.Fatal(err)
			}
			seen := 0
			walkStrings("", v, func(path, s string) {
				if c := redact.Clean(s); c != s {
					t.Errorf("unsafe characters at %s: %q", path, s)
				}
				for _, private := range []string{"Secret App", "merger", "1Password", "Vault", "Bank", "bank.example", "abc123", "session", secretKey} {
					if strings.Contains(s, private) {
						t.Errorf("%q shows at %s: %q", private, path, s)
					}
				}
				if !strings.Contains(strings.ReplaceAll(s, "-", " "), injection) {
					return
				}
				seen++
				for _, prose := range []string{"summary", "note", "hint", "message", "description", "next_actions", "why", "error"} {
					if strings.Contains(strings.ToLower(path), prose) {
						t.Errorf("hostile text inside %s: %q", path, s)
					}
				}
			})
			if seen == 0 {
				t.Errorf("the hostile text vanished entirely; the test no longer exercises anything: %s", out.Body)
			}
			if req.Name == "activity_summary" && strings.Contains(string(req.Args), `"app"`) &&
				!strings.Contains(string(out.Body), `{"key":"excluded","duration_s":1200,"share":0.333,"excluded":true}`) {
				t.Errorf("the excluded app and the password manager are not one excluded entry of 1200 s: %s", out.Body)
			}
		})
	}
}

// TestActivityErrors: a bad period, a bad cursor and an unknown grouping
// are InvalidArgument naming the argument; ActivityWatch down is
// AwUnavailable, retryable.
func TestActivityErrors(t *testing.T) {
	e := hostileActivity(t)
	ctx := context.Background()
	for _, c := range []struct {
		tool, args, arg string
	}{
		{"activity_summary", `{"period":"fortnight"}`, "period"},
		{"activity_summary", `{"start":"2026-11-24T10:00:00Z","end":"2026-11-24T09:00:00Z"}`, "end"},
		{"activity_summary", `{"period":"today","start":"2026-11-24T10:00:00Z","end":"2026-11-24T11:00:00Z"}`, "period"},
		{"activity_timeline", `{"cursor":"bm90IGEgY3Vyc29y"}`, "cursor"},
		{"nowframe_history", `{"minutes":5,"period":"today"}`, "minutes"},
		{"activity_summary", `{"host":"laptop-9"}`, "host"},
		{"activity_summary", `{"category":"Work > Meetings"}`, "category"},
		{"activity_timeline", `{"host":"laptop-9"}`, "host"},
		{"nowframe_history", `{"host":"laptop-9"}`, "host"},
		{"activity_summary", `{"period":"last_366d","split":"day","limit":11}`, "limit"},
	} {
		out := e.Call(ctx, toolbus.Request{Name: c.tool, Args: json.RawMessage(c.args)})
		if out.Err == nil || out.Err.Code != toolbus.CodeInvalidArgument || out.Err.Kind != toolbus.ContractError ||
			out.Err.Details["argument"] != c.arg || out.Err.Retryable {
			t.Errorf("%s %s: %+v, want InvalidArgument on %s", c.tool, c.args, out.Err, c.arg)
		}
		if c.arg == "host" {
			hosts, _ := out.Err.Details["hosts"].([]string)
			if len(hosts) != 1 || redact.Clean(hosts[0]) != hosts[0] || !strings.HasPrefix(hosts[0], "vm") ||
				strings.Contains(out.Err.Message, injection) {
				t.Errorf("%s: unknown host: hosts %q (want the hostile host, cleaned), message %q", c.tool, hosts, out.Err.Message)
			}
		}
	}
	for _, args := range []string{`{"group_by":"mood"}`, `{"split":"week"}`} {
		out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(args)})
		if out.Err == nil || out.Err.Code != toolbus.CodeSchemaInvalid {
			t.Errorf("%s: %+v", args, out.Err)
		}
	}

	c := config.Defaults()
	c.AW.URL, c.AW.Timeout = "http://127.0.0.1:1", time.Second
	down, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(down.Close)
	for _, tool := range []string{"activity_summary", "activity_timeline", "nowframe_history"} {
		out := down.Call(ctx, toolbus.Request{Name: tool})
		if out.Err == nil || out.Err.Code != toolbus.CodeAwUnavailable || !out.Err.Retryable {
			t.Errorf("%s with ActivityWatch down: %+v", tool, out.Err)
		} else if !strings.Contains(out.Err.Hint, "running at http://127.0.0.1:1?") {
			t.Errorf("%s with ActivityWatch down: the hint names no URL to check: %q", tool, out.Err.Hint)
		}
	}
}

// TestActivitySummaryCompareCategory: compare and category reach the
// summary: the previous period comes with every entry's previous_s, and
// the uncategorized time is a part of the active time.
func TestActivitySummaryCompareCategory(t *testing.T) {
	e := hostileActivity(t)
	out := e.Call(context.Background(), toolbus.Request{Name: "activity_summary",
		Args: json.RawMessage(`{"period":"last_2h","compare":"previous","category":"Uncategorized","output":{"pick":["active_s","top","previous"]}}`)})
	var env struct {
		Result struct {
			ActiveS float64 `json:"active_s"`
			Top     []struct {
				PreviousS *float64 `json:"previous_s"`
			}
			Previous *struct {
				Start, End time.Time
				ActiveS    float64 `json:"active_s"`
			}
		}
	}
	if out.Err != nil || json.Unmarshal(out.Body, &env) != nil {
		t.Fatalf("%+v %s", out.Err, out.Body)
	}
	r := env.Result
	if r.ActiveS <= 0 || r.ActiveS >= 3600 || r.Previous == nil || r.Previous.End.Sub(r.Previous.Start) != 2*time.Hour || len(r.Top) == 0 || r.Top[0].PreviousS == nil {
		t.Errorf("%s", out.Body)
	}
}

// TestActivityHosts: aw_get_state lists the hosts with window or AFK
// buckets (cleaned); the activity tools read host "all" and this
// machine's hostname given in another case (its default reading), and
// say whose buckets they read.
func TestActivityHosts(t *testing.T) {
	e := hostileActivity(t)
	ctx := context.Background()
	out := e.Call(ctx, toolbus.Request{Name: "aw_get_state", Args: json.RawMessage(`{"output":{"pick":["hosts"]}}`)})
	var state struct{ Result struct{ Hosts []string } }
	if out.Err != nil || json.Unmarshal(out.Body, &state) != nil || len(state.Result.Hosts) != 1 ||
		!strings.HasPrefix(state.Result.Hosts[0], "vm") || redact.Clean(state.Result.Hosts[0]) != state.Result.Hosts[0] {
		t.Fatalf("aw_get_state hosts: %+v %s", out.Err, out.Body)
	}
	for host, source := range map[string]string{"all": "argument", strings.ToUpper(hostileHost): "aw_hostname"} {
		args, _ := json.Marshal(map[string]any{"period": "last_2h", "host": host, "output": map[string]any{"pick": []string{"active_s", "source"}}})
		out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: args})
		var env struct {
			Result struct {
				ActiveS float64 `json:"active_s"`
				Source  struct {
					HostSource string   `json:"host_source"`
					Hosts      []string `json:"hosts"`
				}
			}
		}
		if out.Err != nil || json.Unmarshal(out.Body, &env) != nil {
			t.Fatalf("host %q: %+v %s", host, out.Err, out.Body)
		}
		sum := env.Result
		if sum.ActiveS != 3600 || sum.Source.HostSource != source || len(sum.Source.Hosts) != 1 {
			t.Errorf("host %q: %s", host, out.Body)
		}
	}
}
