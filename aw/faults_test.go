package aw

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const infoBody = `{"hostname": "vm", "version": "v0.13.2", "testing": false, "device_id": "d"}`

// countingServer serves handler and counts requests.
func countingServer(t *testing.T, handler func(w http.ResponseWriter, r *http.Request, n int)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(count.Add(1))
		handler(w, r, n)
	}))
	t.Cleanup(srv.Close)
	return srv, &count
}

func fastClient(t *testing.T, opts Options) *Client {
	t.Helper()
	if opts.BackoffMin == 0 {
		opts.BackoffMin, opts.BackoffMax = time.Millisecond, 5*time.Millisecond
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := fastClient(t, Options{BaseURL: "http://" + addr})
	_, err = c.Info(testCtx(t))
	e := asError(t, err)
	if e.Kind != Unreachable || e.Status != 0 {
		t.Fatalf("err = %v, want Unreachable", err)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("err = %v, want ECONNREFUSED in the chain", err)
	}
	if strings.Contains(err.Error(), "http://") {
		t.Errorf("error repeats the URL: %v", err)
	}
}

// goroutinesSettle waits (up to a generous ceiling) for the goroutine count
// to come back to at most base+slack; it reports the last count.
func goroutinesSettle(base, slack int) (int, bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= base+slack {
			return n, true
		}
		if time.Now().After(deadline) {
			return n, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHangPastDeadline(t *testing.T) {
	release := make(chan struct{})
	exited := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { exited <- struct{}{} }()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: unblocks any handler
	base := runtime.NumGoroutine()

	c := fastClient(t, Options{BaseURL: srv.URL, AttemptTimeout: time.Minute})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Events(ctx, "aw-watcher-window_testhost", EventQuery{Limit: 1})
	elapsed := time.Since(start)
	e := asError(t, err)
	if e.Kind != Timeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want Timeout wrapping context.DeadlineExceeded", err)
	}
	// Prompt: bounded by the caller's deadline, not the one-minute attempt
	// timeout (the ceiling is generous for a loaded machine).
	if elapsed > 30*time.Second {
		t.Errorf("returned after %v", elapsed)
	}
	// The client hung up, so the handler sees its request canceled and
	// returns without being released; no client goroutine stays behind.
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Errorf("server handler still blocked: the client did not close the connection")
	}
	c.CloseIdleConnections()
	if n, ok := goroutinesSettle(base, 2); !ok {
		t.Errorf("goroutines: %d after the call, %d before", n, base)
	}
}

func TestAttemptTimeoutRetried(t *testing.T) {
	srv, count := countingServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		<-r.Context().Done() // hang until the client gives up this attempt
	})
	c := fastClient(t, Options{BaseURL: srv.URL, AttemptTimeout: 100 * time.Millisecond})
	_, err := c.Info(testCtx(t))
	if KindOf(err) != Timeout {
		t.Fatalf("err = %v, want Timeout", err)
	}
	if got := count.Load(); got != DefaultRetryMax+1 {
		t.Errorf("%d attempts, want %d", got, DefaultRetryMax+1)
	}
}

func TestRetry500Then200(t *testing.T) {
	srv, count := countingServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"message": "Internal Server Error"}`)
			return
		}
		io.WriteString(w, infoBody)
	})
	c := fastClient(t, Options{BaseURL: srv.URL})
	info, err := c.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.Hostname != "vm" || count.Load() != 2 {
		t.Errorf("info %+v after %d attempts", info, count.Load())
	}
}

func TestStatusRetries(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		contentType  string
		body         string
		retryMax     int
		wantKind     ErrorKind
		wantMessage  string
		wantAttempts int64
	}{
		{"500 json", 500, "application/json", `{"message": "Internal Server Error"}`, 0, HTTPStatus, "Internal Server Error", 3},
		{"502 html", 502, "text/html", `<html><body>Bad Gateway</body></html>`, 0, HTTPStatus, "", 3},
		{"503 json", 503, "application/json", `{"message": "busy\nnow"}`, 0, HTTPStatus, "busy now", 3},
		{"503 no retries", 503, "", ``, -1, HTTPStatus, "", 1},
		{"503 one retry", 503, "", ``, 1, HTTPStatus, "", 2},
		{"501 not retried", 501, "", ``, 0, HTTPStatus, "", 1},
		{"429 not retried", 429, "application/json", `{"message": "slow down"}`, 0, HTTPStatus, "slow down", 1},
		{"400 not retried", 400, "application/json", `{"message": "bad"}`, 0, HTTPStatus, "bad", 1},
		{"404 json", 404, "application/json", `null`, 0, NotFound, "", 1},
		{"404 rocket catcher", 404, "application/json", `{"error": {"code": 404}}`, 0, HTTPStatus, "no such route (a 404 without an ActivityWatch error body); is the base URL an ActivityWatch server?", 1},
		{"404 message", 404, "application/json", `{"message": "There's no bucket named b"}`, 0, NotFound, "There's no bucket named b", 1},
		{"418 text", 418, "text/plain", "teapot", 0, HTTPStatus, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, count := countingServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			c := fastClient(t, Options{BaseURL: srv.URL, RetryMax: tt.retryMax})
			_, err := c.Info(testCtx(t))
			e := asError(t, err)
			if e.Kind != tt.wantKind || e.Status != tt.status || e.Message != tt.wantMessage {
				t.Errorf("err = %v (%+v), want %s %d %q", err, e, tt.wantKind, tt.status, tt.wantMessage)
			}
			if got := count.Load(); got != tt.wantAttempts {
				t.Errorf("%d attempts, want %d", got, tt.wantAttempts)
			}
		})
	}
}

func TestMalformedBodies(t *testing.T) {
	const secret = "SECRET-window-title https://secret.example/path"
	deep := strings.Repeat("[", DefaultMaxBodyBytes) // overflows gjson's recursive validator: a fatal error
	tests := []struct {
		name    string
		op      string // info, buckets, events
		body    string
		wantMsg string
	}{
		{"html 200", "events", "<!doctype html>\n<html><title>ActivityWatch</title>", "HTML"},
		{"empty", "info", "", "empty body"},
		{"invalid", "buckets", "{not json}", "not valid JSON"},
		{"truncated", "events", `[{"id": 1, "timestamp": "2026-11-22T01:33:52+00:00", "dura`, "not valid JSON"},
		{"trailing garbage", "info", infoBody + " x", "not valid JSON"},
		{"NaN", "events", `[{"timestamp": "2026-11-22T01:33:52+00:00", "duration": NaN, "data": {}}]`, "not valid JSON"},
		{"deep nesting", "events", deep, "nests deeper"},
		{"events object", "events", `{"a": 1}`, "expected a JSON array"},
		{"buckets array", "buckets", `[]`, "expected a JSON object"},
		{"info array", "info", `[]`, "expected a JSON object"},
		{"info no version", "info", `{"hostname": "h"}`, "version"},
		{"bad timestamp", "events", `[{"timestamp": "` + secret + `", "duration": 1, "data": {"title": "` + secret + `"}}]`, "event 0: timestamp is not an RFC 3339"},
		{"naive timestamp", "events", `[{"timestamp": "2026-11-22T01:33:52", "duration": 1, "data": {}}]`, "RFC 3339"},
		{"zero timestamp", "events", `[{"timestamp": "0001-01-01T00:00:00Z", "duration": 1, "data": {}}]`, "zero time"},
		{"missing duration", "events", `[{"timestamp": "2026-11-22T01:33:52+00:00", "data": {"title": "` + secret + `"}}]`, "missing duration"},
		{"string duration", "events", `[{"timestamp": "2026-11-22T01:33:52+00:00", "duration": "1", "data": {}}]`, "duration is a string"},
		{"negative duration", "events", `[{"timestamp": "2026-11-22T01:33:52+00:00", "duration": -1, "data": {}}]`, "out of range"},
		{"huge duration", "events", `[{"timestamp": "2026-11-22T01:33:52+00:00", "duration": 1e999, "data": {}}]`, "out of range"},
		{"data string", "events", `[{"timestamp": "2026-11-22T01:33:52+00:00", "duration": 1, "data": "` + secret + `"}]`, "data is a string"},
		{"id float", "events", `[{"id": 1.5, "timestamp": "2026-11-22T01:33:52+00:00", "duration": 1, "data": {}}]`, "id is not an integer"},
		{"second event bad", "events", `[{"timestamp": "2026-11-22T01:33:52+00:00", "duration": 1, "data": {}}, 3]`, "event 1: is a number"},
		{"bucket no type", "buckets", `{"b": {"id": "b", "hostname": "h"}}`, "missing type"},
		{"bucket id mismatch", "buckets", `{"b": {"id": "c", "type": "t"}}`, "differs"},
		{"bucket bad created", "buckets", `{"b": {"id": "b", "type": "t", "created": "` + secret + `"}}`, "created is not an RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tt.body)
			})
			c := fastClient(t, Options{BaseURL: srv.URL})
			var err error
			switch tt.op {
			case "info":
				_, err = c.Info(testCtx(t))
			case "buckets":
				_, err = c.Buckets(testCtx(t))
			case "events":
				_, err = c.Events(testCtx(t), "b", EventQuery{})
			}
			e := asError(t, err)
			if e.Kind != Malformed || e.Status != 0 || e.Op != tt.op {
				t.Fatalf("err = %v, want Malformed for %s", err, tt.op)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not say %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "SECRET") || len(err.Error()) > 300 {
				t.Errorf("error leaks or echoes the body: %q", err)
			}
		})
	}
}

// A body whose length the server declares (aw-server does) is read into
// one buffer of that size: a week of events is megabytes, and growing a
// buffer step by step copies and allocates it several times over.
func TestDeclaredBodyReadOnce(t *testing.T) {
	const size = 4 << 20
	body := bytes.Repeat([]byte(" "), size-2)
	body = append(append([]byte("["), body...), ']')
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	c := fastClient(t, Options{BaseURL: srv.URL})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := c.get(testCtx(t), "events", "/api/0/buckets/b/events", "")
	runtime.ReadMemStats(&after)
	if err != nil || len(got) != size {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size+size/2 {
		t.Errorf("allocated %d KiB to read a declared %d KiB body", alloc>>10, size>>10)
	}
}

func TestTooLarge(t *testing.T) {
	const size = 50 << 20
	tests := []struct {
		name     string
		declared bool   // send Content-Length
		maxAlloc uint64 // what reading may allocate
	}{
		{"streamed", false, 32 << 20}, // grows to the 8 MiB limit, never to 50
		{"declared", true, 1 << 20},   // refused before reading
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var written atomic.Int64
			handlerDone := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(handlerDone)
				if tt.declared {
					w.Header().Set("Content-Length", fmt.Sprint(size))
				}
				w.Header().Set("Content-Type", "application/json")
				chunk := []byte("[" + strings.Repeat(`{"timestamp": "2026-11-22T01:33:52+00:00", "duration": 1, "data": {}}, `, 900))
				for written.Load() < size {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			}))
			t.Cleanup(srv.Close)
			c := fastClient(t, Options{BaseURL: srv.URL})

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := c.Events(testCtx(t), "b", EventQuery{})
			runtime.ReadMemStats(&after)

			e := asError(t, err)
			if e.Kind != TooLarge || e.Status != 200 {
				t.Fatalf("err = %v, want TooLarge", err)
			}
			// Reading stops at the limit: far less than the 50 MiB is
			// allocated and the server cannot send it all.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > tt.maxAlloc {
				t.Errorf("allocated %d MiB for a %d MiB limit", alloc>>20, DefaultMaxBodyBytes>>20)
			}
			c.CloseIdleConnections()
			select {
			case <-handlerDone:
			case <-time.After(10 * time.Second):
				t.Fatal("server still writing: the client did not hang up")
			}
			if written.Load() >= size {
				t.Errorf("server wrote all %d bytes", written.Load())
			}
		})
	}
}

func TestConnectionDroppedMidBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{\"id\": 1, ")
		rw.Flush()
	}))
	t.Cleanup(srv.Close)
	c := fastClient(t, Options{BaseURL: srv.URL})
	_, err := c.Events(testCtx(t), "b", EventQuery{})
	e := asError(t, err)
	if e.Kind != Unreachable || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want Unreachable with unexpected EOF", err)
	}
}

func TestRedirects(t *testing.T) {
	t.Run("loop", func(t *testing.T) {
		srv, count := countingServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			http.Redirect(w, r, r.URL.Path, http.StatusPermanentRedirect)
		})
		c := fastClient(t, Options{BaseURL: srv.URL})
		_, err := c.Buckets(testCtx(t))
		e := asError(t, err)
		if e.Kind != HTTPStatus || e.Status != 308 || !strings.Contains(e.Message, "redirect loop") {
			t.Errorf("err = %v", err)
		}
		if got := count.Load(); got != maxRedirects+1 {
			t.Errorf("%d requests, want %d (not retried)", got, maxRedirects+1)
		}
	})
	t.Run("away from the base URL", func(t *testing.T) {
		srv, count := countingServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			// What aw-server does behind a Host it does not recognize:
			// Location is built from the Host header.
			w.Header().Set("Location", "http://127.0.0.1:5600/api/0/buckets/")
			w.WriteHeader(http.StatusPermanentRedirect)
		})
		c := fastClient(t, Options{BaseURL: srv.URL})
		_, err := c.Buckets(testCtx(t))
		e := asError(t, err)
		if e.Kind != HTTPStatus || e.Status != 308 || !strings.Contains(e.Message, "away from the base URL") {
			t.Errorf("err = %v", err)
		}
		if strings.Contains(err.Error(), "5600") {
			t.Errorf("error echoes the Location: %v", err)
		}
		if got := count.Load(); got != 1 {
			t.Errorf("%d requests, want 1", got)
		}
	})
	t.Run("same origin followed with headers", func(t *testing.T) {
		var mu sync.Mutex
		var hosts, auths []string
		srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
			mu.Lock()
			hosts = append(hosts, r.Host)
			auths = append(auths, r.Header.Get("Authorization"))
			mu.Unlock()
			if r.URL.Path == "/api/0/info" {
				http.Redirect(w, r, "/moved/api/0/info", http.StatusTemporaryRedirect)
				return
			}
			io.WriteString(w, infoBody)
		})
		c := fastClient(t, Options{BaseURL: srv.URL, HostHeader: "localhost:5600", APIKey: "k"})
		if _, err := c.Info(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		for i := range hosts {
			if hosts[i] != "localhost:5600" || auths[i] != "Bearer k" {
				t.Errorf("request %d: Host %q, Authorization %q", i, hosts[i], auths[i])
			}
		}
	})
}

func TestCanceledContext(t *testing.T) {
	srv, count := countingServer(t, func(w http.ResponseWriter, r *http.Request, n int) {})
	c := fastClient(t, Options{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := c.Info(ctx)
	if KindOf(err) != Canceled || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want Canceled", err)
	}
	if count.Load() != 0 {
		t.Errorf("a request was sent with a canceled context")
	}
}

func TestConcurrentUse(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n%3 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, infoBody)
	})
	c := fastClient(t, Options{BaseURL: srv.URL, RetryMax: 5})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 40 {
		wg.Go(func() {
			if _, err := c.Info(testCtx(t)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Info: %v", err)
	}
}

// rawHTTPServer answers every connection with resp verbatim (for shapes
// net/http's server will not produce).
func rawHTTPServer(t *testing.T, resp string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				io.WriteString(conn, resp)
			})
		}
	})
	return "http://" + ln.Addr().String()
}

func TestNonJSONContentTypeAccepted(t *testing.T) {
	// Content-Type is not required; the body must be valid JSON.
	base := rawHTTPServer(t, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: "+
		fmt.Sprint(len(infoBody))+"\r\n\r\n"+infoBody)
	c := fastClient(t, Options{BaseURL: base})
	info, err := c.Info(testCtx(t))
	if err != nil || info.Hostname != "vm" {
		t.Errorf("Info = %+v, %v", info, err)
	}
}

func TestJitterBackoff(t *testing.T) {
	const lo, hi = 50 * time.Millisecond, 250 * time.Millisecond
	for attempt := range 6 {
		upper := min(lo<<(attempt+1), hi)
		seen := map[time.Duration]bool{}
		for range 500 {
			d := jitterBackoff(lo, hi, attempt, nil)
			if d < lo || d > upper {
				t.Fatalf("attempt %d: wait %v outside [%v, %v]", attempt, d, lo, upper)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("attempt %d: only %d distinct waits: no jitter", attempt, len(seen))
		}
	}
	if d := jitterBackoff(lo, lo, 3, nil); d != lo {
		t.Errorf("min == max: %v", d)
	}
	if d := jitterBackoff(lo, hi, 1000, nil); d < lo || d > hi {
		t.Errorf("huge attempt: %v", d)
	}
}
