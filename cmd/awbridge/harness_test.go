package main

// The one harness that drives the binary in these tests: TestMain builds
// it once; start runs `awbridge stdio` (or another command: startCmd) and
// dial connects to serve's socket, both as a proc that sends lines and
// reads replies by id under a ceiling, with stderr collected; session is a
// whole stdio session (send everything, close stdin, read every reply);
// runBin is a one-shot command; startServe and startSimBinary run the
// service and the simulator. Below them: the environments and the
// ActivityWatch the binary is pointed at.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/internal/awfixture"
)

var update = flag.Bool("update", false, "rewrite golden transcripts")

// binPath is the awbridge binary built once for these tests.
var binPath string

// faultCeiling bounds every wait of these tests: generous, never a timing
// assertion.
const faultCeiling = 30 * time.Second

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "awbridge-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "awbridge")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building awbridge:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// baseEnv is a clean environment: no user config, no user state.
func baseEnv(t testing.TB, awURL string, extra ...string) []string {
	home := t.TempDir()
	env := []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"AWBRIDGE_AW_URL=" + awURL,
		"AWBRIDGE_LOG_LEVEL=warn",
		// No service answers here unless a test starts one.
		"AWBRIDGE_SOCKET=" + filepath.Join(home, "no-service.sock"),
		// Answers name the machine's zone: the same one on every machine.
		"TZ=UTC",
	}
	return append(env, extra...)
}

// runBin runs the binary with args in env and returns its exit code,
// stdout and stderr.
func runBin(t testing.TB, env []string, args ...string) (int, string, string) {
	t.Helper()
	return runBinIn(t, "", env, args...)
}

// runBinIn is runBin in the folder dir.
func runBinIn(t testing.TB, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*faultCeiling)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatalf("awbridge %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return 0, out.String(), errb.String()
}

// startServe runs `awbridge serve` on a socket in a temp folder and waits
// until it says it is ready (READY=1 on its NOTIFY_SOCKET).
func startServe(t testing.TB, env []string, sock string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	ready, name := notifySocket(t)
	cmd := exec.Command(binPath, "serve", "--socket", sock)
	cmd.Env = append(env[:len(env):len(env)], "NOTIFY_SOCKET="+name)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	waitReady(t, ready, stderr)
	return cmd, stderr
}

// notifySocket is a datagram socket for serve's NOTIFY_SOCKET, in a short
// folder (a socket's path is limited to about 100 bytes).
func notifySocket(t testing.TB) (*net.UnixConn, string) {
	t.Helper()
	name := filepath.Join(shortDir(t), "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, name
}

// waitReady reads one READY=1 from a notify socket; the deadline is a
// ceiling for a serve that never gets there, never the expectation.
func waitReady(t testing.TB, c *net.UnixConn, stderr fmt.Stringer) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(faultCeiling))
	buf := make([]byte, 256)
	n, _, err := c.ReadFromUnix(buf)
	if err != nil || string(buf[:n]) != "READY=1" {
		t.Fatalf("serve never said it was ready: %q %v\n%s", buf[:n], err, stderr.String())
	}
}

// startSimBinary runs the real binary's `sim` on a free port until the
// test ends and returns its URL.
func startSimBinary(t *testing.T) string {
	t.Helper()
	addr := closedAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	sim := exec.CommandContext(ctx, binPath, "sim", "--addr", addr)
	sim.Env = baseEnv(t, "http://127.0.0.1:1")
	simErr := &syncBuffer{}
	sim.Stderr = simErr
	if err := sim.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = sim.Wait() })
	url := "http://" + addr
	simErr.waitFor(t, "simulated ActivityWatch at "+url) // it listens
	return url
}

// proc is a JSON-RPC session with awbridge: `awbridge stdio` (or another
// command) over its stdin and stdout, or a connection to serve's socket.
// Replies are read by id, each read bounded by faultCeiling; stderr is
// collected. Used by one goroutine.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd // nil on a socket connection
	in     io.WriteCloser
	out    *bufio.Reader
	rd     interface{ SetReadDeadline(time.Time) error }
	stderr *syncBuffer
	unread []string // lines read but not yet asked for, in order
	nextID int
	exited bool
	// refusals: a tool's JSON-RPC error carrying a ToolError is its
	// envelope (see tool).
	refusals bool
}

// start runs `awbridge stdio` (or the command args) in env; Cleanup ends
// it.
func start(t testing.TB, env []string, args ...string) *proc {
	if len(args) == 0 {
		args = []string{"stdio"}
	}
	cmd := exec.Command(binPath, args...)
	cmd.Env = env
	return startCmd(t, cmd)
}

// startCmd runs cmd (its Env set) as a proc; Cleanup ends it.
func startCmd(t testing.TB, cmd *exec.Cmd) *proc {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, in: stdin, out: bufio.NewReaderSize(stdout, 1<<20), rd: stdout.(*os.File), stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.exited {
			p.exited = true
			stdin.Close()
			p.drain()
			waitOrKill(t, cmd)
		}
	})
	return p
}

// dial is a session on the service's socket.
func dial(t testing.TB, sock string) *proc {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &proc{t: t, in: conn, out: bufio.NewReaderSize(conn, 1<<20), rd: conn, stderr: &syncBuffer{}}
}

// socketCall sends lines on a fresh connection to serve's socket and
// returns the line that follows each.
func socketCall(t testing.TB, sock string, lines ...string) []string {
	t.Helper()
	p := dial(t, sock)
	defer p.close()
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p.roundTrip(l)
	}
	return out
}

// session is a whole `awbridge stdio` session: it writes the input lines,
// closes stdin and returns every stdout line (asserting a clean exit) and
// stderr.
func session(t testing.TB, env []string, input []string) (lines []string, stderr string) {
	t.Helper()
	p := start(t, env)
	written := make(chan struct{})
	go func() { // a writer of its own: the replies are read meanwhile
		defer close(written)
		for _, l := range input {
			if _, err := io.WriteString(p.in, l+"\n"); err != nil {
				return
			}
		}
		p.in.Close()
	}()
	p.drain()
	<-written
	stderr = p.close()
	return p.unread, stderr
}

// reply is a decoded reply line.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// replies runs one session (see session) and returns the replies by raw id.
func replies(t testing.TB, env []string, input []string) map[string]reply {
	t.Helper()
	lines, stderr := session(t, env, input)
	got := map[string]reply{}
	for _, l := range lines {
		var r reply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %s", err, l)
		}
		got[string(r.ID)] = r
	}
	if len(got) == 0 {
		t.Fatalf("no replies; stderr:\n%s", stderr)
	}
	return got
}

// send writes one line.
func (p *proc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing %s: %v (the process died?)\nstderr:\n%s", clipLine(line, 80), err, p.stderr.String())
	}
}

// roundTrip sends a line and reads the next one.
func (p *proc) roundTrip(line string) string {
	p.send(line)
	return p.read()
}

// next reads the next line written, not yet asked for.
func (p *proc) next() string {
	p.t.Helper()
	if len(p.unread) > 0 {
		l := p.unread[0]
		p.unread = p.unread[1:]
		return l
	}
	return p.read()
}

// read reads one line from the process.
func (p *proc) read() string {
	p.t.Helper()
	_ = p.rd.SetReadDeadline(time.Now().Add(faultCeiling))
	l, err := p.out.ReadString('\n')
	if err != nil {
		p.t.Fatalf("no line within %v (%v)\nstderr:\n%s", faultCeiling, err, p.stderr.String())
	}
	return strings.TrimSuffix(l, "\n")
}

// drain reads the rest of the output until its end, keeping the lines.
func (p *proc) drain() {
	_ = p.rd.SetReadDeadline(time.Now().Add(faultCeiling))
	for {
		l, err := p.out.ReadString('\n')
		if l = strings.TrimSuffix(l, "\n"); l != "" {
			p.unread = append(p.unread, l)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			p.t.Errorf("the output did not end within %v\nstderr:\n%s", faultCeiling, p.stderr.String())
		}
		if err != nil {
			return
		}
	}
}

// reply waits for the reply with the raw id.
func (p *proc) reply(id string) string {
	p.t.Helper()
	if i := slices.IndexFunc(p.unread, func(l string) bool { return replyID(l) == id }); i >= 0 {
		l := p.unread[i]
		p.unread = slices.Delete(p.unread, i, i+1)
		return l
	}
	for {
		l := p.read()
		if replyID(l) == id {
			return l
		}
		p.unread = append(p.unread, l)
	}
}

// request sends one JSON-RPC request and returns its reply line.
func (p *proc) request(method string, params any) string {
	p.t.Helper()
	p.nextID++
	msg := map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method}
	if params != nil {
		msg["params"] = params
	}
	line, err := json.Marshal(msg)
	if err != nil {
		p.t.Fatal(err)
	}
	p.send(string(line))
	return p.reply(fmt.Sprint(p.nextID))
}

// result decodes the result of a reply into v, failing on a JSON-RPC error.
func (p *proc) result(method string, params, v any) {
	p.t.Helper()
	line := p.request(method, params)
	var r reply
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.Result == nil {
		p.t.Fatalf("%s: not a result: %s", method, line)
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		p.t.Fatalf("%s: %v: %s", method, err, r.Result)
	}
}

// tool calls an MCP tool and returns its envelope (structuredContent) and
// isError. A JSON-RPC error fails the test, unless the session takes
// refusals (invalid arguments in older protocol versions come so) and it
// carries a ToolError: then the envelope holds that ToolError.
func (p *proc) tool(name string, args map[string]any) (toolEnvelope, bool) {
	p.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	line := p.request("tools/call", map[string]any{"name": name, "arguments": args})
	var r struct {
		Result struct {
			Structured json.RawMessage `json:"structuredContent"`
			Content    []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		p.t.Fatalf("%s: reply is not JSON-RPC: %v: %s", name, err, clipLine(line, 500))
	}
	var env toolEnvelope
	if r.Error != nil {
		if !p.refusals || len(r.Error.Data) == 0 {
			p.t.Fatalf("%s: not a result: %s", name, clipLine(line, 500))
		}
		env.raw = json.RawMessage(`{"success":false,"tool":"` + name + `","status":"Error","error":` + string(r.Error.Data) + `}`)
		if err := json.Unmarshal(env.raw, &env); err != nil {
			p.t.Fatalf("%s: error data: %v: %s", name, err, clipLine(line, 500))
		}
		return env, true
	}
	if err := json.Unmarshal(r.Result.Structured, &env); err != nil {
		p.t.Fatalf("%s: envelope: %v: %s", name, err, clipLine(line, 500))
	}
	if len(r.Result.Content) != 1 || !json.Valid([]byte(r.Result.Content[0].Text)) {
		p.t.Fatalf("%s: the text content is not the envelope: %s", name, clipLine(line, 500))
	}
	env.raw = r.Result.Structured
	return env, r.Result.IsError
}

// ping asserts the process still answers.
func (p *proc) ping() {
	p.t.Helper()
	if l := p.request("ping", nil); !strings.Contains(l, `"result":{}`) {
		p.t.Fatalf("ping: %s", l)
	}
}

// close ends the session (stdin closed); of a process, it reads the rest
// of the output into unread and asserts a clean exit without a panic, and
// returns stderr.
func (p *proc) close() string {
	p.t.Helper()
	p.in.Close()
	p.exited = true
	if p.cmd == nil {
		return ""
	}
	p.drain()
	err := waitOrKill(p.t, p.cmd)
	stderr := p.stderr.String()
	if err != nil {
		p.t.Errorf("awbridge exited with %v\nstderr:\n%s", err, stderr)
	}
	for _, bad := range []string{"panic", "goroutine ", "DATA RACE"} {
		if strings.Contains(stderr, bad) {
			p.t.Errorf("stderr holds %q:\n%s", bad, stderr)
		}
	}
	return stderr
}

// waitOrKill waits for cmd to exit after its input closed, killing it past
// the ceiling; it reports whether the exit was clean.
func waitOrKill(t testing.TB, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(faultCeiling):
		cmd.Process.Kill()
		<-done
		t.Errorf("awbridge did not exit within %v of its input closing", faultCeiling)
		return fmt.Errorf("killed")
	}
}

// replyID returns the raw id of a reply line ("" for a batch reply).
func replyID(line string) string {
	var r struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal([]byte(line), &r) != nil {
		return ""
	}
	return string(r.ID)
}

// syncBuffer is a bytes.Buffer safe for the process's writer and the test.
type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	grew chan struct{} // closed and replaced at each write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grew != nil {
		close(s.grew)
		s.grew = nil
	}
	return s.b.Write(p)
}

// waitFor blocks until the output holds want (a line the process
// writes when it gets there), failing the test after faultCeiling.
func (s *syncBuffer) waitFor(t testing.TB, want string) {
	t.Helper()
	ceiling := time.NewTimer(faultCeiling)
	defer ceiling.Stop()
	for {
		s.mu.Lock()
		if strings.Contains(s.b.String(), want) {
			s.mu.Unlock()
			return
		}
		if s.grew == nil {
			s.grew = make(chan struct{})
		}
		grew := s.grew
		s.mu.Unlock()
		select {
		case <-grew:
		case <-ceiling.C:
			t.Fatalf("%q not written within %v:\n%s", want, faultCeiling, s.String())
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// loadRecorded is the recorded aw-server exchanges.
func loadRecorded(t testing.TB) map[string]*awfixture.Exchange {
	t.Helper()
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

// recordedAW serves the recorded aw-server exchanges.
func recordedAW(t testing.TB) (*httptest.Server, *awfixture.Server) {
	t.Helper()
	return recordedWith(t, nil)
}

// recordedWith serves the recorded aw-server exchanges, with routes
// answered by their own handlers.
func recordedWith(t testing.TB, routes map[string]http.HandlerFunc) (*httptest.Server, *awfixture.Server) {
	t.Helper()
	fs := awfixture.NewServer(loadRecorded(t))
	for route, h := range routes {
		fs.Handle(route, h)
	}
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	return srv, fs
}

// simulatedAW is the built-in ActivityWatch simulator holding the last
// hour of a simulated person's activity: unlike the recorded exchanges, it
// answers any period's event reads (the activity tools need them).
func simulatedAW(t *testing.T) *httptest.Server {
	t.Helper()
	sim := awsim.New(awsim.Options{Hostname: "vm", Seed: 7})
	sim.Seed(time.Now())
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return srv
}

// checkGolden compares got with the file at path (go test -update writes it).
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// faultEnv is a clean environment with a context root and a state dir of
// its own, plus extra settings.
func faultEnv(t testing.TB, awURL string, extra ...string) (env []string, root, stateDir string) {
	// The state dir does not exist yet: awbridge makes it 0700 (a 0755
	// temp dir would be tightened, with a warning).
	root, stateDir = t.TempDir(), filepath.Join(t.TempDir(), "state")
	env = baseEnv(t, awURL, append([]string{"AWBRIDGE_CONTEXT_ROOT=" + root, "AWBRIDGE_STATE_DIR=" + stateDir}, extra...)...)
	return env, root, stateDir
}

// shortDir is a temporary folder with a short path (a socket's path is
// limited to about 100 bytes).
func shortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "awb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// closedAddr is an address nobody listens on (connection refused).
func closedAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// toolEnvelope is what the tests read of a tool call's envelope.
type toolEnvelope struct {
	Success bool            `json:"success"`
	Tool    string          `json:"tool"`
	Status  string          `json:"status"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Kind         string         `json:"kind"`
		Code         string         `json:"code"`
		Retryable    bool           `json:"retryable"`
		Message      string         `json:"message"`
		Hint         string         `json:"hint"`
		Details      map[string]any `json:"details"`
		RetryAfterMs *int64         `json:"retry_after_ms"`
	} `json:"error"`
	URIContext  *string `json:"artifact_uri_context"`
	URIJSON     *string `json:"artifact_uri_json"`
	WriteFailed bool    `json:"artifact_write_failed"`
	Trace       struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	} `json:"trace"`
	Policy struct {
		Circuit string `json:"circuit"`
	} `json:"policy"`
	NextActions []struct {
		Tool string `json:"tool"`
	} `json:"next_actions"`
	raw json.RawMessage
}
