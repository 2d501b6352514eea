package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/internal/atomicfile"
)

// tmpDir is the folder, below artifacts/, where every file is written before
// its rename into place: a writer killed mid-write leaves debris there only.
const tmpDir = ".tmp"

// staleTemp is the age beyond which Open removes a temp or probe file: the
// debris of a crashed writer. Younger ones may belong to another process
// writing below the same root right now (a write takes milliseconds).
const staleTemp = 10 * time.Minute

// probePrefix starts the name of Open's writability probe.
const probePrefix = ".awbridge-probe-"

// Limits of what a Store writes and reads.
const (
	// MaxFileBytes is the largest file the Store writes; a bigger one is
	// refused with ErrTooLarge.
	MaxFileBytes = 8 << 20
	// MaxReadBytes is the most Read returns, and what it returns when not
	// told: the artifacts tool's max_bytes.
	MaxReadBytes = 16 << 10
	// maxListItems caps the entries List returns.
	maxListItems = 1000
)

// Modes of what the Store writes.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// Options configures a Store. Zero fields take their defaults.
type Options struct {
	// Root is the context root, already resolved by config (flag >
	// AWBRIDGE_CONTEXT_ROOT > config > SF_CONTEXT_REPO_ROOT >
	// SENTRYFROGG_CONTEXT_REPO_ROOT). "" disables artifacts.
	Root string
	// FS performs every file operation. Default OSFS.
	FS FS
	// Now is the clock of the startup sweep and of Prune (default
	// time.Now).
	Now func() time.Time
	// MaxAge and MaxBytes bound what Prune keeps: run folders last
	// written more than MaxAge ago go, then the oldest ones while all of
	// them together take more than MaxBytes. 0 means no such limit.
	MaxAge   time.Duration
	MaxBytes int64
	// Logger hears when writes start failing (at most once a minute)
	// and when it works again, never once per call: a full disk must not
	// flood the log.
	Logger zerolog.Logger
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = OSFS{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Errors callers branch on.
var (
	// ErrDisabled: the store has no usable root.
	ErrDisabled = errors.New("artifacts are disabled")
	// ErrNotFound: no artifact at that URI, or no artifacts for that trace.
	ErrNotFound = errors.New("artifact not found")
	// ErrTooLarge: the data is over MaxFileBytes.
	ErrTooLarge = errors.New("artifact too large")
	// ErrInvalidMode: Read was given a mode other than get, head or tail.
	ErrInvalidMode = errors.New("invalid read mode")
	// errNotPlainDir: a folder on the way is a symlink or not a folder.
	errNotPlainDir = errors.New("not a plain folder")
)

// WriteError is a failed write. Nothing is left behind: the temp file is
// removed, and WriteCall removes the first file when the second fails.
// Err is the cause (an *fs.PathError, ErrTooLarge, ErrInvalidName, ...):
// errors.Is(err, syscall.ENOSPC) tells a full disk.
type WriteError struct {
	Op   string // validate, limit, mkdir, create, chmod, write, sync, close, rename
	Path string // the artifact's path relative to the root, or "" before it is known
	Err  error
}

func (e *WriteError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("artifacts: %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("artifacts: write %s: %s: %v", e.Path, e.Op, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// Store writes and reads the artifacts under one context root. Safe for
// concurrent use. A nil *Store is a disabled one. Two calls writing the
// same trace and span race, and the last rename wins; each file stays
// whole.
type Store struct {
	root   string // resolved absolute root; "" when disabled
	prefix string // root ending with a separator
	tmp    string // root/artifacts/.tmp
	o      Options

	tmpReady atomic.Bool // tmp is known to exist
	refused  error       // the *RootError Open refused the root with, if any

	failing  atomic.Bool  // the last write (WriteCall, Spill) failed
	failed   atomic.Int64 // writes failed since the last success
	warned   atomic.Bool  // the current failure was logged
	lastWarn atomic.Int64 // when the last failure was logged (unix ns)
}

// Refused is the *RootError Open refused the root or its artifacts folder
// with (another user could change it), nil otherwise. Safe for concurrent
// use: it is set once, by Open.
func (s *Store) Refused() error { return s.refused }

// Open checks the root and returns a Store. A root that is missing, not a
// folder, or not writable, and a root or artifacts folder that another user
// could change (see checkRoot), give a disabled Store and one warning to
// log, "artifacts are off: <why>"; an empty root gives a disabled Store and
// no warning. Open never fails. It writes and removes one probe file to
// test that the root is writable.
func Open(o Options) (*Store, string) {
	o = o.withDefaults()
	s := &Store{o: o}
	if o.Root == "" {
		return s, ""
	}
	warn := func(format string, a ...any) (*Store, string) {
		msg := "artifacts are off: " + fmt.Sprintf(format, a...)
		return s, strings.Map(func(r rune) rune { // one line, whatever the path holds
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, msg)
	}
	abs, err := filepath.Abs(o.Root)
	if err != nil {
		return warn("context root %q: %v", o.Root, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return warn("context root %q does not exist", o.Root)
		}
		return warn("context root %q: %v", o.Root, err)
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return warn("context root %q: %v", o.Root, err)
	}
	if !fi.IsDir() {
		return warn("context root %q is not a folder", o.Root)
	}
	if err := checkFolder(root, fi); err != nil {
		s.refused = err
		return warn("%v", err)
	}
	probeDir := root
	art := filepath.Join(root, "artifacts")
	switch fi, err := os.Lstat(art); {
	case err == nil && (fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir()):
		return warn("%q is a symbolic link or not a folder", art)
	case err == nil:
		if err := checkFolder(art, fi); err != nil {
			s.refused = err
			return warn("%v", err)
		}
		probeDir = art
	case !errors.Is(err, fs.ErrNotExist):
		return warn("%q: %v", art, err)
	}
	f, err := o.FS.CreateTemp(probeDir, probePrefix+"*")
	if err != nil {
		return warn("folder %q is not writable: %v", probeDir, err)
	}
	name := f.Name()
	cerr := f.Close()
	rerr := o.FS.Remove(name)
	if cerr != nil {
		return warn("folder %q is not writable: %v", probeDir, cerr)
	}
	if rerr != nil {
		return warn("folder %q is not writable: %v", probeDir, rerr)
	}
	s.root, s.prefix = root, root
	if !strings.HasSuffix(s.prefix, string(filepath.Separator)) {
		s.prefix += string(filepath.Separator)
	}
	s.tmp = filepath.Join(art, tmpDir)
	s.sweep(probeDir, probePrefix)
	if s.plainDir(art) && s.plainDir(s.tmp) {
		s.sweep(s.tmp, "")
	}
	return s, ""
}

// plainDir reports whether dir is a real folder, not a symbolic link: the
// sweep never follows a link out of the root.
func (s *Store) plainDir(dir string) bool {
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0
}

// sweep removes the files of dir whose names start with prefix and that
// are older than staleTemp: what a crashed writer left. Best effort.
func (s *Store) sweep(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := s.o.Now().Add(-staleTemp)
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			_ = s.o.FS.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Enabled reports whether the store writes artifacts.
func (s *Store) Enabled() bool { return s != nil && s.root != "" }

// WriteCall stores one call's artifacts: contextDoc as
// runs/<trace>/tool_calls/<span>.context and resultJSON, byte for byte, as
// <span>/result.json, and returns their URIs. On error the URIs are "",
// the error is a *WriteError (or ErrDisabled), and neither file is left
// behind. WritesFailing counts the failures.
func (s *Store) WriteCall(trace, span string, contextDoc, resultJSON []byte) (uriContext, uriJSON string, err error) {
	if !s.Enabled() {
		return "", "", ErrDisabled
	}
	defer func() { s.outcome(err) }()
	ctxRef := Ref{Trace: trace, Span: span, Kind: KindContext}
	jsonRef := Ref{Trace: trace, Span: span, Kind: KindResult}
	if err := s.check(trace, span, len(contextDoc), len(resultJSON)); err != nil {
		return "", "", err
	}
	spanDir, err := s.makeDirs(trace, span)
	if err != nil {
		return "", "", err
	}
	jsonPath := filepath.Join(spanDir, "result.json")
	if err := s.writeAtomic(spanDir, "result.json", resultJSON, jsonRef.RelPath()); err != nil {
		return "", "", err
	}
	callsDir := filepath.Dir(spanDir)
	if err := s.writeAtomic(callsDir, span+".context", contextDoc, ctxRef.RelPath()); err != nil {
		_ = s.o.FS.Remove(jsonPath)
		return "", "", err
	}
	return ctxRef.URI(), jsonRef.URI(), nil
}

// warnEvery is the least time between two "artifact writes are failing"
// warnings: a nearly full disk, where small writes pass and big ones
// fail, flips between the two states at every call.
const warnEvery = time.Minute

// outcome counts failed writes and logs their transitions: the
// first failure (with its error), at most once per warnEvery, and the
// first success after a logged failure (with how many failed meanwhile).
func (s *Store) outcome(err error) {
	if err == nil {
		if s.failing.Load() && s.failing.CompareAndSwap(true, false) {
			n := s.failed.Swap(0)
			if s.warned.Swap(false) {
				s.o.Logger.Info().Int64("failed_writes", n).Msg("artifact writes work again")
			}
		}
		return
	}
	s.failed.Add(1)
	if !s.failing.CompareAndSwap(false, true) {
		return
	}
	now := s.o.Now().UnixNano()
	last := s.lastWarn.Load()
	if last != 0 && now-last < int64(warnEvery) || !s.lastWarn.CompareAndSwap(last, now) {
		return
	}
	s.warned.Store(true)
	s.o.Logger.Warn().Err(err).Msg("artifact writes are failing; calls go on without artifacts (further failures are counted, not logged, until a write succeeds)")
}

// WritesFailing reports whether the last write failed, and how many
// have failed since the last success. Safe for concurrent use.
func (s *Store) WritesFailing() (bool, int64) {
	if s == nil {
		return false, 0
	}
	return s.failing.Load(), s.failed.Load()
}

// Spill stores the full text of a bounded string as
// runs/<trace>/tool_calls/<span>/spill-<n>.txt and returns its URI. Errors
// and counting as WriteCall.
func (s *Store) Spill(trace, span string, n int, text []byte) (uri string, err error) {
	if !s.Enabled() {
		return "", ErrDisabled
	}
	defer func() { s.outcome(err) }()
	if n < 0 || n > maxSpill {
		return "", &WriteError{Op: "validate", Err: fmt.Errorf("spill number %d out of range", n)}
	}
	ref := Ref{Trace: trace, Span: span, Kind: KindSpill, N: n}
	if err := s.check(trace, span, len(text)); err != nil {
		return "", err
	}
	spanDir, err := s.makeDirs(trace, span)
	if err != nil {
		return "", err
	}
	if err := s.writeAtomic(spanDir, "spill-"+strconv.Itoa(n)+".txt", text, ref.RelPath()); err != nil {
		return "", err
	}
	return ref.URI(), nil
}

func (s *Store) check(trace, span string, sizes ...int) error {
	if !ValidName(trace) || !ValidName(span) {
		return &WriteError{Op: "validate", Err: ErrInvalidName}
	}
	for _, n := range sizes {
		if n > MaxFileBytes {
			return &WriteError{Op: "limit", Err: fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, MaxFileBytes)}
		}
	}
	return nil
}

// makeDirs creates artifacts/runs/<trace>/tool_calls/<span> below the root
// as needed and returns the span folder.
func (s *Store) makeDirs(trace, span string) (string, error) {
	dir := s.root
	for _, seg := range [...]string{"artifacts", "runs", trace, "tool_calls", span} {
		dir = filepath.Join(dir, seg)
		if err := s.ensureDir(dir); err != nil {
			rel, _ := filepath.Rel(s.root, dir)
			return "", &WriteError{Op: "mkdir", Path: filepath.ToSlash(rel), Err: err}
		}
	}
	return dir, nil
}

// ensureDir makes dir with exactly DirMode whatever the umask, or checks that
// the existing one is a real folder (never a symlink).
func (s *Store) ensureDir(dir string) error {
	err := s.o.FS.Mkdir(dir, DirMode)
	if err == nil {
		return os.Chmod(dir, DirMode)
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, lerr := os.Lstat(dir)
	if lerr != nil {
		return lerr
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return errNotPlainDir
	}
	return nil
}

// tmpFS is the store's FS as atomicfile sees it: temp files go to
// artifacts/.tmp, which is made again when it is missing (also when it was
// removed under a running store).
type tmpFS struct {
	FS
	s *Store
}

func (t tmpFS) CreateTemp(_, pattern string) (File, error) {
	s := t.s
	for attempt := 0; ; attempt++ {
		if !s.tmpReady.Load() {
			if err := s.ensureDir(filepath.Dir(s.tmp)); err != nil {
				return nil, err
			}
			if err := s.ensureDir(s.tmp); err != nil {
				return nil, err
			}
			s.tmpReady.Store(true)
		}
		f, err := t.FS.CreateTemp(s.tmp, pattern)
		if err != nil && errors.Is(err, fs.ErrNotExist) && attempt == 0 {
			s.tmpReady.Store(false)
			continue
		}
		return f, err
	}
}

// writeAtomic writes data to dir/name through a temp file in
// artifacts/.tmp: create, chmod, write, close, rename. On any failure the
// temp file is removed and the target is untouched. Nothing is fsynced:
// artifacts are diagnostic records, the rename alone keeps a reader from
// ever seeing a torn file, and on a slow disk the fsync triples the cost
// of a call (state files, which hold what callers asked to keep, are
// always synced).
func (s *Store) writeAtomic(dir, name string, data []byte, rel string) error {
	err := atomicfile.Write(filepath.Join(dir, name), data, atomicfile.Options{
		Perm: FileMode, TempDir: s.tmp, Pattern: name + ".tmp-*", NoSync: true, FS: tmpFS{s.o.FS, s}})
	var ae *atomicfile.Error
	if errors.As(err, &ae) {
		return &WriteError{Op: ae.Op, Path: rel, Err: ae.Err}
	}
	return err
}
