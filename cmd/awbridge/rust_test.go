package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/awbridge/awbridge/aw/awsim"
)

// TestHealthNamesRustServer: against aw-server-rust (its /api/0/info and
// its refusal of a missing key, in its bytes; the rest served by the
// simulator), `awbridge health` names the server that answers: in the fix
// for a refused key, and on the healthy line once the key is set; --json
// says it in aw_server.
func TestHealthNamesRustServer(t *testing.T) {
	const key = "rust-key"
	sim := awsim.New(awsim.Options{Hostname: "ada-laptop", Seed: 7})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/0/info": // public, as in aw-server-rust's apikey.rs
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"hostname":"ada-laptop","version":"v0.14.0 (rust)","testing":false,"device_id":"3f0e9a52-5b1c-4c59-a0a4-8e2f1b7c9d10"}`))
		case r.Header.Get("Authorization") != "Bearer "+key:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message":"Missing or invalid API key. Set 'Authorization: Bearer <key>' header."}`))
		default:
			sim.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)

	code, out, errs := runBin(t, baseEnv(t, srv.URL), "health")
	want := "ActivityWatch (aw-server-rust v0.14.0) at " + srv.URL + " refused awbridge's API key (HTTP 401 or 403): " +
		"set activitywatch.api_key (or AWBRIDGE_AW_API_KEY) to the api_key of aw-server-rust's [auth] section\n"
	if code != exitDegraded || out != want {
		t.Fatalf("health without the key: exit %d\nstdout: %q\nstderr: %q\nwant stdout %q", code, out, errs, want)
	}

	env := baseEnv(t, srv.URL, "AWBRIDGE_AW_API_KEY="+key)
	code, out, errs = runBin(t, env, "health")
	if code != exitOK || !strings.Contains(out, "\nActivityWatch: ok, aw-server-rust v0.14.0 at "+srv.URL+" (") {
		t.Fatalf("health with the key: exit %d\nstdout: %q\nstderr: %q", code, out, errs)
	}
	_, out, _ = runBin(t, env, "health", "--json")
	var h struct {
		AWServer string `json:"aw_server"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil || h.AWServer != "aw-server-rust v0.14.0" {
		t.Fatalf("--json: aw_server %q (%v) in %q", h.AWServer, err, out)
	}
}
