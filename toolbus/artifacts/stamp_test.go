package artifacts

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// pruneIfDue runs s.PruneIfDue with a 10-minute interval, failing the
// test on an error.
func pruneIfDue(t *testing.T, s *Store) (PruneStats, bool) {
	t.Helper()
	st, ran, err := s.PruneIfDue(t.Context(), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return st, ran
}

// The stamp makes processes sharing a root prune at most once per
// interval: a pass runs when there is no stamp, then not while the stamp is
// younger than the interval (a run that became old meanwhile stays), then
// again once it is older, or dated in the future.
func TestPruneIfDueOncePerInterval(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	old := now.Add(-8 * 24 * time.Hour)
	s := newStore(t, Options{Root: root, MaxAge: 7 * 24 * time.Hour})
	plantRun(t, root, "old-1", 10, old)
	plantRun(t, root, "young", 10, now.Add(-time.Hour))

	if st, ran := pruneIfDue(t, s); !ran || st.Removed != 1 {
		t.Fatalf("first pass: ran %v, %+v; want it to run and remove old-1", ran, st)
	}
	stamp := filepath.Join(root, "artifacts", PruneStamp)
	fi, err := os.Lstat(stamp)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Size() == 0 || (runtime.GOOS != "windows" && fi.Mode().Perm() != FileMode) {
		t.Fatalf("stamp %v, size %d; want a dated regular file, mode %v", fi.Mode(), fi.Size(), FileMode)
	}
	if d := fi.ModTime().Sub(now); d < -time.Second || d > time.Minute {
		t.Fatalf("stamp dated %v, want about now (%v)", fi.ModTime(), now)
	}

	plantRun(t, root, "old-2", 10, old)
	if st, ran := pruneIfDue(t, s); ran {
		t.Fatalf("second pass within the interval ran: %+v", st)
	}
	if got := runsLeft(t, root); !slices.Equal(got, []string{"old-2", "young"}) {
		t.Fatalf("runs %v, want old-2 kept until the interval passes", got)
	}

	for _, at := range []time.Time{now.Add(-11 * time.Minute), now.Add(time.Hour)} {
		plantRun(t, root, "old-2", 10, old)
		if err := os.Chtimes(stamp, at, at); err != nil {
			t.Fatal(err)
		}
		if st, ran := pruneIfDue(t, s); !ran || st.Removed != 1 {
			t.Fatalf("stamp dated %v: ran %v, %+v; want old-2 removed", at, ran, st)
		}
		if got := runsLeft(t, root); !slices.Equal(got, []string{"young"}) {
			t.Fatalf("runs %v", got)
		}
	}
}

// A pass another holder of the stamp's lock is running is not run again,
// and a pass cancelled before it ended leaves the stamp undated, so the
// next one runs.
func TestPruneIfDueClaimAndCancel(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no cross-process lock on Windows")
	}
	root := t.TempDir()
	s := newStore(t, Options{Root: root, MaxAge: 7 * 24 * time.Hour})
	plantRun(t, root, "old", 10, time.Now().Add(-8*24*time.Hour))

	holder, err := openStamp(filepath.Join(root, "artifacts", PruneStamp))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := tryLock(holder); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	if st, ran := pruneIfDue(t, s); ran {
		t.Fatalf("ran while another holds the lock: %+v", st)
	}
	holder.Close()

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, ran, err := s.PruneIfDue(ctx, 10*time.Minute); !ran || err == nil {
		t.Fatalf("cancelled pass: ran %v, err %v; want it to start and stop", ran, err)
	}
	if got := runsLeft(t, root); !slices.Equal(got, []string{"old"}) {
		t.Fatalf("runs %v after a cancelled pass", got)
	}
	if st, ran := pruneIfDue(t, s); !ran || st.Removed != 1 {
		t.Fatalf("after a cancelled pass: ran %v, %+v; want the pass", ran, st)
	}
}

// The stamp is never followed through a link: a link planted in its place
// gives an error, what it points to is untouched and nothing is pruned.
// Without an artifacts folder nothing is created.
func TestPruneIfDueStampLinkAndNoFolder(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, Options{Root: root, MaxAge: time.Hour})
	if _, ran := pruneIfDue(t, s); ran {
		t.Fatal("ran without an artifacts folder")
	}
	if _, err := os.Lstat(filepath.Join(root, "artifacts")); !os.IsNotExist(err) {
		t.Fatalf("artifacts folder: %v, want none made", err)
	}

	plantRun(t, root, "old", 10, time.Now().Add(-48*time.Hour))
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(target, past, past); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(root, "artifacts", PruneStamp)); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if _, ran, err := s.PruneIfDue(t.Context(), 10*time.Minute); ran || err == nil {
		t.Fatalf("stamp is a link: ran %v, err %v; want an error and no pass", ran, err)
	}
	fi, err := os.Stat(target)
	if err != nil || fi.Size() != 0 || !fi.ModTime().Equal(past) {
		t.Fatalf("link target %v %v, want it untouched", fi, err)
	}
	if got := runsLeft(t, root); !slices.Equal(got, []string{"old"}) {
		t.Fatalf("runs %v", got)
	}
}
