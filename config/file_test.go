package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the '# want:' lines of testdata/bad/*.toml")

const wantPrefix = "# want: "

// TestBadFiles loads each testdata/bad/*.toml; its first line says the one
// error line Load must return, with {file} for the file's path.
func TestBadFiles(t *testing.T) {
	paths, err := filepath.Glob("testdata/bad/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no bad files: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".toml"), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			first, rest, _ := strings.Cut(string(data), "\n")
			if !strings.HasPrefix(first, wantPrefix) {
				t.Fatalf("%s does not start with %q", p, wantPrefix)
			}
			abs := inTestdata(t, p) // Load names the file by its absolute path
			want := strings.ReplaceAll(strings.TrimPrefix(first, wantPrefix), "{file}", abs)

			_, err = load(t, map[string]string{"AWBRIDGE_CONFIG": p})
			if err == nil {
				t.Fatalf("no error, want %s", want)
			}
			got := err.Error()
			if *update {
				line := wantPrefix + strings.ReplaceAll(got, abs, "{file}")
				if err := os.WriteFile(p, []byte(line+"\n"+rest), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("error\n got %s\nwant %s", got, want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Source != SourceFile || ce.Origin != abs {
				t.Errorf("error %#v does not name the file as its source", err)
			}
			if strings.ContainsAny(got, "\n\r") || strings.Contains(got, "hunter2") {
				t.Errorf("error is not one safe line: %q", got)
			}
		})
	}
}
