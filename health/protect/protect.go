// Package protect owns the protected-environment baseline: hashes (never
// values) of the items whose change would change what awbridge does — its
// config file, executable and service unit, and the files and environment
// variable names the config lists — and the comparison with it.
//
// [Snapshot] writes the baseline (<state dir>/protect-baseline.json, 0600
// in a 0700 folder, atomically). A [Checker] compares the items with it,
// caching each file's hash by its stat, so a check costs a few stat calls:
// cheap enough for health, once a second.
//
// Files are hashed with plain SHA-256 (of their first [DefaultMaxFileBytes]
// bytes), so a person can compare with sha256sum. A variable is recorded
// as "unset" or as HMAC-SHA256 of name NUL value keyed with a random salt
// per snapshot: the value never reaches the disk, and equal values under
// two names or in two baselines do not look equal. The salt does not hide
// a guessable value from someone who can read the baseline: its 0600 does.
package protect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/text"
)

// BaselineFile is the baseline's name inside the state dir.
const BaselineFile = "protect-baseline.json"

// DefaultMaxFileBytes is how much of a file is hashed (64 MiB): beyond it,
// only the file's size is compared.
const DefaultMaxFileBytes int64 = 64 << 20

// Limits on what a baseline may hold.
const (
	MaxListed   = 256  // files, and separately environment variables, listed in the config
	maxNameLen  = 4096 // bytes of a path or variable name
	maxEntries  = 2*MaxListed + 3
	maxBaseline = 4 << 20 // bytes of a baseline file read
	saltLen     = 32
)

// Item kinds.
const (
	KindConfig     = "config"     // the config file (absent when none is read)
	KindExecutable = "executable" // the running awbridge binary
	KindUnit       = "unit"       // the installed service unit or launchd plist
	KindFile       = "file"       // a file the config lists
	KindEnv        = "env"        // an environment variable the config lists
)

// Entry states.
const (
	StatePresent    = "present"    // a regular file, hashed
	StateAbsent     = "absent"     // no such file
	StateUnreadable = "unreadable" // exists but cannot be hashed (Detail says why)
	StateSet        = "set"        // an environment variable that is set (maybe to "")
	StateUnset      = "unset"      // an environment variable that is not set
)

// Changes a Diff reports.
const (
	ChangeChanged        = "changed"          // content (or value) differs
	ChangeAppeared       = "appeared"         // absent or unset in the baseline, there now
	ChangeVanished       = "vanished"         // there in the baseline, absent or unset now
	ChangeUnreadable     = "unreadable"       // hashed in the baseline, cannot be read now
	ChangeMoved          = "moved"            // config, executable or unit is at another path
	ChangeNotInBaseline  = "not_in_baseline"  // listed now, not in the baseline: take a new snapshot
	ChangeNoLongerListed = "no_longer_listed" // in the baseline, no longer listed
)

// Items are what is protected: absolute paths ("" skips one) and variable
// names. Safe to share read-only when Lookup is.
type Items struct {
	ConfigFile string // the config file read, or the default path; "" if none
	Executable string // see [Executable]
	Unit       string // install.Spec.UnitPath
	Files      []string
	Env        []string
	// Lookup reads the environment; required when Env is not empty.
	Lookup func(string) (string, bool)
}

// ItemError is an item that cannot be protected (a relative path, a
// variable name with '='): bad configuration.
type ItemError struct {
	Kind, Name, Problem string
}

func (e *ItemError) Error() string {
	return fmt.Sprintf("protect: %s %q: %s", e.Kind, text.Cut(e.Name, shownBytes), e.Problem)
}

// Validate checks the items: paths absolute and clean, names plausible,
// lists bounded, Lookup set when variables are listed.
func (it Items) Validate() error {
	for _, p := range []struct{ kind, path string }{
		{KindConfig, it.ConfigFile}, {KindExecutable, it.Executable}, {KindUnit, it.Unit},
	} {
		if p.path != "" {
			if err := checkPath(p.kind, p.path); err != nil {
				return err
			}
		}
	}
	if len(it.Files) > MaxListed {
		return &ItemError{KindFile, fmt.Sprintf("%d files", len(it.Files)), fmt.Sprintf("at most %d files can be listed", MaxListed)}
	}
	if len(it.Env) > MaxListed {
		return &ItemError{KindEnv, fmt.Sprintf("%d variables", len(it.Env)), fmt.Sprintf("at most %d variables can be listed", MaxListed)}
	}
	for _, f := range it.Files {
		if err := checkPath(KindFile, f); err != nil {
			return err
		}
	}
	for _, n := range it.Env {
		if n == "" || len(n) > 256 || strings.ContainsAny(n, "=\x00") || strings.TrimSpace(n) != n || !utf8.ValidString(n) {
			return &ItemError{KindEnv, n, "is not an environment variable name"}
		}
	}
	if len(it.Env) > 0 && it.Lookup == nil {
		return &ItemError{KindEnv, it.Env[0], "no environment to read (Lookup is nil)"}
	}
	return nil
}

func checkPath(kind, p string) error {
	switch {
	case len(p) > maxNameLen:
		return &ItemError{kind, p, "path too long"}
	case strings.ContainsRune(p, 0):
		return &ItemError{kind, p, "path holds a NUL byte"}
	case !utf8.ValidString(p):
		return &ItemError{kind, p, "path is not valid UTF-8"}
	case !filepath.IsAbs(p):
		return &ItemError{kind, p, "not an absolute path"}
	case filepath.Clean(p) != p:
		return &ItemError{kind, p, "not a clean path (write it as " + filepath.Clean(p) + ")"}
	}
	return nil
}

// ParseList splits a comma-separated setting (protect.files,
// protect.env): items trimmed, empty ones and repeats dropped, order kept.
func ParseList(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Entry is one item as a baseline records it: hashes and sizes, never a
// value.
type Entry struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"` // path, or variable name
	State     string `json:"state"`
	SHA256    string `json:"sha256,omitempty"`      // a present file's, of its first MaxFileBytes
	Size      int64  `json:"size,omitempty"`        // a present file's
	Truncated bool   `json:"truncated,omitempty"`   // larger than MaxFileBytes
	HMAC      string `json:"hmac_sha256,omitempty"` // a set variable's HMAC-SHA256(salt, name NUL value)
	Detail    string `json:"detail,omitempty"`      // why a file is unreadable
}

// Baseline is the recorded state of the protected items.
type Baseline struct {
	Version      int       `json:"version"`
	CreatedAt    time.Time `json:"created_at"`
	Salt         string    `json:"salt"`           // keys the HMACs: 32 random bytes, hex
	MaxFileBytes int64     `json:"max_file_bytes"` // how much of each file was hashed
	Entries      []Entry   `json:"entries"`
}

// Diff is one item that differs from the baseline. Detail adds what is
// known without a value: sizes, the old path, why a file cannot be read.
type Diff struct {
	Kind   string `json:"kind"`
	Item   string `json:"item"` // path, or variable name
	Change string `json:"change"`
	Detail string `json:"detail,omitempty"`
}

// Result is one comparison of the items with the baseline.
type Result struct {
	// Configured: a baseline exists (or cannot be told apart from
	// existing) or the config lists items.
	Configured     bool
	BaselineExists bool
	Diffs          []Diff // in item order
	// Err is why the comparison could not be made (a corrupt or unsafe
	// baseline, bad items, an unreadable state dir).
	Err       error
	CreatedAt time.Time // of the baseline read; zero when none
	Checked   int       // items compared
}

// OK is system.health's protected_env_ok: true when protection is not
// configured, else a readable baseline exists and nothing differs.
func (r Result) OK() bool {
	return !r.Configured || (r.BaselineExists && r.Err == nil && len(r.Diffs) == 0)
}

// DiffCount is system.health's protected_diff_count: how many items
// differ; 0 when not configured; -1 when configured but there is no
// usable baseline.
func (r Result) DiffCount() int {
	switch {
	case !r.Configured:
		return 0
	case !r.BaselineExists || r.Err != nil:
		return -1
	}
	return len(r.Diffs)
}

// Status is what `awbridge protect status --json` prints: the result with
// health's field names.
type Status struct {
	Baseline       string     `json:"baseline"`
	BaselineExists bool       `json:"baseline_exists"`
	Configured     bool       `json:"protected_env_configured"`
	OK             bool       `json:"protected_env_ok"`
	DiffCount      int        `json:"protected_diff_count"`
	CreatedAt      *time.Time `json:"baseline_created_at"` // null when none was read
	Checked        int        `json:"checked"`
	Diffs          []Diff     `json:"diffs"`
	Error          string     `json:"error,omitempty"`
}

// StatusJSON is the Status of r for baselinePath as one line of JSON (HTML
// characters unescaped), newline-terminated.
func (r Result) StatusJSON(baselinePath string) []byte {
	s := Status{
		Baseline: baselinePath, BaselineExists: r.BaselineExists, Configured: r.Configured,
		OK: r.OK(), DiffCount: r.DiffCount(), Checked: r.Checked, Diffs: r.Diffs,
	}
	if s.Diffs == nil {
		s.Diffs = []Diff{}
	}
	if !r.CreatedAt.IsZero() {
		t := r.CreatedAt.UTC()
		s.CreatedAt = &t
	}
	if r.Err != nil {
		s.Error = r.Err.Error()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // strings, numbers and a time decoded from JSON: it always encodes
	return b.Bytes()
}

// BaselineError is a baseline that exists but cannot be used: unreadable,
// corrupt, or open to other users' writes.
type BaselineError struct {
	Path    string
	Problem string
	Err     error
}

func (e *BaselineError) Error() string {
	s := "protect: baseline " + e.Path + ": " + e.Problem
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *BaselineError) Unwrap() error { return e.Err }

// ErrCorruptBaseline is wrapped by every error saying a baseline's content
// fails validation (a BaselineError from a check, DecodeBaseline's error).
var ErrCorruptBaseline = errors.New("not a valid baseline")

// shownBytes bounds a name or an error's text quoted in a detail or a
// message.
const shownBytes = 120

// BaselinePath is the baseline's path in stateDir; "" when stateDir is "".
func BaselinePath(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Join(stateDir, BaselineFile)
}

// Executable is the running binary's path with symlinks resolved. On
// Linux it names the file now at that path even after the binary was
// replaced on disk (an upgrade): the check then says the executable
// changed.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("protect: finding my executable: %w", err)
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("protect: finding my executable: %w", err)
	}
	return real, nil
}
