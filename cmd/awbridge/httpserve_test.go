package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/mcp"
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

func (pingBackend) Call(context.Context, engine.Request) engine.Outcome {
	return engine.Outcome{Body: json.RawMessage(`{"success":true}`)}
}

func (pingBackend) ToolsList() json.RawMessage { return json.RawMessage(`{"tools":[]}`) }

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
		Health:       func(context.Context) ([]byte, bool) { return []byte(`{"status":"healthy"}`), true },
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serveHTTP(ctx, ln, tr, zerolog.Nop()) }()
	base := "http://" + ln.Addr().String()

	res, err := http.Get(base + mcp.PathHealth)
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
	if _, err := http.Get(base + mcp.PathHealth); err == nil {
		t.Fatal("still listening after stop")
	}
}
