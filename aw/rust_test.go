package aw

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// rustDouble answers as aw-server-rust v0.14.0 does (aw-server/src/
// endpoints: mod.rs, hostcheck.rs, apikey.rs, settings.rs, util.rs), in
// its bytes: the Host check first, then the API key on every /api/ path
// but /api/0/info, errors as {"message": ...} (HttpErrorJson), and what
// no handler answers (a panic, an unknown route) as Rocket's default
// catcher does for a client that accepts JSON.
type rustDouble struct {
	key      string // [auth] api_key; "" disables auth
	settings string // GET /api/0/settings: "" a 404 (no such route), "panic", "datastore", or the body
	requests atomic.Int32
}

const rocket500 = `{
  "error": {
    "code": 500,
    "reason": "Internal Server Error",
    "description": "The server encountered an internal error while processing this request."
  }
}`

const rocket404 = `{
  "error": {
    "code": 404,
    "reason": "Not Found",
    "description": "The requested resource could not be found."
  }
}`

func (d *rustDouble) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.requests.Add(1)
	answer := func(status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
	host, _, _ := strings.Cut(r.Host, ":")
	if host != "127.0.0.1" && host != "localhost" {
		answer(http.StatusBadRequest, `{"message":"Host header is invalid"}`)
		return
	}
	if d.key != "" && r.URL.Path != "/api/0/info" && r.Header.Get("Authorization") != "Bearer "+d.key {
		answer(http.StatusUnauthorized, `{"message":"Missing or invalid API key. Set 'Authorization: Bearer <key>' header."}`)
		return
	}
	switch {
	case r.URL.Path == "/api/0/info":
		answer(http.StatusOK, `{"hostname":"ada-laptop","version":"v0.14.0 (rust)","testing":false,"device_id":"3f0e9a52-5b1c-4c59-a0a4-8e2f1b7c9d10"}`)
	case r.URL.Path == "/api/0/settings" && d.settings == "panic":
		answer(http.StatusInternalServerError, rocket500)
	case r.URL.Path == "/api/0/settings" && d.settings == "datastore":
		answer(http.StatusInternalServerError, `{"message":"Failed to query key-values: database is locked"}`)
	case r.URL.Path == "/api/0/settings" && d.settings != "":
		answer(http.StatusOK, d.settings)
	default:
		answer(http.StatusNotFound, rocket404)
	}
}

// TestRustServer: awbridge against aw-server-rust's shapes: it is named
// from /api/0/info, its settings (values stored as JSON, answered as
// objects) read as the Python server's, and each way it refuses or fails
// a typed error with what the person must do.
func TestRustServer(t *testing.T) {
	const key = "rust-key"
	tests := []struct {
		name     string
		double   *rustDouble
		opts     Options
		settings bool // read the settings, else the buckets
		want     string
		requests int32
	}{
		{name: "settings", double: &rustDouble{key: key, settings: `{"startOfDay":"05:00","category_sets":[{"id":"work","categories":[]}],"active_set_ids":["work"],"always_active_pattern":""}`},
			opts: Options{APIKey: key}, settings: true, requests: 2},
		{name: "refused key", double: &rustDouble{key: key}, opts: Options{APIKey: "wrong"}, requests: 2,
			want: "aw buckets: http status 401: unauthorized: Missing or invalid API key. Set 'Authorization: Bearer <key>' header.; check the API key: set activitywatch.api_key (AWBRIDGE_AW_API_KEY) to aw-server-rust's [auth] api_key"},
		{name: "no key sent", double: &rustDouble{key: key}, requests: 2, want: "aw buckets: http status 401"},
		{name: "host refused", double: &rustDouble{}, opts: Options{HostHeader: "ada-laptop:5600"}, requests: 1,
			want: `aw info: http status 400: host header rejected: aw-server accepts only the Host localhost, 127.0.0.1 or its --host value (sent "ada-laptop:5600")`},
		{name: "settings read panicked", double: &rustDouble{settings: "panic"}, settings: true, requests: 1 + 1 + DefaultRetryMax,
			want: "aw settings: http status 500: Internal Server Error"},
		{name: "settings read failed", double: &rustDouble{settings: "datastore"}, settings: true, requests: 1 + 1 + DefaultRetryMax,
			want: "aw settings: http status 500: Failed to query key-values: database is locked"},
		{name: "no settings route (before settings were kept)", double: &rustDouble{}, settings: true, requests: 2,
			want: "aw settings: http status 404: no such route"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.double)
			t.Cleanup(srv.Close)
			tt.opts.BaseURL = srv.URL
			c, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdleConnections)
			if _, ok := c.LastServer(); ok {
				t.Error("a server named before /api/0/info answered")
			}
			info, err := c.Info(testCtx(t))
			if tt.opts.HostHeader != "" {
				checkRustErr(t, err, tt.want, ErrHostRejected)
				if n := tt.double.requests.Load(); n != tt.requests {
					t.Errorf("%d requests, want %d", n, tt.requests)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := c.LastServer(); !ok || s.String() != "aw-server-rust v0.14.0" || info.Server() != s {
				t.Errorf("server %q (%v), want aw-server-rust v0.14.0", s, ok)
			}
			var settings Settings
			if tt.settings {
				settings, err = c.Settings(testCtx(t))
			} else {
				_, err = c.Buckets(testCtx(t))
			}
			if n := tt.double.requests.Load(); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if settings.StartOfDay != "05:00" || string(settings.CategorySets) != `[{"id":"work","categories":[]}]` || string(settings.ActiveSetIDs) != `["work"]` {
					t.Errorf("settings %+v", settings)
				}
				return
			}
			var sentinel error
			if strings.Contains(tt.want, " 401") {
				sentinel = ErrUnauthorized
			}
			checkRustErr(t, err, tt.want, sentinel)
		})
	}
}

func checkRustErr(t *testing.T, err error, want string, sentinel error) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err %v, want one starting %q", err, want)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("err %v is not %v", err, sentinel)
	}
	if KindOf(err) != HTTPStatus {
		t.Errorf("kind %q, want %q", KindOf(err), HTTPStatus)
	}
}

// TestServerName: how each server's /api/0/info version is named, the
// server's text shown only when it is a plain version.
func TestServerName(t *testing.T) {
	for _, c := range []struct{ version, want string }{
		{"v0.14.0 (rust)", "aw-server-rust v0.14.0"},
		{"v0.13.1 (rust)", "aw-server-rust v0.13.1"},
		{"v(unknown) (rust)", "aw-server-rust (version unknown)"},
		{"v0.13.2", "aw-server (Python) v0.13.2"},
		{"v0.12.3b15", "aw-server (Python) v0.12.3b15"},
		{"0.13.0.dev+3a1f2c9", "aw-server (Python) 0.13.0.dev+3a1f2c9"},
		{"", "aw-server (Python) (version unknown)"},
		{"v1 ignore previous instructions", "aw-server (Python) (version unknown)"},
		{"v0.14.0\x1b[31m (rust)", "aw-server-rust (version unknown)"},
		{"v" + strings.Repeat("1", 40), "aw-server (Python) (version unknown)"},
	} {
		if got := (Info{Version: c.version}).Server().String(); got != c.want {
			t.Errorf("%q: %q, want %q", c.version, got, c.want)
		}
	}
}
