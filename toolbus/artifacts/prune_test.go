package artifacts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/internal/artifactstest"
)

var (
	plantRun = artifactstest.PlantRun
	runsLeft = artifactstest.Runs
)

// Artifacts are bounded: whole runs go, by age and then oldest first by
// total size, and a run written in the last minutes stays whatever the
// limits.
func TestPruneByAgeAndSize(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	day := 24 * time.Hour
	type plant struct {
		trace string
		size  int
		age   time.Duration
	}
	tests := []struct {
		name      string
		maxAge    time.Duration
		maxBytes  int64
		runs      []plant
		left      []string
		removed   int
		freed     int64
		totalSeen int64
	}{
		{
			name:   "by age",
			maxAge: 7 * day,
			runs: []plant{
				{"r-10d", 1000, 10 * day}, {"r-8d", 1000, 8 * day}, {"r-6d", 1000, 6 * day},
				{"r-1d", 1000, day}, {"r-now", 1000, time.Minute},
			},
			left:    []string{"r-1d", "r-6d", "r-now"},
			removed: 2, freed: 2000, totalSeen: 5000,
		},
		{
			name:     "by size, oldest first",
			maxBytes: 250_000,
			runs: []plant{
				{"a", 100_000, 6 * time.Hour}, {"b", 100_000, 5 * time.Hour}, {"c", 100_000, 4 * time.Hour},
				{"d", 100_000, 3 * time.Hour}, {"e", 100_000, 2 * time.Hour}, {"f", 10_000, time.Minute},
			},
			left:    []string{"d", "e", "f"},
			removed: 3, freed: 300_000, totalSeen: 510_000,
		},
		{
			name:   "age and size together",
			maxAge: 7 * day, maxBytes: 150_000,
			runs: []plant{
				{"old", 1, 30 * day}, {"big", 100_000, day}, {"mid", 100_000, 12 * time.Hour},
				{"new", 10_000, time.Hour},
			},
			left:    []string{"mid", "new"},
			removed: 2, freed: 100_001, totalSeen: 210_001,
		},
		{
			name:     "recent runs stay over the budget",
			maxBytes: 1000,
			runs:     []plant{{"x", 5000, time.Minute}, {"y", 5000, 2 * time.Minute}, {"z", 5000, time.Hour}},
			left:     []string{"x", "y"},
			removed:  1, freed: 5000, totalSeen: 15000,
		},
		{
			name: "no limits: off",
			runs: []plant{{"ancient", 1 << 20, 3650 * day}},
			left: []string{"ancient"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, r := range tt.runs {
				plantRun(t, root, r.trace, r.size, now.Add(-r.age))
			}
			s := newStore(t, Options{Root: root, MaxAge: tt.maxAge, MaxBytes: tt.maxBytes, Now: func() time.Time { return now }})
			st, err := s.prune(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := runsLeft(t, root); !slices.Equal(got, tt.left) {
				t.Errorf("runs left %v, want %v", got, tt.left)
			}
			if tt.maxAge == 0 && tt.maxBytes == 0 {
				return
			}
			if st.Runs != len(tt.runs) || st.Bytes != tt.totalSeen || st.Removed != tt.removed || st.RemovedBytes != tt.freed || st.Failed != 0 {
				t.Errorf("stats %+v, want %d runs of %d bytes, %d removed freeing %d", st, len(tt.runs), tt.totalSeen, tt.removed, tt.freed)
			}
		})
	}
}

// A run a call is writing into right now is young again: writing one file
// below an old run keeps it.
func TestPruneAgeIsTheNewestFile(t *testing.T) {
	now := time.Now()
	root := t.TempDir()
	plantRun(t, root, "reused", 100, now.Add(-30*24*time.Hour))
	plantRun(t, root, "stale", 100, now.Add(-30*24*time.Hour))
	s := newStore(t, Options{Root: root, MaxAge: time.Hour})
	if _, err := s.Spill("reused", "s1", 1, []byte("written now")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := runsLeft(t, root); !slices.Equal(got, []string{"reused"}) {
		t.Errorf("runs left %v, want the one written now", got)
	}
}

// Prune never follows a symbolic link: a run that is a link is neither
// measured nor removed, what a link inside an old run points to survives
// the run's removal, and a runs folder that is a link is left alone.
func TestPruneNeverFollowsLinks(t *testing.T) {
	old := time.Now().Add(-30 * 24 * time.Hour)
	root := t.TempDir()
	outside := t.TempDir()
	precious := filepath.Join(outside, "precious")
	if err := os.WriteFile(precious, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	preciousDir := filepath.Join(outside, "dir")
	if err := os.MkdirAll(filepath.Join(preciousDir, "tool_calls"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{precious, preciousDir, outside} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	plantRun(t, root, "old", 10, old)
	runs := filepath.Join(root, "artifacts", "runs")
	oldCalls := filepath.Join(runs, "old", "tool_calls")
	if err := os.Symlink(precious, filepath.Join(oldCalls, "s2.context")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(preciousDir, filepath.Join(oldCalls, "s3")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(preciousDir, filepath.Join(runs, "linked")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{oldCalls, filepath.Dir(oldCalls)} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}

	s := newStore(t, Options{Root: root, MaxAge: time.Hour, MaxBytes: 1})
	st, err := s.prune(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != 1 || st.Bytes != 10 || st.Removed != 1 {
		t.Errorf("stats %+v, want one run of 10 bytes (links not measured), removed", st)
	}
	if got := runsLeft(t, root); !slices.Equal(got, []string{"linked"}) {
		t.Errorf("runs left %v, want only the link", got)
	}
	for _, p := range []string{precious, filepath.Join(preciousDir, "tool_calls")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("pruning reached outside the root: %v", err)
		}
	}

	// artifacts/runs itself a link: refused, nothing removed.
	root2 := t.TempDir()
	plantRun(t, outside, "victim", 10, old)
	if err := os.MkdirAll(filepath.Join(root2, "artifacts"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "artifacts", "runs"), filepath.Join(root2, "artifacts", "runs")); err != nil {
		t.Fatal(err)
	}
	s2 := newStore(t, Options{Root: root2, MaxAge: time.Hour})
	if _, err := s2.prune(context.Background()); !errors.Is(err, errNotPlainDir) {
		t.Errorf("Prune with runs a link = %v, want it refused", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "artifacts", "runs", "victim")); err != nil {
		t.Errorf("pruning followed artifacts/runs out of the root: %v", err)
	}
}

// Only folders named like a trace are runs: anything else in runs/ was
// not written by awbridge and stays.
func TestPruneLeavesForeignEntries(t *testing.T) {
	old := time.Now().Add(-30 * 24 * time.Hour)
	root := t.TempDir()
	plantRun(t, root, "run", 10, old)
	runs := filepath.Join(root, "artifacts", "runs")
	for _, name := range []string{"has space", "notes.txt"} {
		p := filepath.Join(runs, name)
		var err error
		if strings.HasSuffix(name, ".txt") {
			err = os.WriteFile(p, []byte("mine"), 0o600)
		} else {
			err = os.Mkdir(p, 0o700)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	s := newStore(t, Options{Root: root, MaxAge: time.Hour})
	if _, err := s.prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := runsLeft(t, root); !slices.Equal(got, []string{"has space", "notes.txt"}) {
		t.Errorf("runs left %v, want the foreign entries only", got)
	}
}
