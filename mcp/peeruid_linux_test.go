package mcp

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// LoopbackPeerUID names the user whose process opened a loopback
// connection: ours, and (run as root) another user's.
func TestLoopbackPeerUID(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, s, err := loopbackPair(t, addr)
		if err != nil {
			t.Logf("%s: %v", addr, err)
			continue
		}
		if uid, ok := LoopbackPeerUID(s); !ok || uid != os.Getuid() {
			t.Errorf("%s: peer uid %d, %v; want %d", addr, uid, ok, os.Getuid())
		}
		if os.Getuid() != 0 {
			continue
		}
		// Another user's connection: nc (or bash) run as nobody.
		sh, err := exec.LookPath("bash")
		if err != nil {
			continue
		}
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		host := "127.0.0.1"
		if addr[0] == '[' {
			host = "::1"
		}
		cmd := exec.Command(sh, "-c", "exec 3<>/dev/tcp/"+host+"/"+port+"; sleep 5")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if err := cmd.Start(); err != nil {
			t.Logf("as nobody: %v", err)
			continue
		}
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(5 * time.Second))
		other, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if uid, ok := LoopbackPeerUID(other); !ok || uid != 65534 {
			t.Errorf("%s: another user's peer uid %d, %v; want 65534", addr, uid, ok)
		}
		other.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// loopbackPair listens on addr and returns the listener and the server's
// end of one connection to it, closed when the test ends.
func loopbackPair(tb testing.TB, addr string) (net.Listener, net.Conn, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	tb.Cleanup(func() { ln.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	s, err := ln.Accept()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return ln, s, nil
}

func BenchmarkLoopbackPeerUID(b *testing.B) {
	_, s, err := loopbackPair(b, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok := LoopbackPeerUID(s); !ok {
			b.Fatal("no uid")
		}
	}
}
