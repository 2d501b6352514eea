package transform

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/awbridge/awbridge/aw"
	"github.com/tidwall/gjson"
)

// Bounds of a privacy_filters setting (see ParsePrivacyFilters). Any local
// program can write ActivityWatch's settings, and every enabled rule is
// tried on every distinct event data of a period; the web UI's examples
// are two rules of under 40 bytes.
const (
	MaxPrivacyFiltersBytes = MaxClassesBytes // the setting's JSON text
	MaxPrivacyFilters      = 100             // rules used; later ones are skipped
	MaxPrivacyPatternBytes = MaxRuleBytes    // one rule's pattern
	maxPrivacyFieldBytes   = 256             // one rule's field path
	maxReplacementBytes    = 1024            // one rule's replacement
)

// PrivacyFilters are the person's privacy filters (ActivityWatch's
// privacy_filters setting, written by its web UI and applied by
// aw-server-rust to events as they arrive), ready to apply to events
// read. The nil value applies nothing. Immutable; safe for concurrent use.
type PrivacyFilters struct {
	rules []privacyRule
	// Skipped says why rules were not used ("rule 2: ..."), by rule
	// number (1-based, as the web UI counts): never a pattern or a value.
	Skipped []string
}

// privacyRule is one enabled, valid rule.
type privacyRule struct {
	prefix      string
	path        []string // the dotted field path, split
	re          *regexp.Regexp
	insts       int // re's program size
	drop        bool
	replacement string
}

// ParsePrivacyFilters reads the privacy_filters setting: a JSON array of
// {enabled, bucket_prefix, field, pattern, action, replacement}, as the
// web UI and aw-server-rust read it. Rules apply in order; a disabled rule
// is left out unread. An enabled rule is skipped (and said so in Skipped)
// when it is not an object, a key has the wrong type, field is missing or
// empty, action is not "drop" or "redact", a redact rule has no non-empty
// replacement, or the pattern (Go's RE2 syntax, which is aw-server-rust's
// regex syntax but for \d, \w, \s and \b, ASCII here, Unicode there) does
// not compile, is longer than MaxPrivacyPatternBytes or compiles to more
// than MaxRuleInsts instructions. Rules past MaxPrivacyFilters, and those
// that would take the rules' programs past MaxRulesInsts, are skipped; a setting that is not an array, or
// longer than MaxPrivacyFiltersBytes, applies nothing. An absent or null
// setting returns nil.
func ParsePrivacyFilters(setting []byte) *PrivacyFilters {
	text := strings.TrimSpace(string(setting))
	if text == "" || text == "null" {
		return nil
	}
	if len(text) > MaxPrivacyFiltersBytes {
		return &PrivacyFilters{Skipped: []string{fmt.Sprintf("the setting is %d bytes, more than %d: no rule applies", len(text), MaxPrivacyFiltersBytes)}}
	}
	var entries []json.RawMessage
	if json.Unmarshal([]byte(text), &entries) != nil {
		return &PrivacyFilters{Skipped: []string{"the setting is not a JSON array of rules: no rule applies"}}
	}
	p := &PrivacyFilters{}
	insts := 0
	for i, raw := range entries {
		if len(p.rules) == MaxPrivacyFilters {
			p.Skipped = append(p.Skipped, fmt.Sprintf("rules %d to %d: more than %d rules", i+1, len(entries), MaxPrivacyFilters))
			break
		}
		r, use, why := parsePrivacyRule(raw)
		if use && insts+r.insts > MaxRulesInsts {
			use, why = false, fmt.Sprintf("the patterns so far compile to more than %d instructions in all", MaxRulesInsts)
		}
		switch {
		case why != "":
			p.Skipped = append(p.Skipped, fmt.Sprintf("rule %d: %s", i+1, why))
		case use:
			insts += r.insts
			p.rules = append(p.rules, r)
		}
	}
	return p
}

// parsePrivacyRule reads one rule: use is false for a disabled one; why
// says what makes it unusable.
func parsePrivacyRule(raw json.RawMessage) (r privacyRule, use bool, why string) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return r, false, "not a JSON object"
	}
	enabled, ok := m["enabled"].(bool)
	if !ok {
		return r, false, "enabled must be true or false"
	}
	if !enabled {
		return r, false, ""
	}
	str := func(key string, max int) (string, string) {
		switch v := m[key].(type) {
		case nil:
			return "", ""
		case string:
			if len(v) > max {
				return "", fmt.Sprintf("%s is longer than %d bytes", key, max)
			}
			return v, ""
		}
		return "", key + " must be a string"
	}
	var (
		field, pattern, action string
		msgs                   [5]string
	)
	r.prefix, msgs[0] = str("bucket_prefix", maxPrivacyFieldBytes)
	field, msgs[1] = str("field", maxPrivacyFieldBytes)
	pattern, msgs[2] = str("pattern", MaxPrivacyPatternBytes)
	action, msgs[3] = str("action", 16)
	r.replacement, msgs[4] = str("replacement", maxReplacementBytes)
	for _, msg := range msgs {
		if msg != "" {
			return r, false, msg
		}
	}
	if _, ok := m["pattern"].(string); !ok {
		return r, false, "pattern must be a string"
	}
	if field == "" {
		return r, false, "field (the data key to match, e.g. \"title\") is missing"
	}
	switch action {
	case "drop":
		r.drop = true
	case "redact":
		if r.replacement == "" {
			return r, false, "a redact rule needs a non-empty replacement"
		}
	default:
		return r, false, `action must be "drop" or "redact"`
	}
	re, insts, err := compileBounded(pattern)
	switch {
	case errors.Is(err, errRegexTooLarge):
		return r, false, fmt.Sprintf("its pattern compiles to more than %d instructions", MaxRuleInsts)
	case err != nil:
		return r, false, "its pattern does not compile as a Go (RE2) regular expression"
	}
	r.re, r.insts, r.path = re, insts, strings.Split(field, ".")
	return r, true, ""
}

// Len is how many rules apply.
func (p *PrivacyFilters) Len() int {
	if p == nil {
		return 0
	}
	return len(p.rules)
}

// forBucket returns the rules whose bucket_prefix the bucket id starts
// with.
func (p *PrivacyFilters) forBucket(bucketID string) []privacyRule {
	if p == nil {
		return nil
	}
	var out []privacyRule
	for _, r := range p.rules {
		if strings.HasPrefix(bucketID, r.prefix) {
			out = append(out, r)
		}
	}
	return out
}

// data is what the rules read and redact of one event's data.
type data interface {
	str(path []string) (string, bool)
	redact(path []string, replacement string)
}

// apply runs rules over d in order: a matching drop rule drops the event
// (false), a matching redact rule replaces the field, and later rules see
// the replacement (as aw-server-rust's filter_event).
func apply(rules []privacyRule, d data) bool {
	for _, r := range rules {
		s, ok := d.str(r.path)
		if !ok || !r.re.MatchString(s) {
			continue
		}
		if r.drop {
			return false
		}
		d.redact(r.path, r.replacement)
	}
	return true
}

// Events applies the rules to a bucket's events: the events dropped are
// left out, those redacted carry the replacement. evs is never changed;
// when no rule names the bucket, evs itself is returned.
func (p *PrivacyFilters) Events(bucketID string, evs []Event) []Event {
	rules := p.forBucket(bucketID)
	if len(rules) == 0 {
		return evs
	}
	type outcome struct {
		keep bool
		f    Fields
	}
	memo := map[*Field]outcome{} // events decoded alike share their Fields
	out := make([]Event, 0, len(evs))
	for _, e := range evs {
		if e.Data.Len() == 0 {
			out = append(out, e) // no field to match
			continue
		}
		o, ok := memo[&e.Data.kv[0]]
		if !ok {
			d := &fieldsData{e.Data}
			o = outcome{apply(rules, d), d.f}
			memo[&e.Data.kv[0]] = o
		}
		if o.keep {
			e.Data = o.f
			out = append(out, e)
		}
	}
	return out
}

// AWEvents is Events for events as the client reads them.
func (p *PrivacyFilters) AWEvents(bucketID string, evs []aw.Event) []aw.Event {
	rules := p.forBucket(bucketID)
	if len(rules) == 0 {
		return evs
	}
	out := make([]aw.Event, 0, len(evs))
	for _, e := range evs {
		d := &jsonData{string(e.Data)}
		if apply(rules, d) {
			e.Data = json.RawMessage(d.raw)
			out = append(out, e)
		}
	}
	return out
}

// fieldsData is an event's Fields under the rules.
type fieldsData struct{ f Fields }

func (d *fieldsData) str(path []string) (string, bool) {
	x, ok := d.f.Get(path[0])
	switch {
	case !ok:
		return "", false
	case len(path) == 1:
		return x.Value, !x.JSON
	case !x.JSON:
		return "", false
	}
	v, _, ok := walkJSON(x.Value, path[1:])
	return v.Str, ok
}

func (d *fieldsData) redact(path []string, replacement string) {
	if len(path) == 1 {
		d.f = d.f.With(path[0], replacement)
		return
	}
	x, _ := d.f.Get(path[0])
	if raw, ok := spliceJSON(x.Value, path[1:], replacement); ok {
		d.f = d.f.with(Field{Key: path[0], Value: raw, JSON: true})
	}
}

// jsonData is an event's data as JSON text under the rules.
type jsonData struct{ raw string }

func (d *jsonData) str(path []string) (string, bool) {
	v, _, ok := walkJSON(d.raw, path)
	return v.Str, ok
}

func (d *jsonData) redact(path []string, replacement string) {
	if raw, ok := spliceJSON(d.raw, path, replacement); ok {
		d.raw = raw
	}
}

// walkJSON finds the string at path in a JSON object (each step a key of
// an object; of a repeated key the first, the one awbridge reads and
// shows, as gjson and Fields.Get do): the value, its offset in raw, and
// whether it is a string.
func walkJSON(raw string, path []string) (gjson.Result, int, bool) {
	off := 0
	cur := gjson.Parse(raw)
	for _, key := range path {
		if !cur.IsObject() {
			return gjson.Result{}, 0, false
		}
		var found gjson.Result
		cur.ForEach(func(k, v gjson.Result) bool {
			if k.Str == key {
				found = v
				return false
			}
			return true
		})
		if !found.Exists() {
			return gjson.Result{}, 0, false
		}
		off += found.Index
		cur = gjson.Parse(found.Raw)
	}
	return cur, off, cur.Type == gjson.String
}

// spliceJSON replaces the string at path in raw by s.
func spliceJSON(raw string, path []string, s string) (string, bool) {
	v, off, ok := walkJSON(raw, path)
	if !ok {
		return raw, false
	}
	q, _ := json.Marshal(s)
	return raw[:off] + string(q) + raw[off+len(v.Raw):], true
}

// PrivacyFilterCache parses the privacy_filters setting once per distinct
// value and remembers the last one parsed, for health. The zero value is
// ready; safe for concurrent use.
type PrivacyFilterCache struct {
	mu   sync.Mutex
	raw  string
	last *PrivacyFilters
	seen bool // a setting was parsed: the person's rules are known
}

// Parse returns ParsePrivacyFilters(setting), parsed again only when the
// setting changed.
func (c *PrivacyFilterCache) Parse(setting []byte) *PrivacyFilters {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = true
	if string(setting) != c.raw {
		c.raw, c.last = string(setting), ParsePrivacyFilters(setting)
	}
	return c.last
}

// Seen reports whether a setting was ever parsed: until then the
// person's rules are unknown, and a read that could not get them must not
// answer as if there were none.
func (c *PrivacyFilterCache) Seen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

// Raw is the last setting parsed, as read (nil before the first, or when
// it was unset).
func (c *PrivacyFilterCache) Raw() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw == "" {
		return nil
	}
	return []byte(c.raw)
}

// Last is the last setting parsed (nil before the first, or when it was
// unset).
func (c *PrivacyFilterCache) Last() *PrivacyFilters {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
