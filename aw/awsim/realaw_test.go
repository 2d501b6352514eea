package awsim_test

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/awbridge/awbridge/aw/awsim"
	"github.com/awbridge/awbridge/internal/realaw"
)

// TestQueryMatchesRealAW runs the web UI's canonical desktop query, as
// recorded (testdata/realaw), on the recorded events in the simulator: its
// query engine, the oracle of the acceptance tests that ask about periods
// relative to now, must answer what the real aw-server answered, list by
// list in the same order, every duration to within a millisecond (the
// server sums float seconds; so does the port, in another order only
// where merge order differs).
func TestQueryMatchesRealAW(t *testing.T) {
	for _, name := range []string{"week", "dst"} {
		t.Run(name, func(t *testing.T) {
			rec, err := realaw.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			sim, err := rec.Simulator(t.Context(), awsim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range rec.Periods {
				t.Run(p.Name, func(t *testing.T) {
					body, err := realaw.QueryBody(rec.Query, p.Start, p.End)
					if err != nil {
						t.Fatal(err)
					}
					req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:5600/api/0/query/", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					w := httptest.NewRecorder()
					sim.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						t.Fatalf("POST /api/0/query/: %d %s", w.Code, w.Body.String())
					}
					got, err := realaw.DecodeAnswer(w.Body.Bytes(), 0)
					if err != nil {
						t.Fatal(err)
					}
					for _, msg := range sameAnswer(got, p) {
						t.Error(msg)
					}
				})
			}
		})
	}
}

// sameAnswer lists where got differs from the recorded answer want.
func sameAnswer(got, want realaw.Answer) []string {
	var out []string
	near := func(what string, g, w float64) {
		if math.Abs(g-w) > 0.001 {
			out = append(out, fmt.Sprintf("%s: %.4f s, the real aw-server %.4f s", what, g, w))
		}
	}
	near("duration", got.Active, want.Active)
	near("browser duration", got.Browser, want.Browser)
	near("not-afk time", got.NotAFK, want.NotAFK)
	near("afk time", got.AFK, want.AFK)
	type line struct {
		key string
		d   float64
	}
	lists := func(a realaw.Answer) [4][]line {
		var l [4][]line
		for _, e := range a.Apps {
			l[0] = append(l[0], line{e.App, e.Duration})
		}
		for _, e := range a.Titles {
			l[1] = append(l[1], line{realaw.TitleKey(e.App, e.Title), e.Duration})
		}
		for _, e := range a.Categories {
			l[2] = append(l[2], line{fmt.Sprint(e.Category), e.Duration})
		}
		for _, e := range a.Domains {
			k := "<no $domain>"
			if e.Domain != nil {
				k = *e.Domain
			}
			l[3] = append(l[3], line{k, e.Duration})
		}
		return l
	}
	g, w := lists(got), lists(want)
	for i, what := range []string{"app_events", "title_events", "cat_events", "domains"} {
		if len(g[i]) != len(w[i]) {
			out = append(out, fmt.Sprintf("%s: %d events, the real aw-server %d", what, len(g[i]), len(w[i])))
			continue
		}
		for j := range g[i] {
			// Equal durations may come in either order.
			if g[i][j].key != w[i][j].key && !slices.ContainsFunc(w[i], func(l line) bool { return l == g[i][j] }) {
				out = append(out, fmt.Sprintf("%s[%d]: %q, the real aw-server %q", what, j, g[i][j].key, w[i][j].key))
				continue
			}
			near(fmt.Sprintf("%s[%d] %q", what, j, g[i][j].key), g[i][j].d, w[i][j].d)
		}
	}
	return out
}
