package activity

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/activity/activitytest"
	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/upstream"
)

// simEnv is a generated history in the simulator, served over HTTP, with a
// client, an upstream source and a fetcher, as the engine wires them.
type simEnv struct {
	h      *activitytest.History
	sim    *awsim.Server
	srv    *httptest.Server
	client *aw.Client
	src    *upstream.Source
	now    time.Time
}

// loaded caches simulators holding a generated history, per options: a
// week takes a second to load.
var loaded sync.Map // activitytest.WeekOptions -> *loadedSim

type loadedSim struct {
	once sync.Once
	h    *activitytest.History
	sim  *awsim.Server
	err  error
}

// simWith returns a simulator holding the history of o (shared by the
// tests that only read it; never write to it) and the history.
func simWith(t testing.TB, o activitytest.WeekOptions) (*awsim.Server, *activitytest.History) {
	t.Helper()
	v, _ := loaded.LoadOrStore(o, &loadedSim{})
	ls := v.(*loadedSim)
	ls.once.Do(func() {
		ls.h = activitytest.Week(o)
		end := ls.h.End
		ls.sim = awsim.New(awsim.Options{Hostname: ls.h.Host, Now: func() time.Time { return end.Add(time.Hour) }})
		ls.err = ls.h.Load(t.Context(), ls.sim)
	})
	if ls.err != nil {
		t.Fatal(ls.err)
	}
	return ls.sim, ls.h
}

// envOptions adjust a simEnv.
type envOptions struct {
	week   activitytest.WeekOptions
	client aw.Options
	// wrap, when set, sits in front of the simulator (faults, counting).
	wrap func(http.Handler) http.Handler
	// fresh gives the test its own simulator (it writes to it).
	fresh bool
}

// testSource is an upstream source for a Service's reads.
func testSource() *upstream.Source {
	return upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true, Deadline: time.Minute})
}

// utc is the zone of the tests that count days in UTC.
func utc() Zone { return Zone{Name: "UTC", Loc: time.UTC} }

// smallWeek is a week small enough for quick tests (still ~6 sessions
// with breaks, both browsers, the spring change).
var smallWeek = activitytest.WeekOptions{WindowEvents: 6000}

func newSimEnv(t testing.TB, o envOptions) *simEnv {
	t.Helper()
	var sim *awsim.Server
	var h *activitytest.History
	if o.fresh {
		h = activitytest.Week(o.week)
		end := h.End
		sim = awsim.New(awsim.Options{Hostname: h.Host, Now: func() time.Time { return end.Add(time.Hour) }})
		if err := h.Load(t.Context(), sim); err != nil {
			t.Fatal(err)
		}
	} else {
		sim, h = simWith(t, o.week)
	}
	var handler http.Handler = sim
	if o.wrap != nil {
		handler = o.wrap(sim)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	co := o.client
	co.BaseURL = srv.URL
	if co.AttemptTimeout == 0 {
		co.AttemptTimeout = 30 * time.Second
	}
	if co.BackoffMin == 0 {
		co.BackoffMin, co.BackoffMax = time.Millisecond, 2*time.Millisecond
	}
	c, err := aw.New(co)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	now := h.End.Add(time.Hour)
	clock := func() time.Time { return now }
	src := upstream.New(upstream.Options{Name: "activitywatch", Code: "AwUnavailable", Configured: true,
		Deadline: time.Minute, Now: clock})
	return &simEnv{h: h, sim: sim, srv: srv, client: c, src: src, now: now}
}
