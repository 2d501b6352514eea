package protect

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Checker compares items with a baseline, caching what it can: the parsed
// baseline by its stat, each file's hash by (path, size, mtime, ctime,
// inode, device). An unchanged environment costs a few stat calls and no
// reads. Safe for concurrent use: checks are serialized. The zero value
// checks without a cache; NewChecker returns one with a cache.
type Checker struct {
	mu sync.Mutex
	m  measurer
	// the last baseline read, by its path and stat
	bPath string
	bKey  statKey
	b     *Baseline
	bErr  error
}

// NewChecker returns a Checker with an empty cache.
func NewChecker() *Checker {
	return &Checker{m: measurer{cache: map[string]*cached{}}}
}

// Check compares items with the baseline at baselinePath without a cache
// (every file read): for one-off checks such as `awbridge protect status`.
func Check(items Items, baselinePath string) Result {
	c := &Checker{}
	return c.Check(items, baselinePath)
}

// Check compares items with the baseline at baselinePath. Protection is
// configured when the baseline exists (or its state cannot be told) or
// items lists files or variables; without a baseline, Result says so and
// there are no diffs.
func (c *Checker) Check(items Items, baselinePath string) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := Result{Configured: len(items.Files) > 0 || len(items.Env) > 0} // the config lists items
	if baselinePath == "" {
		if r.Configured {
			r.Err = errors.New("protect: no state dir to keep a baseline in")
		}
		return r
	}
	fi, err := os.Stat(baselinePath)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return r
	case err != nil:
		// Permission denied on the state dir, an I/O error: we cannot tell
		// whether a baseline exists, so protection may be on and unchecked.
		r.Configured = true
		r.Err = &BaselineError{Path: baselinePath, Problem: "cannot tell whether it exists", Err: err}
		return r
	}
	r.Configured, r.BaselineExists = true, true
	b, err := c.baseline(baselinePath, fi)
	if err != nil {
		r.Err = err
		return r
	}
	r.CreatedAt = b.CreatedAt
	if err := items.Validate(); err != nil {
		r.Err = err
		return r
	}
	salt, _ := hex.DecodeString(b.Salt) // validated
	c.m.max = b.MaxFileBytes
	now := c.m.measure(items, salt)
	r.Checked = len(now)
	r.Diffs = compare(b.Entries, now)
	return r
}

// baseline returns the parsed baseline, reread only when its stat
// changed. The folder's mode is checked every time (one stat).
func (c *Checker) baseline(path string, fi fs.FileInfo) (*Baseline, error) {
	dir, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return nil, &BaselineError{Path: path, Problem: "cannot check its folder", Err: err}
	}
	if dirUnsafe(dir) {
		return nil, &BaselineError{Path: path, Problem: fmt.Sprintf("its folder is writable by other users (mode %04o)", dir.Mode().Perm())}
	}
	key := keyOf(fi)
	if c.bPath == path && c.bKey == key && (c.b != nil || c.bErr != nil) {
		return c.b, c.bErr
	}
	c.bPath, c.bKey = path, key
	c.b, c.bErr = readBaseline(path, fi, dir)
	return c.b, c.bErr
}

// compare lists how now differs from base, in now's order, then the
// baseline's items no longer listed.
func compare(base, now []Entry) []Diff {
	idx := make(map[[2]string]int, len(base))
	for i, e := range base {
		idx[identity(e.Kind, e.Name)] = i
	}
	used := make([]bool, len(base))
	var diffs []Diff
	for _, n := range now {
		i, ok := idx[identity(n.Kind, n.Name)]
		if !ok {
			diffs = append(diffs, Diff{Kind: n.Kind, Item: n.Name, Change: ChangeNotInBaseline,
				Detail: "take a new baseline with `awbridge protect snapshot`"})
			continue
		}
		used[i] = true
		if d, differs := diffEntry(base[i], n); differs {
			diffs = append(diffs, d)
		}
	}
	for i, b := range base {
		if !used[i] {
			diffs = append(diffs, Diff{Kind: b.Kind, Item: b.Name, Change: ChangeNoLongerListed})
		}
	}
	return diffs
}

// diffEntry compares one item's baseline entry b with its state now, n.
func diffEntry(b, n Entry) (Diff, bool) {
	d := Diff{Kind: n.Kind, Item: n.Name}
	if b.Name != n.Name {
		d.Change, d.Detail = ChangeMoved, "baseline: "+b.Name
		return d, true
	}
	there := func(s string) bool { return s == StatePresent || s == StateUnreadable || s == StateSet }
	switch {
	case !there(b.State) && !there(n.State):
		return d, false
	case !there(b.State):
		d.Change = ChangeAppeared
	case !there(n.State):
		d.Change = ChangeVanished
	case n.Kind == KindEnv:
		if b.HMAC == n.HMAC {
			return d, false
		}
		d.Change = ChangeChanged
	case n.State == StateUnreadable && b.State == StateUnreadable:
		return d, false // nothing more can be told
	case n.State == StateUnreadable:
		d.Change, d.Detail = ChangeUnreadable, n.Detail
	case b.State == StateUnreadable:
		d.Change, d.Detail = ChangeChanged, "unreadable in the baseline ("+b.Detail+"), readable now"
	case b.Size != n.Size:
		d.Change, d.Detail = ChangeChanged, fmt.Sprintf("size %d -> %d bytes", b.Size, n.Size)
	case b.SHA256 != n.SHA256:
		d.Change, d.Detail = ChangeChanged, "content differs"
	default:
		return d, false
	}
	return d, true
}
