package aw_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
)

// The simulator imports aw (through aw/transform), so a test that runs it
// lives outside package aw.

// TestSettingsFromSimulator stores settings the way the web UI does (one
// POST /api/0/settings/<key> per setting) in the simulator and reads them
// back: client and simulator agree on the endpoint and its shape.
func TestSettingsFromSimulator(t *testing.T) {
	sim := awsim.New(awsim.Options{Now: func() time.Time { return time.Date(2026, 11, 22, 1, 35, 21, 0, time.UTC) }})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	post := func(key, value string) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/api/0/settings/"+key, "application/json", strings.NewReader(value))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %s", key, resp.Status)
		}
	}
	classes := `[{"name": ["Work"], "rule": {"type": "regex", "regex": "Code"}}]`
	post("startOfDay", `"05:30"`)
	post("startOfWeek", `"Sunday"`)
	post("classes", classes)
	post("theme", `"dark"`)

	c, err := aw.New(aw.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	s, err := c.Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s.StartOfDay != "05:30" || s.StartOfWeek != "Sunday" {
		t.Errorf("Settings = %+v", s)
	}
	if d, ok := s.DayStart(); !ok || d != 5*time.Hour+30*time.Minute {
		t.Errorf("DayStart = %v, %v", d, ok)
	}
	if wd, ok := s.WeekStart(); !ok || wd != time.Sunday {
		t.Errorf("WeekStart = %v, %v", wd, ok)
	}
	var got, want any
	if err := json.Unmarshal(s.Classes, &got); err != nil {
		t.Fatalf("classes %s: %v", s.Classes, err)
	}
	_ = json.Unmarshal([]byte(classes), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("classes = %s, want %s", s.Classes, classes)
	}
}
