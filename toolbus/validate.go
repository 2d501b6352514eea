package toolbus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Common argument names the bus adds to every tool.
const (
	argTraceID      = "trace_id"
	argSpanID       = "span_id"
	argParentSpanID = "parent_span_id"
	argMaxAgeMs     = "max_age_ms"
)

// idPattern is what a trace or span id may be: they name files.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

func checkID(v any) string {
	s := v.(string)
	if !idPattern.MatchString(s) || s == "." || s == ".." {
		return "must be 1-128 letters, digits, '.', '_' or '-', and not '.' or '..'"
	}
	return ""
}

func commonParams(readOnly bool) []Param {
	ps := []Param{
		{Name: argTraceID, Type: "string", Description: "Correlation id of the run; generated (UUIDv7) when absent.", MaxLen: 128, Pattern: idPattern.String(), Check: checkID},
		{Name: argSpanID, Type: "string", Description: "Id of this call within the run; generated when absent.", MaxLen: 128, Pattern: idPattern.String(), Check: checkID},
		{Name: argParentSpanID, Type: "string", Description: "Span id of the call that caused this one.", MaxLen: 128, Pattern: idPattern.String(), Check: checkID},
	}
	if readOnly {
		ps = append(ps, Param{Name: argMaxAgeMs, Type: "integer", Min: 0, Max: 86_400_000,
			Description: "Freshness: answer from the warm frame or cache when it is at most this many milliseconds old; 0 forces a fresh read."})
	}
	return ps
}

// decodeArgs strictly decodes raw (an object, null or absent) against
// params: exact key set (case-sensitive), exact types, bounds.
func decodeArgs(raw json.RawMessage, params []Param) (map[string]any, *ToolError) {
	raw = bytes.TrimSpace(raw)
	out := make(map[string]any, 4)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return out, nil
	}
	if raw[0] != '{' {
		return nil, Invalid("arguments must be a JSON object", "pass named arguments, e.g. {}", nil)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, Invalid("arguments are not valid JSON", "", nil)
	}
	for name, v := range fields {
		p := findParam(params, name)
		if p == nil {
			names := make([]string, len(params))
			for i := range params {
				names[i] = params[i].Name
			}
			te := Invalid(fmt.Sprintf("unknown argument %q", clip(name, 64)), "allowed arguments: "+strings.Join(names, ", "),
				map[string]any{"argument": clip(name, 64)})
			te.DidYouMean = suggest(name, names)
			return nil, te
		}
		val, msg := decodeValue(p, v)
		if msg != "" {
			return nil, Invalid(fmt.Sprintf("argument %q %s", p.Name, msg), p.Description, map[string]any{"argument": p.Name})
		}
		out[p.Name] = val
	}
	return out, nil
}

func findParam(params []Param, name string) *Param {
	for i := range params {
		if params[i].Name == name {
			return &params[i]
		}
	}
	return nil
}

func decodeValue(p *Param, v json.RawMessage) (any, string) {
	switch p.Type {
	case "string":
		if len(v) == 0 || v[0] != '"' {
			return nil, "must be a string"
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, "must be a string"
		}
		if p.MaxLen > 0 && len(s) > p.MaxLen {
			return nil, fmt.Sprintf("must be at most %d bytes", p.MaxLen)
		}
		if !utf8.ValidString(s) {
			return nil, "must be valid UTF-8"
		}
		if p.Check != nil {
			if msg := p.Check(s); msg != "" {
				return nil, msg
			}
		}
		return s, ""
	case "integer":
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&n); err != nil {
			return nil, "must be an integer"
		}
		i, err := n.Int64()
		if err != nil {
			return nil, "must be an integer"
		}
		if p.Max > p.Min && (i < p.Min || i > p.Max) {
			return nil, fmt.Sprintf("must be between %d and %d", p.Min, p.Max)
		}
		return i, ""
	case "boolean":
		switch string(v) {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return nil, "must be true or false"
	}
	return nil, "has an unsupported type"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return strings.ToValidUTF8(s, "?")
	}
	return strings.ToValidUTF8(s[:n], "?") + "…"
}

// suggest returns up to three names close to name (edit distance).
func suggest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	n := strings.ToLower(name)
	for _, c := range names {
		lc := strings.ToLower(c)
		d := levenshtein(n, lc)
		if strings.Contains(lc, n) || strings.Contains(n, lc) {
			d = min(d, 1)
		}
		if d <= max(2, len(c)/3) {
			cs = append(cs, cand{c, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	out := []string{}
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

func levenshtein(a, b string) int {
	if len(a) > 128 {
		a = a[:128]
	}
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
