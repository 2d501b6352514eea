package protect

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/awbridge/awbridge/internal/atomicfile"
	"github.com/awbridge/awbridge/internal/owner"
	"github.com/awbridge/awbridge/internal/text"
)

// baselineVersion is the format this package writes and reads.
const baselineVersion = 1

// Snapshot records the items into a new baseline at path, replacing any
// older one atomically, 0600 in a folder created 0700 when missing. An
// existing folder open to other users is tightened to 0700 when this user
// owns it (warnings say so); one this user does not own and others may
// write is refused. It reads every file afresh. Checks running meanwhile
// see the old or the new baseline, never a torn one.
func Snapshot(items Items, path string) (*Baseline, []string, error) {
	return snapshot(items, path, DefaultMaxFileBytes)
}

// snapshot is Snapshot hashing the first maxFileBytes of each file.
func snapshot(items Items, path string, maxFileBytes int64) (*Baseline, []string, error) {
	if err := items.Validate(); err != nil {
		return nil, nil, err
	}
	if path == "" || !filepath.IsAbs(path) {
		return nil, nil, fmt.Errorf("protect: baseline path %q is not absolute (is the state dir set?)", path)
	}
	salt := make([]byte, saltLen)
	if _, err := io.ReadFull(rand.Reader, salt); err != nil {
		return nil, nil, fmt.Errorf("protect: drawing a salt: %w", err)
	}
	m := &measurer{max: maxFileBytes}
	b := &Baseline{
		Version: baselineVersion, CreatedAt: time.Now().UTC().Truncate(time.Millisecond),
		Salt: hex.EncodeToString(salt), MaxFileBytes: maxFileBytes,
		Entries: m.measure(items, salt),
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("protect: encoding the baseline: %w", err)
	}
	data = append(data, '\n')
	warns, err := ensureDir(filepath.Dir(path))
	if err != nil {
		return nil, warns, err
	}
	if err := writeAtomic(path, data); err != nil {
		return nil, warns, err
	}
	return b, warns, nil
}

// ensureDir creates dir 0700 or checks an existing one.
func ensureDir(dir string) ([]string, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("protect: creating %s: %w", dir, err)
		}
		if err := os.Chmod(dir, 0o700); err != nil { // in case of an unusual umask
			return nil, fmt.Errorf("protect: %w", err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("protect: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("protect: %s is not a folder", dir)
	}
	perm := fi.Mode().Perm()
	if !owner.Checked || perm&0o077 == 0 {
		return nil, nil
	}
	if owner.Mine(fi) {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("protect: %w", err)
		}
		return []string{fmt.Sprintf("folder %s was open to other users (mode %04o); tightened it to 0700", dir, perm)}, nil
	}
	if dirUnsafe(fi) {
		return nil, fmt.Errorf("protect: folder %s is writable by other users and not mine (mode %04o): choose another state dir", dir, perm)
	}
	return nil, nil
}

// dirUnsafe reports whether others may replace files in a folder: group-
// or world-writable without the sticky bit.
func dirUnsafe(fi fs.FileInfo) bool {
	return owner.Checked && fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0
}

func writeAtomic(path string, data []byte) error {
	err := atomicfile.Write(path, data, atomicfile.Options{})
	var ae *atomicfile.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && ae.Op == atomicfile.OpSyncDir:
		return fmt.Errorf("protect: the baseline is written but its folder could not be synced: %w", ae.Err)
	case errors.As(err, &ae):
		return fmt.Errorf("protect: writing the baseline: %w", ae.Err)
	}
	return fmt.Errorf("protect: writing the baseline: %w", err)
}

// readBaseline reads and validates the baseline at path: owned by this
// user, not writable by others, in a folder others cannot write. fi is
// the file's stat (for the caller's cache).
func readBaseline(path string, fi fs.FileInfo, dir fs.FileInfo) (*Baseline, error) {
	if !fi.Mode().IsRegular() {
		return nil, &BaselineError{Path: path, Problem: "not a regular file"}
	}
	if owner.Checked {
		if !owner.Mine(fi) {
			return nil, &BaselineError{Path: path, Problem: "owned by another user; take a new one with `awbridge protect snapshot`"}
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return nil, &BaselineError{Path: path, Problem: fmt.Sprintf("writable by other users (mode %04o); take a new one with `awbridge protect snapshot`", fi.Mode().Perm())}
		}
		if dir != nil && dirUnsafe(dir) {
			return nil, &BaselineError{Path: path, Problem: fmt.Sprintf("its folder is writable by other users (mode %04o)", dir.Mode().Perm())}
		}
	}
	if fi.Size() > maxBaseline {
		return nil, &BaselineError{Path: path, Problem: fmt.Sprintf("larger than %d bytes", maxBaseline), Err: ErrCorruptBaseline}
	}
	f, err := openRead(path)
	if err != nil {
		return nil, &BaselineError{Path: path, Problem: "cannot read it", Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBaseline+1))
	if err != nil {
		return nil, &BaselineError{Path: path, Problem: "cannot read it", Err: err}
	}
	b, err := DecodeBaseline(data)
	if err != nil {
		return nil, &BaselineError{Path: path, Problem: "corrupt; take a new one with `awbridge protect snapshot`", Err: err}
	}
	return b, nil
}

// DecodeBaseline parses and validates a baseline document; its errors
// wrap ErrCorruptBaseline. Unknown fields are ignored.
func DecodeBaseline(data []byte) (*Baseline, error) {
	if len(data) > maxBaseline {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrCorruptBaseline, maxBaseline)
	}
	var b Baseline
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptBaseline, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the document", ErrCorruptBaseline)
	}
	if err := b.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptBaseline, err)
	}
	return &b, nil
}

func (b *Baseline) validate() error {
	if b.Version != baselineVersion {
		return fmt.Errorf("version %d, want %d", b.Version, baselineVersion)
	}
	if s, err := hex.DecodeString(b.Salt); err != nil || len(s) != saltLen {
		return errors.New("salt is not 32 bytes of hex")
	}
	if b.MaxFileBytes <= 0 || b.MaxFileBytes > 1<<30 {
		return fmt.Errorf("max_file_bytes %d out of range", b.MaxFileBytes)
	}
	if len(b.Entries) > maxEntries {
		return fmt.Errorf("%d entries, at most %d", len(b.Entries), maxEntries)
	}
	seen := map[[2]string]bool{}
	for i, e := range b.Entries {
		if err := e.validate(); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		id := identity(e.Kind, e.Name)
		if seen[id] {
			return fmt.Errorf("entry %d: %s %q repeated", i, e.Kind, text.Cut(e.Name, shownBytes))
		}
		seen[id] = true
	}
	return nil
}

func (e *Entry) validate() error {
	if e.Name == "" || len(e.Name) > maxNameLen {
		return errors.New("name empty or too long")
	}
	switch e.Kind {
	case KindConfig, KindExecutable, KindUnit, KindFile:
		switch e.State {
		case StatePresent:
			if !isHex64(e.SHA256) || e.Size < 0 {
				return errors.New("present file without a sha256 and size")
			}
		case StateAbsent, StateUnreadable:
		default:
			return fmt.Errorf("state %q for a file", text.Cut(e.State, shownBytes))
		}
	case KindEnv:
		switch e.State {
		case StateSet:
			if !isHex64(e.HMAC) {
				return errors.New("set variable without an hmac_sha256")
			}
		case StateUnset:
		default:
			return fmt.Errorf("state %q for a variable", text.Cut(e.State, shownBytes))
		}
	default:
		return fmt.Errorf("kind %q", text.Cut(e.Kind, shownBytes))
	}
	return nil
}

// isHex64 reports whether s is a SHA-256 in lower-case hex.
func isHex64(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32 && s == strings.ToLower(s)
}

// identity keys an item for comparison: config, executable and unit are
// one each (a new path is a move), files and variables are keyed by name.
func identity(kind, name string) [2]string {
	switch kind {
	case KindConfig, KindExecutable, KindUnit:
		return [2]string{kind, ""}
	}
	return [2]string{kind, name}
}
