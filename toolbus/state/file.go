package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/awbridge/awbridge/internal/atomicfile"
	"github.com/awbridge/awbridge/internal/owner"
)

const (
	fileVersion  = 1
	tempPattern  = FileName + ".tmp-*"
	corruptInfix = ".corrupt-"
	// lockName is the file every process locks around reading and
	// replacing the state file. It stays empty and is never removed: a
	// process could otherwise lock a file already unlinked while another
	// locks its replacement.
	lockName = FileName + ".lock"
	// staleTempAge is how old a temp file must be for Open to remove it:
	// a younger one may be another process's write in progress, which
	// takes well under a second even for the largest file.
	staleTempAge = 5 * time.Minute
)

// diskStamp identifies the version of the state file the persistent view
// was last read from or written as: every write puts a new file in place
// (by rename), so another version is another file, or one of another
// size or modification time. fi is nil when there was no file; bad says
// the file was not a valid state document (it is then kept aside before
// the next write replaces it).
type diskStamp struct {
	fi  fs.FileInfo
	bad bool
}

// changedSince reports whether the file fi (from Lstat) is another version
// than d. A nil d (never read) is always another.
func (d *diskStamp) changedSince(fi fs.FileInfo) bool {
	return d == nil || d.fi == nil || fi.Size() != d.fi.Size() || !fi.ModTime().Equal(d.fi.ModTime()) || !sameFile(fi, d.fi)
}

// lock takes the state dir's lock file, waiting while another process
// (or another Store) holds it, and returns the function that releases
// it. It is held only around reading and replacing the state file. The
// lock file is created 0600 and never opened through a symbolic link.
func (s *Store) lock() (unlock func(), err error) {
	name := filepath.Join(s.dir, lockName)
	f, err := os.OpenFile(name, os.O_RDONLY|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return nil, &StorageError{Op: "lock", Path: name, Err: err}
	}
	fi, err := f.Stat()
	if err == nil {
		var lfi fs.FileInfo
		if lfi, err = os.Lstat(name); err == nil && (lfi.Mode()&fs.ModeSymlink != 0 || !os.SameFile(lfi, fi)) {
			err = ErrSymlink // Windows has no O_NOFOLLOW
		} else if err == nil && !fi.Mode().IsRegular() {
			err = errNotRegular
		}
	}
	if err == nil {
		err = lockFile(f)
	}
	if err != nil {
		f.Close()
		return nil, &StorageError{Op: "lock", Path: name, Err: err}
	}
	return func() { f.Close() }, nil
}

// change runs a persistent change holding wmu and the lock, with the view
// brought up to date with the file first.
func (s *Store) change(apply func() error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.syncLocked(true); err != nil {
		return err
	}
	return apply()
}

// commit replaces the state file with the persistent scope as a change
// leaves it (entries for which skip reports true left out, add, if not
// nil, put under addKey), then applies the change to the view. The caller
// is in change. Keys are validated ASCII without characters JSON escapes,
// so they are written as they are.
func (s *Store) commit(skip func(string) bool, addKey string, add *entry) error {
	keys := make([]string, 0, len(s.pers.m)+1)
	for k := range s.pers.m {
		if (skip != nil && skip(k)) || (add != nil && k == addKey) {
			continue
		}
		keys = append(keys, k)
	}
	if add != nil {
		keys = append(keys, addKey)
	}
	sort.Strings(keys)

	size := s.pers.bytes + 64*len(keys) + 64
	size = max(4<<10, min(size, 64<<10))
	err := atomicfile.WriteFunc(s.path, atomicfile.Options{Pattern: tempPattern, FS: s.o.fs}, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, size)
		bw.WriteString(`{"version":1,"entries":{`)
		for i, k := range keys {
			e := s.pers.m[k]
			if add != nil && k == addKey {
				e = add
			}
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n\"")
			bw.WriteString(k)
			bw.WriteString(`":{"value":`)
			bw.Write(e.value)
			if e.ts != "" {
				bw.WriteString(`,"updated_at":"`)
				bw.WriteString(e.ts)
				bw.WriteByte('"')
			}
			bw.WriteByte('}')
		}
		bw.WriteString("\n}}\n")
		return bw.Flush()
	})
	var ae *atomicfile.Error
	if err == nil || errors.As(err, &ae) && ae.Op == atomicfile.OpSyncDir {
		s.noteWritten()
	}
	if err == nil {
		s.mu.Lock()
		for k := range s.pers.m {
			if skip != nil && skip(k) {
				s.pers.del(k)
			}
		}
		if add != nil {
			s.pers.put(addKey, add)
		}
		s.mu.Unlock()
	}
	if errors.As(err, &ae) {
		// A leftover temp file is removed at the next Open. After a failed
		// folder sync the new file is in place but may not survive a
		// crash: the Store keeps its old view (the file is noted as
		// its own, not read back), and the next write rewrites the
		// whole file from that view.
		op := ae.Op
		if op == atomicfile.OpCreate {
			op = "create temp file in"
		}
		return &StorageError{Op: op, Path: ae.Path, Err: ae.Err}
	}
	return err
}

// fileDoc is the state file's shape.
type fileDoc struct {
	Version int                  `json:"version"`
	Entries map[string]fileEntry `json:"entries"`
}

type fileEntry struct {
	Value     json.RawMessage `json:"value"`
	UpdatedAt string          `json:"updated_at"`
}

// readCap is the largest state file Open reads: a file written within the
// limits is far smaller; a larger one is kept aside rather than loaded.
func (s *Store) readCap() int64 {
	return 2*int64(s.o.lim.scopeBytes) + 256*int64(s.o.lim.entries) + 1<<20
}

// load prepares the state dir and loads the state file, if there is one,
// into s.pers, holding the lock (or without it, with a warning, where the
// lock file cannot be created: a read-only state dir).
func (s *Store) load() (warnings []string, err error) {
	warnings, err = s.prepareDir()
	if err != nil {
		return warnings, err
	}
	s.removeStaleTemps()
	if _, err := os.Lstat(s.path); errors.Is(err, fs.ErrNotExist) {
		return warnings, nil // nothing to read: no lock file yet
	}
	if unlock, err := s.lock(); err != nil {
		warnings = append(warnings, fmt.Sprintf("state file %s read without its lock (%v): changes will fail until the lock file can be made", s.path, err))
	} else {
		defer unlock()
	}

	m, fi, reason, over, err := s.readFile(func(f *os.File, fi fs.FileInfo) error {
		if !owner.Checked || fi.Mode().Perm()&0o077 == 0 {
			return nil
		}
		if !owner.Mine(fi) {
			warnings = append(warnings, fmt.Sprintf("state file %s is readable by others (mode %04o) and belongs to another user; left as it is until the next write replaces it", s.path, fi.Mode().Perm()))
			return nil
		}
		if err := f.Chmod(0o600); err != nil { // fchmod: the file opened, never a link
			return &StorageError{Op: "chmod", Path: s.path, Err: err}
		}
		warnings = append(warnings, fmt.Sprintf("state file %s was readable by others (mode %04o); tightened it to 0600", s.path, fi.Mode().Perm()))
		return nil
	})
	if err != nil || fi == nil {
		return warnings, err
	}
	if reason == "" {
		if over {
			warnings = append(warnings, fmt.Sprintf("state file %s holds more than the configured limits allow; it is loaded whole, and persistent writes that would grow it are refused until entries are removed", s.path))
		}
		s.pers = m
		s.disk.Store(&diskStamp{fi: fi})
		return warnings, nil
	}
	aside, err := s.keepAside()
	if err != nil {
		return warnings, err
	}
	warnings = append(warnings, fmt.Sprintf("state file %s is not a valid state document (%s); kept it as %s and started with an empty persistent scope", s.path, reason, aside))
	return warnings, nil
}

// readFile reads the state file: its entries, the version read (nil when
// there is none), why it is not a valid state document ("" when it is) and
// whether it exceeds the limits. opened, when set, sees the open file
// first. Only a file that cannot be opened or read is an error.
func (s *Store) readFile(opened func(*os.File, fs.FileInfo) error) (m scopeMap, fi fs.FileInfo, reason string, over bool, err error) {
	f, fi, err := openNoFollow(s.path, false)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil, "", false, nil
	}
	if err != nil {
		return m, nil, "", false, &StorageError{Op: "open", Path: s.path, Err: err}
	}
	defer f.Close()
	if opened != nil {
		if err := opened(f, fi); err != nil {
			return m, nil, "", false, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, s.readCap()+1))
	if err != nil {
		return m, nil, "", false, &StorageError{Op: "read", Path: s.path, Err: err}
	}
	if int64(len(data)) > s.readCap() {
		return m, fi, fmt.Sprintf("larger than %d bytes", s.readCap()), false, nil
	}
	m, reason, over = s.parse(data)
	return m, fi, reason, over, nil
}

// syncLocked brings the persistent view up to what the state file holds
// when the file is another version than the one the view was last read
// from or written as: another process (or Store) wrote it. The caller
// holds wmu and the lock. A missing file leaves the view as it is (the
// next write puts it back whole); so does a file that is not a valid
// state document, which a write (forWrite) first keeps aside, as Open
// does, so no one's data is overwritten unseen.
func (s *Store) syncLocked(forWrite bool) error {
	d := s.disk.Load()
	fi, err := os.Lstat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &StorageError{Op: "stat", Path: s.path, Err: err}
	}
	if !d.changedSince(fi) && !(forWrite && d.bad) {
		return nil
	}
	m, fi, reason, _, err := s.readFile(nil)
	if err != nil || fi == nil {
		return err
	}
	if reason != "" {
		if !forWrite {
			s.disk.Store(&diskStamp{fi: fi, bad: true})
			return nil
		}
		if _, err := s.keepAside(); err != nil {
			return err
		}
		s.disk.Store(&diskStamp{})
		return nil
	}
	s.mu.Lock()
	s.pers = m
	s.mu.Unlock()
	s.disk.Store(&diskStamp{fi: fi})
	return nil
}

// noteWritten records the state file this store just put in place as the
// version its view matches. The caller holds the lock.
func (s *Store) noteWritten() {
	fi, err := os.Lstat(s.path)
	if err != nil {
		s.disk.Store(nil) // unknown: the next read looks again
		return
	}
	s.disk.Store(&diskStamp{fi: fi})
}

// refresh makes a read see what other processes wrote: when the state file
// is another version than the view's (one Lstat, the only cost when
// nothing changed), it re-reads it, without the file lock (a rename never
// tears the file, and a read must never wait for another process, which
// may be stopped while it holds the lock). A change of this process in
// progress syncs the view itself: the read then answers from the view as
// it is. Failures leave the view as it is; the next change reports them.
func (s *Store) refresh() {
	fi, err := os.Lstat(s.path)
	if err != nil || !s.disk.Load().changedSince(fi) {
		return
	}
	if !s.wmu.TryLock() {
		return
	}
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return
	}
	_ = s.syncLocked(false)
}

// parse decodes a state document. It returns its entries, or why the
// document is not valid ("" when it is), and whether it exceeds the
// configured limits. Reasons never quote keys or values.
func (s *Store) parse(data []byte) (m scopeMap, reason string, over bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc fileDoc
	if err := dec.Decode(&doc); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return m, fmt.Sprintf("not JSON: syntax error at byte %d", se.Offset), false
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return m, "not JSON: empty or cut short", false
		default:
			return m, "not the shape of a state document", false
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return m, "data after the document", false
	}
	if doc.Version != fileVersion {
		return m, fmt.Sprintf("version %d, want %d", doc.Version, fileVersion), false
	}
	if doc.Entries == nil {
		return m, "no entries object", false
	}
	m = scopeMap{m: make(map[string]*entry, len(doc.Entries))}
	for k, fe := range doc.Entries {
		if k == "" || validKeyChars(k) >= 0 {
			return m, "an entry has an invalid key", false
		}
		if len(fe.Value) == 0 {
			return m, "an entry has no value", false
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, fe.Value); err != nil {
			return m, "an entry has an invalid value", false
		}
		e := &entry{value: buf.Bytes()}
		if fe.UpdatedAt != "" {
			t, err := time.Parse(time.RFC3339Nano, fe.UpdatedAt)
			if err != nil {
				return m, "an entry has an invalid updated_at", false
			}
			e.updated = t
			e.ts = t.UTC().Format(time.RFC3339Nano)
		}
		if len(k) > s.o.lim.keyBytes || len(e.value) > s.o.lim.valueBytes {
			over = true
		}
		m.put(k, e)
	}
	if len(m.m) > s.o.lim.entries || m.bytes > s.o.lim.scopeBytes {
		over = true
	}
	return m, "", over
}

// keepAside renames the state file to state.json.corrupt-<UTC timestamp>
// (with -N appended if that name is taken) and returns the new path.
func (s *Store) keepAside() (string, error) {
	base := s.path + corruptInfix + s.o.now().UTC().Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if i > 1000 {
			return "", &StorageError{Op: "keep aside", Path: s.path, Err: errors.New("too many corrupted files kept aside")}
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
	if err := s.o.fs.Rename(s.path, name); err != nil {
		return "", &StorageError{Op: "keep aside", Path: s.path, Err: err}
	}
	if err := s.o.fs.SyncDir(s.dir); err != nil {
		return "", &StorageError{Op: "sync dir", Path: s.dir, Err: err}
	}
	return name, nil
}

// prepareDir creates the state dir 0700, or checks an existing one: looser
// permissions are tightened when the dir is ours (our user owns it and it
// holds nothing but state files), else reported. A chmod goes through an
// open handle, never through a symbolic link: a state dir that is a link
// is used as it is.
func (s *Store) prepareDir() ([]string, error) {
	lfi, err := os.Lstat(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, &StorageError{Op: "create dir", Path: s.dir, Err: err}
		}
		if err := chmodNoFollow(s.dir, 0o700); err != nil { // in case of an unusual umask
			return nil, &StorageError{Op: "chmod", Path: s.dir, Err: err}
		}
		return nil, nil
	}
	if err != nil {
		return nil, &StorageError{Op: "stat", Path: s.dir, Err: err}
	}
	fi := lfi
	link := lfi.Mode()&fs.ModeSymlink != 0
	if link { // a state dir the person linked elsewhere: used, never chmodded
		if fi, err = os.Stat(s.dir); err != nil {
			return nil, &StorageError{Op: "stat", Path: s.dir, Err: err}
		}
	}
	if !fi.IsDir() {
		return nil, &StorageError{Op: "open dir", Path: s.dir, Err: errors.New("not a directory")}
	}
	perm := fi.Mode().Perm()
	if !owner.Checked || perm&0o077 == 0 {
		return nil, nil
	}
	if link {
		return []string{fmt.Sprintf("state dir %s is a symbolic link to a folder open to other users (mode %04o); a link is never chmodded, so it was left as it is; the state file itself is 0600", s.dir, perm)}, nil
	}
	if owner.Mine(fi) && s.onlyStateFiles() {
		if err := chmodNoFollow(s.dir, 0o700); err != nil {
			return nil, &StorageError{Op: "chmod", Path: s.dir, Err: err}
		}
		return []string{fmt.Sprintf("state dir %s was open to other users (mode %04o); tightened it to 0700", s.dir, perm)}, nil
	}
	return []string{fmt.Sprintf("state dir %s is open to other users (mode %04o) and is shared with other files or owned by another user, so it was left as it is; the state file itself is 0600", s.dir, perm)}, nil
}

// openNoFollow opens name for reading, never through a symbolic link: a
// link is ErrSymlink. It must be a folder when dir is set, else a regular
// file (errNotRegular). The info returned is the opened file's own.
func openNoFollow(name string, dir bool) (*os.File, fs.FileInfo, error) {
	lfi, err := os.Lstat(name)
	switch {
	case err != nil:
		return nil, nil, err
	case lfi.Mode()&fs.ModeSymlink != 0:
		return nil, nil, ErrSymlink
	case dir && !lfi.IsDir():
		return nil, nil, errors.New("not a directory")
	case !dir && !lfi.Mode().IsRegular():
		return nil, nil, errNotRegular
	}
	f, err := os.OpenFile(name, os.O_RDONLY|oNoFollow, 0) // fails on a link swapped in since
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !os.SameFile(lfi, fi) {
		err = errors.New("changed while opening")
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// chmodNoFollow sets the folder name's mode through an open handle
// (fchmod), never through a symbolic link.
func chmodNoFollow(name string, mode fs.FileMode) error {
	f, _, err := openNoFollow(name, true)
	if err != nil {
		return err
	}
	err = f.Chmod(mode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// CheckFile tells, without opening it, whether Open would refuse the state
// file in dir: the *StorageError Open would return when it is a symbolic
// link (its cause is ErrSymlink) or not a regular file; nil otherwise, also
// when there is no such file.
func CheckFile(dir string) error {
	if dir == "" {
		return nil
	}
	p := filepath.Join(filepath.Clean(dir), FileName)
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return &StorageError{Op: "open", Path: p, Err: ErrSymlink}
	case !fi.Mode().IsRegular():
		return &StorageError{Op: "open", Path: p, Err: errNotRegular}
	}
	return nil
}

// onlyStateFiles reports whether the state dir holds nothing but the state
// file, its lock and temp files and corrupted files kept aside.
func (s *Store) onlyStateFiles() bool {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		n := e.Name()
		if n != FileName && n != lockName && !strings.HasPrefix(n, FileName+corruptInfix) && !strings.HasPrefix(n, FileName+".tmp-") && !awbridgeFile(n) {
			return false
		}
	}
	return true
}

// removeStaleTemps removes temp files a crash left behind: those older
// than staleTempAge. A younger one may be another process's write in
// progress, about to be renamed over the state file. Remove never follows
// a link.
func (s *Store) removeStaleTemps() {
	names, _ := filepath.Glob(filepath.Join(s.dir, tempPattern))
	for _, n := range names {
		if fi, err := os.Lstat(n); err == nil && time.Since(fi.ModTime()) > staleTempAge {
			_ = os.Remove(n)
		}
	}
}

// awbridgeFile reports whether n is one of awbridge's other private files
// that share the state dir (the protection baseline, the HTTP token).
func awbridgeFile(n string) bool {
	switch {
	case n == "protect-baseline.json", strings.HasPrefix(n, ".protect-baseline.json.tmp-"),
		n == "http-token", strings.HasPrefix(n, ".http-token"):
		return true
	}
	return false
}
