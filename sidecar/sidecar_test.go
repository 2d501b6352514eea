package sidecar

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func serve(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(Options{BaseURL: srv.URL, AttemptTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.http.RetryWaitMin, c.http.RetryWaitMax = time.Millisecond, 2*time.Millisecond
	return c
}

func TestProbe(t *testing.T) {
	var slashTries atomic.Int32
	tests := []struct {
		name    string
		h       http.HandlerFunc
		want    string
		wantErr string
		status  int
	}{
		{"object", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/probe" {
				http.NotFound(w, r)
				return
			}
			w.Write([]byte("{ \"ok\": true,\n \"preflight_ok\": false }\n"))
		}, `{"ok":true,"preflight_ok":false}`, "", 0},
		{"slash fallback", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/probe/" {
				slashTries.Add(1)
				w.Write([]byte(`{"ok":true}`))
				return
			}
			http.NotFound(w, r)
		}, `{"ok":true}`, "", 0},
		{"not an object", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`[1,2]`)) }, "", "not a JSON object", 0},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`<html>`)) }, "", "not valid JSON", 0},
		{"both 404", http.NotFound, "", "HTTP 404", 404},
		{"redirect elsewhere", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://example.invalid/probe", http.StatusFound)
		}, "", "HTTP 302", 302},
		{"500 kept", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, "", "HTTP 500", 500},
		{"too deep", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"a":` + strings.Repeat("[", 500<<10) + `}`))
		}, "", "nests deeper", 0},
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"x":"` + strings.Repeat("a", 2<<20) + `"}`))
		}, "", "larger than", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, tt.h)
			got, err := c.Probe(context.Background())
			if tt.wantErr != "" {
				var e *Error
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &e) || e.Status != tt.status {
					t.Fatalf("err = %v, want *Error containing %q with status %d", err, tt.wantErr, tt.status)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	if slashTries.Load() != 1 {
		t.Fatalf("/probe/ tried %d times, want once", slashTries.Load())
	}
}

func TestProbeHangingSidecarRespectsDeadline(t *testing.T) {
	stop := make(chan struct{})
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})
	defer close(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Probe(ctx)
	if err == nil {
		t.Fatal("a hanging sidecar answered")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the probe ignored its deadline: %v", el)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"ok":true}`, `[]`, `"x"`, `{`, ` {"a":[1,{"b":null}]} `, "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := Decode(b)
		if err != nil {
			return
		}
		if len(out) == 0 || out[0] != '{' {
			t.Fatalf("accepted a non-object: %q", out)
		}
	})
}

// A 401 or 403 is the sidecar refusing awbridge: ErrUnauthorized in the
// chain (callers branch on it: a setting fixes it, not a retry), asked
// once; a 5xx is not.
func TestProbeRefusedIsUnauthorized(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusInternalServerError} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var hits atomic.Int32
			c := serve(t, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.WriteHeader(status)
			})
			_, err := c.Probe(context.Background())
			var e *Error
			if !errors.As(err, &e) || e.Status != status {
				t.Fatalf("err = %v, want an *Error with status %d", err, status)
			}
			refused := status != http.StatusInternalServerError
			if errors.Is(err, ErrUnauthorized) != refused {
				t.Fatalf("errors.Is(%v, ErrUnauthorized) = %v, want %v", err, !refused, refused)
			}
			if refused && hits.Load() != 1 {
				t.Fatalf("a refusal was asked %d times, want once", hits.Load())
			}
		})
	}
}
