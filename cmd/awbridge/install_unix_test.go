//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/awbridge/awbridge/config"
)

// sudoWorld is an install run as root by sudo from alice, whose home is
// a fresh folder; alice is another account when the test runs as root
// (as in CI), else this one.
func sudoWorld(t *testing.T) (w *serviceWorld, home string, uid, gid int) {
	t.Helper()
	w = newServiceWorld(t)
	home = t.TempDir()
	uid, gid = os.Getuid(), os.Getgid()
	if uid == 0 {
		uid, gid = 4242, 4242
	}
	w.deps.uid = 0
	w.deps.lookupUser = func(name string) (*user.User, error) {
		if name != "alice" {
			return nil, user.UnknownUserError(name)
		}
		return &user.User{Username: "alice", Uid: fmt.Sprint(uid), Gid: fmt.Sprint(gid), HomeDir: home}, nil
	}
	w.vars["SUDO_USER"] = "alice"
	w.vars["HOME"] = w.home // root's, under sudo
	delete(w.vars, "XDG_CONFIG_HOME")
	return w, home, uid, gid
}

// TestInstallSystemUnderSudoNeverWritesThroughALink: root, installing for
// the person who ran sudo, refuses a ~/.config they made a link to a
// folder of root's (nothing is made or given away there, no unit is
// installed) and says what to do; with no ~/.config at all, everything it
// makes is the person's, not root's.
func TestInstallSystemUnderSudoNeverWritesThroughALink(t *testing.T) {
	t.Run("linked ~/.config", func(t *testing.T) {
		w, home, _, _ := sudoWorld(t)
		rootOnly := t.TempDir()
		if err := os.Chmod(rootOnly, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(rootOnly, filepath.Join(home, ".config")); err != nil {
			t.Fatal(err)
		}
		code, out, errs := w.run(t, runInstall, "--system")
		cfg := filepath.Join(home, ".config", "awbridge", "config.toml")
		if code != exitDegraded || !strings.Contains(errs, "not creating the config file "+cfg+" as root") ||
			!strings.Contains(errs, "create it as yourself first") {
			t.Fatalf("exit %d, want a refusal:\n%s%s", code, out, errs)
		}
		if ents, _ := os.ReadDir(rootOnly); len(ents) != 0 {
			t.Fatalf("made in root's folder through the link: %v", ents)
		}
		if w.fake.installed {
			t.Fatal("the unit was installed after the refusal")
		}
	})
	t.Run("no ~/.config", func(t *testing.T) {
		w, home, uid, gid := sudoWorld(t)
		code, out, errs := w.run(t, runInstall, "--system")
		cfg := filepath.Join(home, ".config", "awbridge", "config.toml")
		if code != exitOK || !strings.Contains(out, "created the config file "+cfg) {
			t.Fatalf("exit %d\n%s%s", code, out, errs)
		}
		for _, p := range []string{filepath.Join(home, ".config"), filepath.Dir(cfg), cfg} {
			st, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if s := st.Sys().(*syscall.Stat_t); int(s.Uid) != uid || int(s.Gid) != gid {
				t.Errorf("%s is owned by %d:%d, want alice's %d:%d", p, s.Uid, s.Gid, uid, gid)
			}
		}
	})
}

// TestClientsFindTheSystemService: the socket a system unit names (it has
// no login session) is one that `status` and the stdio relay find from the
// person's login shell, whose XDG_RUNTIME_DIR points elsewhere.
func TestClientsFindTheSystemService(t *testing.T) {
	w := newServiceWorld(t)
	home := shortDir(t) // socket paths are limited to ~100 bytes
	w.deps.currentUser = func() (*user.User, error) {
		return &user.User{Username: "bob", Uid: "1000", Gid: "1000", HomeDir: home}, nil
	}
	code, unit, errs := w.run(t, runInstall, "--dry-run", "--system")
	if code != exitOK {
		t.Fatalf("dry run: %d\n%s%s", code, unit, errs)
	}
	_, rest, ok := strings.Cut(unit, "\nEnvironment=\"AWBRIDGE_SOCKET=")
	sock, _, _ := strings.Cut(rest, "\"\n")
	if !ok || sock != filepath.Join(home, ".local", "state", "awbridge", "awbridge.sock") {
		t.Fatalf("the unit names no socket in the state folder:\n%s", unit)
	}
	// The service, as the unit starts it.
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	// The person's login shell.
	w.vars = map[string]string{"HOME": home, "XDG_RUNTIME_DIR": shortDir(t)}
	code, out, _ := w.run(t, runStatus)
	if code != exitOK || !strings.Contains(out, "socket:  "+sock+" answers\n") {
		t.Fatalf("status: %d\n%s", code, out)
	}
	e := &env{stdout: io.Discard, stderr: io.Discard, lookup: func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok }}
	conn := dialService(e, config.Config{}, false)
	if conn == nil {
		t.Fatal("the stdio relay did not find the system service")
	}
	conn.Close()
}

// TestSudoAccountFromTheNameServices: built without cgo (the Makefile's
// static binary), os/user reads only /etc/passwd; the account that ran
// sudo may live in LDAP, sssd or systemd-homed, so on Linux the lookup
// asks `getent passwd`, which goes through the system's name services.
// A fake getent stands for them here.
func TestSudoAccountFromTheNameServices(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("getent is asked on Linux only")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = passwd ] && [ \"$2\" = awbridge-ldap-carol ] && " +
		"echo 'awbridge-ldap-carol:*:71234:70001:Carol C,Room 1,,:/home/ldap/carol:/bin/bash' && exit 0\nexit 2\n"
	if err := os.WriteFile(filepath.Join(dir, "getent"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	u, err := hostServiceDeps().lookupUser("awbridge-ldap-carol")
	if err != nil {
		t.Fatalf("an account only the name services know: %v", err)
	}
	want := user.User{Username: "awbridge-ldap-carol", Uid: "71234", Gid: "70001", Name: "Carol C", HomeDir: "/home/ldap/carol"}
	if *u != want {
		t.Fatalf("got %+v, want %+v", *u, want)
	}
	_, err = hostServiceDeps().lookupUser("awbridge-nobody-at-all")
	var unknown user.UnknownUserError
	if !errors.As(err, &unknown) {
		t.Fatalf("an account nobody knows: %v, want user.UnknownUserError", err)
	}
}
