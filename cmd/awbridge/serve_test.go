package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestServeSharesOneEngineAcrossConnections(t *testing.T) {
	srv, _ := recordedAW(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "awbridge.sock")
	env := baseEnv(t, srv.URL)
	cmd, stderr := startServe(t, env, sock)

	st, err := os.Stat(sock)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v %v", st, err)
	}
	if st, _ := os.Stat(filepath.Dir(sock)); st.Mode().Perm() != 0o700 {
		t.Fatalf("socket folder mode %v", st.Mode())
	}

	// Store on one connection, read back on another: one engine, one store.
	got := socketCall(t, sock, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nowframe_build","arguments":{"output":{"path":"now.window.app"},"store_as":"app"}}}`)
	if !strings.Contains(got[0], `\"result\":\"Google-chrome\"`) {
		t.Fatalf("store: %s", got[0])
	}
	got = socketCall(t, sock,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"state","arguments":{"action":"get","key":"app"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nowframe_build","arguments":{"output":{"pick":["reason"]}}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nowframe_build","arguments":{"output":{"path":"built_for"}}}}`,
	)
	// The warm frame was built by the poller, not for a request.
	if !strings.Contains(got[2], `\"result\":\"poll\"`) {
		t.Fatalf("the warm frame was not the poller's: %s", got[2])
	}
	if !strings.Contains(got[0], `\"value\":\"Google-chrome\"`) {
		t.Fatalf("read back on a second connection: %s", got[0])
	}
	// The poller keeps the frame warm: nowframe_build answers from it.
	if !strings.Contains(got[1], `\"cache_hit\":true`) || !strings.Contains(got[2], `\"cache_hit\":true`) {
		t.Fatalf("warm answers: %s\n%s", got[1], got[2])
	}

	// A second serve on a live socket refuses, clearly.
	if code, out, errs := runBin(t, env, "serve", "--socket", sock); code == 0 || !strings.Contains(out+errs, "already serves on "+sock) {
		t.Fatalf("second serve: exit %d %s%s", code, out, errs)
	}

	// SIGTERM: exit 0, socket removed.
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("the socket is still there: %v", err)
	}
}

func TestServeReplacesAStaleSocket(t *testing.T) {
	srv, _ := recordedAW(t)
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	// A socket file nobody listens on, as a killed process leaves it.
	if err := os.Mkdir(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	startServe(t, baseEnv(t, srv.URL), sock)
	if got := socketCall(t, sock, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); !strings.Contains(got[0], `"result":{}`) {
		t.Fatalf("ping: %v", got)
	}
}

// Two serve started together over a stale socket: one serves, the other
// says another awbridge serves and exits, and the socket it leaves is the
// live one's (the loser never unlinks it).
func TestTwoServesRacingOverAStaleSocket(t *testing.T) {
	srv, _ := recordedAW(t)
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	if err := os.Mkdir(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	env := baseEnv(t, srv.URL)
	for round := range 3 {
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close() // stale, as a killed serve leaves it
		ready, name := notifySocket(t)
		type exit struct {
			i   int
			err error
		}
		exited := make(chan exit, 2)
		var cmds [2]*exec.Cmd
		var outs [2]*syncBuffer
		for i := range cmds {
			cmds[i] = exec.Command(binPath, "serve", "--socket", sock)
			cmds[i].Env = append(env[:len(env):len(env)], "NOTIFY_SOCKET="+name)
			outs[i] = &syncBuffer{}
			cmds[i].Stderr = outs[i]
		}
		for i, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { exited <- exit{i, c.Wait()} }()
		}
		both := func() string { return outs[0].String() + "\n---\n" + outs[1].String() }
		waitReady(t, ready, outs[0])
		ceiling := time.NewTimer(faultCeiling)
		var lost exit
		select {
		case lost = <-exited:
		case <-ceiling.C:
			for _, c := range cmds {
				c.Process.Kill()
			}
			<-exited
			<-exited
			t.Fatalf("round %d: both serve kept running over one socket:\n%s", round, both())
		}
		ceiling.Stop()
		if lost.err == nil || !strings.Contains(outs[lost.i].String(), "already serves on "+sock) {
			t.Fatalf("round %d: the second serve: %v\n%s", round, lost.err, both())
		}
		if got := socketCall(t, sock, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); !strings.Contains(got[0], `"result":{}`) {
			t.Fatalf("round %d: the winner's socket: %v", round, got)
		}
		cmds[1-lost.i].Process.Signal(syscall.SIGTERM)
		if won := <-exited; won.err != nil {
			t.Fatalf("round %d: the serving one after SIGTERM: %v\n%s", round, won.err, both())
		}
	}
}

// awbridge stdio relays to the running service: two assistants share one
// engine and its state; initialize says which engine answers.
func TestStdioRelaysToTheService(t *testing.T) {
	srv, _ := recordedAW(t)
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := append(baseEnv(t, srv.URL), "AWBRIDGE_SOCKET="+sock)
	startServe(t, env, sock)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	lines, stderr := session(t, env, []string{init,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"state","arguments":{"action":"set","key":"shared","value":42}}}`})
	if len(lines) != 2 || !strings.Contains(lines[0], `"awbridge/engine":"service"`) {
		t.Fatalf("relayed session: %v\n%s", lines, stderr)
	}
	lines, _ = session(t, env, []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"state","arguments":{"action":"get","key":"shared"}}}`})
	if len(lines) != 1 || !strings.Contains(lines[0], `\"value\":42`) {
		t.Fatalf("a second assistant did not see the first one's state: %v", lines)
	}
	// --no-relay, or server.relay = never, runs in-process.
	for _, c := range []struct {
		args []string
		env  string
	}{{[]string{"stdio", "--no-relay"}, ""}, {[]string{"stdio"}, "AWBRIDGE_RELAY=never"}} {
		if l := start(t, append(env, c.env), c.args...).roundTrip(init); !strings.Contains(l, `"awbridge/engine":"in-process"`) {
			t.Fatalf("%v %s: %s", c.args, c.env, l)
		}
	}
}

// If the service dies mid-stream, the relay answers each call it owed
// exactly once (a retryable error; a modern subscription its completion
// result), a request larger than any read buffer included, and goes on
// in-process: the legacy session replayed, modern requests served as they
// come.
func TestRelayFailsOverWhenTheServiceDies(t *testing.T) {
	xs := hangingAW(t)
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := append(baseEnv(t, xs, "AWBRIDGE_AW_TIMEOUT=30s"), "AWBRIDGE_SOCKET="+sock)
	svc, _ := startServe(t, env, sock)

	p := start(t, env)
	var all []string // the lines asked for
	until := func(id string) string {
		t.Helper()
		l := p.reply(id)
		all = append(all, l)
		return l
	}
	send := p.send
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if l := until("1"); !strings.Contains(l, `"awbridge/engine":"service"`) {
		t.Fatalf("init: %s", l)
	}
	// In flight at the service when it dies (ActivityWatch hangs): a call,
	// a call of 70 KiB (more than the relay read at once before), and a
	// modern subscription. A ping after them: its pong says the service has
	// read past them.
	big := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"aw_get_state","arguments":{},"_meta":{"pad":"` +
		strings.Repeat("x", 70<<10) + `"}}}`
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"aw_get_state","arguments":{}}}`)
	send(big)
	send(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{` + modernMeta + `,"notifications":{"resourceSubscriptions":["awbridge://health"]}}}`)
	send(`{"jsonrpc":"2.0","id":"pong","method":"ping"}`)
	until(`"pong"`)
	svc.Process.Kill()
	svc.Wait()

	// After the failover: a legacy call (the replayed initialize holds).
	// The calls in flight were answered before it.
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"help","arguments":{"output":{"path":"tools[0].name"}}}}`)
	if l := until("3"); !strings.Contains(l, `\"result\":\"help\"`) {
		t.Fatalf("after the failover: %s", l)
	}
	for id, want := range map[string]string{`2`: `"ServiceUnavailable"`, `"big"`: `"ServiceUnavailable"`, `"sub"`: `"resultType":"complete"`} {
		n := 0
		for _, l := range slices.Concat(all, p.unread) {
			if strings.Contains(l, `"id":`+id+`,`) {
				n++
				if !strings.Contains(l, want) || (want == `"ServiceUnavailable"` && !strings.Contains(l, `"retryable":true`)) {
					t.Errorf("the call %s in flight: %s", id, l)
				}
			}
		}
		if n != 1 {
			t.Errorf("the call %s in flight was answered %d times before the next call", id, n)
		}
	}
	// A modern call, and the same 70 KiB request again.
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{` + modernMeta + `,"name":"help","arguments":{"output":{"path":"tools[0].name"}}}}`)
	if l := until("4"); !strings.Contains(l, `"resultType":"complete"`) || !strings.Contains(l, `\"result\":\"help\"`) {
		t.Fatalf("a modern call after the failover: %s", l)
	}
	send(strings.Replace(strings.Replace(big, `"id":"big"`, `"id":"big2"`, 1), `"aw_get_state"`, `"help"`, 1))
	until(`"big2"`)
	p.close()
	all = append(all, p.unread...)
	seen := map[string]int{} // replies by id
	for _, l := range all {
		if id := replyID(l); id != "" {
			seen[id]++
		}
	}
	for _, id := range []string{`1`, `2`, `"big"`, `"sub"`, `"pong"`, `3`, `4`, `"big2"`} {
		if seen[id] != 1 {
			t.Errorf("id %s answered %d times:\n%s", id, seen[id], strings.Join(all, "\n"))
		}
	}
	if len(seen) != 8 {
		t.Errorf("replies to unknown ids: %v", seen)
	}
}

// hangingAW is an ActivityWatch that never answers, until the test ends.
func hangingAW(t *testing.T) string {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	return srv.URL
}

// The terminal commands use the service when it runs, and say so.
func TestTerminalCommandsUseTheService(t *testing.T) {
	srv, _ := recordedAW(t)
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := append(baseEnv(t, srv.URL), "AWBRIDGE_SOCKET="+sock)
	run := func(args ...string) string {
		_, out, _ := runBin(t, env, args...)
		return out
	}
	if got := run("health", "--json"); !strings.Contains(got, `"served_by":"in-process"`) {
		t.Fatalf("health without a service: %s", got)
	}
	startServe(t, env, sock)
	for _, args := range [][]string{{"health", "--json"}, {"nowframe", "--json"}, {"call", "help", `{"output":{"path":"tools[0].name"}}`}} {
		got := run(args...)
		var v map[string]any
		if err := json.Unmarshal([]byte(got), &v); err != nil || v["served_by"] != "service" {
			t.Fatalf("awbridge %v with the service running: %s", args, got)
		}
	}
	run("call", "state", `{"action":"set","key":"k1","value":1}`)
	if got := run("state", "--json"); !strings.Contains(got, `"key":"k1","scope":"session"`) || !strings.Contains(got, `"served_by":"service"`) {
		t.Fatalf("state via the service: %s", got)
	}
	if got := run("health"); !strings.Contains(got, "answered by the running service") {
		t.Fatalf("health text: %s", got)
	}
	if got := run("health", "--json", "--no-relay"); !strings.Contains(got, `"served_by":"in-process"`) {
		t.Fatalf("--no-relay: %s", got)
	}
}

// serve --http: Streamable HTTP MCP behind a bearer token, /healthz, and
// the Host check, on the real binary; the official SDK as the client.
func TestServeOverHTTP(t *testing.T) {
	srv, _ := recordedAW(t)
	addr := closedAddr(t)
	stateDir := t.TempDir()
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := append(baseEnv(t, srv.URL), "AWBRIDGE_HTTP="+addr, "AWBRIDGE_STATE_DIR="+stateDir)
	startServe(t, env, sock)
	base := "http://" + addr
	resp, err := http.Get(base + "/healthz") // serve said it is ready: it listens
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	token, err := os.ReadFile(filepath.Join(stateDir, "http-token"))
	if st, _ := os.Stat(filepath.Join(stateDir, "http-token")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v", err)
	}
	post := func(host, auth string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("", ""); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	if code := post("evil.example.com", strings.TrimSpace(string(token))); code == http.StatusOK {
		t.Fatal("a foreign Host was served")
	}
	if code := post("", strings.TrimSpace(string(token))); code != http.StatusOK {
		t.Fatalf("with the token: %d", code)
	}

	client := sdk.NewClient(&sdk.Implementation{Name: "sdk-http", Version: "0"}, nil)
	httpClient := &http.Client{Transport: bearer{strings.TrimSpace(string(token))}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: httpClient}, nil)
	if err != nil {
		t.Fatalf("SDK over HTTP: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "nowframe_build", Arguments: map[string]any{"output": map[string]any{"path": "now.window.app"}}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, `"result":"Google-chrome"`) {
		t.Fatalf("nowframe_build over HTTP: %v %+v", err, res)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// serve never removes a file that is not a socket, and never chmods a
// folder it did not make.
func TestServeRefusesToTouchOtherFiles(t *testing.T) {
	srv, _ := recordedAW(t)
	dir := filepath.Join(t.TempDir(), "awbridge")
	os.Mkdir(dir, 0o700)
	notASocket := filepath.Join(dir, "awbridge.sock")
	os.WriteFile(notASocket, []byte("precious"), 0o600)
	if code, out, errs := runBin(t, baseEnv(t, srv.URL), "serve", "--socket", notASocket); code == 0 || !strings.Contains(out+errs, "not a socket") {
		t.Fatalf("serve on a regular file: exit %d %s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(notASocket); string(b) != "precious" {
		t.Fatal("serve removed a file that was not a socket")
	}
	open := t.TempDir() // 0755, not ours to tighten
	if code, out, errs := runBin(t, baseEnv(t, srv.URL), "serve", "--socket", filepath.Join(open, "s.sock")); code == 0 || !strings.Contains(out+errs, "open to other users") {
		t.Fatalf("serve in an open folder: exit %d %s%s", code, out, errs)
	}
	if st, _ := os.Stat(open); st.Mode().Perm() != 0o755 {
		t.Fatal("serve chmodded a folder it did not make")
	}
}

// SIGTERM with a call in flight: the call is answered (cancelled after the
// bounded drain), the socket removed, exit 0.
func TestServeSIGTERMAnswersCallsInFlight(t *testing.T) {
	aw := hangingAW(t)
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	svc, stderr := startServe(t, append(baseEnv(t, aw, "AWBRIDGE_AW_TIMEOUT=60s"), "AWBRIDGE_SOCKET="+sock), sock)
	c := dial(t, sock)
	// A ping after the call: its pong says the service has read past the
	// call, which is in flight there (ActivityWatch hangs).
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"aw_get_state","arguments":{}}}`)
	if pong := c.roundTrip(`{"jsonrpc":"2.0","id":"pong","method":"ping"}`); !strings.Contains(pong, `"id":"pong","result":{}`) {
		t.Fatalf("ping: %q", pong)
	}
	svc.Process.Signal(syscall.SIGTERM)
	t0 := time.Now()
	reply := c.next()
	t.Logf("reply after %v: %s", time.Since(t0), reply)
	if !strings.Contains(reply, `"id":7`) {
		t.Fatalf("the call in flight at SIGTERM got %q", reply)
	}
	if err := svc.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, stderr.String())
	}
	t.Logf("exit after %v", time.Since(t0))
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatal("the socket is still there")
	}
}

// ActivityWatch is asked once per poll, not once per question: three
// assistants asking 20 times each cost a handful of event reads.
func TestThreeAssistantsShareThePoll(t *testing.T) {
	srv, fs := recordedAW(t)
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := append(baseEnv(t, srv.URL), "AWBRIDGE_SOCKET="+sock)
	startServe(t, env, sock)
	socketCall(t, sock, `{"jsonrpc":"2.0","id":0,"method":"nowframe.build"}`) // the first frame exists
	before := fs.Hits("/api/0/buckets/aw-watcher-window_testhost/events")
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			var lines []string
			for i := range 20 {
				lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nowframe_build","arguments":{}}}`, i+1))
			}
			for _, r := range socketCall(t, sock, lines...) {
				if !strings.Contains(r, `\"cache_hit\":true`) {
					t.Errorf("not answered from the warm frame: %.200s", r)
				}
			}
		})
	}
	wg.Wait()
	// 60 questions; the poller reads once a second whatever is asked.
	if n := fs.Hits("/api/0/buckets/aw-watcher-window_testhost/events") - before; n > 20 {
		t.Fatalf("60 questions cost %d window event reads", n)
	}
}

// TestServeChecksTheSocketItServesOn: health's socket_path check is about
// the socket serve was told to use (--socket), not the default one: with
// the default's folder unusable and --socket elsewhere, the service is
// healthy (it used to say the socket folder was not usable).
func TestServeChecksTheSocketItServesOn(t *testing.T) {
	srv, _ := recordedAW(t)
	sock := filepath.Join(t.TempDir(), "run", "awbridge.sock")
	// The default socket would be below a file: its folder cannot exist.
	env := baseEnv(t, srv.URL, "AWBRIDGE_SOCKET=/dev/null/awbridge.sock")
	startServe(t, env, sock)
	status, checks := healthOver(t, sock)
	for _, c := range checks {
		if c.Name == "socket_path" && !c.OK {
			t.Fatalf("health checks the default socket, not the one served: %+v", c)
		}
	}
	if status != "healthy" {
		t.Fatalf("status %q: %+v", status, checks)
	}
}
