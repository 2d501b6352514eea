package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelativeConfigPathsThroughTheBinary runs commands with a relative
// --config, AWBRIDGE_CONFIG and protect.files, as a person in their
// project folder types them: each works (before, the protection check
// refused the relative path and every engine command stopped).
func TestRelativeConfigPathsThroughTheBinary(t *testing.T) {
	srv, _ := recordedAW(t)
	wd := t.TempDir()
	if err := os.WriteFile(filepath.Join(wd, "awbridge.toml"),
		[]byte("[privacy]\nexclude_apps = [\"Signal\"]\n[protect]\nfiles = [\"watched.txt\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  []string
		want string // on stdout
	}{
		{"tools --config", []string{"tools", "--no-relay", "--config", "awbridge.toml"}, nil, "nowframe_build"},
		{"tools AWBRIDGE_CONFIG", []string{"tools", "--no-relay"}, []string{"AWBRIDGE_CONFIG=./awbridge.toml"}, "nowframe_build"},
		{"tools AWBRIDGE_PROTECT_FILES", []string{"tools", "--no-relay"}, []string{"AWBRIDGE_PROTECT_FILES=notes.txt"}, "nowframe_build"},
		{"nowframe --config", []string{"nowframe", "--no-relay", "--json", "--config", "awbridge.toml"}, nil, `"aw_info"`},
		{"call AWBRIDGE_CONFIG", []string{"call", "aw_get_state", "--no-relay"}, []string{"AWBRIDGE_CONFIG=awbridge.toml"}, `"buckets"`},
		{"config --config", []string{"config", "--config", "awbridge.toml"}, nil,
			"config file: " + filepath.Join(wd, "awbridge.toml") + " (from --config)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runBinIn(t, wd, baseEnv(t, srv.URL, tt.env...), tt.args...)
			if code != 0 {
				t.Fatalf("%v: exit %d\nstderr: %s", tt.args, code, errs)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("stdout lacks %q:\n%s", tt.want, out)
			}
			if strings.Contains(errs, "not an absolute path") {
				t.Errorf("stderr: %s", errs)
			}
		})
	}
}
