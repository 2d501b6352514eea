package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// planted stands for private data in a probe answer; it must never reach
// an error's text.
const planted = "zQ-private-payload-Qz"

// probeServer answers /probe (and /probe/) with the response set last.
// The fuzz function runs one input at a time per process; the lock
// orders the handler's reads after its writes.
type probeServer struct {
	mu       sync.Mutex
	status   int
	slash    int // status of /probe/ when /probe is a 404
	ctype    string
	location string
	body     []byte
}

func (s *probeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	status := s.status
	if r.URL.Path == "/probe/" {
		status = s.slash
	}
	if s.ctype != "" {
		w.Header().Set("Content-Type", s.ctype)
	}
	if s.location != "" {
		w.Header().Set("Location", s.location)
	}
	w.WriteHeader(status)
	_, _ = w.Write(s.body)
}

// FuzzProbe serves an arbitrary answer to the probe over real HTTP: Probe
// never panics; it returns either a compact JSON object of valid UTF-8
// within the size limit, or an *Error whose text is one clean bounded line
// that never holds the answer's contents.
func FuzzProbe(f *testing.F) {
	for _, c := range []struct {
		status, slash uint16
		ctype, loc    string
		body          string
	}{
		{200, 200, "application/json", "", `{"ok":true,"preflight_ok":false,"checks":[{"name":"disk","ok":true}]}`},
		{200, 200, "application/json", "", " {\n \"ok\" : true ,\"note\":\"$P\"}\n"},
		{200, 200, "application/json", "", `[{"ok":true}]`},
		{200, 200, "application/json", "", `{"a":"` + "\xff\xfe" + `$P"}`},
		{200, 200, "application/json", "", `{"a":"\u202e$P\u0000"}`},
		{200, 200, "text/html", "", "<html>$P</html>"},
		{404, 200, "application/json", "", `{"ok":true}`},
		{404, 404, "text/plain", "", "not found $P"},
		{503, 503, "application/json", "", `{"error":"$P"}`},
		{302, 302, "", "/probe", ""},
		{302, 302, "", "http://other.example/$P", ""},
		{200, 200, "application/json", "", strings.Repeat("[", 65) + strings.Repeat("]", 65)},
		{200, 200, "application/json", "", `{"big":"` + strings.Repeat("x", 5000) + `"}`},
		{200, 200, "application/json", "", `{"ok":true}{"ok":false}`},
	} {
		f.Add(c.status, c.slash, c.ctype, c.loc, []byte(c.body))
	}
	srv := &probeServer{}
	hs := httptest.NewServer(srv)
	f.Cleanup(hs.Close)
	const max = 4 << 10
	c, err := New(Options{BaseURL: hs.URL, AttemptTimeout: 5 * time.Second, MaxBodyBytes: max})
	if err != nil {
		f.Fatal(err)
	}
	c.http.RetryMax = 0
	f.Fuzz(func(t *testing.T, status, slash uint16, ctype, loc string, body []byte) {
		body = bytes.ReplaceAll(body, []byte("$P"), []byte(planted))
		srv.mu.Lock()
		srv.status, srv.slash = 200+int(status)%400, 200+int(slash)%400
		srv.ctype, srv.location, srv.body = ctype, strings.ReplaceAll(loc, "$P", planted), body
		srv.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := c.Probe(ctx)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || out != nil {
				t.Fatalf("error %T %v with %q", err, err, out)
			}
			msg := err.Error()
			if len(msg) > 1024 || !utf8.ValidString(msg) || strings.IndexFunc(msg, unicode.IsControl) >= 0 || strings.Contains(msg, planted) {
				t.Fatalf("error text is not one clean bounded line without the answer: %q", msg)
			}
			return
		}
		if len(out) == 0 || out[0] != '{' || !json.Valid(out) || !utf8.Valid(out) || len(out) > max {
			t.Fatalf("probe answered %q", out)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, out); err != nil || !bytes.Equal(compact.Bytes(), out) {
			t.Fatalf("probe answer is not compact: %q", out)
		}
		if again, err := Decode(out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("Decode is not idempotent: %q then %q, %v", out, again, err)
		}
	})
}
