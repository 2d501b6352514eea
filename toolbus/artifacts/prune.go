package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// PruneGrace is how recently a run folder must have been written for Prune
// to keep it whatever the limits: a call may be writing it right now.
const PruneGrace = 5 * time.Minute

// pruneDepth is how deep Prune looks below a run folder: the deepest file
// the Store writes is <trace>/tool_calls/<span>/<file>.
const pruneDepth = 3

// PruneStats says what one Prune found and did.
type PruneStats struct {
	Runs         int   // run folders found
	Bytes        int64 // the size of their files, before pruning
	Removed      int   // run folders removed
	RemovedBytes int64 // the size of their files
	Failed       int   // run folders that could not be measured or removed
}

// prune removes whole run folders (artifacts/runs/<trace>): first those
// last written more than Options.MaxAge ago, then the oldest while all of
// them together take more than Options.MaxBytes; never one written in the
// last PruneGrace. A run's age is that of its newest file or folder; its
// size that of its regular files. It looks only at folders named like a
// trace, never follows a symbolic link and never leaves artifacts/runs (it
// removes through an os.Root on it). It stops early, returning ctx's
// error, when ctx ends.
func (s *Store) prune(ctx context.Context) (PruneStats, error) {
	var st PruneStats
	runsPath := filepath.Join(s.root, "artifacts", "runs")
	want, err := os.Lstat(runsPath)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("artifacts: prune: %w", err)
	}
	if !want.IsDir() || want.Mode()&fs.ModeSymlink != 0 {
		return st, fmt.Errorf("artifacts: prune: %s: %w", runsPath, errNotPlainDir)
	}
	runs, err := os.OpenRoot(runsPath)
	if err != nil {
		return st, fmt.Errorf("artifacts: prune: %w", err)
	}
	defer runs.Close()
	if got, err := runs.Stat("."); err != nil || !os.SameFile(want, got) {
		return st, fmt.Errorf("artifacts: prune: %s changed while opening", runsPath)
	}
	entries, err := os.ReadDir(runsPath)
	if err != nil {
		return st, fmt.Errorf("artifacts: prune: %w", err)
	}

	type run struct {
		name   string
		bytes  int64
		newest time.Time
	}
	list := make([]run, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() || !ValidName(e.Name()) { // a symbolic link is not a folder here
			continue
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		r := run{name: e.Name()}
		fi, err := e.Info()
		if err == nil {
			r.newest = fi.ModTime()
			err = s.measure(filepath.Join(runsPath, r.name), 1, &r.bytes, &r.newest)
		}
		if err != nil {
			st.Failed++
			continue
		}
		list = append(list, r)
		st.Runs++
		st.Bytes += r.bytes
	}

	now := s.o.Now()
	recent := now.Add(-PruneGrace)
	// Oldest first; by name for runs of the same age.
	slices.SortFunc(list, func(a, b run) int {
		if c := a.newest.Compare(b.newest); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	total := st.Bytes
	for _, r := range list {
		if !r.newest.Before(recent) {
			break // this one and every later one are too young
		}
		tooOld := s.o.MaxAge > 0 && r.newest.Before(now.Add(-s.o.MaxAge))
		tooBig := s.o.MaxBytes > 0 && total > s.o.MaxBytes
		if !tooOld && !tooBig {
			break
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if err := runs.RemoveAll(r.name); err != nil {
			st.Failed++
			continue
		}
		st.Removed++
		st.RemovedBytes += r.bytes
		total -= r.bytes
	}
	return st, nil
}

// PruneStamp, in the artifacts folder, is dated when the last complete
// prune pass ended (its text says the same); empty, it has seen none.
const PruneStamp = ".pruned"

// PruneIfDue prunes unless a pass by any process sharing the root ended
// less than every ago, and says whether it ran. A pass is claimed with a
// non-blocking lock on the stamp (flock; elsewhere best effort), held
// until it ends, so two processes starting together prune once. The stamp
// is created empty (never through a link) and dated when a pass ends; a
// pass ctx cancelled leaves it as it was. A stamp dated in the future
// counts as old. Nothing runs without an artifacts folder or limits, or
// for a disabled Store, and nothing in a root another user could change.
func (s *Store) PruneIfDue(ctx context.Context, every time.Duration) (st PruneStats, ran bool, err error) {
	if !s.Enabled() || (s.o.MaxAge <= 0 && s.o.MaxBytes <= 0) {
		return st, false, nil
	}
	if err := checkRoot(s.root); err != nil {
		return st, false, err
	}
	art := filepath.Join(s.root, "artifacts")
	if !s.plainDir(art) {
		return st, false, nil
	}
	path := filepath.Join(art, PruneStamp)
	f, err := openStamp(path)
	if err != nil {
		return st, false, fmt.Errorf("artifacts: prune stamp: %w", err)
	}
	defer f.Close() // and the lock with it
	locked, err := tryLock(f)
	if err != nil || !locked { // !locked: another pass is running
		return st, false, err
	}
	// Read once the lock is ours: a pass may have ended meanwhile.
	fi, err := f.Stat()
	if err != nil {
		return st, false, fmt.Errorf("artifacts: prune stamp: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return st, false, fmt.Errorf("artifacts: prune stamp: %s is not a regular file", path)
	}
	if age := s.o.Now().Sub(fi.ModTime()); fi.Size() > 0 && age >= 0 && age < every {
		return st, false, nil
	}
	st, err = s.prune(ctx)
	if ctx.Err() != nil {
		return st, true, err
	}
	if serr := dateStamp(f, path, s.o.Now()); serr != nil && err == nil {
		err = fmt.Errorf("artifacts: prune stamp: %w", serr)
	}
	return st, true, err
}

// dateStamp writes t into the stamp as text and as its modification time.
func dateStamp(f *os.File, path string, t time.Time) error {
	text := []byte("last prune pass ended " + t.UTC().Format(time.RFC3339) + "\n")
	if _, err := f.WriteAt(text, 0); err != nil {
		return err
	}
	if err := f.Truncate(int64(len(text))); err != nil {
		return err
	}
	return touchStamp(f, path, t)
}

// measure adds up the regular files below the run folder dir and finds
// the newest modification time of its files and folders, without following
// symbolic links (an entry's info is its own, from Lstat). It reads
// metadata only, by path: what it measures never decides what is removed
// outside the root, since removal goes through the os.Root.
func (s *Store) measure(dir string, depth int, bytes *int64, newest *time.Time) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() && !e.IsDir() {
			continue // a link, a FIFO...: not the Store's
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) { // removed meanwhile
			continue
		}
		if err != nil {
			return err
		}
		if fi.ModTime().After(*newest) {
			*newest = fi.ModTime()
		}
		if fi.Mode().IsRegular() {
			*bytes += fi.Size()
		}
		if fi.IsDir() && depth < pruneDepth {
			if err := s.measure(filepath.Join(dir, e.Name()), depth+1, bytes, newest); err != nil {
				return err
			}
		}
	}
	return nil
}
