package artifacts

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/awbridge/awbridge/internal/text"
)

// Mode is how Read picks the bytes it returns.
type Mode string

const (
	// ModeGet returns the file from its start, up to max_bytes.
	ModeGet Mode = "get"
	// ModeHead is ModeGet: the first max_bytes.
	ModeHead Mode = "head"
	// ModeTail returns the last max_bytes.
	ModeTail Mode = "tail"
)

// Info describes a stored artifact, and for Read the part returned.
type Info struct {
	URI     string
	Bytes   int64 // the whole file's size
	ModTime time.Time
	// Offset is where the returned data starts in the file (Read only).
	Offset int64
	// Truncated says Read returned less than the whole file.
	Truncated bool
}

// Read returns part of the artifact at uri: the first maxBytes for get and
// head, the last maxBytes for tail. maxBytes <= 0, or above MaxReadBytes,
// means MaxReadBytes. A cut
// never splits a UTF-8 sequence, so the data may be up to 3 bytes shorter.
// A URI that is not a valid artifact URI, or that resolves through a
// symbolic link, is a *URIError; a missing file is ErrNotFound.
func (s *Store) Read(uri string, mode Mode, maxBytes int) ([]byte, Info, error) {
	if !s.Enabled() {
		return nil, Info{}, ErrDisabled
	}
	switch mode {
	case "", ModeGet, ModeHead, ModeTail:
	default:
		return nil, Info{}, fmt.Errorf("artifacts: %w: want get, head or tail", ErrInvalidMode)
	}
	ref, err := ParseURI(uri)
	if err != nil {
		return nil, Info{}, err
	}
	path, err := s.resolve(ref.RelPath())
	if err != nil {
		return nil, Info{}, err
	}
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, Info{}, notFound(err)
	}
	if !lfi.Mode().IsRegular() {
		return nil, Info{}, &URIError{Reason: "not a regular file"}
	}
	f, err := s.o.FS.Open(path)
	if err != nil {
		return nil, Info{}, notFound(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, Info{}, fmt.Errorf("artifacts: stat: %w", err)
	}
	if !fi.Mode().IsRegular() || !os.SameFile(lfi, fi) {
		return nil, Info{}, &URIError{Reason: "file changed while opening"}
	}

	n := maxBytes
	if n <= 0 || n > MaxReadBytes {
		n = MaxReadBytes
	}
	// One byte more than asked for tells Head and Tail whether the cut
	// falls inside a rune.
	size := fi.Size()
	buf := make([]byte, min(int64(n)+1, size))
	var off int64
	if mode == ModeTail {
		off = size - int64(len(buf))
	}
	got, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, Info{}, fmt.Errorf("artifacts: read: %w", err)
	}
	buf = buf[:got]
	if mode == ModeTail {
		tail := text.Tail(buf, n)
		buf, off = tail, off+int64(len(buf)-len(tail))
	} else {
		buf = text.Head(buf, n)
	}
	info := Info{URI: ref.URI(), Bytes: size, ModTime: fi.ModTime(), Offset: off, Truncated: int64(len(buf)) < size}
	return buf, info, nil
}

// List returns the artifacts of one trace, sorted by URI, at most
// maxListItems of them, and how many there are in all. Files that
// are not artifacts (temp files, symlinks, anything else) are skipped. An
// invalid trace is a *URIError; a trace with no folder is ErrNotFound.
func (s *Store) List(trace string) (items []Info, total int, err error) {
	if !s.Enabled() {
		return nil, 0, ErrDisabled
	}
	if !ValidName(trace) {
		return nil, 0, &URIError{Reason: "invalid trace id"}
	}
	dir, err := s.resolve("artifacts/runs/" + trace + "/tool_calls")
	if err != nil {
		return nil, 0, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, notFound(err)
	}
	add := func(e fs.DirEntry, ref Ref) {
		fi, err := e.Info()
		if err != nil { // removed meanwhile
			return
		}
		items = append(items, Info{URI: ref.URI(), Bytes: fi.Size(), ModTime: fi.ModTime()})
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.Type().IsRegular():
			if span, ok := strings.CutSuffix(name, ".context"); ok && ValidName(span) {
				add(e, Ref{Trace: trace, Span: span, Kind: KindContext})
			}
		case e.Type().IsDir() && ValidName(name):
			sub, err := os.ReadDir(filepath.Join(dir, name))
			if err != nil {
				continue
			}
			for _, se := range sub {
				if !se.Type().IsRegular() {
					continue
				}
				if se.Name() == "result.json" {
					add(se, Ref{Trace: trace, Span: name, Kind: KindResult})
				} else if n, ok := parseSpillName(se.Name()); ok {
					add(se, Ref{Trace: trace, Span: name, Kind: KindSpill, N: n})
				}
			}
		}
	}
	slices.SortFunc(items, func(a, b Info) int { return strings.Compare(a.URI, b.URI) })
	total = len(items)
	if len(items) > maxListItems {
		items = items[:maxListItems:maxListItems]
	}
	return items, total, nil
}

// resolve maps a slash path relative to the root to a file path, and
// refuses it when any part of it below the root is a symbolic link: the
// Store never makes one, so a link is foreign and may point outside. Each
// part is checked with Lstat (so a dangling link is refused too, not
// reported missing), then the whole path with EvalSymlinks.
func (s *Store) resolve(rel string) (string, error) {
	full := filepath.Join(s.root, filepath.FromSlash(rel))
	if !strings.HasPrefix(full, s.prefix) {
		return "", &URIError{Reason: "escapes the context root"}
	}
	p := s.root
	for _, seg := range strings.Split(rel, "/") {
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", notFound(err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", &URIError{Reason: "resolves through a symbolic link"}
		}
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", notFound(err)
	}
	if real != full {
		return "", &URIError{Reason: "resolves through a symbolic link"}
	}
	return full, nil
}

// notFound maps a missing file to ErrNotFound and wraps anything else.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return ErrNotFound
	}
	return fmt.Errorf("artifacts: %w", err)
}
