package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Uncategorized is the category of an event no rule matches.
const Uncategorized = "Uncategorized"

// Rule is a compiled classification rule: aw_transform.classify.Rule.
type Rule struct {
	Regex      string   // the pattern as given ("" matches nothing)
	IgnoreCase bool     // match without regard to case
	SelectKeys []string // the data keys whose values it tests; nil: every value

	re    *regexp.Regexp // nil: matches nothing
	lit   *literals      // a faster equivalent of re, when it is a list of words
	insts int            // re's program size
}

// NewRule compiles a rule. An empty regex gives a rule that matches
// nothing, as in aw-core. Patterns use Go's RE2 syntax: Python's
// look-around and back-references do not compile, and \d, \w, \s and \b
// are ASCII-only; a pattern that does not compile gives a rule that
// matches nothing, with the error.
func NewRule(regex string, ignoreCase bool, selectKeys []string) (Rule, error) {
	r := Rule{Regex: regex, IgnoreCase: ignoreCase, SelectKeys: selectKeys}
	if regex == "" {
		return r, nil
	}
	pattern := regex
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	re, insts, err := compileBounded(pattern)
	if err != nil {
		return r, fmt.Errorf("regex does not compile: %w", err)
	}
	r.re, r.insts = re, insts
	r.lit = literalsOf(regex, ignoreCase)
	return r, nil
}

// MaxRuleInsts bounds one regex's compiled program and MaxRulesInsts a
// setting's programs together: a short regex can compile to a large one
// (`[^z]{0,1000}` 270 times is 4 KiB and 270,000 instructions, 21 MiB to
// compile and ~12 ms to try on one title), so bytes alone bound neither
// memory nor time. A 4 KiB alternation of words compiles to a few hundred.
const (
	MaxRuleInsts  = 8 << 10
	MaxRulesInsts = 128 << 10
)

// errRegexTooLarge is a regex whose program exceeds MaxRuleInsts.
var errRegexTooLarge = errors.New("regex is too large once compiled")

// compileBounded is regexp.Compile refusing a pattern whose program has
// more than MaxRuleInsts instructions; insts is the program's size.
func compileBounded(pattern string) (re *regexp.Regexp, insts int, err error) {
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, 0, err
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, 0, err
	}
	if insts = len(prog.Inst); insts > MaxRuleInsts {
		return nil, insts, fmt.Errorf("%w: %d instructions, more than %d", errRegexTooLarge, insts, MaxRuleInsts)
	}
	re, err = regexp.Compile(pattern)
	return re, insts, err
}

// Match reports whether the rule's regex finds a match in one of the
// string values it tests (Rule.match).
func (r Rule) Match(f Fields) bool {
	switch {
	case r.re == nil:
		return false
	case r.SelectKeys == nil:
		return f.anyString(r.matchString)
	}
	for _, k := range r.SelectKeys {
		if s, ok := f.Str(k); ok && r.matchString(s) {
			return true
		}
	}
	return false
}

func (r Rule) matchString(s string) bool {
	if r.lit != nil {
		if m, ok := r.lit.match(s); ok {
			return m
		}
	}
	return r.re.MatchString(s)
}

// literals is a pattern that is only words separated by "|" ("GitHub|Stack
// Overflow|vim", most category rules): one scan of a value finds them,
// several times faster than the regex.
type literals struct {
	words []string // lower case (ASCII) when fold
	first [256]bool
	fold  bool
}

// literalsOf returns the words of a pattern made of plain characters and
// "|" only, or nil. Case-insensitive patterns qualify when their words are
// ASCII.
func literalsOf(pattern string, fold bool) *literals {
	l := &literals{fold: fold}
	for _, w := range strings.Split(pattern, "|") {
		if w == "" || strings.ContainsAny(w, `\.^$*+?{}[]()`) {
			return nil
		}
		if fold {
			for i := 0; i < len(w); i++ {
				if w[i] >= 0x80 {
					return nil
				}
			}
			w = strings.ToLower(w)
			if c := w[0]; c >= 'a' && c <= 'z' {
				l.first[c-'a'+'A'] = true
			}
		}
		l.first[w[0]] = true
		l.words = append(l.words, w)
	}
	return l
}

// match reports whether s holds one of the words; ok is false when only
// the regex can tell (a case-insensitive search in text holding the Kelvin
// sign or the long s, which fold to ASCII letters).
func (l *literals) match(s string) (matched, ok bool) {
	if l.fold && (strings.Contains(s, "\u212a") || strings.Contains(s, "\u017f")) {
		return false, false
	}
	for i := 0; i < len(s); i++ {
		if !l.first[s[i]] {
			continue
		}
		for _, w := range l.words {
			if len(s)-i < len(w) {
				continue
			}
			if l.fold {
				if strings.EqualFold(s[i:i+len(w)], w) {
					return true, true
				}
			} else if s[i:i+len(w)] == w {
				return true, true
			}
		}
	}
	return false, true
}

// Class is one category: its hierarchical name (["Work", "Programming"])
// and the rule that puts events in it.
type Class struct {
	Name []string
	Rule Rule
}

// Classes is a list of categories in their configured order.
type Classes []Class

// Categorize returns the index of the class aw-core's categorize gives an
// event with data f: of the classes whose rule matches, the one with the
// longest name, the later one on a tie; -1 when none matches (the event is
// Uncategorized). A class with an empty name never wins.
func (cs Classes) Categorize(f Fields) int {
	best, bestDepth := -1, 1
	for i, c := range cs {
		if len(c.Name) >= bestDepth && c.Rule.Match(f) {
			best, bestDepth = i, len(c.Name)
		}
	}
	return best
}

// Label is the display name of class i as ActivityWatch's web UI shows it
// ("Work > Programming"); Uncategorized for -1.
func (cs Classes) Label(i int) string {
	if i < 0 || i >= len(cs) {
		return Uncategorized
	}
	return CategoryName(cs[i].Name)
}

// CategoryName joins a hierarchical category name as the web UI shows it:
// "Work > Programming".
func CategoryName(name []string) string { return strings.Join(name, " > ") }

// ErrClassesSetting is returned (wrapped) when the classes setting is not a
// JSON array of categories or holds a regex that does not compile.
var ErrClassesSetting = errors.New("classes setting cannot be used")

// Bounds of a classes setting, beyond which it is not used
// (ErrClassesTooLarge). Any local program can write ActivityWatch's
// settings, and every rule is compiled and tested against every distinct
// title of a period: one rule of 7.7 MB cost 1,070 MiB to compile, and
// 5,000 rules over 3,000 titles took 78 s. The web UI's defaults are 15
// rules of at most 100 bytes; a long list holds a few hundred.
const (
	MaxClassesBytes = 1 << 20  // the setting's JSON text
	MaxClasses      = 1000     // its entries
	MaxRuleBytes    = 4 << 10  // one rule's regex
	MaxRulesBytes   = 64 << 10 // all its regexes together
)

// ErrClassesTooLarge is returned (wrapped) when the classes setting exceeds
// one of the bounds (MaxClassesBytes, MaxClasses, MaxRuleBytes,
// MaxRulesBytes); no classes come with it.
var ErrClassesTooLarge = errors.New("classes setting is too large")

// ParseClasses reads ActivityWatch's "classes" setting (GET
// /api/0/settings/classes, as the web UI writes it: a JSON array of
// {"name": [...], "rule": {"type": "regex"|"none", "regex", "ignore_case"},
// "data": {...}}) into the classes the web UI sends to its queries: entries
// whose rule type is null are left out; the rest keep their order. As in
// aw-core, the rule type is otherwise not read: a regex counts when it is a
// non-empty string; ignore_case and select_keys are read when present.
//
// An absent or null setting (nil, "", "null") yields DefaultClasses(). A
// setting beyond the bounds yields an error wrapping ErrClassesTooLarge,
// before any regex is compiled (the bounds of compiled programs,
// MaxRuleInsts and MaxRulesInsts, as each is compiled); any other entry that cannot be used (not a
// category: no name list of strings or no rule object; a regex or
// select_keys of the wrong type; a regex that does not compile), an error
// wrapping ErrClassesSetting. Either comes with no classes.
func ParseClasses(setting []byte) (Classes, error) {
	setting = bytes.TrimSpace(setting)
	if len(setting) == 0 || string(setting) == "null" {
		return DefaultClasses(), nil
	}
	if len(setting) > MaxClassesBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrClassesTooLarge, len(setting), MaxClassesBytes)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(setting, &entries); err != nil {
		return nil, fmt.Errorf("%w: not a JSON array: %w", ErrClassesSetting, err)
	}
	if len(entries) > MaxClasses {
		return nil, fmt.Errorf("%w: %d entries, more than %d", ErrClassesTooLarge, len(entries), MaxClasses)
	}
	// Read every entry, check the bounds, and only then compile.
	type parsed struct {
		index      int
		name, keys []string
		regex      string
		ignoreCase bool
	}
	var (
		ps    []parsed
		total int
	)
	notCategory := func(i int) error { return fmt.Errorf("%w: entry %d is not a category", ErrClassesSetting, i) }
	for i, raw := range entries {
		var entry struct {
			Name []string                   `json:"name"`
			Rule map[string]json.RawMessage `json:"rule"`
		}
		if err := json.Unmarshal(raw, &entry); err != nil || entry.Name == nil || entry.Rule == nil {
			return nil, notCategory(i)
		}
		if t, ok := entry.Rule["type"]; ok && string(bytes.TrimSpace(t)) == "null" {
			continue // the web UI's "no rule": not sent to queries
		}
		var regex string
		if raw, ok := entry.Rule["regex"]; ok && truthy(raw) {
			if json.Unmarshal(raw, &regex) != nil {
				return nil, notCategory(i) // aw-core: TypeError
			}
		}
		var keys []string
		if raw, ok := entry.Rule["select_keys"]; ok && truthy(raw) {
			var l []json.RawMessage
			if json.Unmarshal(raw, &l) != nil {
				return nil, notCategory(i)
			}
			keys = []string{} // given: only these keys, even when none is a string
			for _, k := range l {
				var s string
				if json.Unmarshal(k, &s) == nil {
					keys = append(keys, s)
				}
			}
		}
		if len(regex) > MaxRuleBytes {
			return nil, fmt.Errorf("%w: a regex of %d bytes, more than %d", ErrClassesTooLarge, len(regex), MaxRuleBytes)
		}
		if total += len(regex); total > MaxRulesBytes {
			return nil, fmt.Errorf("%w: regexes of more than %d bytes in all", ErrClassesTooLarge, MaxRulesBytes)
		}
		ps = append(ps, parsed{i, entry.Name, keys, regex, truthy(entry.Rule["ignore_case"])})
	}
	cs := make(Classes, len(ps))
	insts := 0
	for k, p := range ps {
		r, err := NewRule(p.regex, p.ignoreCase, p.keys)
		if errors.Is(err, errRegexTooLarge) {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrClassesTooLarge, p.index, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %w", ErrClassesSetting, p.index, err)
		}
		if insts += r.insts; insts > MaxRulesInsts {
			return nil, fmt.Errorf("%w: regexes of more than %d instructions in all once compiled", ErrClassesTooLarge, MaxRulesInsts)
		}
		cs[k] = Class{Name: p.name, Rule: r}
	}
	return cs, nil
}

// truthy is Python's truth of a JSON value: false for absent, null, false,
// 0, "", [] and {}.
func truthy(raw json.RawMessage) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return len(raw) > 0 // a number beyond float64: not 0
	}
	switch t := v.(type) {
	case bool:
		return t
	case float64:
		return t != 0
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	return false // null
}

// DefaultClasses are ActivityWatch's default categories, as its web UI
// defines them and sends them to its queries when the classes setting is
// unset (Media and Comms have no rule of their own; the web UI's
// Uncategorized entry is not sent).
func DefaultClasses() Classes {
	def := []struct {
		name       []string
		regex      string
		ignoreCase bool
	}{
		{[]string{"Work"}, "Google Docs|libreoffice|ReText", false},
		{[]string{"Work", "Programming"}, "GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite", false},
		{[]string{"Work", "Programming", "ActivityWatch"}, "ActivityWatch|aw-", true},
		{[]string{"Work", "Image"}, "GIMP|Inkscape", false},
		{[]string{"Work", "Video"}, "Kdenlive", false},
		{[]string{"Work", "Audio"}, "Audacity", false},
		{[]string{"Work", "3D"}, "Blender", false},
		{[]string{"Media"}, "", false},
		{[]string{"Media", "Games"}, "Minecraft|RimWorld", false},
		{[]string{"Media", "Video"}, "YouTube|Plex|VLC", false},
		{[]string{"Media", "Social Media"}, "reddit|Facebook|Twitter|Instagram|devRant", true},
		{[]string{"Media", "Music"}, "Spotify|Deezer", true},
		{[]string{"Comms"}, "", false},
		{[]string{"Comms", "IM"}, "Messenger|Telegram|Signal|WhatsApp|Rambox|Slack|Riot|Element|Discord|Nheko|NeoChat|Mattermost", false},
		{[]string{"Comms", "Email"}, "Gmail|Thunderbird|mutt|alpine", false},
	}
	cs := make(Classes, len(def))
	for i, d := range def {
		r, _ := NewRule(d.regex, d.ignoreCase, nil) // the defaults compile
		cs[i] = Class{Name: d.name, Rule: r}
	}
	return cs
}
