// Package artifactstest plants run folders under a context root as
// toolbus/artifacts lays them out, with the times a test chooses, and
// lists them: for tests of pruning. For tests only.
package artifactstest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// PlantRun writes the run folder artifacts/runs/<trace> below root with one
// call (a .context file and a result.json of size bytes between them),
// every file and folder last modified at mtime.
func PlantRun(tb testing.TB, root, trace string, size int, mtime time.Time) {
	tb.Helper()
	calls := filepath.Join(root, "artifacts", "runs", trace, "tool_calls")
	span := filepath.Join(calls, "s1")
	if err := os.MkdirAll(span, 0o700); err != nil {
		tb.Fatal(err)
	}
	ctxFile := filepath.Join(calls, "s1.context")
	jsonFile := filepath.Join(span, "result.json")
	if err := os.WriteFile(ctxFile, make([]byte, size/2), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(jsonFile, make([]byte, size-size/2), 0o600); err != nil {
		tb.Fatal(err)
	}
	// Deepest first: writing in a folder changes its time.
	for _, p := range []string{ctxFile, jsonFile, span, calls, filepath.Dir(calls)} {
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			tb.Fatal(err)
		}
	}
}

// Runs lists what artifacts/runs below root holds (run folders and
// anything else), sorted.
func Runs(tb testing.TB, root string) []string {
	tb.Helper()
	ents, err := os.ReadDir(filepath.Join(root, "artifacts", "runs"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}
