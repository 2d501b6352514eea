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
)

const (
	fileVersion  = 1
	tempPattern  = FileName + ".tmp-*"
	corruptInfix = ".corrupt-"
	// staleTempAge is how old a temp file must be for Open to remove it:
	// a younger one may be another process's write in progress, which
	// takes well under a second even for the largest file.
	staleTempAge = 5 * time.Minute
)

// writeLocked replaces the state file with the persistent scope as it will
// be after a change: entries for which skip reports true are left out and
// add, if not nil, is written under addKey. The caller holds wmu. Keys are
// validated ASCII without characters JSON escapes, so they are written as
// they are.
func (s *Store) writeLocked(skip func(string) bool, addKey string, add *entry) error {
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
	err := atomicfile.WriteFunc(s.path, atomicfile.Options{Pattern: tempPattern, FS: s.fs}, func(w io.Writer) error {
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
	if errors.As(err, &ae) {
		// A leftover temp file is removed at the next Open. After a failed
		// folder sync the new file is in place but may not survive a
		// crash: the Store keeps its old view, and the next write
		// rewrites the whole file from that view.
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
	return 2*int64(s.o.MaxScopeBytes) + 256*int64(s.o.MaxEntries) + 1<<20
}

// load prepares the state dir and loads the state file into s.pers.
func (s *Store) load() (warnings []string, err error) {
	warnings, err = s.prepareDir()
	if err != nil {
		return warnings, err
	}
	s.removeStaleTemps()

	f, fi, err := openNoFollow(s.path, false)
	if errors.Is(err, fs.ErrNotExist) {
		return warnings, nil
	}
	if err != nil {
		return warnings, &StorageError{Op: "open", Path: s.path, Err: err}
	}
	defer f.Close()
	if checkPerms && fi.Mode().Perm()&0o077 != 0 {
		if ownedByMe(fi) {
			if err := f.Chmod(0o600); err != nil { // fchmod: the file opened, never a link
				return warnings, &StorageError{Op: "chmod", Path: s.path, Err: err}
			}
			warnings = append(warnings, fmt.Sprintf("state file %s was readable by others (mode %04o); tightened it to 0600", s.path, fi.Mode().Perm()))
		} else {
			warnings = append(warnings, fmt.Sprintf("state file %s is readable by others (mode %04o) and belongs to another user; left as it is until the next write replaces it", s.path, fi.Mode().Perm()))
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, s.readCap()+1))
	if err != nil {
		return warnings, &StorageError{Op: "read", Path: s.path, Err: err}
	}
	var reason string
	if int64(len(data)) > s.readCap() {
		reason = fmt.Sprintf("larger than %d bytes", s.readCap())
	} else {
		var over bool
		reason, over = s.parse(data)
		if reason == "" {
			if over {
				warnings = append(warnings, fmt.Sprintf("state file %s holds more than the configured limits allow; it is loaded whole, and persistent writes that would grow it are refused until entries are removed", s.path))
			}
			return warnings, nil
		}
	}
	aside, err := s.keepAside()
	if err != nil {
		return warnings, err
	}
	warnings = append(warnings, fmt.Sprintf("state file %s is not a valid state document (%s); kept it as %s and started with an empty persistent scope", s.path, reason, aside))
	return warnings, nil
}

// parse decodes a state document into s.pers. It returns why the document
// is not valid ("" when it is; s.pers is untouched then) and whether it
// exceeds the configured limits. Reasons never quote keys or values.
func (s *Store) parse(data []byte) (reason string, over bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc fileDoc
	if err := dec.Decode(&doc); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return fmt.Sprintf("not JSON: syntax error at byte %d", se.Offset), false
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return "not JSON: empty or cut short", false
		default:
			return "not the shape of a state document", false
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return "data after the document", false
	}
	if doc.Version != fileVersion {
		return fmt.Sprintf("version %d, want %d", doc.Version, fileVersion), false
	}
	if doc.Entries == nil {
		return "no entries object", false
	}
	m := scopeMap{m: make(map[string]*entry, len(doc.Entries))}
	for k, fe := range doc.Entries {
		if k == "" || validKeyChars(k) >= 0 {
			return "an entry has an invalid key", false
		}
		if len(fe.Value) == 0 {
			return "an entry has no value", false
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, fe.Value); err != nil {
			return "an entry has an invalid value", false
		}
		e := &entry{value: buf.Bytes()}
		if fe.UpdatedAt != "" {
			t, err := time.Parse(time.RFC3339Nano, fe.UpdatedAt)
			if err != nil {
				return "an entry has an invalid updated_at", false
			}
			e.updated = t
			e.ts = t.UTC().Format(time.RFC3339Nano)
		}
		if len(k) > s.o.MaxKeyBytes || len(e.value) > s.o.MaxValueBytes {
			over = true
		}
		m.put(k, e)
	}
	if len(m.m) > s.o.MaxEntries || m.bytes > s.o.MaxScopeBytes {
		over = true
	}
	s.pers = m
	return "", over
}

// keepAside renames the state file to state.json.corrupt-<UTC timestamp>
// (with -N appended if that name is taken) and returns the new path.
func (s *Store) keepAside() (string, error) {
	base := s.path + corruptInfix + s.o.Now().UTC().Format("20060102T150405Z")
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
	if err := s.fs.Rename(s.path, name); err != nil {
		return "", &StorageError{Op: "keep aside", Path: s.path, Err: err}
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
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
	if !checkPerms || perm&0o077 == 0 {
		return nil, nil
	}
	if link {
		return []string{fmt.Sprintf("state dir %s is a symbolic link to a folder open to other users (mode %04o); a link is never chmodded, so it was left as it is; the state file itself is 0600", s.dir, perm)}, nil
	}
	if ownedByMe(fi) && s.onlyStateFiles() {
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
// file, its temp files and corrupted files kept aside.
func (s *Store) onlyStateFiles() bool {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		n := e.Name()
		if n != FileName && !strings.HasPrefix(n, FileName+corruptInfix) && !strings.HasPrefix(n, FileName+".tmp-") && !awbridgeFile(n) {
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
