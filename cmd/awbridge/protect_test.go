package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/health/protect"
	"github.com/awbridge/awbridge/install"
)

// protectWorld is a fake user: a home folder, an environment, a config
// file and the protect.files / protect.env lists.
type protectWorld struct {
	t          *testing.T
	home       string
	vars       map[string]string
	files, env string
}

func newProtectWorld(t *testing.T) *protectWorld {
	t.Helper()
	home := t.TempDir()
	w := &protectWorld{t: t, home: home, vars: map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, "config"),
		"XDG_STATE_HOME":  filepath.Join(home, "state"),
		"AWBRIDGE_CONFIG": filepath.Join(home, "awbridge.toml"),
		"PROTECTED_URL":   "http://127.0.0.1:5600",
	}}
	w.write("awbridge.toml", "[activitywatch]\nurl = \"http://127.0.0.1:5600\"\n")
	w.write("etc/hosts", "127.0.0.1 localhost\n")
	w.files = filepath.Join(home, "etc/hosts") + ", " + filepath.Join(home, "etc/later")
	w.env = "PROTECTED_URL,LD_PRELOAD"
	return w
}

func (w *protectWorld) path(rel string) string { return filepath.Join(w.home, filepath.FromSlash(rel)) }

func (w *protectWorld) write(rel, content string) {
	w.t.Helper()
	p := w.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *protectWorld) baseline() string {
	return filepath.Join(w.home, "state", "awbridge", protect.BaselineFile)
}

// run runs `awbridge protect ARGS` in the fake world.
func (w *protectWorld) run(args ...string) (code int, stdout, stderr string) {
	w.t.Helper()
	var out, errb bytes.Buffer
	e := &env{
		args: append([]string{"protect"}, args...), stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		lookup:  func(k string) (string, bool) { v, ok := w.vars[k]; return v, ok },
		version: "test",
	}
	lists := func(*config.Loaded) (string, string) { return w.files, w.env }
	code = runProtect(context.Background(), e, args, lists)
	return code, out.String(), errb.String()
}

func (w *protectWorld) snapshot() {
	w.t.Helper()
	if code, _, stderr := w.run("snapshot"); code != exitOK {
		w.t.Fatalf("snapshot: exit %d\n%s", code, stderr)
	}
}

// status runs `protect status --json` and checks stdout holds the object
// alone.
func (w *protectWorld) status() (int, protect.Status) {
	w.t.Helper()
	code, stdout, stderr := w.run("status", "--json")
	if strings.Count(stdout, "\n") != 1 || !json.Valid([]byte(stdout)) {
		w.t.Fatalf("stdout is not one JSON object:\n%s\nstderr: %s", stdout, stderr)
	}
	var s protect.Status
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		w.t.Fatal(err)
	}
	return code, s
}

func TestProtectStatusListsWhatDiffers(t *testing.T) {
	type diff struct{ kind, item, change string }
	cases := []struct {
		name   string
		change func(w *protectWorld)
		want   []diff
	}{
		{"nothing changed", func(w *protectWorld) {}, nil},
		{"config edited", func(w *protectWorld) {
			w.write("awbridge.toml", "[activitywatch]\nurl = \"http://evil.test:5600\"\n")
		}, []diff{{"config", "awbridge.toml", "changed"}}},
		{"listed file vanished", func(w *protectWorld) { os.Remove(w.path("etc/hosts")) },
			[]diff{{"file", "etc/hosts", "vanished"}}},
		{"listed file appeared", func(w *protectWorld) { w.write("etc/later", "x") },
			[]diff{{"file", "etc/later", "appeared"}}},
		{"variable changed", func(w *protectWorld) { w.vars["PROTECTED_URL"] = "http://evil.test" },
			[]diff{{"env", "PROTECTED_URL", "changed"}}},
		{"variable set", func(w *protectWorld) { w.vars["LD_PRELOAD"] = "/tmp/x.so" },
			[]diff{{"env", "LD_PRELOAD", "appeared"}}},
		{"variable unset", func(w *protectWorld) { delete(w.vars, "PROTECTED_URL") },
			[]diff{{"env", "PROTECTED_URL", "vanished"}}},
		{"a variable listed after the snapshot", func(w *protectWorld) { w.env += ",HTTP_PROXY" },
			[]diff{{"env", "HTTP_PROXY", "not_in_baseline"}}},
		{"another config file", func(w *protectWorld) {
			w.write("other.toml", "")
			w.vars["AWBRIDGE_CONFIG"] = w.path("other.toml")
		}, []diff{{"config", "other.toml", "moved"}}},
	}
	if unit := (install.Spec{GOOS: runtime.GOOS, Home: "/h"}).UnitPath(); unit != "" {
		rel := strings.TrimPrefix(unit, "/h/")
		cases = append(cases, struct {
			name   string
			change func(w *protectWorld)
			want   []diff
		}{"service unit installed", func(w *protectWorld) { w.write(rel, "[Service]\n") },
			[]diff{{"unit", rel, "appeared"}}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newProtectWorld(t)
			w.snapshot()
			tc.change(w)
			code, s := w.status()
			var got []diff
			for _, d := range s.Diffs {
				rel := strings.TrimPrefix(d.Item, w.home+string(filepath.Separator))
				got = append(got, diff{d.Kind, filepath.ToSlash(rel), d.Change})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("diffs:\n got %v\nwant %v", got, tc.want)
			}
			wantCode := exitOK
			if len(tc.want) > 0 {
				wantCode = exitDegraded
			}
			if code != wantCode || s.DiffCount != len(tc.want) || s.OK != (len(tc.want) == 0) ||
				!s.Configured || !s.BaselineExists || s.CreatedAt == nil || s.Baseline != w.baseline() {
				t.Fatalf("exit %d, status %+v", code, s)
			}
		})
	}
}

func TestProtectStatusWithoutABaseline(t *testing.T) {
	cases := []struct {
		name       string
		files, env string
		configured bool
		count      int
	}{
		{"items listed", "/etc/hosts", "HOME", true, -1},
		{"nothing listed", "", "", false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newProtectWorld(t)
			w.files, w.env = tc.files, tc.env
			code, s := w.status()
			if code != exitUsage || s.BaselineExists || s.Configured != tc.configured || s.DiffCount != tc.count {
				t.Fatalf("exit %d, status %+v", code, s)
			}
			code, stdout, stderr := w.run("status")
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, "awbridge protect snapshot") {
				t.Fatalf("text: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
			}
		})
	}
}

func TestProtectStatusText(t *testing.T) {
	w := newProtectWorld(t)
	w.snapshot()
	code, stdout, _ := w.run("status")
	if code != exitOK || !strings.Contains(stdout, "nothing differs") {
		t.Fatalf("exit %d: %s", code, stdout)
	}
	w.vars["LD_PRELOAD"] = "/tmp/x.so"
	w.write("etc/hosts", "127.0.0.1 evil.test\n")
	code, stdout, _ = w.run("status")
	for _, want := range []string{"2 differences", "changed", w.path("etc/hosts") + " (content differs)", "appeared", "LD_PRELOAD", "protect snapshot"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status text lacks %q:\n%s", want, stdout)
		}
	}
	if code != exitDegraded {
		t.Fatalf("exit %d, want 1", code)
	}
}

func TestProtectSnapshotRecordsTheItems(t *testing.T) {
	w := newProtectWorld(t)
	code, stdout, stderr := w.run("snapshot", "--json")
	if code != exitOK || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	var out struct {
		Baseline string `json:"baseline"`
		Items    []struct{ Kind, Item, State string }
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	exe, err := protect.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range out.Items {
		got[it.Kind+" "+it.Item] = it.State
	}
	want := map[string]string{
		"config " + w.path("awbridge.toml"): "present",
		"executable " + exe:                 "present",
		"file " + w.path("etc/hosts"):       "present",
		"file " + w.path("etc/later"):       "absent",
		"env PROTECTED_URL":                 "set",
		"env LD_PRELOAD":                    "unset",
	}
	if unit := (install.Spec{GOOS: runtime.GOOS, Home: w.home}).UnitPath(); unit != "" {
		want["unit "+unit] = "absent"
	}
	if !reflect.DeepEqual(got, want) || out.Baseline != w.baseline() {
		t.Fatalf("items:\n got %v\nwant %v", got, want)
	}
}

func TestProtectWatchesTheDefaultConfigFileBeforeItExists(t *testing.T) {
	w := newProtectWorld(t)
	delete(w.vars, "AWBRIDGE_CONFIG")
	w.snapshot()
	w.write("config/awbridge/config.toml", "[activitywatch]\nurl = \"http://127.0.0.1:5600\"\n")
	code, s := w.status()
	if code != exitDegraded || len(s.Diffs) != 1 || s.Diffs[0].Kind != "config" || s.Diffs[0].Change != "appeared" {
		t.Fatalf("exit %d, diffs %+v", code, s.Diffs)
	}
	// AWBRIDGE_CONFIG= turns the config file off: nothing to watch.
	w2 := newProtectWorld(t)
	w2.vars["AWBRIDGE_CONFIG"] = ""
	w2.snapshot()
	data, err := os.ReadFile(w2.baseline())
	if err != nil {
		t.Fatal(err)
	}
	b, err := protect.DecodeBaseline(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range b.Entries {
		if e.Kind == protect.KindConfig {
			t.Fatalf("a config entry without a config file: %+v", e)
		}
	}
}

func TestProtectBaselineHoldsNoValue(t *testing.T) {
	const secret = "hunter2-Planted-Secret-c0ffee"
	w := newProtectWorld(t)
	w.vars["API_TOKEN"] = secret
	w.env += ",API_TOKEN"
	code, so1, se1 := w.run("snapshot", "--json")
	if code != exitOK {
		t.Fatal(se1)
	}
	w.vars["API_TOKEN"] = secret + "-rotated"
	code, so2, se2 := w.run("status")
	if code != exitDegraded {
		t.Fatalf("exit %d", code)
	}
	data, err := os.ReadFile(w.baseline())
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"baseline": string(data), "output": so1 + se1 + so2 + se2} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "127.0.0.1:5600") {
			t.Fatalf("the %s holds a variable's value:\n%s", name, s)
		}
	}
}

func TestProtectFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	w := newProtectWorld(t)
	w.snapshot()
	for p, want := range map[string]os.FileMode{w.baseline(): 0o600, filepath.Dir(w.baseline()): 0o700} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %04o, want %04o", p, fi.Mode().Perm(), want)
		}
	}
}

func TestProtectUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", nil, exitUsage, "Example:\n  awbridge protect"},
		{"help", []string{"--help"}, exitOK, "Example:\n  awbridge protect"},
		{"subcommand help", []string{"status", "--help"}, exitOK, "--json"},
		{"unknown subcommand", []string{"verify"}, exitUsage, `unknown subcommand "verify"`},
		{"bad flag", []string{"status", "--jsn"}, exitUsage, "flag provided but not defined"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newProtectWorld(t)
			code, stdout, stderr := w.run(tc.args...)
			if tc.code == exitOK { // help asked for: on stdout
				stdout, stderr = stderr, stdout
			}
			if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d (want %d)\nstdout %q\nstderr %q", code, tc.code, stdout, stderr)
			}
		})
	}
}

func TestProtectRefusesBadItems(t *testing.T) {
	cases := []struct{ name, files, env, want string }{
		{"relative file", "etc/hosts", "", "not an absolute path"},
		{"variable with =", "", "A=B", "not an environment variable name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newProtectWorld(t)
			w.files, w.env = tc.files, tc.env
			for _, sub := range []string{"snapshot", "status"} {
				code, stdout, stderr := w.run(sub)
				if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
					t.Fatalf("%s: exit %d\nstdout %q\nstderr %q", sub, code, stdout, stderr)
				}
			}
			if _, err := os.Stat(w.baseline()); err == nil {
				t.Fatal("a baseline was written")
			}
		})
	}
	// ~/ in protect.files is the home folder.
	w := newProtectWorld(t)
	w.files = "~/etc/hosts"
	w.snapshot()
	os.Remove(w.path("etc/hosts"))
	if code, s := w.status(); code != exitDegraded || len(s.Diffs) != 1 || s.Diffs[0].Item != w.path("etc/hosts") {
		t.Fatalf("exit %d, %+v", code, s.Diffs)
	}
}
