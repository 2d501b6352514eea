package aw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSettingsFixture reads the recorded answer of a fresh aw-server to
// GET /api/0/settings: an empty object, so nothing is set and nothing is
// ignored.
func TestSettingsFixture(t *testing.T) {
	fs := newFixtureServer(t, loadFixture(t, "settings_all"))
	c := fixtureClient(t, fs, Options{})
	s, err := c.Settings(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, Settings{}) {
		t.Errorf("Settings = %+v, want the zero value (a fresh server has none)", s)
	}
	if _, ok := s.DayStart(); ok {
		t.Error("DayStart reported as set")
	}
	reqs := fs.requests()
	if len(reqs) != 1 || reqs[0].RequestURI != "/api/0/settings" || reqs[0].Served != "settings_all" {
		t.Errorf("requests = %+v, want one GET /api/0/settings", reqs)
	}
}

// TestDecodeSettings covers what a web UI stores and the shapes a server
// may hold after a bad write.
func TestDecodeSettings(t *testing.T) {
	webui, err := os.ReadFile(filepath.Join("testdata", "settings_webui.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		body    string
		want    Settings
		wantErr string
	}{
		{name: "fresh server", body: "{}\n", want: Settings{}},
		{name: "web ui", body: string(webui), want: Settings{
			StartOfDay: "05:30", StartOfWeek: "Sunday", AlwaysActivePattern: "zoom|Microsoft Teams",
			Classes:      json.RawMessage(`[{"id":0,"name":["Work"],"rule":{"regex":"Google Docs|libreoffice|ReText","type":"regex"},"data":{"color":"#0F0","score":10}},{"id":1,"name":["Work","Programming"],"rule":{"regex":"GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite","type":"regex"}},{"id":2,"name":["Comms","IM"],"rule":{"regex":"Messenger|Telegram|Signal|WhatsApp|Slack","type":"regex"}},{"id":3,"name":["Uncategorized"],"rule":{"type":null},"data":{"color":"#CCC"}}]`),
			CategorySets: json.RawMessage(`[{"categories":[{"id":0,"name":["Work"],"rule":{"regex":"Google Docs|libreoffice|ReText","type":"regex"},"data":{"color":"#0F0","score":10}},{"id":1,"name":["Work","Programming"],"rule":{"regex":"GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite","type":"regex"}},{"id":2,"name":["Comms","IM"],"rule":{"regex":"Messenger|Telegram|Signal|WhatsApp|Slack","type":"regex"}},{"id":3,"name":["Uncategorized"],"rule":{"type":null},"data":{"color":"#CCC"}}],"id":"default"}]`),
			ActiveSetIDs: json.RawMessage(`["default"]`),
		}},
		{name: "short hour, seconds and case normalized", body: `{"startOfDay": "4:05:59.5", "startOfWeek": "monday"}`,
			want: Settings{StartOfDay: "04:05", StartOfWeek: "Monday"}},
		{name: "nulls are unset", body: `{"startOfDay": null, "startOfWeek": null, "classes": null, "always_active_pattern": null}`,
			want: Settings{}},
		{name: "wrong shapes ignored", body: `{"startOfDay": 4, "startOfWeek": "Mon", "classes": {"a": 1}, "always_active_pattern": true}`,
			want: Settings{}},
		{name: "bad times ignored", body: `{"startOfDay": "24:00"}`, want: Settings{}},
		{name: "empty time ignored", body: `{"startOfDay": ""}`, want: Settings{}},
		{name: "last duplicate wins", body: `{"startOfDay": "01:00", "startOfDay": "02:00"}`, want: Settings{StartOfDay: "02:00"}},
		{name: "empty classes kept", body: `{"classes": []}`, want: Settings{Classes: json.RawMessage(`[]`)}},
		{name: "privacy_filters kept, any shape but null", body: `{"privacy_filters": [{"enabled": true}], "startOfDay": "05:00"}`,
			want: Settings{StartOfDay: "05:00", PrivacyFilters: json.RawMessage(`[{"enabled": true}]`)}},
		{name: "privacy_filters of a wrong shape kept (a broken setting is told)", body: `{"privacy_filters": "x"}`,
			want: Settings{PrivacyFilters: json.RawMessage(`"x"`)}},
		{name: "privacy_filters null", body: `{"privacy_filters": null}`, want: Settings{}},
		{name: "category sets", body: `{"category_sets": [{"id": "work", "categories": []}], "active_set_ids": ["work"]}`,
			want: Settings{CategorySets: json.RawMessage(`[{"id": "work", "categories": []}]`), ActiveSetIDs: json.RawMessage(`["work"]`)}},
		{name: "category sets of the wrong shape", body: `{"category_sets": {"id": "work"}, "active_set_ids": "work"}`, want: Settings{}},
		{name: "list of keys (old aw-server-rust)", body: `[{"key": "settings.startOfDay"}]`, wantErr: "expected a JSON object of settings, got array"},
		{name: "null body", body: `null`, wantErr: "expected a JSON object of settings, got null"},
		{name: "html", body: `<!doctype html>`, wantErr: "body is HTML"},
		{name: "truncated", body: `{"classes": [`, wantErr: "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeSettings([]byte(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestSettingsMalformedIsTyped checks a body that is not a settings object
// is a Malformed *Error naming the operation, and an HTML 404 (a server
// without the endpoint) an HTTPStatus one.
func TestSettingsMalformedIsTyped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/0/settings" {
			_, _ = w.Write([]byte(`["startOfDay"]`))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<html>404</html>"))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Settings(testCtx(t))
	if e := asError(t, err); e.Kind != Malformed || e.Op != "settings" {
		t.Errorf("err = %v, want a malformed settings error", err)
	}
}

func TestParseDayStart(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"04:00", 4 * time.Hour, true},
		{"00:00", 0, true},
		{"4:00", 4 * time.Hour, true},
		{"23:59", 23*time.Hour + 59*time.Minute, true},
		{"05:30:00", 5*time.Hour + 30*time.Minute, true},
		{"05:30:59.123", 5*time.Hour + 30*time.Minute, true},
		{"24:00", 0, false},
		{"12:60", 0, false},
		{"12:5", 0, false},
		{"123:00", 0, false},
		{"12:00:60", 0, false},
		{"12:00:0", 0, false},
		{"12:00:00.", 0, false},
		{"12:00:00:00", 0, false},
		{"-1:00", 0, false},
		{"+1:00", 0, false},
		{" 4:00", 0, false},
		{"4", 0, false},
		{"", 0, false},
		{"０4:00", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseDayStart(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseDayStart(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzDecodeSettings(f *testing.F) {
	addSeeds(f, "settings_")
	if b, err := os.ReadFile(filepath.Join("testdata", "settings_webui.json")); err == nil {
		f.Add(b)
	}
	for _, s := range []string{`{"startOfDay": "4:00:00.1"}`, `{"classes": [[[]]]}`, `{"startOfWeek": "SUNDAY", "startOfWeek": 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in := bytes.Clone(body)
		s, err := decodeSettings(in)
		if err != nil {
			if len(err.Error()) > 200 {
				t.Errorf("error text is %d bytes: it must not echo the body", len(err.Error()))
			}
			return
		}
		if s.StartOfDay != "" {
			d, ok := s.DayStart()
			if !ok || d < 0 || d >= 24*time.Hour || fmt.Sprintf("%02d:%02d", int(d/time.Hour), int(d%time.Hour/time.Minute)) != s.StartOfDay {
				t.Errorf("StartOfDay %q does not read back (%v, %v)", s.StartOfDay, d, ok)
			}
		}
		if s.StartOfWeek != "" {
			if wd, ok := s.WeekStart(); !ok || wd.String() != s.StartOfWeek {
				t.Errorf("StartOfWeek %q does not read back", s.StartOfWeek)
			}
		}
		classes := string(s.Classes)
		if s.Classes != nil && (!json.Valid(s.Classes) || s.Classes[0] != '[') {
			t.Errorf("classes %q is not an array", s.Classes)
		}
		for i := range in {
			in[i] = 0
		}
		if string(s.Classes) != classes {
			t.Error("classes alias the body")
		}
	})
}

// TestSettingsTooLargeReadsKeys: a settings object too large to read
// (another local program stored a huge setting of its own) no longer
// costs the person's privacy filters and day start, which were then
// silently not applied: the keys awbridge reads are asked one by one. One
// of those keys too large still fails the read.
func TestSettingsTooLargeReadsKeys(t *testing.T) {
	keys := map[string]string{
		"startOfDay":      `"05:30"`,
		"privacy_filters": `[{"enabled":true,"field":"title","pattern":"secret","action":"drop"}]`,
		"zjunk":           `"` + strings.Repeat("x", 200<<10) + `"`,
	}
	var mu sync.Mutex // the handler's goroutines and the test share keys and asked
	asked := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/0/settings" {
			var parts []string
			for k, v := range keys {
				parts = append(parts, fmt.Sprintf("%q:%s", k, v))
			}
			_, _ = w.Write([]byte("{" + strings.Join(parts, ",") + "}"))
			return
		}
		key := strings.TrimPrefix(r.URL.Path, "/api/0/settings/")
		asked[key]++
		v, ok := keys[key]
		if !ok { // aw-server-rust's answer for a key never set
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"not found"}`))
			return
		}
		_, _ = w.Write([]byte(v))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, MaxBodyBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Settings(testCtx(t))
	if err != nil {
		t.Fatalf("settings with another program's huge setting: %v", err)
	}
	if s.StartOfDay != "05:30" || !strings.Contains(string(s.PrivacyFilters), `"secret"`) {
		t.Errorf("settings = %+v, want the day start and privacy filters stored", s)
	}
	mu.Lock()
	if asked["zjunk"] != 0 || asked["privacy_filters"] != 1 {
		t.Errorf("keys asked: %v", asked)
	}
	keys["privacy_filters"] = `["` + strings.Repeat("y", 100<<10) + `"]`
	mu.Unlock()
	if _, err := c.Settings(testCtx(t)); KindOf(err) != TooLarge {
		t.Errorf("privacy_filters itself too large: %v, want a TooLarge error", err)
	}
}
