package protect

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"syscall"

	"github.com/awbridge/awbridge/internal/text"
)

// statKey identifies a file's version well enough to skip reading it
// again: an edit changes mtime or ctime, a replacement changes the inode.
type statKey struct {
	size, mtime, ctime int64
	ino, dev           uint64
	mode               fs.FileMode
}

func keyOf(fi fs.FileInfo) statKey {
	ino, dev, ctime := sysKey(fi)
	return statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: ctime, ino: ino, dev: dev, mode: fi.Mode()}
}

// cached is a file's hash for one statKey and cap.
type cached struct {
	key statKey
	max int64
	sum string
}

// measurer hashes items. A nil cache hashes every file every time; else
// the cache keeps the files of the last measure. Not safe for concurrent
// use (Checker serializes it).
type measurer struct {
	max         int64
	cache, prev map[string]*cached
	reads       int // files read (hashed), for tests
}

// measure records every item in order: config, executable, unit, files,
// variables. salt keys the variables' HMACs.
func (m *measurer) measure(it Items, salt []byte) []Entry {
	if m.cache != nil {
		m.prev, m.cache = m.cache, map[string]*cached{}
	}
	out := make([]Entry, 0, 3+len(it.Files)+len(it.Env))
	for _, p := range []struct{ kind, path string }{
		{KindConfig, it.ConfigFile}, {KindExecutable, it.Executable}, {KindUnit, it.Unit},
	} {
		if p.path != "" {
			out = append(out, m.file(p.kind, p.path))
		}
	}
	seen := map[string]bool{}
	for _, f := range it.Files {
		if !seen[f] {
			seen[f] = true
			out = append(out, m.file(KindFile, f))
		}
	}
	clear(seen)
	for _, n := range it.Env {
		if !seen[n] {
			seen[n] = true
			out = append(out, envEntry(n, it.Lookup, salt))
		}
	}
	m.prev = nil
	return out
}

// envEntry records a variable: unset, or set with its HMAC. The value is
// read here and goes nowhere else.
func envEntry(name string, lookup func(string) (string, bool), salt []byte) Entry {
	e := Entry{Kind: KindEnv, Name: name, State: StateUnset}
	if lookup == nil {
		return e
	}
	if v, ok := lookup(name); ok {
		e.State, e.HMAC = StateSet, envHMAC(salt, name, v)
	}
	return e
}

func envHMAC(salt []byte, name, value string) string {
	h := hmac.New(sha256.New, salt)
	io.WriteString(h, name)
	h.Write([]byte{0})
	io.WriteString(h, value)
	return hex.EncodeToString(h.Sum(nil))
}

// file records one file: present with its hash, absent, or unreadable.
func (m *measurer) file(kind, path string) Entry {
	e := Entry{Kind: kind, Name: path}
	f, err := openRead(path)
	if err != nil {
		return m.fileErr(e, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return m.fileErr(e, path, err)
	}
	if !fi.Mode().IsRegular() {
		e.State, e.Detail = StateUnreadable, "not a regular file"
		return e
	}
	key := keyOf(fi)
	e.State, e.Size, e.Truncated = StatePresent, fi.Size(), fi.Size() > m.max
	if c := m.prev[path]; c != nil && c.key == key && c.max == m.max {
		m.cache[path] = c
		e.SHA256 = c.sum
		return e
	}
	h := sha256.New()
	m.reads++
	if _, err := io.Copy(h, io.LimitReader(f, m.max)); err != nil {
		return m.fileErr(Entry{Kind: kind, Name: path}, path, err)
	}
	e.SHA256 = hex.EncodeToString(h.Sum(nil))
	if m.cache != nil {
		m.cache[path] = &cached{key: key, max: m.max, sum: e.SHA256}
	}
	return e
}

func (m *measurer) fileErr(e Entry, path string, err error) Entry {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// ENOTDIR: a path component is a file, so the item cannot exist.
		e.State = StateAbsent
		return e
	}
	e.State = StateUnreadable
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	e.Detail = text.Cut(err.Error(), shownBytes)
	return e
}
