package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/mcp"
	"github.com/awbridge/awbridge/toolbus"
	"github.com/awbridge/awbridge/toolbus/redact"
)

func TestListenHTTP(t *testing.T) {
	for _, tc := range []struct {
		addr      string
		ok        bool
		loopback  bool // a refusal must be errNotLoopback
		needsIPv6 bool
	}{
		{addr: "127.0.0.1:0", ok: true},
		{addr: "localhost:0", ok: true},
		{addr: "LOCALHOST:0", ok: true},
		{addr: "[::1]:0", ok: true, needsIPv6: true},
		{addr: "0.0.0.0:0", loopback: true},
		{addr: ":0", loopback: true},
		{addr: "[::]:0", loopback: true},
		{addr: "192.168.1.10:0", loopback: true},
		{addr: "example.com:8765", loopback: true},
		{addr: "localhost.example.com:8765", loopback: true},
		{addr: "127.0.0.1"},
		{addr: "127.0.0.1:http"},
		{addr: "127.0.0.1:70000"},
		{addr: ""},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			ln, err := listenHTTP(tc.addr)
			if tc.ok {
				if err != nil {
					if tc.needsIPv6 {
						t.Skipf("no IPv6 loopback: %v", err)
					}
					t.Fatalf("listenHTTP(%q): %v", tc.addr, err)
				}
				defer ln.Close()
				if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
					t.Fatalf("listening on %v", ip)
				}
				return
			}
			if err == nil {
				ln.Close()
				t.Fatalf("listenHTTP(%q) listened", tc.addr)
			}
			if tc.loopback && !errors.Is(err, errNotLoopback) {
				t.Fatalf("listenHTTP(%q): %v, want errNotLoopback", tc.addr, err)
			}
		})
	}
}

func TestHTTPAllowedHosts(t *testing.T) {
	ln, err := listenHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	got := httpAllowedHosts(ln)
	want := []string{"127.0.0.1:%d", "localhost:%d", "[::1]:%d"}
	if len(got) != len(want) {
		t.Fatalf("hosts %v", got)
	}
	for i, w := range want {
		if w = strings.Replace(w, "%d", strconv.Itoa(port), 1); got[i] != w {
			t.Fatalf("hosts %v, want %s at %d", got, w, i)
		}
	}
}

func TestLoadOrCreateToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "awbridge")
	tok, err := loadOrCreateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := hex.DecodeString(tok); err != nil || len(raw) != 32 {
		t.Fatalf("token %q is not 32 bytes of hex", tok)
	}
	path := filepath.Join(dir, httpTokenFile)
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != want {
				t.Fatalf("%s mode %04o, want %04o", p, fi.Mode().Perm(), want)
			}
		}
	}
	again, err := loadOrCreateToken(dir)
	if err != nil || again != tok {
		t.Fatalf("second start: %q, %v; want the same token", again, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}

	// A token the person wrote is read as is.
	own := filepath.Join(t.TempDir(), "own")
	os.MkdirAll(own, 0o700)
	os.WriteFile(filepath.Join(own, httpTokenFile), []byte("  my-own-token-0123456789\n"), 0o600)
	if got, err := loadOrCreateToken(own); err != nil || got != "my-own-token-0123456789" {
		t.Fatalf("own token: %q, %v", got, err)
	}

	for _, tc := range []struct {
		name    string
		content string
		mode    os.FileMode
		unix    bool
	}{
		{"readable by others", strings.Repeat("a", 64), 0o644, true},
		{"too short", "abc", 0o600, false},
		{"spaces inside", "abc def ghi jkl mno pqr", 0o600, false},
		{"empty", "", 0o600, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.unix && runtime.GOOS == "windows" {
				t.Skip("no Unix modes")
			}
			d := t.TempDir()
			p := filepath.Join(d, httpTokenFile)
			if err := os.WriteFile(p, []byte(tc.content), tc.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, tc.mode)
			if got, err := loadOrCreateToken(d); err == nil {
				t.Fatalf("accepted %q", got)
			}
			if b, _ := os.ReadFile(p); string(b) != tc.content {
				t.Fatal("the bad file was overwritten")
			}
		})
	}
	if _, err := loadOrCreateToken(""); err == nil {
		t.Fatal("no state folder accepted")
	}
}

func TestLoadOrCreateTokenConcurrentFirstStarts(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	toks := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { toks[i], errs[i] = loadOrCreateToken(dir) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || toks[i] != toks[0] {
			t.Fatalf("start %d: %q, %v; start 0: %q", i, toks[i], errs[i], toks[0])
		}
	}
}

// pingBackend is the smallest mcp.Backend.
type pingBackend struct{}

func (pingBackend) Call(context.Context, toolbus.Request) toolbus.Response {
	return toolbus.Response{Body: json.RawMessage(`{"success":true}`)}
}

func (pingBackend) ToolsList(string) json.RawMessage { return json.RawMessage(`{"tools":[]}`) }

// TestServeHTTP runs the endpoint on a real loopback listener and stops it
// with an MCP GET stream open.
func TestServeHTTP(t *testing.T) {
	ln, err := listenHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := mcp.NewServer(pingBackend{}, mcp.Options{}).HTTPHandler(mcp.HTTPOptions{
		Token:        "serve-http-test-token",
		AllowedHosts: httpAllowedHosts(ln),
		Other:        statusPaths{health: func(context.Context) ([]byte, bool) { return []byte(`{"status":"healthy"}`), true }}.serve,
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serveHTTP(ctx, ln, tr, 0, zerolog.Nop()) }()
	base := "http://" + ln.Addr().String()

	res, err := http.Get(base + pathHealth)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("healthz %d", res.StatusCode)
	}

	req, _ := http.NewRequest(http.MethodPost, base+mcp.PathMCP, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer serve-http-test-token")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	sid := res.Header.Get(mcp.HeaderSessionID)
	if res.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize %d, session %q", res.StatusCode, sid)
	}
	req, _ = http.NewRequest(http.MethodGet, base+mcp.PathMCP, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer serve-http-test-token")
	req.Header.Set(mcp.HeaderSessionID, sid)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream %d", stream.StatusCode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serveHTTP: %v", err)
		}
	case <-time.After(httpShutdownGrace + 20*time.Second):
		t.Fatal("serveHTTP did not stop with a GET stream open")
	}
	if _, err := bufio.NewReader(stream.Body).ReadString('\n'); err == nil {
		t.Fatal("the GET stream is still open")
	}
	if _, err := http.Get(base + pathHealth); err == nil {
		t.Fatal("still listening after stop")
	}
}

// startHTTP serves tr on a loopback port with at most maxConns connections
// and returns its base URL; the server stops when the test ends.
func startHTTP(t *testing.T, tr *mcp.HTTPTransport, ln net.Listener, maxConns int) string {
	t.Helper()
	base, _ := startCapped(t, tr, ln, maxConns)
	return base
}

// startCapped is startHTTP also returning the connection cap.
func startCapped(t *testing.T, tr *mcp.HTTPTransport, ln net.Listener, maxConns int) (string, *connCap) {
	t.Helper()
	capped := newConnCap(ln, maxConns, zerolog.Nop())
	return serveCapTest(t, tr, capped), capped
}

// serveCapTest serves tr behind capped until the test ends.
func serveCapTest(t *testing.T, tr *mcp.HTTPTransport, capped *connCap) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveCapped(ctx, capped, tr, zerolog.Nop()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveHTTP: %v", err)
		}
	})
	return "http://" + capped.Addr().String()
}

// active counts the connections handling a request.
func (c *connCap) active() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, st := range c.conns {
		if st.state == http.StateActive {
			n++
		}
	}
	return n
}

// open counts the connections open.
func (c *connCap) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

// freshClient opens its own connections (none shared with other clients).
func freshClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

// An unauthenticated flood of idle connections neither exhausts the
// process nor starves a real caller: beyond server.max_connections the
// connections that waited longest are closed, and /healthz and an MCP
// call are still answered.
func TestServeHTTPCapsIdleConnections(t *testing.T) {
	const maxConns, flood = 4, 24
	ln, err := listenHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := mcp.NewServer(pingBackend{}, mcp.Options{}).HTTPHandler(mcp.HTTPOptions{
		Token:        "serve-http-test-token",
		AllowedHosts: httpAllowedHosts(ln),
		Other:        statusPaths{health: func(context.Context) ([]byte, bool) { return []byte(`{"status":"healthy"}`), true }}.serve,
	})
	base := startHTTP(t, tr, ln, maxConns)

	idle := make([]net.Conn, flood)
	for i := range idle {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		defer c.Close()
		idle[i] = c
	}

	res, err := freshClient().Get(base + pathHealth)
	if err != nil {
		t.Fatalf("/healthz under an idle flood: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/healthz %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, base+mcp.PathMCP, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer serve-http-test-token")
	res, err = freshClient().Do(req)
	if err != nil {
		t.Fatalf("MCP call under an idle flood: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("initialize %d", res.StatusCode)
	}

	// Every idle connection was accepted before the two requests' own:
	// all but maxConns of them have been closed by the server. An open
	// one just does not answer within the read deadline.
	var open atomic.Int32
	var wg sync.WaitGroup
	for _, c := range idle {
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(time.Second))
			var b [1]byte
			_, err := c.Read(b[:])
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				open.Add(1)
			}
		})
	}
	wg.Wait()
	if open := open.Load(); open > maxConns {
		t.Fatalf("%d of %d idle connections still open, want at most %d", open, flood, maxConns)
	}
}

// A local user without the token cannot hold the endpoint with requests
// whose body never comes (issue 9, point 3): beyond server.max_connections
// such stalled requests are closed like idle connections, so /healthz and
// an MCP call of the token's holder are still answered.
func TestServeHTTPStalledBodiesDoNotStarve(t *testing.T) {
	const maxConns, flood = 4, 12
	ln, err := listenHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := mcp.NewServer(pingBackend{}, mcp.Options{}).HTTPHandler(mcp.HTTPOptions{
		Token:        "serve-http-test-token",
		AllowedHosts: httpAllowedHosts(ln),
		Other:        statusPaths{health: func(context.Context) ([]byte, bool) { return []byte(`{"status":"healthy"}`), true }}.serve,
	})
	base, capped := startCapped(t, tr, ln, maxConns)

	// Each sends its headers and one byte of a 1000-byte body, then stalls.
	stalled := "POST " + mcp.PathMCP + " HTTP/1.1\r\nHost: " + ln.Addr().String() +
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
	for i := range flood {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, stalled); err != nil && i < maxConns {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	// The condition: every place under the cap holds a stalled request.
	waitUntil(t, "the stalled requests being handled", func() bool { return capped.active() == maxConns })

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Minute}
	req, _ := http.NewRequest(http.MethodGet, base+pathHealth, nil)
	req.Header.Set("Authorization", "Bearer serve-http-test-token")
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("/healthz with %d stalled bodies: %v", flood, err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/healthz %d", res.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodPost, base+mcp.PathMCP, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer serve-http-test-token")
	res, err = client.Do(req)
	if err != nil {
		t.Fatalf("MCP initialize with %d stalled bodies: %v", flood, err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get(mcp.HeaderSessionID) == "" {
		t.Fatalf("initialize %d", res.StatusCode)
	}
}

// When every connection under the cap is busy (open GET streams), a new
// connection is answered 503 with Retry-After at once rather than queued.
func TestServeHTTPRefusesBeyondTheCapWhenAllBusy(t *testing.T) {
	const maxConns = 2
	ln, err := listenHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := mcp.NewServer(pingBackend{}, mcp.Options{}).HTTPHandler(mcp.HTTPOptions{AllowedHosts: httpAllowedHosts(ln)})
	base, capped := startCapped(t, tr, ln, maxConns)
	do := func(method, sid, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, base+mcp.PathMCP, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set(mcp.HeaderSessionID, sid)
		}
		res, err := freshClient().Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return res
	}
	var sids []string
	for range maxConns {
		res := do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`)
		res.Body.Close()
		sids = append(sids, res.Header.Get(mcp.HeaderSessionID))
	}
	// The condition: the server has closed the initializes' connections
	// (answered, they are busy until then).
	waitUntil(t, "the initialize connections closed", func() bool { return capped.open() == 0 })
	for _, sid := range sids {
		stream := do(http.MethodGet, sid, "")
		defer stream.Body.Close()
		if stream.StatusCode != http.StatusOK {
			t.Fatalf("GET stream %d", stream.StatusCode)
		}
	}
	// Beyond them: a minimal 503 with Retry-After (issue 16: the modern
	// era's caps could never answer it, the connection was reset first).
	for i := range 3 {
		res, err := freshClient().Get(base + pathHealth)
		if err != nil {
			t.Fatalf("connection %d beyond %d busy ones: %v", i, maxConns, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" ||
			!strings.Contains(string(body), `"code":-32006`) || !json.Valid(body) {
			t.Fatalf("connection %d beyond %d busy ones: %d, Retry-After %q, %s", i, maxConns, res.StatusCode, res.Header.Get("Retry-After"), body)
		}
	}
	// The 503 waits for the request: an HTTP client takes an answer that
	// comes first for an unsolicited response, and fails.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _ := c.Read(make([]byte, 1)); n > 0 {
		t.Fatal("a connection beyond the cap is answered before it sends its request")
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	io.WriteString(c, "GET "+pathHealth+" HTTP/1.1\r\nHost: "+ln.Addr().String()+"\r\n\r\n")
	if res, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a request sent 100 ms after connecting beyond the cap: %v, %v", res, err)
	}
}

// Another local user churning connections (issue 16: ~5,000 a second)
// fails none of the token holder's requests, fresh or keep-alive: the
// serving user's connections, and those that carried the token, are not
// closed to make room for the churner's. The churner dials from
// 127.0.0.2, which the cap's lookup takes for another user's (the real
// lookup is mcp.LoopbackPeerUID's test). The figures are counts, not times.
func TestServeHTTPChurnDoesNotFailTheHolder(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dials from 127.0.0.2: Linux answers on all of 127/8")
	}
	const maxConns, requests = 8, 100
	ln, err := listenHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := mcp.NewServer(pingBackend{}, mcp.Options{}).HTTPHandler(mcp.HTTPOptions{
		Token: "serve-http-test-token", AllowedHosts: httpAllowedHosts(ln),
	})
	capped := newConnCap(ln, maxConns, zerolog.Nop())
	churnIP := net.IPv4(127, 0, 0, 2)
	capped.peerUID = func(c net.Conn) (int, bool) {
		if c.RemoteAddr().(*net.TCPAddr).IP.Equal(churnIP) {
			return capped.ownUID + 1, true
		}
		return capped.ownUID, true
	}
	base := serveCapTest(t, tr, capped)

	stop := make(chan struct{})
	var churned atomic.Int64
	var churners sync.WaitGroup
	open := make(chan struct{}, 256) // the churner's descriptors
	for range 4 {
		churners.Go(func() {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: churnIP}}
			for {
				select {
				case <-stop:
					return
				case open <- struct{}{}:
				}
				c, err := d.Dial("tcp", ln.Addr().String())
				if err != nil {
					<-open
					continue
				}
				churned.Add(1)
				churners.Go(func() { // idle until the server closes it
					defer func() { <-open }()
					c.SetReadDeadline(time.Now().Add(10 * time.Second))
					io.Copy(io.Discard, c)
					c.Close()
				})
			}
		})
	}
	defer func() { close(stop); churners.Wait() }()
	waitUntil(t, "the churn to fill the cap", func() bool { return churned.Load() > 4*maxConns })

	call := func(c *http.Client) error {
		req, _ := http.NewRequest(http.MethodPost, base+mcp.PathMCP, strings.NewReader(
			`{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"`+mcp.MetaProtocolVersion+`":"`+mcp.ModernVersion+
				`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Method", "server/discover")
		req.Header.Set(mcp.HeaderProtocolVersion, mcp.ModernVersion)
		req.Header.Set("Authorization", "Bearer serve-http-test-token")
		res, err := c.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if _, err := io.ReadAll(res.Body); err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			return errors.New(res.Status)
		}
		return nil
	}
	fresh, kept := freshClient(), &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	var failedFresh, failedKept int
	var lastErr error
	for range requests {
		if err := call(fresh); err != nil {
			failedFresh, lastErr = failedFresh+1, err
		}
		if err := call(kept); err != nil {
			failedKept, lastErr = failedKept+1, err
		}
	}
	t.Logf("%d connections churned; failed: %d of %d fresh, %d of %d keep-alive requests", churned.Load(), failedFresh, requests, failedKept, requests)
	if failedFresh+failedKept > 0 {
		t.Errorf("under churn %d of %d fresh and %d of %d keep-alive requests failed, the last: %v", failedFresh, requests, failedKept, requests, lastErr)
	}
	if n := capped.open(); n > maxConns {
		t.Errorf("%d connections open, cap %d", n, maxConns)
	}
}

// hostileProbe is a sidecar /probe payload carrying secrets and terminal
// and bidi control characters.
const hostileProbe = `{"ok":true,"preflight_ok":true,"api_key":"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",` +
	`"password":"hunter2-correct-horse","note":"\u001b[2J\u202egnp.exe AKIAABCDEFGHIJKLMNOP","db":"postgres://u:s3cretpw@db/x"}`

// The secrets of hostileProbe, none of which may reach an HTTP body.
var hostileSecrets = []string{"sk-ant-api03-AAAA", "hunter2", "AKIAABCDEFGHIJKLMNOP", "s3cretpw", "\u001b", "\u202e", `\u001b`, `\u202e`}

// /healthz on the real binary with a sidecar whose probe is hostile: any
// local user learns only whether awbridge is healthy; the token's holder
// gets system.health's report, redacted and cleaned as system.health is.
func TestServeHTTPHealthzRedactsTheProbe(t *testing.T) {
	srv, _ := recordedAW(t)
	side := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, hostileProbe)
	}))
	defer side.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	stateDir := t.TempDir()
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env := append(baseEnv(t, srv.URL), "AWBRIDGE_HTTP="+addr, "AWBRIDGE_STATE_DIR="+stateDir, "AWBRIDGE_SIDECAR_URL="+side.URL)
	startServe(t, env, sock)
	// The condition: health's first probe of the sidecar has answered.
	waitUntil(t, "the hostile probe in health", func() bool {
		return strings.Contains(socketCall(t, sock, `{"jsonrpc":"2.0","id":1,"method":"system.health"}`)[0], `"sidecar_probe_status":true`)
	})
	token, err := os.ReadFile(filepath.Join(stateDir, httpTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	get := func(auth string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+pathHealth, nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := freshClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name, auth string
		full       bool
	}{
		{"no token", "", false},
		{"wrong token", strings.Repeat("f", 64), false},
		{"token", strings.TrimSpace(string(token)), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := get(tc.auth)
			for _, s := range hostileSecrets {
				if strings.Contains(body, s) {
					t.Errorf("%q reached /healthz: %s", s, body)
				}
			}
			if !tc.full {
				if body != `{"status":"healthy"}` && body != `{"status":"degraded"}` {
					t.Fatalf("without the token: %d %s", status, body)
				}
				return
			}
			var v any
			if err := json.Unmarshal([]byte(body), &v); err != nil || !strings.Contains(body, `"omni_probe":{`) || !strings.Contains(body, `"aw_ok":true`) {
				t.Fatalf("with the token, not the report: %d %s", status, body)
			}
			eachString("", v, func(path, s string) {
				if redact.Clean(s) != s {
					t.Errorf("unsafe characters at %s: %q", path, s)
				}
			})
		})
	}
}

// eachString calls f with the path of every key and string value of v.
func eachString(path string, v any, f func(path, s string)) {
	switch x := v.(type) {
	case string:
		f(path, x)
	case map[string]any:
		for k, c := range x {
			f(path+"{key}", k)
			eachString(path+"."+k, c, f)
		}
	case []any:
		for i, c := range x {
			eachString(path+"["+strconv.Itoa(i)+"]", c, f)
		}
	}
}

// /healthz and /v1/nowframe beside /mcp: the health verdict for anyone,
// the report and the frame for the token's holder only.
func TestStatusPaths(t *testing.T) {
	const token = "status-paths-test-token"
	var mu sync.Mutex
	healthy, frame := true, []byte(`{"timestamp":"t","reason":"http"}`)
	tr := mcp.NewServer(pingBackend{}, mcp.Options{}).HTTPHandler(mcp.HTTPOptions{Token: token, Other: statusPaths{
		health: func(context.Context) ([]byte, bool) {
			mu.Lock()
			defer mu.Unlock()
			if healthy {
				return []byte(`{"status":"healthy","aw_ok":true}`), true
			}
			return []byte(`{"status":"degraded","aw_ok":false}`), false
		},
		nowframe: func(context.Context) []byte {
			mu.Lock()
			defer mu.Unlock()
			return frame
		},
	}.serve})
	ts := httptest.NewServer(tr)
	defer ts.Close()
	defer tr.Shutdown(context.Background())
	auth, wrong := "Bearer "+token, "Bearer not-the-token"
	for _, tc := range []struct {
		name, method, path, auth string
		healthy                  bool
		frame                    string
		status                   int
		body                     string
	}{
		// Without the token: the verdict only, never the report.
		{"healthy, no token", "GET", pathHealth, "", true, "", 200, `{"status":"healthy"}`},
		{"healthy, wrong token", "GET", pathHealth, wrong, true, "", 200, `{"status":"healthy"}`},
		{"degraded, no token", "GET", pathHealth, "", false, "", 503, `{"status":"degraded"}`},
		// With it: the report.
		{"healthy, token", "GET", pathHealth, auth, true, "", 200, `{"status":"healthy","aw_ok":true}`},
		{"degraded, token", "GET", pathHealth, auth, false, "", 503, `{"status":"degraded","aw_ok":false}`},
		{"POST /healthz", "POST", pathHealth, "", true, "", 405, `{"error":"method not allowed"}`},
		{"nowframe, token", "GET", pathNowframe, auth, true, `{"timestamp":"t","reason":"http"}`, 200, `{"timestamp":"t","reason":"http"}`},
		{"nowframe, no token", "GET", pathNowframe, "", true, `{}`, 401, `{"error":"unauthorized: a bearer token is required"}`},
		{"nowframe, wrong token", "GET", pathNowframe, wrong, true, `{}`, 401, `{"error":"unauthorized: a bearer token is required"}`},
		{"nowframe failed", "GET", pathNowframe, auth, true, "", 503, `{"error":"no frame"}`},
		{"unknown path", "GET", "/nope", auth, true, "", 404, `{"error":"not found"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			healthy, frame = tc.healthy, []byte(tc.frame)
			mu.Unlock()
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			res, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status || string(body) != tc.body || res.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s, want %d %s", res.StatusCode, body, tc.status, tc.body)
			}
			if tc.status == 401 && !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate %q", res.Header.Get("WWW-Authenticate"))
			}
		})
	}
}
