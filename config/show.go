package config

import (
	"strconv"
	"strings"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// TOML renders the setting's value as a person writes it in the config
// file: integers bare, lists as arrays, everything else a quoted string
// (a set secret stays masked unless Value was replaced).
func (s Setting) TOML() string {
	if s.List {
		q := make([]string, len(s.Items))
		for i, it := range s.Items {
			q[i] = strconv.Quote(it)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	if n, ok := s.Typed().(int64); ok && strconv.FormatInt(n, 10) == s.Value {
		return s.Value // "1MiB" stays a string, 1024 does not
	}
	return strconv.Quote(s.Value)
}

// Typed is the setting's value as a JSON document gives it: a number for
// whole numbers and sizes (in bytes), the items of a list, else the text.
func (s Setting) Typed() any {
	if s.List {
		if s.Items == nil {
			return []string{}
		}
		return s.Items
	}
	switch s.Kind {
	case kindInt.String():
		if n, err := strconv.ParseInt(s.Value, 10, 64); err == nil {
			return n
		}
	case kindBytes.String():
		if n, ok := parseBytes(s.Value); ok {
			return n
		}
	}
	return s.Value
}

// MarshalJSON gives the setting with snake_case keys and its value typed
// (see [Setting.Typed]), not HTML-escaped (rules hold "=>").
func (s Setting) MarshalJSON() ([]byte, error) {
	return jsonw.Marshal(struct {
		Key    string `json:"key"`
		Value  any    `json:"value"`
		Source Source `json:"source"`
		Origin string `json:"origin,omitempty"`
		Kind   string `json:"kind"`
		List   bool   `json:"list,omitempty"`
		Env    string `json:"env,omitempty"`
		Flag   string `json:"flag,omitempty"`
		Secret bool   `json:"secret,omitempty"`
		Doc    string `json:"doc"`
	}{s.Key, s.Typed(), s.Source, s.Origin, s.Kind, s.List, s.Env, s.Flag, s.Secret, s.Doc})
}

// Unmasked returns the value of the setting key as Load resolved it,
// a secret's included: only for a person who asked to see it.
func (l *Loaded) Unmasked(key string) (string, bool) {
	for _, sp := range table() {
		if sp.key == key {
			return sp.format(&l.Config), true
		}
	}
	return "", false
}
