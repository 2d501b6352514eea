package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/toolbus"
)

// TestAnswersFollowTheMachineZone: frames (both modes), aw.get_state and
// the activity tools name the person's zone and its UTC offset, and
// follow the machine's zone when it changes, without a restart.
func TestAnswersFollowTheMachineZone(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	sim := awsim.New(awsim.Options{Hostname: "h", Seed: 7, Now: func() time.Time { return now }})
	sim.Seed(now)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	var (
		mu  sync.Mutex
		cur activity.Zone
	)
	set := func(name string) {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		cur = activity.Zone{Name: name, Loc: loc}
		mu.Unlock()
	}
	set("Europe/Berlin")
	c := config.Defaults()
	c.AW.URL, c.AW.Timeout = srv.URL, 5*time.Second
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Now: func() time.Time { return now },
		MachineZone: func() activity.Zone { mu.Lock(); defer mu.Unlock(); return cur }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	ctx := context.Background()
	check := func(name, offset string) {
		t.Helper()
		want := []byte(`"timezone":{"name":"` + name + `","utc_offset":"` + offset + `"}`)
		for _, r := range []toolbus.Request{
			{Direct: true, Name: "nowframe.build"},
			{Name: "nowframe_build", Args: json.RawMessage(`{"response_mode":"compact"}`)},
			{Direct: true, Name: "aw.get_state"},
		} {
			out := e.Call(ctx, r)
			if out.Err != nil || !bytes.Contains(out.Body, want) {
				t.Errorf("%s %s: %v, lacks %s:\n%.600s", r.Name, r.Args, out.Err, want, out.Body)
			}
		}
		out := e.Call(ctx, toolbus.Request{Name: "activity_summary", Args: json.RawMessage(`{"period":"today"}`)})
		var env struct {
			Result struct {
				Period activity.Period `json:"period"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out.Body, &env); err != nil || out.Err != nil {
			t.Fatalf("activity_summary: %v %v: %.600s", err, out.Err, out.Body)
		}
		if p := env.Result.Period; p.Timezone != name || p.UTCOffset != offset {
			t.Errorf("activity_summary today: %s %s, want %s %s", p.Timezone, p.UTCOffset, name, offset)
		}
	}
	check("Europe/Berlin", "+01:00")
	set("Etc/GMT+9") // the POSIX sign: nine hours behind UTC
	check("Etc/GMT+9", "-09:00")
}
