package artifacts

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
)

// Scheme is the prefix of every artifact URI.
const Scheme = "artifact://"

// MaxNameBytes is the longest trace or span id: they name files.
const MaxNameBytes = 128

// maxURIBytes bounds a URI before it is looked at: the longest valid one is
// well below it.
const maxURIBytes = 512

// Kind is what an artifact URI names.
type Kind int

const (
	// KindContext is <span>.context, the human document.
	KindContext Kind = iota + 1
	// KindResult is <span>/result.json, the envelope.
	KindResult
	// KindSpill is <span>/spill-<n>.txt, the full text of a bounded string.
	KindSpill
)

// Ref is a parsed artifact URI. Its fields are always valid: a Ref only
// comes from ParseURI or from the Store.
type Ref struct {
	Trace string
	Span  string
	Kind  Kind
	N     int // the spill number, for KindSpill
}

// URI is the canonical URI of the reference; ParseURI(r.URI()) == r.
func (r Ref) URI() string { return Scheme + r.rel() }

// RelPath is the slash-separated path of the file relative to the context
// root, e.g. "artifacts/runs/t/tool_calls/s.context".
func (r Ref) RelPath() string { return "artifacts/" + r.rel() }

func (r Ref) rel() string {
	base := "runs/" + r.Trace + "/tool_calls/" + r.Span
	switch r.Kind {
	case KindContext:
		return base + ".context"
	case KindResult:
		return base + "/result.json"
	default:
		return base + "/spill-" + strconv.Itoa(r.N) + ".txt"
	}
}

// URIError says why a URI was refused. It never carries the URI's text in
// its message: the URI is caller data.
type URIError struct {
	Reason string
}

func (e *URIError) Error() string { return "artifacts: uri refused: " + e.Reason }

// ErrInvalidName is wrapped by errors about a trace or span id that could not
// name a file.
var ErrInvalidName = errors.New("invalid trace or span id")

// ValidName reports whether s may be a trace or span id: 1 to 128 bytes of
// ASCII letters, digits, '.', '_' and '-', and neither "." nor "..". On
// Windows, names the file system would alias (reserved device names, a
// trailing dot) are refused as well.
func ValidName(s string) bool {
	return SafeName(s, MaxNameBytes, ".") && s != "." && s != ".." && !(runtime.GOOS == "windows" && windowsAliased(s))
}

// SafeName reports whether s is 1 to max ASCII letters, digits, '_', '-'
// and bytes of extra. It stands for a regexp such as ^[A-Za-z0-9_-]{1,64}$:
// compiling a counted repetition at start-up costs thousands of allocations.
func SafeName(s string, max int, extra string) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// windowsAliased reports names that Windows maps to another file or a device.
func windowsAliased(s string) bool {
	if strings.HasSuffix(s, ".") {
		return true
	}
	stem, _, _ := strings.Cut(s, ".")
	switch strings.ToUpper(stem) {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(stem) == 4 {
		p := strings.ToUpper(stem[:3])
		if (p == "COM" || p == "LPT") && stem[3] >= '0' && stem[3] <= '9' {
			return true
		}
	}
	return false
}

// ParseURI parses artifact://runs/<trace>/tool_calls/<span>.context,
// .../<span>/result.json or .../<span>/spill-<n>.txt. Anything else is a
// *URIError: other schemes, percent-encoding, empty, "." or ".." segments,
// extra segments, query strings. An accepted URI is canonical: its Ref's URI
// is the same string.
func ParseURI(uri string) (Ref, error) {
	if len(uri) > maxURIBytes {
		return Ref{}, &URIError{Reason: "too long"}
	}
	rest, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return Ref{}, &URIError{Reason: "not an artifact:// uri"}
	}
	rest, ok = strings.CutPrefix(rest, "runs/")
	if !ok {
		return Ref{}, &URIError{Reason: "must start with artifact://runs/"}
	}
	trace, rest, ok := strings.Cut(rest, "/")
	if !ok || !ValidName(trace) {
		return Ref{}, &URIError{Reason: "invalid trace segment"}
	}
	rest, ok = strings.CutPrefix(rest, "tool_calls/")
	if !ok {
		return Ref{}, &URIError{Reason: "expected tool_calls after the trace"}
	}
	span, file, nested := strings.Cut(rest, "/")
	if !nested {
		span, ok = strings.CutSuffix(rest, ".context")
		if !ok || !ValidName(span) {
			return Ref{}, &URIError{Reason: "expected <span>.context, <span>/result.json or <span>/spill-<n>.txt"}
		}
		return Ref{Trace: trace, Span: span, Kind: KindContext}, nil
	}
	if !ValidName(span) {
		return Ref{}, &URIError{Reason: "invalid span segment"}
	}
	if file == "result.json" {
		return Ref{Trace: trace, Span: span, Kind: KindResult}, nil
	}
	if n, ok := parseSpillName(file); ok {
		return Ref{Trace: trace, Span: span, Kind: KindSpill, N: n}, nil
	}
	return Ref{}, &URIError{Reason: "expected result.json or spill-<n>.txt after the span"}
}

// parseSpillName parses "spill-<n>.txt" with n canonical decimal (no sign,
// no leading zero) that fits an int32, so every platform agrees.
func parseSpillName(file string) (int, bool) {
	digits, ok := strings.CutPrefix(file, "spill-")
	digits, dot := strings.CutSuffix(digits, ".txt")
	n, err := strconv.ParseInt(digits, 10, 32)
	if !ok || !dot || err != nil || n < 0 || strconv.FormatInt(n, 10) != digits {
		return 0, false
	}
	return int(n), true
}

// maxSpill is the largest spill number (it must survive ParseURI).
const maxSpill = 1<<31 - 1
