package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/internal/artifactstest"
	"github.com/awbridge/awbridge/toolbus/artifacts"
)

// plantRuns plants old run folders below root, last written at mtime.
func plantRuns(t *testing.T, root string, mtime time.Time, traces ...string) {
	for _, trace := range traces {
		artifactstest.PlantRun(t, root, trace, 4, mtime)
	}
}

// pingOnly is a stdio session's input that writes no artifact.
var pingOnly = []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}

// A stdio session without a service prunes the artifacts, as serve does:
// a run older than artifacts.max_age is gone once the session ends, a
// young one stays. A second session within PruneEvery does not prune
// again (a run that became old meanwhile survives it); once the stamp is
// older than PruneEvery, the next session does.
func TestStdioPrunesArtifacts(t *testing.T) {
	srv, _ := recordedAW(t)
	root := t.TempDir()
	env := baseEnv(t, srv.URL, "AWBRIDGE_CONTEXT_ROOT="+root, "AWBRIDGE_ARTIFACTS_MAX_AGE=48h")
	old := time.Now().Add(-72 * time.Hour)
	plantRuns(t, root, old, "old-1")
	plantRuns(t, root, time.Now().Add(-time.Hour), "young")

	session(t, env, pingOnly)
	if got := artifactstest.Runs(t, root); !slices.Equal(got, []string{"young"}) {
		t.Fatalf("runs after the first session %v, want the old one pruned", got)
	}
	stamp := filepath.Join(root, "artifacts", artifacts.PruneStamp)
	fi, err := os.Lstat(stamp)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stamp %v %v, want a regular file, mode 0600", fi, err)
	}

	plantRuns(t, root, old, "old-2")
	session(t, env, pingOnly)
	if got := artifactstest.Runs(t, root); !slices.Equal(got, []string{"old-2", "young"}) {
		t.Fatalf("runs after a second session within the interval %v, want old-2 kept", got)
	}

	stale := time.Now().Add(-11 * time.Minute)
	if err := os.Chtimes(stamp, stale, stale); err != nil {
		t.Fatal(err)
	}
	session(t, env, pingOnly)
	if got := artifactstest.Runs(t, root); !slices.Equal(got, []string{"young"}) {
		t.Fatalf("runs after a session once the interval passed %v, want old-2 pruned", got)
	}
}

// Processes starting together prune once between them: four stdio
// sessions start at the same moment on a root holding 1,000 old runs (a
// pass takes long enough for them to overlap); one pass runs, the others
// find it claimed or done, and every old run is gone. The sessions stay
// open until the pass has ended, so that none is cut short by its session
// ending on a loaded machine.
func TestStdioSessionsStartingTogetherPruneOnce(t *testing.T) {
	srv, _ := recordedAW(t)
	root := t.TempDir()
	env := baseEnv(t, srv.URL, "AWBRIDGE_CONTEXT_ROOT="+root, "AWBRIDGE_LOG_LEVEL=debug")
	traces := make([]string, 1000)
	for i := range traces {
		traces[i] = "old-" + strconv.Itoa(i)
	}
	plantRuns(t, root, time.Now().Add(-8*24*time.Hour), traces...)

	const n = 4
	procs := make([]*proc, n)
	for i := range procs {
		procs[i] = start(t, env)
	}
	for _, p := range procs {
		p.ping() // each has started its engine (and so its pass) once it answers
	}
	stamp := filepath.Join(root, "artifacts", artifacts.PruneStamp)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if fi, err := os.Stat(stamp); err == nil && fi.Size() > 0 {
			break // a pass has ended
		}
		if time.Now().After(deadline) {
			t.Fatal("no prune pass ended within 30 s")
		}
	}
	passes := 0
	for _, p := range procs {
		p.close()
		for _, msg := range []string{`"artifacts pruned"`, `"artifacts: nothing to prune"`,
			`"artifacts: some runs could not be pruned"`, `"artifacts: prune pass stopped`} {
			passes += strings.Count(p.stderr.String(), msg)
		}
	}
	if passes != 1 {
		var all strings.Builder
		for _, p := range procs {
			all.WriteString(p.stderr.String())
		}
		t.Fatalf("%d prune passes among %d sessions starting together, want 1\n%s", passes, n, all.String())
	}
	if got := artifactstest.Runs(t, root); len(got) != 0 {
		t.Fatalf("%d runs left, want every old one pruned", len(got))
	}
}
