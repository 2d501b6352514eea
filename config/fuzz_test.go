package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadTOML feeds arbitrary bytes as the config file: Load must not
// panic, and must either return one line of *Error naming the file or a
// Config that validates. Seeds: every file in testdata.
func FuzzLoadTOML(f *testing.F) {
	for _, pattern := range []string{"testdata/*.toml", "testdata/bad/*.toml"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("[activitywatch]\nurl = \"http://127.0.0.1:5600\"\nurl = 1\n"))
	f.Add([]byte("a.b.c.d.e = 1\n"))
	f.Add([]byte("[paths]\ncontext_root = '~'\n"))
	f.Add([]byte("\xef\xbb\xbf[log]\nlevel='trace'\n"))
	f.Add([]byte("[[activitywatch.url]]\n"))
	f.Add([]byte("sidecar = { url = { a = [1, {b = 2}] } }\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		env := mapEnv(map[string]string{"HOME": "/home/fuzz", ConfigEnv: p})
		l, err := Load(env, nil)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *config.Error: %v", err, err)
			}
			if ce.Source != SourceFile || ce.Origin != p {
				t.Errorf("error does not name the file: %#v", ce)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error is not one line: %q", msg)
			}
			// Deterministic: the same file gives the same first error.
			if _, again := Load(env, nil); again == nil || again.Error() != err.Error() {
				t.Errorf("second load: %v, first: %v", again, err)
			}
			return
		}
		if err := l.Config.Validate(); err != nil {
			t.Errorf("loaded config does not validate: %v", err)
		}
		if l.File != p || len(l.Settings) != len(table()) {
			t.Errorf("file %q, %d settings", l.File, len(l.Settings))
		}
	})
}
