package main

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServe runs `awbridge serve` on a socket in a temp folder and waits
// until it answers.
func startServe(t *testing.T, env []string, sock string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(binPath, "serve", "--socket", sock)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	for range 200 {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return cmd, &stderr
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("serve never answered on %s: %s", sock, stderr.String())
	return nil, nil
}

// socketCall sends lines on a fresh connection and returns one reply per
// line that has an id.
func socketCall(t *testing.T, sock string, lines ...string) []string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	var out []string
	for _, l := range lines {
		if _, err := c.Write([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
		reply, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the reply to %s: %v", l, err)
		}
		out = append(out, reply)
	}
	return out
}

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
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nowframe_history","arguments":{"output":{"pick":["polling"]}}}}`,
	)
	if !strings.Contains(got[0], `\"value\":\"Google-chrome\"`) {
		t.Fatalf("read back on a second connection: %s", got[0])
	}
	// The poller keeps the frame warm: nowframe_build answers from it.
	if !strings.Contains(got[1], `\"cache_hit\":true`) || !strings.Contains(got[2], `\"polling\":true`) {
		t.Fatalf("warm answers: %s\n%s", got[1], got[2])
	}

	// A second serve on a live socket refuses, clearly.
	second := exec.Command(binPath, "serve", "--socket", sock)
	second.Env = env
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already serves on "+sock) {
		t.Fatalf("second serve: %v %s", err, out)
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
	sock := filepath.Join(t.TempDir(), "awbridge.sock")
	// A socket file nobody listens on, as a killed process leaves it.
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
