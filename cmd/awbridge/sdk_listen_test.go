package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	uriNowframe       = "nowframe://current"
	metaSubscription  = "io.modelcontextprotocol/subscriptionId"
	methodAcknowledge = "notifications/subscriptions/acknowledged"
)

// flipAW is the recorded aw-server whose focused window flips between two
// apps each time a test calls flip, with fresh events (now) so nothing else
// in the frame moves on its own.
type flipAW struct {
	url   string
	flips atomic.Int64
}

var flipApps = [2]string{"Code", "Slack"}

func newFlipAW(t *testing.T) *flipAW {
	t.Helper()
	f := &flipAW{}
	windows := [2]http.HandlerFunc{
		eventsAt(0, 10, `{"app": "`+flipApps[0]+`", "title": "main.go"}`),
		eventsAt(0, 10, `{"app": "`+flipApps[1]+`", "title": "general"}`),
	}
	srv, _ := recordedWith(t, map[string]http.HandlerFunc{
		windowEvents: func(w http.ResponseWriter, r *http.Request) { windows[f.flips.Load()%2](w, r) },
		afkEvents:    eventsAt(0, 30, `{"status": "not-afk"}`),
	})
	f.url = srv.URL
	return f
}

// drive flips the focused app and has the engine build a fresh frame,
// again and again until stop is closed: the frame really changes, and a
// subscription that is in place hears of it (a change racing the
// subscription's start is followed by another). The notification, not
// the number of builds, is what the test waits for.
func (f *flipAW) drive(ctx context.Context, stop <-chan struct{}, build func(context.Context) error) error {
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		f.flips.Add(1)
		if err := build(ctx); err != nil {
			select {
			case <-stop: // the session ended under a build
				return nil
			default:
				return err
			}
		}
	}
}

// TestOfficialSDKResourceUpdates subscribes the official SDK to
// nowframe://current and changes the focused window in ActivityWatch: a
// 2026-07-28 client (subscriptions/listen) gets the acknowledgement with
// the honoured filter, tagged with its subscription id, then
// notifications/resources/updated tagged with the same id; a 2025-11-25
// client (resources/subscribe) gets the update on its session. On
// `awbridge stdio` in-process, on serve over HTTP with the token, and on
// `awbridge stdio` relaying to serve.
func TestOfficialSDKResourceUpdates(t *testing.T) {
	for _, transport := range []string{"stdio", "http", "relay"} {
		for _, era := range []struct{ name, pin string }{{"modern", ""}, {"legacy", "2025-11-25"}} {
			t.Run(transport+"/"+era.name, func(t *testing.T) {
				sdkResourceUpdates(t, transport, era.pin)
			})
		}
	}
}

func sdkResourceUpdates(t *testing.T, transport, pin string) {
	aw := newFlipAW(t)
	ctx, cancel := context.WithTimeout(context.Background(), sdkCeiling)
	defer cancel()

	type update struct {
		params *sdk.ResourceUpdatedNotificationParams
		flips  int64 // how often the app had flipped when it arrived
	}
	updates := make(chan update, 64)
	acks := make(chan *sdk.SubscriptionsAcknowledgedParams, 4)
	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-listen", Version: "0"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			select {
			case updates <- update{r.Params, aw.flips.Load()}:
			default:
			}
		},
	})
	client.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == methodAcknowledge {
				if p, ok := req.GetParams().(*sdk.SubscriptionsAcknowledgedParams); ok {
					select {
					case acks <- p:
					default:
					}
				}
			}
			return next(ctx, method, req)
		}
	})

	var cs *sdk.ClientSession
	var err error
	switch transport {
	case "stdio":
		env, _, _ := faultEnv(t, aw.url)
		cmd := exec.Command(binPath, "stdio")
		cmd.Env = env
		cs, err = client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: pin})
	case "http":
		svc := startSDKService(t, aw.url)
		cs, _, err = svc.connect(ctx, client, svc.token, pin)
	case "relay":
		svc := startSDKService(t, aw.url)
		cmd := exec.Command(binPath, "stdio")
		cmd.Env = svc.env
		cs, err = client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: pin})
	}
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()

	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uriNowframe}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	var subID any
	if pin == "" {
		select {
		case ack := <-acks:
			subID = ack.Meta[metaSubscription]
			if subID == nil || !slices.Equal(ack.Notifications.ResourceSubscriptions, []string{uriNowframe}) {
				t.Fatalf("acknowledgement: _meta %v, honoured %+v", ack.Meta, ack.Notifications)
			}
		case <-ctx.Done():
			t.Fatal("no notifications/subscriptions/acknowledged")
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var driveErr error
	wg.Go(func() {
		driveErr = aw.drive(ctx, stop, func(ctx context.Context) error {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "nowframe_build", Arguments: map[string]any{"max_age_ms": 0, "response_mode": "compact"}})
			if err == nil && res.IsError {
				t.Errorf("nowframe_build failed while driving the change")
			}
			return err
		})
	})
	var got update
	select {
	case got = <-updates:
	case <-ctx.Done():
	}
	close(stop)
	wg.Wait()
	if got.params == nil {
		t.Fatalf("no notifications/resources/updated within %v (drive: %v)", sdkCeiling, driveErr)
	}
	if driveErr != nil {
		t.Fatalf("driving the change: %v", driveErr)
	}
	t.Logf("update after %d flips", got.flips)
	if got.params.URI != uriNowframe || got.flips == 0 {
		t.Fatalf("update %+v after %d flips of the app", got.params, got.flips)
	}
	if tag := got.params.Meta[metaSubscription]; pin == "" && tag != subID {
		t.Fatalf("the update is tagged %v, the subscription %v", tag, subID)
	} else if pin != "" && tag != nil {
		t.Fatalf("a legacy update carries a subscription id: %v", got.params.Meta)
	}
	// The resource is the changed frame.
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uriNowframe})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("resources/read after the update: %v", err)
	}
	if text := res.Contents[0].Text; !strings.Contains(text, `"app":"`+flipApps[0]+`"`) && !strings.Contains(text, `"app":"`+flipApps[1]+`"`) {
		t.Fatalf("the frame after the update shows neither flipped app: %s", clipLine(text, 300))
	}
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uriNowframe}); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
}

// wireMeta is the _meta every 2026-07-28 request carries.
const wireMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"wire","version":"0"}}`

// wireMsg is one line awbridge wrote, decoded.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		URI           string                     `json:"uri"`
		Notifications struct {
			ResourceSubscriptions []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	line   string
}

// wireNext decodes the next line of b.
func wireNext(t *testing.T, b *proc) wireMsg {
	t.Helper()
	var m wireMsg
	m.line = b.next()
	if err := json.Unmarshal([]byte(m.line), &m); err != nil {
		t.Fatalf("not JSON: %v: %s", err, clipLine(m.line, 300))
	}
	return m
}

// TestListenOnTheWire is a hand-written client of awbridge stdio's wire, a
// legacy session and a 2026-07-28 subscription on one connection: the
// subscription (id "sub-1") is acknowledged first with the resources it
// honours (the unknown one dropped) and the id; when the focused window
// changes in ActivityWatch, the modern client gets
// notifications/resources/updated tagged "sub-1" and the legacy session
// its own, untagged; a cancelled subscription gets no reply.
func TestListenOnTheWire(t *testing.T) {
	aw := newFlipAW(t)
	env, _, _ := faultEnv(t, aw.url)
	b := start(t, env)

	b.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"0"}}}`)
	if m := wireNext(t, b); string(m.ID) != "1" || m.Result == nil {
		t.Fatalf("initialize: %s", m.line)
	}
	b.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.send(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"` + uriNowframe + `"}}`)
	if m := wireNext(t, b); string(m.ID) != "2" || string(m.Result) != "{}" {
		t.Fatalf("resources/subscribe: %s", m.line)
	}
	b.send(`{"jsonrpc":"2.0","id":"sub-1","method":"subscriptions/listen","params":{` + wireMeta +
		`,"notifications":{"resourceSubscriptions":["` + uriNowframe + `","nowframe://elsewhere"]}}}`)
	ack := wireNext(t, b)
	if ack.Method != methodAcknowledge || string(ack.Params.Meta[metaSubscription]) != `"sub-1"` ||
		!slices.Equal(ack.Params.Notifications.ResourceSubscriptions, []string{uriNowframe}) || ack.ID != nil {
		t.Fatalf("the first message after subscriptions/listen is not its acknowledgement: %s", ack.line)
	}

	// Flip the app and build a fresh frame until both updates are in.
	var modern, legacy *wireMsg
	for n := 0; modern == nil || legacy == nil; n++ {
		aw.flips.Add(1)
		id := fmt.Sprintf(`"build-%d"`, n)
		b.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + wireMeta +
			`,"name":"nowframe_build","arguments":{"max_age_ms":0,"response_mode":"compact"}}}`)
		for answered := false; !answered && (modern == nil || legacy == nil); {
			m := wireNext(t, b)
			switch {
			case string(m.ID) == id:
				answered = true
				if m.Result == nil || strings.Contains(string(m.Result), `"isError":true`) {
					t.Fatalf("nowframe_build: %s", m.line)
				}
			case m.Method == "notifications/resources/updated" && m.Params.URI == uriNowframe && m.Params.Meta[metaSubscription] != nil:
				if string(m.Params.Meta[metaSubscription]) != `"sub-1"` {
					t.Fatalf("the modern update is tagged for another subscription: %s", m.line)
				}
				modern = &m
			case m.Method == "notifications/resources/updated" && m.Params.URI == uriNowframe:
				legacy = &m
			default:
				t.Fatalf("unexpected while waiting for the updates: %s", m.line)
			}
		}
	}

	// Cancelled, the subscription ends with no reply: nothing for "sub-1"
	// comes before the answer to a later request.
	b.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub-1"}}`)
	b.send(`{"jsonrpc":"2.0","id":"after","method":"tools/list","params":{` + wireMeta + `}}`)
	for {
		m := wireNext(t, b)
		if string(m.ID) == `"sub-1"` {
			t.Fatalf("a cancelled subscription was answered: %s", clipLine(m.line, 300))
		}
		if string(m.ID) == `"after"` {
			break
		}
	}
	b.close()
}
