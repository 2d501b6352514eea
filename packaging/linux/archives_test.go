package linux_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fileInfo is goreleaser's info for an archive entry.
type fileInfo struct {
	Owner string `yaml:"owner"`
	Group string `yaml:"group"`
	Mode  int    `yaml:"mode"`
	MTime string `yaml:"mtime"`
}

// TestArchivesPinned: every entry of the release's .tar.gz and .zip
// archives has a fixed owner, mode and date (the commit's), as the
// packages' do. Left to goreleaser, the README and LICENSE carry the
// clone's checkout time and every entry the builder's user and umask, so
// the same commit packed other bytes in another clone. (This module reads
// YAML already; the archives are every OS's, not Linux's alone.)
func TestArchivesPinned(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Archives []struct {
			ID         string   `yaml:"id"`
			BuildsInfo fileInfo `yaml:"builds_info"`
			Files      []yaml.Node
		} `yaml:"archives"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(cfg.Archives) == 0 {
		t.Fatal(".goreleaser.yaml has no archives")
	}
	const date = "{{ .Env.COMMIT_DATE }}"
	check := func(what string, fi fileInfo, mode int) {
		if fi != (fileInfo{"root", "root", mode, date}) {
			t.Errorf("archive %s: info %+v, want owner and group root, mode %#o, mtime %q", what, fi, mode, date)
		}
	}
	for _, a := range cfg.Archives {
		check(a.ID+" builds_info", a.BuildsInfo, 0o755)
		for _, n := range a.Files {
			var f struct {
				Src  string   `yaml:"src"`
				Info fileInfo `yaml:"info"`
			}
			if err := n.Decode(&f); err != nil {
				t.Errorf("archive %s: files entry %q (line %d): want src and info", a.ID, n.Value, n.Line)
				continue
			}
			check(a.ID+" "+f.Src, f.Info, 0o644)
		}
	}
}
