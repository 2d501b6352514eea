package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/health"
)

// healthOver asks system.health over the socket: its status and checks.
func healthOver(t *testing.T, sock string) (status string, checks []health.Check) {
	t.Helper()
	got := socketCall(t, sock, `{"jsonrpc":"2.0","id":1,"method":"system.health"}`)[0]
	var reply struct {
		Result struct {
			Status    string         `json:"status"`
			Preflight []health.Check `json:"preflight"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &reply); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	return reply.Result.Status, reply.Result.Preflight
}

// httpEndpointCheck is health's http_endpoint check, asked over the
// socket, with the report's status.
func httpEndpointCheck(t *testing.T, sock string) (status string, ok, found bool, detail string) {
	t.Helper()
	status, checks := healthOver(t, sock)
	for _, c := range checks {
		if c.Name == httpCheck {
			return status, c.OK, true, c.Detail
		}
	}
	return status, false, false, ""
}

// postMCP sends an initialize to /mcp on addr with token and returns the
// HTTP status (0: nothing answered).
func postMCP(addr, token string) int {
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	c := freshClient()
	c.Timeout = 5 * time.Second
	res, err := c.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// heldPortEnv is serve's environment with HTTP on addr (tried again every
// 200 ms), its state folder holding a token already, and its socket.
func heldPortEnv(t *testing.T, awURL, addr string) (stateDir, token, sock string, env []string) {
	t.Helper()
	stateDir = t.TempDir()
	token, err := loadOrCreateToken(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	env = append(baseEnv(t, awURL), "AWBRIDGE_HTTP="+addr, "AWBRIDGE_STATE_DIR="+stateDir,
		"AWBRIDGE_HTTP_RETRY=200ms", "AWBRIDGE_LOG_LEVEL=info")
	return stateDir, token, sock, env
}

func readTokenFile(t *testing.T, stateDir string) string {
	t.Helper()
	tok, err := readToken(filepath.Join(stateDir, httpTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Issue 16, point 7: server.http's port held by another process at start
// no longer takes the socket down (serve used to exit 2). The holder here
// is the test process, the same user as serve: serve keeps serving the
// socket, health is degraded and says why, the log says so too, and once
// the port frees serve listens on it. A holder of this same user could
// read the token file anyway, so on Linux (where serve can tell who holds
// the port) the token is kept; elsewhere the holder cannot be identified
// and the token is replaced.
func TestServeKeepsTheSocketWhenTheHTTPPortIsTaken(t *testing.T) {
	srv, _ := recordedAW(t)
	holder, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	addr := holder.Addr().String()
	stateDir, before, sock, env := heldPortEnv(t, srv.URL, addr)
	cmd, stderr := startServe(t, env, sock)

	status, ok, found, detail := httpEndpointCheck(t, sock)
	if !found || ok || status != "degraded" || !strings.Contains(detail, addr+" is in use") ||
		!strings.Contains(detail, "HTTP is not served") {
		t.Fatalf("health while the port is taken: status %s, http_endpoint found %v ok %v %q", status, found, ok, detail)
	}
	if runtime.GOOS == "linux" && !strings.Contains(detail, "another process of this user") {
		t.Fatalf("health does not say the holder is of this user: %q", detail)
	}
	if log := stderr.String(); !strings.Contains(log, "HTTP port in use") {
		t.Fatalf("the log does not say the HTTP port is taken:\n%s", log)
	}
	// The terminal's health says it in a sentence, with what to do.
	_, out, _ := runBin(t, append(env[:len(env):len(env)], "AWBRIDGE_SOCKET="+sock), "health")
	if !strings.Contains(out, "The HTTP endpoint is not served ("+addr+" is in use") ||
		!strings.Contains(out, "the Unix socket and 'awbridge stdio' still work") {
		t.Fatalf("awbridge health while the port is taken: %s", out)
	}
	after := readTokenFile(t, stateDir)
	if rotated := after != before; rotated != (runtime.GOOS != "linux") {
		t.Fatalf("token rotated %v on %s with a holder of this user", rotated, runtime.GOOS)
	}

	holder.Close()
	waitUntil(t, "HTTP served once the port is free", func() bool { return postMCP(addr, after) == http.StatusOK })
	waitUntil(t, "health says HTTP is served", func() bool {
		status, ok, found, _ := httpEndpointCheck(t, sock)
		return found && ok && status == "healthy"
	})
	if cmd.ProcessState != nil {
		t.Fatalf("serve exited: %v\n%s", cmd.ProcessState, stderr.String())
	}
}

// rotateToken replaces the token file in one step, 0600, whatever it
// held, and never writes through a symbolic link at its path.
func TestRotateToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	old, err := loadOrCreateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, httpTokenFile)
	tok, err := rotateToken(dir)
	if err != nil || tok == old {
		t.Fatalf("rotated to %q (old %q): %v", tok, old, err)
	}
	if got := readTokenFile(t, dir); got != tok {
		t.Fatalf("file holds %q, rotateToken said %q", got, tok)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if runtime.GOOS == "windows" {
		return
	}
	// A file others could read (the old token may be known) is replaced
	// too, by a private one.
	os.Chmod(path, 0o644)
	if _, err := rotateToken(dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after rotating a readable file: %v %v", fi, err)
	}
	// A link at the token's path is replaced, its target untouched.
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("someone else's file\n"), 0o644)
	os.Remove(path)
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	tok, err = rotateToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "someone else's file\n" {
		t.Fatalf("written through the link: %q", b)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 || readTokenFile(t, dir) != tok {
		t.Fatalf("token path after rotating over a link: %v %v", fi, err)
	}
}
