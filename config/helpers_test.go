package config

import (
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// mapEnv is an Env reading only m (never the real environment), on Linux
// unless goos says otherwise.
func mapEnv(m map[string]string) Env {
	return Env{GOOS: "linux", Lookup: func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}}
}

// withHome adds HOME (a fresh empty folder, so no default config file
// exists) unless m sets it.
func withHome(t *testing.T, m map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{"HOME": t.TempDir()}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// load parses args with a fresh FlagSet, as a subcommand would, and loads.
func load(t *testing.T, env map[string]string, args ...string) (*Loaded, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := Bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return Load(mapEnv(withHome(t, env)), f)
}

// mustLoad is load that fails the test on an error.
func mustLoad(t *testing.T, env map[string]string, args ...string) *Loaded {
	t.Helper()
	l, err := load(t, env, args...)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return l
}

// get returns the setting or fails the test.
func get(t *testing.T, l *Loaded, key string) Setting {
	t.Helper()
	s, ok := l.Get(key)
	if !ok {
		t.Fatalf("no setting %q", key)
	}
	return s
}

// inTestdata is p made absolute when it is a relative path under testdata/,
// as Load reports a config file named relative to the working directory.
func inTestdata(t *testing.T, p string) string {
	t.Helper()
	if !strings.HasPrefix(p, "testdata/") {
		return p
	}
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// flagsFor is a fresh subcommand FlagSet with the settings bound.
func flagsFor(t *testing.T) (*flag.FlagSet, *Flags) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, Bind(fs)
}
