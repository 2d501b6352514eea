package main

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 16, point 7, with a real other user: as root, the port is held
// by `awbridge sim` running as nobody (an impostor that answers HTTP).
// serve keeps the socket, says who holds the port, and replaces the token
// at once (the old one may have gone to the impostor); once the port
// frees it replaces it again before serving (the file's token may have
// gone there while it waited), and only that last token is accepted.
func TestServeRotatesTheTokenWhenAnotherUserHoldsThePort(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run the holder as another user")
	}
	const nobody = 65534
	srv, _ := recordedAW(t)
	addr := closedAddr(t)

	// The binary where nobody may run it.
	dir, err := os.MkdirTemp("", "awbridge-other-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "awbridge")
	if err := os.WriteFile(other, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	imp := exec.Command(other, "sim", "--addr", addr)
	imp.Env = []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin"}
	imp.Dir = "/"
	imp.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { imp.Process.Kill(); imp.Wait() }()
	waitUntil(t, "the impostor listens", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	stateDir, first, sock, env := heldPortEnv(t, srv.URL, addr)
	_, stderr := startServe(t, env, sock)

	status, ok, found, detail := httpEndpointCheck(t, sock)
	if !found || ok || status != "degraded" || !strings.Contains(detail, "another user (uid 65534)") ||
		!strings.Contains(detail, "token was replaced") {
		t.Fatalf("health while another user holds the port: status %s, http_endpoint found %v ok %v %q", status, found, ok, detail)
	}
	if log := stderr.String(); !strings.Contains(log, "HTTP port in use") || !strings.Contains(log, "uid 65534") {
		t.Fatalf("the log does not say who holds the HTTP port:\n%s", log)
	}
	second := readTokenFile(t, stateDir)
	if second == first {
		t.Fatal("the token was not replaced while another user held the port")
	}
	if fi, err := os.Lstat(filepath.Join(stateDir, httpTokenFile)); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file after the rotation: %v %v", fi, err)
	}

	imp.Process.Kill()
	imp.Wait()
	var third string
	waitUntil(t, "HTTP served with a new token once the port is free", func() bool {
		third = readTokenFile(t, stateDir)
		return third != second && postMCP(addr, third) == http.StatusOK
	})
	for name, old := range map[string]string{"first": first, "second": second} {
		if code := postMCP(addr, old); code != http.StatusUnauthorized {
			t.Errorf("the %s token, possibly sent to the other user: %d, want 401", name, code)
		}
	}
}
