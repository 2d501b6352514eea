package aw

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/internal/jsonw"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixtureBodies returns the body_raw of every fixture, or nil when the
// fixtures folder is missing (fuzz seeds then come from the literals only).
func fixtureBodies(tb testing.TB) map[string]string {
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "awfixtures"))
	if err != nil {
		tb.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	out := map[string]string{}
	for _, n := range names {
		base := strings.TrimSuffix(filepath.Base(n), ".json")
		if strings.HasPrefix(base, "_") {
			continue
		}
		out[base] = loadFixture(tb, base).BodyRaw
	}
	return out
}

// TestDecodeGolden decodes every successful read fixture and compares the
// result, as JSON, with testdata/golden/<fixture>.json (-update rewrites).
func TestDecodeGolden(t *testing.T) {
	fixtureDir(t)
	tests := []struct {
		prefix string
		decode func([]byte) (any, error)
	}{
		{"info", func(b []byte) (any, error) { return decodeInfo(b) }},
		{"buckets", func(b []byte) (any, error) { return decodeBuckets(b) }},
		{"events_", func(b []byte) (any, error) { return decodeEventList(b, false) }},
		{"settings_all", func(b []byte) (any, error) { return decodeSettings(b) }},
	}
	n := 0
	for name := range fixtureBodies(t) {
		f := loadFixture(t, name)
		if f.Status != 200 || f.Request.Method != "GET" || f.Request.Headers["Host"] != "" {
			continue
		}
		for _, tt := range tests {
			if name != tt.prefix && !(strings.HasSuffix(tt.prefix, "_") && strings.HasPrefix(name, tt.prefix)) {
				continue
			}
			n++
			t.Run(name, func(t *testing.T) {
				v, err := tt.decode([]byte(f.BodyRaw))
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.MarshalIndent(v, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, '\n')
				golden := filepath.Join("testdata", "golden", name+".json")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -run TestDecodeGolden -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("decoded %s differs from %s:\n%s", name, golden, got)
				}
			})
		}
	}
	if n < 15 {
		t.Errorf("only %d fixtures decoded; expected info, buckets, 3 buckets and the events fixtures", n)
	}
}

func TestDecodeEventsShapes(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []Event
	}{
		{"rust style", `[{"id": null, "timestamp": "2026-11-22T01:00:00.123456789Z", "duration": 0, "data": {"app": "x"}}]`,
			[]Event{{Timestamp: time.Date(2026, 11, 22, 1, 0, 0, 123456789, time.UTC), Data: json.RawMessage(`{"app": "x"}`)}}},
		{"no id, offset converted", `[{"timestamp": "2026-11-22T03:00:00.5+02:00", "duration": 1.5, "data": {}}]`,
			[]Event{{Timestamp: time.Date(2026, 11, 22, 1, 0, 0, 5e8, time.UTC), Duration: 1.5, Data: json.RawMessage(`{}`)}}},
		{"sorted newest first, ties stable", `[
			{"id": 1, "timestamp": "2026-11-22T01:00:00+00:00", "duration": 1, "data": {"n": 1}},
			{"id": 2, "timestamp": "2026-11-22T01:00:05+00:00", "duration": 1, "data": {"n": 2}},
			{"id": 3, "timestamp": "2026-11-22T01:00:00+00:00", "duration": 1, "data": {"n": 3}}]`,
			[]Event{
				{ID: ptr(int64(2)), Timestamp: time.Date(2026, 11, 22, 1, 0, 5, 0, time.UTC), Duration: 1, Data: json.RawMessage(`{"n": 2}`)},
				{ID: ptr(int64(1)), Timestamp: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC), Duration: 1, Data: json.RawMessage(`{"n": 1}`)},
				{ID: ptr(int64(3)), Timestamp: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC), Duration: 1, Data: json.RawMessage(`{"n": 3}`)},
			}},
		{"unknown fields ignored, escaped keys", `[{"timestamp": "2026-11-22T01:00:00+00:00", "dur\u0061tion": 2, "data": {"t\"": [1, {"a": null}]}, "extra": true}]`,
			[]Event{{Timestamp: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC), Duration: 2, Data: json.RawMessage(`{"t\"": [1, {"a": null}]}`)}}},
		{"empty", ` [ ] `, []Event{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeEventList([]byte(tt.body), false)
			if err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tt.want)
			if !bytes.Equal(g, w) {
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestDecodeBucketsShapes(t *testing.T) {
	// aw-server-rust adds metadata and may send null created/last_updated.
	body := `{"b1": {"id": "b1", "created": null, "name": "named", "type": "currentwindow", "client": "aw-watcher-window",
		"hostname": "h", "data": {"k": 1}, "metadata": {"start": null, "end": null}, "last_updated": null},
		"b2": {"type": "afkstatus", "created": "2026-11-22T01:35:21.8Z", "client": null, "data": null}}`
	got, err := decodeBuckets([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	b1, b2 := got["b1"], got["b2"]
	if len(got) != 2 || b1.ID != "b1" || b1.Name == nil || *b1.Name != "named" || !b1.Created.IsZero() || string(b1.Data) != `{"k": 1}` {
		t.Errorf("b1 = %+v", b1)
	}
	if b2.ID != "b2" || b2.Type != TypeAFK || b2.Client != "" || b2.Data != nil || !b2.Created.Equal(time.Date(2026, 11, 22, 1, 35, 21, 8e8, time.UTC)) {
		t.Errorf("b2 = %+v", b2)
	}
}

func TestDecodeDataIsCopied(t *testing.T) {
	body := []byte(`[{"timestamp": "2026-11-22T01:00:00+00:00", "duration": 1, "data": {"title": "abc"}}]`)
	events, err := decodeEventList(body, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range body {
		body[i] = 'x' // the caller reuses its buffer
	}
	if string(events[0].Data) != `{"title": "abc"}` || events[0].Str("title") != "abc" {
		t.Errorf("Data aliases the body: %s", events[0].Data)
	}
}

func TestDepthWithin(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`[[[]]]`, true},
		{`[[[[]]]]`, false},
		{`["[[[[[[", {"a": "]]]]"}]`, true},
		{`["\"[[[[", [[]]]`, true},
		{`["\\", [[[]]]]`, false},
	}
	for _, tt := range tests {
		if got := jsonw.DepthWithin([]byte(tt.in), 3); got != tt.want {
			t.Errorf("depthWithin(%s, 3) = %v", tt.in, got)
		}
	}
}

func addSeeds(f *testing.F, prefixes ...string) {
	for name, body := range fixtureBodies(f) {
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				f.Add([]byte(body))
			}
		}
	}
	for _, s := range []string{
		``, `[]`, `{}`, `null`, `<html>`, `[[[[[[[[`, `[{"timestamp": "2026-11-22T01:00:00Z", "duration": 1e308, "data": {}}]`,
		`[{"id": 9223372036854775808, "timestamp": "9999-12-31T23:59:59.999999999+14:00", "duration": 0, "data": {"": ""}}]`,
		`{"b": {"id": "b", "type": "t", "created": "2026-11-22T01:35:21.801791+00:00", "last_updated": "0001-01-01T00:00:00Z"}}`,
		`{"": {"type": "t"}}`, `{"a": {"type": "t"}, "a": {"type": "u"}}`,
	} {
		f.Add([]byte(s))
	}
}

func FuzzDecodeEvents(f *testing.F) {
	addSeeds(f, "events_", "event_", "heartbeat_")
	f.Fuzz(func(t *testing.T, body []byte) {
		in := bytes.Clone(body)
		events, err := decodeEventList(in, false)
		if err != nil {
			if events != nil {
				t.Errorf("events with an error")
			}
			if len(err.Error()) > 200 {
				t.Errorf("error text is %d bytes: it must not echo the body", len(err.Error()))
			}
			return
		}
		datas := make([]string, len(events))
		for i, ev := range events {
			if ev.Timestamp.IsZero() || ev.Timestamp.Location() != time.UTC {
				t.Errorf("event %d: timestamp %v", i, ev.Timestamp)
			}
			if math.IsNaN(ev.Duration) || ev.Duration < 0 || ev.Duration > maxDurationSeconds {
				t.Errorf("event %d: duration %v", i, ev.Duration)
			}
			if ev.End().Before(ev.Timestamp) {
				t.Errorf("event %d: ends before it starts", i)
			}
			if !json.Valid(ev.Data) || ev.Data[0] != '{' {
				t.Errorf("event %d: data %q is not an object", i, ev.Data)
			}
			if i > 0 && events[i-1].Timestamp.Before(ev.Timestamp) {
				t.Errorf("not newest first at %d", i)
			}
			datas[i] = string(ev.Data)
		}
		for i := range in {
			in[i] = 0
		}
		for i, ev := range events {
			if string(ev.Data) != datas[i] {
				t.Errorf("event %d: data aliases the body", i)
			}
		}
	})
}

func FuzzDecodeBuckets(f *testing.F) {
	addSeeds(f, "buckets", "bucket_")
	f.Fuzz(func(t *testing.T, body []byte) {
		buckets, err := decodeBuckets(body)
		if err != nil {
			if len(err.Error()) > 200 {
				t.Errorf("error text is %d bytes", len(err.Error()))
			}
		} else {
			for id, b := range buckets {
				if id == "" || b.ID != id || b.Type == "" {
					t.Errorf("bucket %q: %+v", id, b)
				}
				if b.Data != nil && (!json.Valid(b.Data) || b.Data[0] != '{') {
					t.Errorf("bucket %q: data %q", id, b.Data)
				}
				for _, ts := range []time.Time{b.Created, b.LastUpdated} {
					if !ts.IsZero() && ts.Location() != time.UTC {
						t.Errorf("bucket %q: time %v not UTC", id, ts)
					}
				}
			}
		}
		if info, err := decodeInfo(body); err == nil && !json.Valid(body) {
			t.Errorf("info %+v decoded from invalid JSON", info)
		}
	})
}

func BenchmarkDecodeEvents(b *testing.B) {
	var one strings.Builder
	one.WriteString("[")
	for i := range 500 {
		if i > 0 {
			one.WriteString(", ")
		}
		one.WriteString(`{"id": 17, "timestamp": "2026-11-22T01:33:52.123456+00:00", "duration": 88.0, "data": {"app": "Google-chrome", "title": "encoding/json - Go Packages - Google Chrome"}}`)
	}
	one.WriteString("]")
	bodies := map[string][]byte{
		"limit1": []byte(`[{"id": 17, "timestamp": "2026-11-22T01:33:52+00:00", "duration": 88.0, "data": {"app": "Google-chrome", "title": "encoding/json - Go Packages - Google Chrome"}}]`),
		"500":    []byte(one.String()),
	}
	for name, body := range bodies {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeEventList(body, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSkipMalformedEvents: for history, one stored event that is not well
// formed is left out instead of failing the read; without the option the
// read still fails, and an answer that is not an array fails either way.
func TestSkipMalformedEvents(t *testing.T) {
	body := []byte(`[{"id":3,"timestamp":"2026-03-24T09:30:00+00:00","duration":60,"data":{"app":"Code"}},` +
		`{"id":2,"timestamp":"2026-03-24T09:20:00+00:00","duration":-300,"data":{"app":"Evil"}},` +
		`{"id":1,"timestamp":"2026-03-24T09:10:00+00:00","duration":60,"data":"just a string"},` +
		`{"id":0,"timestamp":"2026-03-24T09:00:00+00:00","duration":60,"data":{"app":"Code"}}]`)
	if _, err := decodeEventList(body, false); err == nil {
		t.Fatal("a malformed event passed the strict decoder")
	}
	evs, err := decodeEventList(body, true)
	if err != nil || len(evs) != 2 || evs[0].Str("app") != "Code" || evs[1].Str("app") != "Code" {
		t.Fatalf("skipping: %v, %+v", err, evs)
	}
	if _, err := decodeEventList([]byte(`{"not":"an array"}`), true); err == nil {
		t.Fatal("an object passed as a list of events")
	}
}

// TestSkipDeepEvents: aw-server stores and serves an event whose data
// nests 70 levels; a history read leaves out that event alone (the whole
// body used to fail the depth bound), a strict read still fails, and a
// body that is not a closed array still fails either way.
func TestSkipDeepEvents(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70)
	body := []byte(` [{"id":3,"timestamp":"2026-03-24T09:30:00+00:00","duration":60,"data":{"app":"Code"}},` +
		`{"id":2,"timestamp":"2026-03-24T09:20:00+00:00","duration":60,"data":` + deep + `} ,` +
		`{"id":1,"timestamp":"2026-03-24T09:10:00+00:00","duration":60,"data":{"k":"[{\"]"}},` +
		`{"id":0,"timestamp":"2026-03-24T09:00:00+00:00","duration":60,"data":{"app":"Code"}}] `)
	if _, err := decodeEventList(body, false); err == nil {
		t.Fatal("a 70-level event passed the strict decoder")
	}
	evs, err := decodeEventList(body, true)
	if err != nil || len(evs) != 3 || evs[0].Str("app") != "Code" || evs[2].Str("app") != "Code" {
		t.Fatalf("skipping: %v, %+v", err, evs)
	}
	for _, bad := range []string{`[` + deep, `[{"data":` + deep + `}`, `[` + deep + `] x`, `{"a":` + deep + `}`} {
		if _, err := decodeEventList([]byte(bad), true); err == nil {
			t.Errorf("%.20q... passed", bad)
		}
	}
}
