package main

import (
	"runtime/debug"
	"testing"
)

func TestBuildStamp(t *testing.T) {
	vcs := func(rev, at, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}}}
	}
	tests := []struct {
		name                   string
		version, commit, date  string
		info                   *debug.BuildInfo
		wantVersion, wantBuilt string
	}{
		{"nothing known", "", "", "", nil, "dev", ""},
		{"a release's link-time values", "1.2.0", "0123456789ab", "2026-11-28T10:00:00Z", vcs("ffff", "2020-01-01T00:00:00Z", "true"),
			"1.2.0", "commit 0123456789ab, built 2026-11-28T10:00:00Z"},
		{"go install @version", "", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0", ""},
		{"a clone: the commit and its time", "", "", "", vcs("60f5c4e1a2b3c4d5e6f7", "2026-11-28T11:33:58Z", "false"),
			"dev", "commit 60f5c4e1a2b3, committed 2026-11-28T11:33:58Z"},
		{"a clone with changes", "60f5c4e", "", "", vcs("60f5c4e1a2b3c4d5e6f7", "2026-11-28T11:33:58Z", "true"),
			"60f5c4e", "commit 60f5c4e1a2b3-dirty, committed 2026-11-28T11:33:58Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, built := buildStamp(tt.version, tt.commit, tt.date, tt.info)
			if v != tt.wantVersion || built != tt.wantBuilt {
				t.Errorf("buildStamp = %q, %q; want %q, %q", v, built, tt.wantVersion, tt.wantBuilt)
			}
		})
	}
}
