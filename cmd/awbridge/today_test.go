package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/mcp"
	"github.com/awbridge/awbridge/toolbus"
)

// summaryCases are the hand-written activity_summary results in
// testdata/summary (NAME.json), each printed to NAME.golden.
var summaryCases = []string{"normal-day", "empty-day", "long-titles", "excluded", "stale-watcher", "split-week"}

func summaryJSON(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "summary", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPrintSummaryGolden: `awbridge today` in words: the period in its
// time zone, active and away time, the top entries with bars, the longest
// focus, categories, stale watchers and notes one line each, every line
// within 79 columns, long and non-ASCII names cut on a character, and no
// control or bidi character reaching the terminal even when the service
// let one through.
func TestPrintSummaryGolden(t *testing.T) {
	for _, name := range summaryCases {
		t.Run(name, func(t *testing.T) {
			var s activity.Summary
			if err := json.Unmarshal(summaryJSON(t, name), &s); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			printSummary(&out, &s)
			got := out.String()
			for _, l := range strings.Split(got, "\n") {
				if w := width(l); w > summaryWidth {
					t.Errorf("line of %d columns: %q", w, l)
				}
				if !utf8.ValidString(l) || strings.ContainsAny(l, "\x1b\u202e\u202c\t\r") {
					t.Errorf("an unsafe character reaches the terminal: %q", l)
				}
			}
			checkGolden(t, filepath.Join("testdata", "summary", name+".golden"), got)
		})
	}
}

func TestFitWidth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"Code", 8, "Code"},
		{"Visual Studio Code", 10, "Visual St…"},
		{"日本語のタイトル", 9, "日本語の…"},
		{"e\u0301e\u0301e\u0301e\u0301", 3, "e\u0301e\u0301…"},
		{"🎉🎉🎉", 4, "🎉…"},
	} {
		if got := fitWidth(tc.in, tc.n); got != tc.want || width(got) > tc.n {
			t.Errorf("fitWidth(%q, %d) = %q (%d columns), want %q", tc.in, tc.n, got, width(got), tc.want)
		}
	}
}

// fakeSummaryCaller answers activity_summary with out, after handing the
// request's Progress each of updates (as the bus or the service would).
type fakeSummaryCaller struct {
	updates []toolbus.ProgressUpdate
	out     toolbus.Response
	got     toolbus.Request
}

func (f *fakeSummaryCaller) Call(_ context.Context, req toolbus.Request) toolbus.Response {
	f.got = req
	for _, u := range f.updates {
		if req.Progress != nil {
			req.Progress(u)
		}
	}
	return f.out
}

func (f *fakeSummaryCaller) ToolsList(context.Context) (json.RawMessage, error) { return nil, nil }
func (f *fakeSummaryCaller) Close()                                             {}

func summaryEnvelope(result []byte) toolbus.Response {
	return toolbus.Response{Body: append(append([]byte(`{"success":true,"tool":"activity_summary","status":"Ok","result":`), result...), `,"duration_ms":1}`...)}
}

// TestSummarizeProgressAndExitCodes: what `awbridge today` prints and
// exits with, for each answer of the tool: a progress line on a terminal
// only, redrawn in place and erased before the summary; --json the
// result alone; a failure one line on stderr, exit 1 when ActivityWatch
// could not be read, 2 when the call was refused or could not be made.
func TestSummarizeProgressAndExitCodes(t *testing.T) {
	result := summaryJSON(t, "normal-day")
	var normal bytes.Buffer
	var s activity.Summary
	_ = json.Unmarshal(result, &s)
	printSummary(&normal, &s)
	slow := []toolbus.ProgressUpdate{{Progress: 1, Total: 7, Message: "read 1 of 7 days"}, {Progress: 3, Total: 7, Message: "read 3 of 7 days\x1b[2J"}}
	failed := func(stage toolbus.Stage, kind toolbus.Kind, code, msg string) toolbus.Response {
		return toolbus.Response{Stage: stage, Err: &toolbus.ToolError{Kind: kind, Code: code, Message: msg}}
	}
	tests := []struct {
		name      string
		updates   []toolbus.ProgressUpdate
		out       toolbus.Response
		tty, json bool
		code      int
		stdout    string
		stderr    string
	}{
		{"quick, terminal", nil, summaryEnvelope(result), true, false, exitOK, normal.String(), ""},
		{"slow, terminal", slow, summaryEnvelope(result), true, false, exitOK, normal.String(),
			"\r\x1b[2Kawbridge today: read 1 of 7 days (14%)\r\x1b[2Kawbridge today: read 3 of 7 days[2J (43%)\r\x1b[2K"},
		{"slow, not a terminal", slow, summaryEnvelope(result), false, false, exitOK, normal.String(), ""},
		{"--json", slow, summaryEnvelope([]byte(`{"group_by":"app"}`)), false, true, exitOK, `{"group_by":"app","served_by":"in-process"}` + "\n", ""},
		{"ActivityWatch down", slow, failed(toolbus.StageExecute, toolbus.ExecutionError, toolbus.CodeAwUnavailable, "ActivityWatch did not answer"), true, false, exitDegraded, "",
			"\r\x1b[2Kawbridge today: read 1 of 7 days (14%)\r\x1b[2Kawbridge today: read 3 of 7 days[2J (43%)\r\x1b[2Kawbridge today: ActivityWatch did not answer\n"},
		{"bad period", nil, failed(toolbus.StageValidate, toolbus.ContractError, toolbus.CodeSchemaInvalid, `period: "fortnight" is not a period`), false, false, exitUsage, "",
			"awbridge today: period: \"fortnight\" is not a period\n"},
		{"no such tool", nil, failed(toolbus.StageResolve, toolbus.ContractError, toolbus.CodeUnknownTool, `unknown tool "activity_summary"`), false, false, exitUsage, "",
			"awbridge today: unknown tool \"activity_summary\"; run 'awbridge tools' to list them\n"},
		{"service gone", nil, failed(toolbus.StageExecute, toolbus.ExecutionError, "ServiceUnavailable", "interrupted"), false, false, exitUsage, "",
			"awbridge today: interrupted\n"},
		{"cancelled", nil, failed(toolbus.StageExecute, toolbus.PolicyError, toolbus.CodeCancelled, "the call was cancelled"), false, false, exitUsage, "",
			"awbridge today: the call was cancelled\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			tty := tc.tty
			e := &env{stdout: &out, stderr: &errb, stderrTTY: &tty}
			c := &fakeSummaryCaller{updates: tc.updates, out: tc.out}
			code := summarize(context.Background(), e, "today", c, servedByInProcess, json.RawMessage(`{"period":"today"}`), map[bool]string{true: formatJSON, false: formatText}[tc.json])
			if code != tc.code || out.String() != tc.stdout || errb.String() != tc.stderr {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr: %q\nwant:   %q", code, tc.code, out.String(), tc.stdout, errb.String(), tc.stderr)
			}
			if c.got.Name != summaryTool || string(c.got.Args) != `{"period":"today"}` || c.got.Progress == nil {
				t.Fatalf("request %+v", c.got)
			}
		})
	}
}

// TestTodayProgressFromTheService: `awbridge today` answered by a running
// service whose activity_summary takes a while: the service's progress
// notifications become the progress line on the terminal, erased before
// the summary is printed.
func TestTodayProgressFromTheService(t *testing.T) {
	result := summaryJSON(t, "normal-day")
	forwarded := make(chan struct{}, 4)
	bus, err := toolbus.New(toolbus.Options{}, &toolbus.Tool{Name: summaryTool, ReadOnly: true,
		Params: []toolbus.Param{{Name: "period", Type: "string"}},
		Run: func(ctx context.Context, c *toolbus.Call) (toolbus.Result, error) {
			c.Progress(2, 7, "read 2 of 7 days")
			select { // until the update is on its way to the client
			case <-forwarded:
			case <-ctx.Done():
				return toolbus.Result{}, ctx.Err()
			}
			return toolbus.Result{Body: result}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(shortDir(t), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- mcp.NewServer(forwardProgress{bus, forwarded}, mcp.Options{}).ServeListener(ctx, ln) }()
	defer func() { cancel(); <-served }()

	vars := cleanVars(t)
	vars["AWBRIDGE_SOCKET"] = sock
	code, out, errs := runIn(t, vars, true, "today")
	var s activity.Summary
	_ = json.Unmarshal(result, &s)
	var want bytes.Buffer
	printSummary(&want, &s)
	if code != exitOK || out != want.String() || errs != "\r\x1b[2Kawbridge today: read 2 of 7 days (29%)\r\x1b[2K" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr: %q", code, out, errs)
	}
}

// forwardProgress tells the test when the bus handed an update to the
// transport (a readiness signal: no clock).
type forwardProgress struct {
	*toolbus.Bus
	forwarded chan struct{}
}

func (f forwardProgress) Call(ctx context.Context, req toolbus.Request) toolbus.Response {
	if p := req.Progress; p != nil {
		req.Progress = func(u toolbus.ProgressUpdate) { p(u); f.forwarded <- struct{}{} }
	}
	return f.Bus.Call(ctx, req)
}

// TestTodayAgainstTheSimulator: the real binary's `today` and `summary`
// at the real binary's simulator, in process (no service), as a new user
// runs them.
func TestTodayAgainstTheSimulator(t *testing.T) {
	url := startSimBinary(t)
	env := baseEnv(t, url, "AWBRIDGE_SIDECAR_URL="+url)
	run := func(args ...string) (int, string, string) { return runBin(t, env, args...) }
	code, list, errs := run("tools", "--json")
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if code != exitOK || json.Unmarshal([]byte(list), &tools) != nil || len(tools.Tools) == 0 {
		t.Fatalf("awbridge tools --json: exit %d\n%s%s", code, list, errs)
	}
	if !strings.Contains(list, `"name":"`+summaryTool+`"`) {
		t.Fatalf("%s is not in tools/list:\n%s", summaryTool, list)
	}

	var out string
	code, out, errs = run("today")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != exitOK || errs != "" || !strings.HasPrefix(lines[0], "Today: ") || len(lines) < 4 ||
		!strings.Contains(lines[1], " active, ") || !strings.Contains(out, "\nTop apps\n") {
		t.Fatalf("awbridge today: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, l := range lines {
		if width(l) > summaryWidth {
			t.Fatalf("a line wider than %d columns: %q", summaryWidth, l)
		}
	}

	code, out, errs = run("today", "--json")
	var s struct {
		activity.Summary
		ServedBy string `json:"served_by"`
	}
	if code != exitOK || errs != "" || json.Unmarshal([]byte(out), &s) != nil || s.Period.Label != activity.LabelToday ||
		s.GroupBy != activity.GroupByApp || s.ServedBy != servedByInProcess || s.ActiveS <= 0 {
		t.Fatalf("awbridge today --json: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}

	code, out, errs = run("summary", "--period", "last_2h", "--group-by", "category", "--limit", "3")
	if code != exitOK || errs != "" || !strings.HasPrefix(out, "Last 2 hours: ") || !strings.Contains(out, "\nTop categories\n") {
		t.Fatalf("awbridge summary --period last_2h: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}

	code, out, errs = run("summary", "--period", "fortnight")
	if code != exitUsage || out != "" || !strings.HasPrefix(errs, "awbridge summary: ") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("a bad period: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}

	// A person running today sees one plain line: the command logs only
	// errors unless told otherwise, and this environment asks for warnings.
	env = baseEnv(t, "http://"+closedAddr(t), "AWBRIDGE_AW_TIMEOUT=200ms", "AWBRIDGE_LOG_LEVEL=error")
	code, out, errs = run("today")
	if code != exitDegraded || out != "" || !strings.HasPrefix(errs, "awbridge today: ") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("ActivityWatch stopped: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}
