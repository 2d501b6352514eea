package state

import "strings"

// Scope names where an entry lives.
type Scope string

// The scopes. The zero Scope ("") means the operation's default: ScopeAny
// for Get, List and Dump; ScopeSession for Set, Unset and Clear.
const (
	ScopeSession    Scope = "session"
	ScopePersistent Scope = "persistent"
	ScopeAny        Scope = "any" // reads: session first, then persistent; Unset/Clear: both
)

// validKeyChars returns the offset of the first byte not allowed in a key
// (ASCII letters, digits and . _ - : /), or -1.
func validKeyChars(k string) int {
	return strings.IndexFunc(k, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._-:/", r))
	})
}

// ValidateKey reports whether key is acceptable: non-empty, at most
// MaxKeyBytes, ASCII letters, digits and . _ - : / only. It returns nil or
// a *KeyError.
func ValidateKey(key string) error {
	return checkKey(key, MaxKeyBytes, false)
}

func checkKey(k string, max int, prefix bool) error {
	if k == "" && !prefix {
		return &KeyError{Reason: "empty", Offset: -1, Max: max}
	}
	if len(k) > max {
		return &KeyError{Reason: "too long", Offset: -1, Len: len(k), Max: max, Prefix: prefix}
	}
	if i := validKeyChars(k); i >= 0 {
		return &KeyError{Reason: "character not allowed", Offset: i, Len: len(k), Max: max, Prefix: prefix}
	}
	return nil
}
