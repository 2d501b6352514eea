package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awbridge/awbridge/toolbus"
)

// progressBus is a real tool bus with two fake tools: "slow" reports
// "step i of 3" (i = 1, 2, 3), each followed by step(ctx, i), then
// answers; "quick" reports once and answers at once.
func progressBus(t *testing.T, step func(ctx context.Context, i int) error) *toolbus.Bus {
	t.Helper()
	b, err := toolbus.New(toolbus.Options{},
		&toolbus.Tool{Name: "slow", ReadOnly: true, Timeout: time.Minute, Run: func(ctx context.Context, c *toolbus.Call) (toolbus.Result, error) {
			for i := 1; i <= 3; i++ {
				c.Progress(float64(i), 3, fmt.Sprintf("step %d of 3", i))
				if err := step(ctx, i); err != nil {
					return toolbus.Result{}, err
				}
			}
			return toolbus.Result{Body: json.RawMessage(`{"done":true}`)}, nil
		}},
		&toolbus.Tool{Name: "quick", ReadOnly: true, Run: func(_ context.Context, c *toolbus.Call) (toolbus.Result, error) {
			c.Progress(1, 1, "only")
			return toolbus.Result{Body: json.RawMessage(`{"done":true}`)}, nil
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sleepSteps makes "slow" take 700 ms (fake time, in a bubble) per step:
// it reports 1 at 0 s, 2 at 0.7 s, 3 at 1.4 s and answers at 2.1 s. What
// a caller hears: 2 at 1 s (the latest report when the first second is
// over), 3 at 1.4 s, then the reply.
func sleepSteps(context.Context, int) error {
	time.Sleep(700 * time.Millisecond)
	return nil
}

// callWithMeta is a tools/call whose _meta holds meta (members, without
// braces; "" for none), modern when asked.
func callWithMeta(id, name, meta string, modern bool) string {
	if modern {
		meta = strings.TrimSuffix(strings.TrimPrefix(modernMeta, `"_meta":{`), "}") + commaIf(meta) + meta
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":{},"_meta":{` + meta + `}}}`
}

func commaIf(s string) string {
	if s == "" {
		return ""
	}
	return ","
}

// timedLines is a stream's output, each line with when it was written
// (fake time in a bubble, from start).
type timedLines struct {
	mu    sync.Mutex
	start time.Time
	buf   []byte
	lines []timedLine
}

type timedLine struct {
	at   time.Duration
	line string
}

func (w *timedLines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines = append(w.lines, timedLine{time.Since(w.start), string(w.buf[:i])})
		w.buf = w.buf[i+1:]
	}
}

func (w *timedLines) all() []timedLine {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]timedLine(nil), w.lines...)
}

// note is a notifications/progress as a client reads it.
type note struct {
	Method string `json:"method"`
	Params struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total"`
		Message  string          `json:"message"`
	} `json:"params"`
	ID json.RawMessage `json:"id"`
}

func readNote(t *testing.T, line string) note {
	t.Helper()
	var n note
	if err := json.Unmarshal([]byte(line), &n); err != nil {
		t.Fatalf("not JSON: %q", line)
	}
	return n
}

// TestProgressOverStream: over a real stream (the core of stdio and the
// socket), in each era, a call that asked for progress and runs two
// seconds hears it before its reply: nothing in its first second, then
// growing; a quick call with a token and a slow one without hear none.
func TestProgressOverStream(t *testing.T) {
	for _, era := range []struct {
		name   string
		init   string
		modern bool
	}{
		{"no initialize", "", false},
		{"2025-11-25", initLine("0", Version20251125), false},
		{"2024-11-05", initLine("0", Version20241105), false},
		{"2026-07-28", "", true},
	} {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := NewServer(progressBus(t, sleepSteps), Options{})
				out := &timedLines{start: time.Now()}
				var in []string
				if era.init != "" {
					in = append(in, era.init)
				}
				in = append(in,
					callWithMeta("1", "slow", `"progressToken":"tok-1"`, era.modern),
					callWithMeta("2", "quick", `"progressToken":7`, era.modern),
					callWithMeta("3", "slow", "", era.modern),
					callWithMeta("4", "slow", `"progressToken":1.5`, era.modern), // not a token MCP allows
				)
				if err := srv.Serve(context.Background(), strings.NewReader(strings.Join(in, "\n")+"\n"), out); err != nil {
					t.Fatal(err)
				}
				var notes []timedLine
				replied := map[string]time.Duration{}
				for _, l := range out.all() {
					n := readNote(t, l.line)
					switch {
					case n.Method == MethodProgress:
						if string(n.Params.Token) != `"tok-1"` {
							t.Fatalf("progress for another call: %s", l.line)
						}
						if _, done := replied["1"]; done {
							t.Fatalf("progress after the reply: %s", l.line)
						}
						notes = append(notes, l)
					case n.ID != nil:
						replied[string(n.ID)] = l.at
					}
				}
				want := []timedLine{
					{time.Second, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":2,"total":3,"message":"step 2 of 3"}}`},
					{1400 * time.Millisecond, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":3,"total":3,"message":"step 3 of 3"}}`},
				}
				if fmt.Sprint(notes) != fmt.Sprint(want) {
					t.Fatalf("progress lines\n%v\nwant\n%v", notes, want)
				}
				if len(replied) != len(in) || replied["1"] != 2100*time.Millisecond || replied["2"] != 0 {
					t.Fatalf("replies at %v", replied)
				}
			})
		})
	}
}

// TestProgressStopsWhenCancelled: once the client cancels a call, nothing
// more about it comes, progress included.
func TestProgressStopsWhenCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewServer(progressBus(t, sleepSteps), Options{}) // the tool goes on: it ignores ctx
		out := &timedLines{start: time.Now()}
		inR, inW := io.Pipe()
		done := make(chan error)
		go func() { done <- srv.Serve(context.Background(), inR, out) }()
		io.WriteString(inW, callWithMeta("1", "slow", `"progressToken":1`, false)+"\n")
		time.Sleep(1100 * time.Millisecond) // the first update went out at 1 s
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`+"\n")
		inW.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		lines := out.all()
		if len(lines) != 1 || !strings.Contains(lines[0].line, `"progress":2,`) || lines[0].at != time.Second {
			t.Fatalf("after cancelling at 1.1 s: %v, want the one update of 1 s", lines)
		}
	})
}

// TestProgressNotInBatch: a batch element's reply shares one array with
// others': it gets no progress (it could only come after the array).
func TestProgressNotInBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := NewServer(progressBus(t, sleepSteps), Options{})
		out := &timedLines{start: time.Now()}
		in := initLine("0", Version20250326) + "\n[" + callWithMeta("1", "slow", `"progressToken":1`, false) + "," + ping("2") + "]\n"
		if err := srv.Serve(context.Background(), strings.NewReader(in), out); err != nil {
			t.Fatal(err)
		}
		lines := out.all()
		if len(lines) != 2 || !strings.HasPrefix(lines[1].line, "[") {
			t.Fatalf("output %v, want the initialize reply and the batch's array", lines)
		}
	})
}

// TestRelayPassesProgress: `awbridge stdio` relaying to the service passes
// the service's progress lines on, before the reply.
func TestRelayPassesProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svcEnd, relayEnd := net.Pipe()
		srv := NewServer(progressBus(t, sleepSteps), Options{})
		served := make(chan error, 1)
		go func() { served <- srv.Serve(context.Background(), svcEnd, svcEnd) }()
		inR, inW := io.Pipe()
		out := &timedLines{start: time.Now()}
		relayed := make(chan error, 1)
		go func() { relayed <- Relay(context.Background(), relayEnd, inR, out, RelayOptions{}) }()
		io.WriteString(inW, callWithMeta("1", "slow", `"progressToken":"r"`, true)+"\n")
		time.Sleep(3 * time.Second) // the call is over
		inW.Close()
		if err := <-relayed; err != nil {
			t.Fatal(err)
		}
		svcEnd.Close()
		<-served
		lines := out.all()
		if len(lines) != 3 || readNote(t, lines[0].line).Params.Progress != 2 || readNote(t, lines[1].line).Params.Progress != 3 ||
			string(readNote(t, lines[2].line).ID) != "1" || lines[0].at != time.Second {
			t.Fatalf("relayed %v", lines)
		}
	})
}

// TestClientReceivesProgress: mcp.Client (the terminal commands' client)
// asks for progress when the request has a Progress callback, hands it
// each update, and counts its Timeout again from each: a call longer than
// the Timeout that keeps reporting is not given up.
func TestClientReceivesProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svcEnd, cliEnd := net.Pipe()
		srv := NewServer(progressBus(t, sleepSteps), Options{})
		served := make(chan error, 1)
		go func() { served <- srv.Serve(context.Background(), svcEnd, svcEnd) }()
		c := NewClient(cliEnd, 1500*time.Millisecond) // less than the call's 2.1 s
		var got []toolbus.ProgressUpdate
		out, err := c.Do(context.Background(), toolbus.Request{Name: "slow", Progress: func(u toolbus.ProgressUpdate) { got = append(got, u) }})
		if err != nil || out.Err != nil {
			t.Fatalf("Do: %v %v", err, out.Err)
		}
		want := []toolbus.ProgressUpdate{{Progress: 2, Total: 3, Message: "step 2 of 3"}, {Progress: 3, Total: 3, Message: "step 3 of 3"}}
		if fmt.Sprint(got) != fmt.Sprint(want) || !strings.Contains(string(out.Body), `"done":true`) {
			t.Fatalf("updates %v, body %s", got, out.Body)
		}
		// Without a callback nothing is asked, and the Timeout holds.
		if _, err := c.Do(context.Background(), toolbus.Request{Name: "slow"}); err == nil || !strings.Contains(err.Error(), ErrNoAnswer.Error()) {
			t.Fatalf("a 2.1 s call without progress under a 1.5 s timeout: %v", err)
		}
		c.Close()
		<-served
	})
}

// gatedSteps makes "slow" wait after each report until the test lets it
// go on (next), or the call ends.
func gatedSteps(next <-chan struct{}) func(ctx context.Context, i int) error {
	return func(ctx context.Context, _ int) error {
		select {
		case <-next:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sseEvents reads the data lines of an SSE body, one per event.
func sseEvents(body io.Reader) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		br := bufio.NewReader(body)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if d, ok := strings.CutPrefix(strings.TrimRight(l, "\r\n"), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch
}

// TestProgressOverHTTP: over Streamable HTTP, in a legacy session and as a
// modern request, a call's progress turns its POST's response into an SSE
// stream: each update, then the reply, then the stream ends. A POST that
// does not accept text/event-stream (or says nothing) gets its JSON reply
// alone.
func TestProgressOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		name, accept string
		modern, sse  bool
	}{
		{"legacy SSE", "application/json, text/event-stream", false, true},
		{"legacy JSON only", "application/json", false, false},
		{"legacy no Accept", "", false, false},
		{"modern SSE", "application/json, text/event-stream", true, true},
		{"modern JSON only", "application/json", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			next := make(chan struct{}, 3)
			forwarded := make(chan toolbus.ProgressUpdate, 8)
			b := &forwardingBackend{Bus: progressBus(t, gatedSteps(next)), forwarded: forwarded}
			f := newHTTPFixture(t, b, HTTPOptions{Token: testToken})
			sid := ""
			if !tc.modern {
				sid = f.initialize(Version20251125)
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			body := callWithMeta("1", "slow", `"progressToken":"h"`, tc.modern)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(body))
			h := mcpHeaders(sid, "Accept", tc.accept)
			if tc.modern {
				h = append(h, HeaderProtocolVersion, ModernVersion, HeaderMethod, "tools/call", HeaderName, "slow")
			}
			for i := 0; i+1 < len(h); i += 2 {
				req.Header.Set(h[i], h[i+1])
			}
			if tc.accept == "" {
				req.Header.Del("Accept")
			}
			type answer struct {
				res *http.Response
				err error
			}
			answered := make(chan answer, 1)
			go func() {
				res, err := f.ts.Client().Do(req)
				answered <- answer{res, err}
			}()
			if !tc.sse {
				// The bus hands each update to the transport, which has
				// nowhere to send it: release the tool after each.
				for range 3 {
					select {
					case <-forwarded:
					case <-ctx.Done():
						t.Fatal("no update reached the transport")
					}
					next <- struct{}{}
				}
			}
			a := <-answered
			if a.err != nil {
				t.Fatal(a.err)
			}
			res := a.res
			defer res.Body.Close()
			if !tc.sse {
				all, _ := io.ReadAll(res.Body)
				if ct := res.Header.Get("Content-Type"); ct != "application/json" || strings.Contains(string(all), MethodProgress) ||
					!strings.Contains(string(all), `"id":1,`) {
					t.Fatalf("%s: %s", ct, all)
				}
				return
			}
			if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" || res.Header.Get("X-Accel-Buffering") != "no" {
				t.Fatalf("Content-Type %q, X-Accel-Buffering %q", ct, res.Header.Get("X-Accel-Buffering"))
			}
			events := sseEvents(res.Body)
			var got []string
			for ev := range events {
				got = append(got, ev)
				if n := readNote(t, ev); n.Method == MethodProgress {
					next <- struct{}{} // seen: the tool goes on
				}
			}
			if len(got) != 4 {
				t.Fatalf("events %q, want three updates and the reply", got)
			}
			for i, ev := range got[:3] {
				n := readNote(t, ev)
				if string(n.Params.Token) != `"h"` || n.Params.Progress != float64(i+1) || n.Params.Total != 3 || n.Params.Message != fmt.Sprintf("step %d of 3", i+1) {
					t.Fatalf("event %d: %s", i, ev)
				}
			}
			if r := readNote(t, got[3]); string(r.ID) != "1" || !strings.Contains(got[3], `"done\":true`) {
				t.Fatalf("last event %s, want the reply", got[3])
			}
		})
	}
}

// forwardingBackend tells the test each update the bus hands to the
// transport (a readiness signal: no clock).
type forwardingBackend struct {
	*toolbus.Bus
	forwarded chan toolbus.ProgressUpdate
}

func (b *forwardingBackend) Call(ctx context.Context, req toolbus.Request) toolbus.Response {
	if p := req.Progress; p != nil {
		req.Progress = func(u toolbus.ProgressUpdate) {
			p(u)
			b.forwarded <- u
		}
	}
	return b.Bus.Call(ctx, req)
}

// TestProgressOfficialSDK: the official MCP Go SDK, as an independent
// client, receives a slow call's progress in its progress handler, over
// Streamable HTTP and over a stream, in the modern era and a legacy one.
func TestProgressOfficialSDK(t *testing.T) {
	for _, tc := range []struct {
		name, version string // "" is the SDK's default, 2026-07-28
		http          bool
	}{
		{"HTTP modern", "", true},
		{"HTTP 2025-11-25", Version20251125, true},
		{"stream modern", "", false},
		{"stream 2025-06-18", Version20250618, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			next := make(chan struct{}, 3)
			b := progressBus(t, gatedSteps(next))
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			var got []*sdk.ProgressNotificationParams
			client := sdk.NewClient(&sdk.Implementation{Name: "sdk-progress", Version: "0"}, &sdk.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
					got = append(got, r.Params)
					next <- struct{}{}
				},
			})
			var tr sdk.Transport
			if tc.http {
				f := newHTTPFixture(t, b, HTTPOptions{Token: testToken})
				tr = &sdk.StreamableClientTransport{Endpoint: f.url,
					HTTPClient: &http.Client{Transport: &bearer{token: testToken, next: f.ts.Client().Transport}}, MaxRetries: -1}
			} else {
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				served := make(chan error, 1)
				go func() {
					served <- NewServer(b, Options{}).Serve(context.Background(), inR, outW)
					outW.Close()
				}()
				t.Cleanup(func() { inW.Close(); <-served })
				tr = &sdk.IOTransport{Reader: outR, Writer: inW}
			}
			cs, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			params := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{}}
			params.SetProgressToken("sdk-1")
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("tools/call: %v %+v", err, res)
			}
			if len(got) != 3 {
				t.Fatalf("progress handler called %d times, want 3", len(got))
			}
			for i, p := range got {
				if p.ProgressToken != "sdk-1" || p.Progress != float64(i+1) || p.Total != 3 || p.Message != fmt.Sprintf("step %d of 3", i+1) {
					t.Fatalf("update %d: %+v", i, p)
				}
			}
		})
	}
}
