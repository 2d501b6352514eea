package transform

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// TestParsePrivacyFilters: which rules of a setting apply, and what is
// said of those skipped (by number, never their pattern).
func TestParsePrivacyFilters(t *testing.T) {
	for _, tc := range []struct {
		name, setting string
		rules         int
		skipped       []string // substrings, one per skipped entry
	}{
		{"absent", ``, 0, nil},
		{"null", `null`, 0, nil},
		{"empty", `[]`, 0, nil},
		{"the web UI's examples", `[{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"(?i)(private browsing|incognito)","action":"drop"},
			{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"(?i).*banking.*","action":"redact","replacement":"REDACTED"}]`, 2, nil},
		{"disabled, never read", `[{"enabled":false,"pattern":"(","action":"explode"}]`, 0, nil},
		{"not an array", `{"enabled":true}`, 0, []string{"not a JSON array"}},
		{"too large", `["` + strings.Repeat("x", MaxPrivacyFiltersBytes) + `"]`, 0, []string{"more than"}},
		{"each fault", `[1,
			{"enabled":"yes","field":"title","pattern":"a","action":"drop"},
			{"enabled":true,"pattern":"a","action":"drop"},
			{"enabled":true,"field":"","pattern":"a","action":"drop"},
			{"enabled":true,"field":"title","pattern":"a","action":"hide"},
			{"enabled":true,"field":"title","pattern":"a","action":"redact"},
			{"enabled":true,"field":"title","pattern":"a","action":"redact","replacement":""},
			{"enabled":true,"field":"title","pattern":"(secret","action":"drop"},
			{"enabled":true,"field":"title","pattern":7,"action":"drop"},
			{"enabled":true,"field":"title","action":"drop"},
			{"enabled":true,"field":"title","pattern":"a","action":"drop","bucket_prefix":3},
			{"enabled":true,"field":"title","pattern":"` + strings.Repeat("a", MaxPrivacyPatternBytes+1) + `","action":"drop"},
			{"enabled":true,"field":"title","pattern":"ok","action":"drop"}]`, 1,
			[]string{"rule 1: not a JSON object", "rule 2: enabled", "rule 3: field", "rule 4: field", "rule 5: action",
				"rule 6: a redact rule needs", "rule 7: a redact rule needs", "rule 8: its pattern does not compile",
				"rule 9: pattern must be", "rule 10: pattern must be", "rule 11: bucket_prefix must be", "rule 12: pattern is longer"}},
		// A short pattern of a huge program: 4 KiB of [^\x01]{0,1000} is
		// 270,000 instructions (21 MiB, ~12 ms a title); a hundred of them
		// took 20 s and 2 GiB to compile.
		{"a short pattern of a large program", `[{"enabled":true,"field":"title","pattern":"` + strings.Repeat(`[^\\x01]{0,1000}`, 5) + `","action":"drop"},
			{"enabled":true,"field":"title","pattern":"ok","action":"drop"}]`, 1, []string{"rule 1: its pattern compiles to more than"}},
		{"large programs in all", "[" + strings.TrimSuffix(strings.Repeat(`{"enabled":true,"field":"title","pattern":"`+strings.Repeat(`[^\\x01]{0,1000}`, 4)+`","action":"drop"},`, 20), ",") + "]",
			16, []string{"rule 17: the patterns so far", "rule 18: the patterns so far", "rule 19: the patterns so far", "rule 20: the patterns so far"}},
		{"too many", "[" + strings.TrimSuffix(strings.Repeat(`{"enabled":true,"field":"title","pattern":"a","action":"drop"},`, MaxPrivacyFilters+2), ",") + "]",
			MaxPrivacyFilters, []string{fmt.Sprintf("rules %d to %d", MaxPrivacyFilters+1, MaxPrivacyFilters+2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ParsePrivacyFilters([]byte(tc.setting))
			if p.Len() != tc.rules {
				t.Errorf("%d rules apply, want %d", p.Len(), tc.rules)
			}
			var skipped []string
			if p != nil {
				skipped = p.Skipped
			}
			if len(skipped) != len(tc.skipped) {
				t.Fatalf("skipped %q, want %d entries like %q", skipped, len(tc.skipped), tc.skipped)
			}
			for i, want := range tc.skipped {
				if !strings.Contains(skipped[i], want) {
					t.Errorf("skipped[%d] = %q, want it to say %q", i, skipped[i], want)
				}
				if strings.Contains(skipped[i], "secret") {
					t.Errorf("skipped[%d] = %q shows the pattern", i, skipped[i])
				}
			}
		})
	}
}

// TestPrivacyFiltersApply: what a bucket's events become, for events as
// the activity tools hold them (Events) and as frames read them
// (AWEvents), which must agree.
func TestPrivacyFiltersApply(t *testing.T) {
	const (
		win = "aw-watcher-window_host"
		web = "aw-watcher-web-chrome_host"
	)
	events := []string{
		`{"app":"Firefox","title":"Private Browsing - Mozilla Firefox"}`,
		`{"app":"Firefox","title":"My BANKING account"}`,
		`{"app":"Code","title":"main.go - awbridge"}`,
		`{"app":"Code","title":7}`,
		`{"app":"Code","meta":{"path":"/home/me/secret/x.go","n":1}}`,
		`{"app":"Code","title":"a","title":"private browsing"}`,
		`{"url":"https://bank.example/account","title":"Account"}`,
	}
	for _, tc := range []struct {
		name, setting, bucket string
		want                  []string // the events kept, their data
	}{
		{"no rules", `[]`, win, events},
		{"the web UI's examples", `[{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"(?i)(private browsing|incognito)","action":"drop"},
			{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"(?i).*banking.*","action":"redact","replacement":"REDACTED"}]`, win,
			[]string{`{"app":"Firefox","title":"REDACTED"}`, events[2], events[3], events[4], events[5], events[6]}},
		{"a repeated key: the first is read, as shown", `[{"enabled":true,"field":"title","pattern":"^a$","action":"drop"}]`, win,
			append(slices.Clone(events[:5]), events[6])},
		{"another bucket", `[{"enabled":true,"bucket_prefix":"aw-watcher-window","field":"title","pattern":"(?i)private","action":"drop"}]`, web, events},
		{"no prefix: every bucket", `[{"enabled":true,"field":"url","pattern":"bank","action":"drop"}]`, web, events[:6]},
		{"unanchored, case-sensitive", `[{"enabled":true,"field":"title","pattern":"banking","action":"drop"}]`, win, events},
		{"a dotted path", `[{"enabled":true,"field":"meta.path","pattern":"/secret/","action":"redact","replacement":"(hidden)"}]`, win,
			append(slices.Clone(events[:4]), `{"app":"Code","meta":{"path":"(hidden)","n":1}}`, events[5], events[6])},
		{"a path to a non-string", `[{"enabled":true,"field":"meta.n","pattern":"1","action":"drop"},{"enabled":true,"field":"title","pattern":"7","action":"drop"}]`, win, events},
		{"later rules see a replacement", `[{"enabled":true,"field":"title","pattern":"main","action":"redact","replacement":"work"},
			{"enabled":true,"field":"title","pattern":"^work$","action":"drop"}]`, win, append(slices.Clone(events[:2]), events[3:]...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ParsePrivacyFilters([]byte(tc.setting))
			var (
				awEvs []aw.Event
				dec   Decoder
				evs   []Event
			)
			for i, d := range events {
				e := aw.Event{Timestamp: time.Unix(int64(i), 0), Data: json.RawMessage(d)}
				awEvs = append(awEvs, e)
				evs = append(evs, dec.Event(e), dec.Event(e)) // twice: the second shares the first's Fields
			}
			before := slices.Clone(evs)
			var got, gotAW []string
			for _, e := range p.Events(tc.bucket, evs) {
				got = append(got, fieldsJSON(e.Data))
			}
			got = slices.Compact(got)
			for _, e := range p.AWEvents(tc.bucket, awEvs) {
				gotAW = append(gotAW, string(e.Data))
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, fieldsJSON(parseFields(w)))
			}
			if !slices.Equal(got, want) {
				t.Errorf("Events kept\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !slices.Equal(gotAW, tc.want) {
				t.Errorf("AWEvents kept\n%s\nwant\n%s", strings.Join(gotAW, "\n"), strings.Join(tc.want, "\n"))
			}
			for i := range evs {
				if fieldsJSON(evs[i].Data) != fieldsJSON(before[i].Data) {
					t.Fatalf("the input event %d changed", i)
				}
			}
		})
	}
}

// fieldsJSON writes Fields as a JSON object, keys in order.
func fieldsJSON(f Fields) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, x := range f.kv {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(x.Key)
		b.Write(k)
		b.WriteByte(':')
		if x.JSON {
			b.WriteString(x.Value)
			continue
		}
		v, _ := json.Marshal(x.Value)
		b.Write(v)
	}
	return b.String() + "}"
}

// TestPrivacyFilterCache parses a setting once per value.
func TestPrivacyFilterCache(t *testing.T) {
	var c PrivacyFilterCache
	if c.Last() != nil {
		t.Fatal("Last before any setting")
	}
	a := c.Parse([]byte(`[{"enabled":true,"field":"title","pattern":"(","action":"drop"}]`))
	if b := c.Parse([]byte(`[{"enabled":true,"field":"title","pattern":"(","action":"drop"}]`)); a != b || c.Last() != a || len(a.Skipped) != 1 {
		t.Fatalf("parsed again or not remembered: %p %p %v", a, b, a.Skipped)
	}
	if c.Parse(nil) != nil || c.Last() != nil {
		t.Fatal("an unset setting still applies rules")
	}
}

// FuzzPrivacyFilters: any setting and any event data are read without a
// panic, and the events as the activity tools hold them and as frames
// read them keep the same events (data without repeated keys).
func FuzzPrivacyFilters(f *testing.F) {
	f.Add(`[{"enabled":true,"field":"title","pattern":"(?i)bank","action":"drop"}]`, `{"title":"My Bank"}`)
	f.Add(`[{"enabled":true,"field":"a.b","pattern":"x","action":"redact","replacement":"y"}]`, `{"a":{"b":"x"}}`)
	f.Add(`[{"enabled":true,"field":"title","pattern":"^","action":"redact","replacement":"\"}"}]`, `{"title":"t","n":[1,{"x":2}]}`)
	f.Fuzz(func(t *testing.T, setting, data string) {
		p := ParsePrivacyFilters([]byte(setting))
		if !json.Valid([]byte(data)) {
			return
		}
		var m map[string]any
		if json.Unmarshal([]byte(data), &m) != nil || strings.Count(data, `":`) != len(m) {
			return // not an object, or maybe a repeated key
		}
		var d Decoder
		e := aw.Event{Data: json.RawMessage(data)}
		got, gotAW := p.Events("b", []Event{d.Event(e)}), p.AWEvents("b", []aw.Event{e})
		if len(got) != len(gotAW) {
			t.Fatalf("Events kept %d, AWEvents %d", len(got), len(gotAW))
		}
		if len(gotAW) == 1 && !json.Valid(gotAW[0].Data) {
			t.Fatalf("a redaction broke the JSON: %s", gotAW[0].Data)
		}
	})
}
