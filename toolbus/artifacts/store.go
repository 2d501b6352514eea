package artifacts

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/internal/atomicfile"
	"github.com/awbridge/awbridge/internal/text"
)

const (
	// tmpDir, below artifacts/, holds every file before its rename into
	// place: a writer killed mid-write leaves debris there only.
	tmpDir = ".tmp"
	// staleTemp is the age beyond which Open removes a temp or probe file;
	// a younger one may be another process's write in progress.
	staleTemp = 10 * time.Minute
	// probePrefix starts the name of Open's writability probe.
	probePrefix = ".awbridge-probe-"
	// warnEvery is the least time between two "artifact writes are
	// failing" warnings: a nearly full disk, where small writes pass and
	// big ones fail, flips between the two states at every call.
	warnEvery = time.Minute
)

// Limits of what a Store writes and reads.
const (
	// MaxFileBytes is the largest file the Store writes (ErrTooLarge).
	MaxFileBytes = 8 << 20
	// MaxReadBytes is the most Read returns: the artifacts tool's max_bytes.
	MaxReadBytes = 16 << 10
	// maxListItems caps the entries List returns.
	maxListItems = 1000
)

// Modes of what the Store writes.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// Options configures a Store.
type Options struct {
	// Root is the context root, already resolved by config. "" disables
	// artifacts.
	Root string
	// FS performs the file operations a test may fail (default OSFS).
	FS FS
	// Now is the clock of the startup sweep and of Prune (default
	// time.Now).
	Now func() time.Time
	// MaxAge and MaxBytes bound what Prune keeps (0: no such limit).
	MaxAge   time.Duration
	MaxBytes int64
	// Logger hears when writes start failing (at most once per
	// warnEvery) and when they work again, never once per call.
	Logger zerolog.Logger
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
// concurrent use. Two calls writing the same trace and span race, and the
// last rename wins; each file stays whole.
type Store struct {
	root   string // resolved absolute root; "" when disabled
	prefix string // root ending with a separator
	tmp    string // root/artifacts/.tmp
	o      Options

	tmpReady atomic.Bool // tmp is known to exist
	refused  error       // the *RootError Open refused the root with, if any

	mu       sync.Mutex // guards the failure count
	failed   int64      // writes failed since the last success
	warned   bool       // the current failure was logged
	lastWarn time.Time
}

// Refused is the *RootError Open refused the root or its artifacts folder
// with (another user could change it), nil otherwise.
func (s *Store) Refused() error { return s.refused }

// Open checks the root and returns a Store. A root that is missing, not a
// folder or not writable, or that another user could change (checkRoot),
// gives a disabled Store and one warning to log, "artifacts are off:
// <why>"; an empty root, a disabled Store and no warning. It writes and
// removes one probe file to test that the root is writable.
func Open(o Options) (*Store, string) {
	if o.FS == nil {
		o.FS = OSFS{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Store{o: o}
	if o.Root == "" {
		return s, ""
	}
	warn := func(format string, a ...any) (*Store, string) {
		return s, text.Line("artifacts are off: " + fmt.Sprintf(format, a...))
	}
	abs, err := filepath.Abs(o.Root)
	if err != nil {
		return warn("context root %q: %v", o.Root, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return warn("context root %q does not exist", o.Root)
	}
	if err != nil {
		return warn("context root %q: %v", o.Root, err)
	}
	if fi, err := os.Lstat(root); err != nil {
		return warn("context root %q: %v", o.Root, err)
	} else if !fi.IsDir() {
		return warn("context root %q is not a folder", o.Root)
	}
	if err := checkRoot(root); err != nil {
		s.refused = err
		return warn("%v", err)
	}
	probeDir := root
	art := filepath.Join(root, "artifacts")
	switch fi, err := os.Lstat(art); {
	case err == nil && (fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir()):
		return warn("%q is a symbolic link or not a folder", art)
	case err == nil:
		probeDir = art
	case !errors.Is(err, fs.ErrNotExist):
		return warn("%q: %v", art, err)
	}
	f, err := o.FS.CreateTemp(probeDir, probePrefix+"*")
	if err == nil {
		cerr := f.Close()
		err = cmp.Or(cerr, o.FS.Remove(f.Name()))
	}
	if err != nil {
		return warn("folder %q is not writable: %v", probeDir, err)
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

// plainDir reports whether dir is a real folder, not a symbolic link.
func (s *Store) plainDir(dir string) bool {
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0
}

// sweep removes the regular files of dir whose names start with prefix
// and that are older than staleTemp: what a crashed writer left.
func (s *Store) sweep(dir, prefix string) {
	entries, _ := os.ReadDir(dir)
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

// Enabled reports whether the store writes artifacts (false for nil).
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
	spanDir, err := s.makeDirs(trace, span, len(contextDoc), len(resultJSON))
	if err != nil {
		return "", "", err
	}
	if err := s.put(spanDir, jsonRef, resultJSON); err != nil {
		return "", "", err
	}
	if err := s.put(spanDir, ctxRef, contextDoc); err != nil {
		_ = s.o.FS.Remove(filepath.Join(spanDir, "result.json"))
		return "", "", err
	}
	return ctxRef.URI(), jsonRef.URI(), nil
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
	spanDir, err := s.makeDirs(trace, span, len(text))
	if err == nil {
		err = s.put(spanDir, ref, text)
	}
	if err != nil {
		return "", err
	}
	return ref.URI(), nil
}

// outcome counts failed writes and logs their transitions: the first
// failure (with its error), at most once per warnEvery, and the first
// success after a logged failure (with how many failed meanwhile).
func (s *Store) outcome(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		if s.warned {
			s.o.Logger.Info().Int64("failed_writes", s.failed).Msg("artifact writes work again")
		}
		s.failed, s.warned = 0, false
		return
	}
	s.failed++
	if now := s.o.Now(); s.failed == 1 && (s.lastWarn.IsZero() || now.Sub(s.lastWarn) >= warnEvery) {
		s.warned, s.lastWarn = true, now
		s.o.Logger.Warn().Err(err).Msg("artifact writes are failing; calls go on without artifacts (further failures are counted, not logged, until a write succeeds)")
	}
}

// WritesFailing reports whether the last write failed, and how many
// have failed since the last success.
func (s *Store) WritesFailing() (bool, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed > 0, s.failed
}

// makeDirs checks the names and sizes of a write, creates
// artifacts/runs/<trace>/tool_calls/<span> below the root as needed and
// returns the span folder.
func (s *Store) makeDirs(trace, span string, sizes ...int) (string, error) {
	if !ValidName(trace) || !ValidName(span) {
		return "", &WriteError{Op: "validate", Err: ErrInvalidName}
	}
	for _, n := range sizes {
		if n > MaxFileBytes {
			return "", &WriteError{Op: "limit", Err: fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, MaxFileBytes)}
		}
	}
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
	fi, err := os.Lstat(dir)
	if err == nil && (fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir()) {
		err = errNotPlainDir
	}
	return err
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

// put writes data as ref's file (spanDir is its span folder) through a temp
// file in artifacts/.tmp. On any failure the temp file is removed and the
// target is untouched. Nothing is fsynced: artifacts are diagnostic
// records, the rename alone keeps a reader from ever seeing a torn file,
// and on a slow disk the fsync triples the cost of a call (state files,
// which hold what callers asked to keep, are always synced).
func (s *Store) put(spanDir string, ref Ref, data []byte) error {
	dir, name := spanDir, path.Base(ref.rel())
	if ref.Kind == KindContext {
		dir = filepath.Dir(spanDir)
	}
	err := atomicfile.Write(filepath.Join(dir, name), data, atomicfile.Options{
		Perm: FileMode, TempDir: s.tmp, Pattern: name + ".tmp-*", NoSync: true, FS: tmpFS{s.o.FS, s}})
	var ae *atomicfile.Error
	if errors.As(err, &ae) {
		return &WriteError{Op: ae.Op, Path: ref.RelPath(), Err: ae.Err}
	}
	return err
}
