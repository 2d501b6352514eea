package state

import (
	"errors"
	"fmt"

	"github.com/awbridge/awbridge/internal/text"
)

// ErrPersistentDisabled is returned by any operation that names the
// persistent scope explicitly when the Store was opened without a state dir.
// Reads with ScopeAny then simply look at the session scope.
var ErrPersistentDisabled = errors.New("state: persistent scope is disabled (no state dir configured)")

// ErrClosed is returned by every operation after Close.
var ErrClosed = errors.New("state: store is closed")

// ErrSymlink is the cause of the *StorageError Open returns when the state
// file or a folder it would tighten is a symbolic link: awbridge never
// reads, writes or chmods state through a link, which could point at
// another file of the user's.
var ErrSymlink = errors.New("is a symbolic link; awbridge never reads or changes state through a link")

// errNotRegular: the state file is a folder, a FIFO, a device...
var errNotRegular = errors.New("not a regular file")

// KeyError reports a key (or a List/Clear prefix) that is not acceptable.
// It never carries the key itself, which is caller data.
type KeyError struct {
	Reason string // what is wrong, e.g. "empty", "too long", "character not allowed"
	Offset int    // byte offset of the offending character, -1 when not about one character
	Len    int    // length of the key in bytes
	Max    int    // MaxKeyBytes in force
	Prefix bool   // the rejected string was a prefix, not a key
}

func (e *KeyError) Error() string {
	what := "key"
	if e.Prefix {
		what = "prefix"
	}
	if e.Offset >= 0 {
		return fmt.Sprintf("state: invalid %s: %s at byte %d (allowed: ASCII letters, digits and . _ - : /)", what, e.Reason, e.Offset)
	}
	if e.Reason == "too long" {
		return fmt.Sprintf("state: invalid %s: too long (%d bytes, at most %d)", what, e.Len, e.Max)
	}
	return fmt.Sprintf("state: invalid %s: %s", what, e.Reason)
}

// ValueError reports a value that is not one valid JSON document, or a
// redactor that turned it into something that is not.
type ValueError struct {
	Reason string // e.g. "not valid JSON", "empty"
	Offset int64  // byte offset of a syntax error, -1 if unknown
}

func (e *ValueError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("state: invalid value: %s at byte %d", e.Reason, e.Offset)
	}
	return fmt.Sprintf("state: invalid value: %s", e.Reason)
}

// LimitError reports a change refused because it would exceed a limit of
// Options. Limit names the Options field.
type LimitError struct {
	Limit string // "MaxValueBytes", "MaxEntries" or "MaxScopeBytes"
	Scope Scope
	Max   int
	Got   int // the size or count the change would have produced
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case "MaxEntries":
		return fmt.Sprintf("state: %s scope is full: %d entries would exceed %s (%d)", e.Scope, e.Got, e.Limit, e.Max)
	case "MaxScopeBytes":
		return fmt.Sprintf("state: %s scope is full: %d bytes would exceed %s (%d)", e.Scope, e.Got, e.Limit, e.Max)
	default:
		return fmt.Sprintf("state: value of %d bytes exceeds %s (%d)", e.Got, e.Limit, e.Max)
	}
}

// ScopeError reports a scope that is unknown or not valid for the
// operation (ScopeAny for Set).
type ScopeError struct {
	Op    string // "get", "set", "list", "unset", "clear" or "dump"
	Scope string // the scope given, at most 32 bytes of it
}

func (e *ScopeError) Error() string {
	if e.Op == "set" && Scope(e.Scope) == ScopeAny {
		return `state: set needs one scope: "session" or "persistent", not "any"`
	}
	return fmt.Sprintf(`state: %s: unknown scope %q (use "session", "persistent" or "any")`, e.Op, e.Scope)
}

// StorageError reports a failure of the disk under the persistent scope.
// When a change fails with a StorageError the Store's view is unchanged; the
// file holds either the old or the new document, never a mix.
type StorageError struct {
	Op   string // e.g. "read", "create dir", "write temp file", "rename", "sync dir"
	Path string
	Err  error
}

func (e *StorageError) Error() string {
	return fmt.Sprintf("state: %s %s: %v", e.Op, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *StorageError) Unwrap() error { return e.Err }

func scopeErr(op string, s Scope) *ScopeError {
	return &ScopeError{Op: op, Scope: text.Cut(string(s), 32)}
}
