package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

func cmdVersion(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "version")
	acceptConfig(fs)
	if code := parse(fs, args); code >= 0 {
		return code
	}
	line := "awbridge " + e.version
	if e.built != "" {
		line += " (" + e.built + ")"
	}
	fmt.Fprintln(e.stdout, line)
	return exitOK
}

// buildStamp returns the version and "commit C, built D" of this binary
// ("committed D" when only the commit's time is known).
// Values set at link time win; otherwise Go's own records answer: the
// module version for `go install ...@v1.2.3`, the VCS revision and commit
// time for a build in a clone ("-dirty" with uncommitted changes). A
// binary with neither is "dev".
func buildStamp(version, commit, date string, info *debug.BuildInfo) (string, string) {
	fromVCS, dirty, when := commit == "", false, "built "
	if info != nil {
		if version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value[:min(len(s.Value), 12)]
				}
			case "vcs.time":
				if date == "" {
					date, when = s.Value, "committed "
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if version == "" {
		version = "dev"
	}
	var built []string
	if commit != "" {
		if fromVCS && dirty {
			commit += "-dirty"
		}
		built = append(built, "commit "+commit)
	}
	if date != "" {
		built = append(built, when+date)
	}
	return version, strings.Join(built, ", ")
}
