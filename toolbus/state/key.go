package state

// Scope names where an entry lives.
type Scope string

// The scopes. The zero Scope ("") means the operation's default: ScopeAny
// for Get, List and Dump; ScopeSession for Set, Unset and Clear.
const (
	ScopeSession    Scope = "session"
	ScopePersistent Scope = "persistent"
	ScopeAny        Scope = "any" // reads: session first, then persistent; Unset/Clear: both
)

// keyByte reports whether c may appear in a key.
func keyByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == '.', c == '_', c == '-', c == ':', c == '/':
		return true
	}
	return false
}

// validKeyChars returns the offset of the first byte not allowed in a key,
// or -1.
func validKeyChars(k string) int {
	for i := 0; i < len(k); i++ {
		if !keyByte(k[i]) {
			return i
		}
	}
	return -1
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
