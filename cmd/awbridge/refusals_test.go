package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
)

// goldenFile compares got with testdata/terminal/name, rewriting it with
// -update.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "terminal", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test -update rewrites it)\n--- got:\n%s--- want:\n%s", name, got, want)
	}
}

// TestInstallSystemRunsAsTheInvokingUser: a system-wide unit runs as the
// person installing it (under sudo, SUDO_USER, with that person's config
// file), never as root; root without sudo is refused with the reason.
func TestInstallSystemRunsAsTheInvokingUser(t *testing.T) {
	users := map[string]*user.User{
		"alice": {Username: "alice", Uid: "1001", Gid: "1001", HomeDir: "/home/alice"},
		"bob":   {Username: "bob", Uid: "1000", Gid: "1000", HomeDir: "/home/bob"},
		"root":  {Username: "root", Uid: "0", Gid: "0", HomeDir: "/root"},
	}
	tests := []struct {
		name     string
		uid      int
		sudoUser string
		code     int
	}{
		{"as-bob", 1000, "", exitOK},
		{"sudo-from-alice", 0, "alice", exitOK},
		{"root-without-sudo", 0, "", exitUsage},
		{"sudo-from-root", 0, "root", exitUsage},
	}
	for _, goos := range []string{"linux", "darwin"} {
		for _, tt := range tests {
			t.Run(goos+"-"+tt.name, func(t *testing.T) {
				w := newServiceWorld(t)
				w.deps.goos = goos
				w.deps.uid = tt.uid
				w.deps.lookupUser = func(name string) (*user.User, error) {
					if u, ok := users[name]; ok {
						return u, nil
					}
					return nil, user.UnknownUserError(name)
				}
				w.deps.currentUser = func() (*user.User, error) {
					if tt.uid == 0 {
						return users["root"], nil
					}
					return users["bob"], nil
				}
				// Under sudo, HOME is root's: the service must still get
				// alice's config file, not root's.
				if tt.uid == 0 {
					w.vars["HOME"] = "/root"
					delete(w.vars, "XDG_CONFIG_HOME")
				} else {
					w.vars["HOME"] = "/home/bob"
					delete(w.vars, "XDG_CONFIG_HOME")
				}
				if tt.sudoUser != "" {
					w.vars["SUDO_USER"] = tt.sudoUser
				}
				code, out, errs := w.run(t, runInstall, "--dry-run", "--system")
				if code != tt.code {
					t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
				}
				goldenFile(t, "install-system-"+goos+"-"+tt.name+".golden", "stdout:\n"+out+"stderr:\n"+errs)
				if code == exitOK && strings.Contains(out, "/root/") {
					t.Fatalf("the unit reads root's files:\n%s", out)
				}
			})
		}
	}
}

// TestSimRefusesNonLoopback: the simulator answers anyone who reaches it,
// so like serve --http it listens on loopback only.
func TestSimRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, version: "test", lookup: func(string) (string, bool) { return "", false }}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // were it to listen, it would stop at once
		code := cmdSim(ctx, e, []string{"--addr", addr})
		if code != exitUsage || !strings.Contains(errb.String(), "is not on loopback") || strings.Count(errb.String(), "\n") != 1 {
			t.Fatalf("sim --addr %s: exit %d\n%s%s", addr, code, out.String(), errb.String())
		}
	}
	_, stop, err := startSim(context.Background(), "127.0.0.1:0", false)
	if err != nil {
		t.Fatalf("loopback refused: %v", err)
	}
	stop()
	if _, _, err := startSim(context.Background(), "0.0.0.0:0", false); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("startSim on 0.0.0.0: %v", err)
	}
}
