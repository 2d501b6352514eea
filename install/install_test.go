package install

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestSystemdUserUnitGolden(t *testing.T) {
	got, err := SystemdUserUnit(UnitOptions{Executable: "/home/a b/bin/awbridge", ConfigPath: "/home/a b/.config/awbridge/config.toml"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "awbridge.service.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("unit differs from %s:\n%s", path, got)
	}
	for _, must := range []string{"WantedBy=default.target", "RestartSec=2s", `ExecStart="/home/a b/bin/awbridge" serve --config "/home/a b/.config/awbridge/config.toml"`} {
		if !strings.Contains(got, must) {
			t.Fatalf("unit lacks %q", must)
		}
	}
}

func TestRefusesGoRunBinaries(t *testing.T) {
	_, err := SystemdUserUnit(UnitOptions{Executable: "/tmp/go-build123/b001/exe/awbridge"})
	if err == nil || !strings.Contains(err.Error(), "go run") {
		t.Fatalf("err = %v", err)
	}
	if _, err := SystemdUserUnit(UnitOptions{Executable: "awbridge"}); err == nil {
		t.Fatal("a relative executable was accepted")
	}
}
