package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/toolbus"
)

// checkWireReply fails unless raw is one well-formed JSON-RPC 2.0 reply.
func checkWireReply(t *testing.T, raw []byte) (id string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("reply %q is not a JSON object: %v", raw, err)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		t.Fatalf("reply %s: jsonrpc", raw)
	}
	idRaw, ok := m["id"]
	if !ok || len(idRaw) == 0 || !(idRaw[0] == '"' || idRaw[0] == '-' || (idRaw[0] >= '0' && idRaw[0] <= '9') || string(idRaw) == "null") {
		t.Fatalf("reply %s: bad id", raw)
	}
	_, hasResult := m["result"]
	errRaw, hasError := m["error"]
	if hasResult == hasError || len(m) != 3 {
		t.Fatalf("reply %s: want jsonrpc, id and exactly one of result/error", raw)
	}
	if hasError {
		var e struct {
			Code    *int            `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		d := json.NewDecoder(bytes.NewReader(errRaw))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil || e.Code == nil || e.Message == nil {
			t.Fatalf("reply %s: bad error object (%v)", raw, err)
		}
	}
	return string(idRaw)
}

// FuzzDispatch feeds one arbitrary line (after an optional initialize) to a
// session: it never panics, every reply is a valid JSON-RPC reply, a
// notification never gets one, and each line gets at most one reply line.
func FuzzDispatch(f *testing.F) {
	seeds := []string{
		ping("1"), ping(`"x\"y"`), ping(`1.0e-3`), `{"jsonrpc":"2.0","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a"}}`,
		toolCall("2", "ok", `{}`), toolCall("3", "ok", `{"mode":"validate"}`), toolCall("4", "x", `{"mode":"resolve"}`),
		toolCall("5", "ok", `{"mode":"execute","code":"Timeout"}`), toolCall("6", "ok", `{"mode":"panic"}`),
		`{"jsonrpc":"2.0","id":7,"method":"aw.get_state","params":{"mode":"execute","code":"AwUnavailable"}}`,
		`{"jsonrpc":"2.0","method":"nowframe.build","params":{"mode":"panic"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		initLine("8", "2025-03-26"), `[` + ping("9") + `,{"jsonrpc":"2.0","method":"x"},1]`, `[]`, `[[]]`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"id":2}`, `{"\u0069d":1}`,
		`{broken`, `"s"`, `null`, ` `, "\xef\xbb\xbf{}", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, pre uint8, line []byte) {
		line = bytes.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, line)
		versions := append([]string{""}, SupportedVersions()...)
		v := versions[int(pre)%len(versions)]
		const limit = 4096
		srv := NewServer(&stageBackend{}, direct(Options{MaxLineBytes: limit}))
		input := string(line) + "\n"
		if v != "" {
			input = initLine(initID, v) + "\n" + input
		}
		var out bytes.Buffer
		if err := srv.Serve(context.Background(), strings.NewReader(input), &out); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		var replies [][]byte
		for _, l := range bytes.Split(out.Bytes(), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			if l[0] == '[' {
				if v != Version20250326 {
					t.Fatalf("batch reply %q in a %q session", l, v)
				}
				var els []json.RawMessage
				if err := json.Unmarshal(l, &els); err != nil || len(els) == 0 {
					t.Fatalf("batch reply %q: %v", l, err)
				}
				for _, el := range els {
					checkWireReply(t, el)
				}
				replies = append(replies, l)
				continue
			}
			if checkWireReply(t, l) == initID {
				continue
			}
			replies = append(replies, l)
		}
		if len(replies) > 1 {
			t.Fatalf("one line got %d reply lines: %q", len(replies), replies)
		}
		trimmed := bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")))
		switch {
		case len(line) > limit:
			if len(replies) != 1 || !bytes.Contains(replies[0], []byte(`-32600`)) {
				t.Fatalf("too-long line got %q, want one -32600", replies)
			}
		case len(bytes.TrimLeft(line, " \t\r")) == 0:
			if len(replies) != 0 {
				t.Fatalf("blank line got %q", replies)
			}
		case !json.Valid(trimmed):
			if len(replies) != 1 || !bytes.Contains(replies[0], []byte(`"code":-32700`)) {
				t.Fatalf("invalid JSON got %q, want one -32700", replies)
			}
		case trimmed[0] == '{':
			var m map[string]json.RawMessage
			if err := json.Unmarshal(trimmed, &m); err != nil {
				t.Fatal(err)
			}
			if _, hasID := m["id"]; !hasID && len(replies) != 0 {
				t.Fatalf("notification %q got a reply %q", line, replies[0])
			}
			if _, hasID := m["id"]; hasID && len(replies) != 1 {
				t.Fatalf("request %q got %d replies", line, len(replies))
			}
		}
	})
}

// benchConn runs Serve over pipes and returns a write end and a line reader
// for the replies.
func benchServe(b *testing.B, backend Backend, line string) {
	srv := NewServer(backend, direct(Options{}))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		// Write in chunks of many lines, as a busy client would.
		const per = 64
		chunk := []byte(strings.Repeat(line+"\n", per))
		for n := b.N; n > 0; n -= per {
			k := min(n, per)
			if _, err := inW.Write(chunk[:k*(len(line)+1)]); err != nil {
				return
			}
		}
		inW.Close()
	}()
	b.ReportAllocs()
	b.ResetTimer()
	buf := make([]byte, 64<<10)
	lines := 0
	for lines < b.N {
		n, err := outR.Read(buf)
		lines += bytes.Count(buf[:n], []byte("\n"))
		if err != nil {
			b.Fatalf("read: %v after %d lines", err, lines)
		}
	}
	b.StopTimer()
	_, _ = io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func BenchmarkPing(b *testing.B) {
	benchServe(b, &stageBackend{}, ping("12345"))
}

// trivialBackend returns a fixed envelope of realistic size.
type trivialBackend struct{ body json.RawMessage }

func (t trivialBackend) Call(context.Context, toolbus.Request) toolbus.Response {
	return toolbus.Response{Body: t.body}
}
func (trivialBackend) ToolsList(string) json.RawMessage { return json.RawMessage(fakeToolsList) }

func BenchmarkToolsCallFake(b *testing.B) {
	body := json.RawMessage(`{"success":true,"tool":"aw_get_state","action":null,"result":{"app":"firefox","title":"Inbox \"work\" – Mail","url":"https://example.org/mail?x=1&y=2","afk":false,"age_ms":812},"duration_ms":1.2,"trace":{"trace_id":"0190c3e2-7a4b-7c1d-9e2f-3a4b5c6d7e8f","span_id":"s1","parent_span_id":null},"artifact_uri_context":null,"artifact_uri_json":null,"status":"Ok","error":null,"attempts":1,"policy":null,"next_actions":[]}`)
	benchServe(b, trivialBackend{body}, toolCall("12345", "aw_get_state", `{"max_age_ms":1000}`))
}

// FuzzEndpointFile feeds arbitrary bytes as the endpoint file a client
// reads before it dials the service and presents the token: readEndpoint
// never panics, its error never holds the file's contents, and what it
// accepts names a loopback address with a port and a token that fits on
// the handshake line, and survives writeEndpoint unchanged.
func FuzzEndpointFile(f *testing.F) {
	for _, s := range []string{
		`{"addr":"127.0.0.1:49152","token":"` + strings.Repeat("ab", 32) + `"}`,
		`{"addr":"[::1]:1","token":"t"}`, `{"addr":"evil.example:443","token":"t"}`, `{"addr":"127.0.0.1:0","token":"t"}`,
		`{"addr":"127.0.0.1:5600","token":"a\nb"}`, `{"addr":"127.0.0.1:5600","token":""}`, `{"addr":"localhost:5600","token":"t"}`,
		`{"ADDR":"127.0.0.1:5600","Token":"t"}`, `{"addr":"127.0.0.1:5600","token":"t"}{}`, `null`, `[]`, "", "\xff",
		`{"addr":"127.0.0.1:5600","addr":"10.0.0.1:5600","token":"t"}`, `{"addr":"127.0.0.1:65536","token":"t"}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "service.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ep, err := readEndpoint(path)
		if err != nil {
			if want := path + " is not an awbridge endpoint file"; err.Error() != want {
				t.Fatalf("error %q, want %q", err, want)
			}
			return
		}
		host, port, err := net.SplitHostPort(ep.Addr)
		if err != nil {
			t.Fatalf("accepted addr %q: %v", ep.Addr, err)
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			t.Fatalf("accepted a non-loopback addr %q", ep.Addr)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			t.Fatalf("accepted port %q", port)
		}
		if ep.Token == "" || strings.IndexFunc(ep.Token, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
			t.Fatalf("accepted token %q", ep.Token)
		}
		if err := writeEndpoint(path, ep); err != nil {
			t.Fatal(err)
		}
		if again, err := readEndpoint(path); err != nil || again != ep {
			t.Fatalf("rewritten endpoint reads %+v, %v; want %+v", again, err, ep)
		}
	})
}

// pipeListener hands out prepared connections, then reports it is closed.
type pipeListener struct{ conns chan net.Conn }

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	default:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// FuzzTokenHandshake sends arbitrary bytes to a token listener: a
// connection is accepted exactly when its first line (up to the reader's
// 512 bytes) is the token line, and then every byte after that line
// reaches the server unchanged.
func FuzzTokenHandshake(f *testing.F) {
	const token = "0123456789abcdef"
	for _, s := range []string{
		tokenPrefix + token + "\n" + ping("1") + "\n", tokenPrefix + token + "\r\nrest", tokenPrefix + token,
		tokenPrefix + token + "x\n", tokenPrefix + "\n", "\n", tokenPrefix + token + "\r\r\n", "awbridge-token " + token + "\n",
		tokenPrefix + token + "\n" + strings.Repeat("x", 600), strings.Repeat("y", 600) + "\n", tokenPrefix + token + "\x00\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		ln := &tokenListener{Listener: &pipeListener{conns: make(chan net.Conn, 1)}, want: []byte(tokenPrefix + token)}
		ln.Listener.(*pipeListener).conns <- server
		go func() {
			client.Write(data)
			client.Close()
		}()
		defer client.Close()
		c, err := ln.Accept()
		nl := bytes.IndexByte(data, '\n')
		want := nl >= 0 && nl < 512 && string(bytes.TrimRight(data[:nl], "\r")) == tokenPrefix+token
		if (err == nil) != want {
			t.Fatalf("accepted = %v for %q, want %v", err == nil, data, want)
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Accept: %v", err)
			}
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(waitLimit))
		rest, err := io.ReadAll(c)
		if err != nil || !bytes.Equal(rest, data[nl+1:]) {
			t.Fatalf("after the token the server read %q, %v; want %q", rest, err, data[nl+1:])
		}
	})
}

// FuzzDecodeMessage checks the one decoder every message goes through
// against encoding/json's own reading: on a valid object it sees the same
// id (byte for byte), method and params, and flags a repeated id; on
// anything else it reports a syntax error rather than a message.
// idFromPrefix, which reads the id of an over-long line from its first
// bytes only, answers for every prefix either nothing or a valid id that
// is the message's own.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		ping("1"), initLine("\"a\\u0062\"", "2025-06-18"), toolCall("-1.5e3", "ok", `{"a":[1,{"b":"}"}]}`),
		`{"id":1,"id":2}`, `{"jsonrpc":"2.0","params":{"id":9},"id":"x\"y"}`, `[` + ping("1") + `, 2, "s", [], {}]`,
		` { "\u0069d" : null , "x" : true } `, `{"a":"\\"}`, `{"id":{"a":1}}`, `{"id":[1]}`, `{"id":` + strings.Repeat("9", 40) + `}`,
		`{`, `{"id`, `{"a":1,`, `[1,`, `{"a" 1}`, `"\ud800"`, "{\"id\":\"\xff\"}", `{"Method":"x","method":"y"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := json.Valid(b)
		m, err := decodeMessage(b)
		isObj := firstByte(b) == '{'
		if err == nil && (!valid || !isObj) {
			t.Fatalf("decodeMessage(%q) accepted invalid or non-object JSON", b)
		}
		if valid && isObj {
			if err != nil {
				t.Fatalf("decodeMessage(%q): %v", b, err)
			}
			var ref map[string]json.RawMessage
			if json.Unmarshal(b, &ref) != nil {
				t.Fatal("json.Unmarshal failed on valid JSON")
			}
			if wantID := singleID(b); wantID != nil && (!bytes.Equal(m.id, wantID) || m.dupID) {
				t.Fatalf("id %q (dup %v), encoding/json reads %q", m.id, m.dupID, wantID)
			}
			if raw, ok := exactMember(b, "method"); ok && m.methodOK {
				var want string
				if json.Unmarshal(raw, &want) != nil || want != m.method {
					t.Fatalf("method %q, encoding/json reads %s", m.method, raw)
				}
			}
		}
		prefixes := len(b) + 1
		step := 1
		if prefixes > 512 {
			step = prefixes / 256
		}
		var wantID []byte
		if valid {
			wantID = singleID(b)
		}
		for n := 0; n <= len(b); n += step {
			id := idFromPrefix(b[:n])
			if id == nil {
				continue
			}
			if !validID(id) || !json.Valid(id) {
				t.Fatalf("idFromPrefix(%q) = %q: not a valid id", b[:n], id)
			}
			if valid && wantID != nil && !bytes.Equal(id, wantID) {
				t.Fatalf("idFromPrefix(%q) = %q, the message's id is %q", b[:n], id, wantID)
			}
		}
	})
}

// exactMember returns the raw value of the last top-level member named
// exactly name (case-sensitive) of a valid object.
func exactMember(b []byte, name string) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(b)))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil, false
	}
	var out json.RawMessage
	found := false
	for dec.More() {
		k, _ := dec.Token()
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		if k == name {
			out, found = v, true
		}
	}
	return out, found
}

// singleID returns the raw value of the one top-level "id" member of a
// valid object, or nil when there is none or more than one.
func singleID(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(b)))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil
	}
	var id []byte
	n := 0
	for dec.More() {
		k, _ := dec.Token()
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil
		}
		if k == "id" {
			id, n = v, n+1
		}
	}
	if n != 1 {
		return nil
	}
	return id
}

// FuzzHTTPRequest sends one arbitrary request (method, path, Host, Origin,
// Accept, Content-Type, Authorization, body) to the Streamable HTTP
// transport: it never panics; every answer is one of the transport's
// statuses with a JSON body (or an event stream); a Host whose name is not
// loopback, or a browser Origin not on the Host's own loopback port, is
// refused before anything else; and without the bearer token nothing
// reaches the backend.
func FuzzHTTPRequest(f *testing.F) {
	type req struct {
		method, path, host, origin, accept, ctype, auth, body string
	}
	for _, r := range []req{
		{"POST", PathMCP, "127.0.0.1:8765", "", "application/json, text/event-stream", "application/json", "Bearer s3cret", initLine("1", Version20250618)},
		{"POST", PathMCP, "localhost:8765", "http://localhost:8765", "application/json", "application/json; charset=utf-8", "bearer  s3cret ", ping("2")},
		{"POST", PathMCP, "[::1]:8765", "http://[::1]:8765/", "text/event-stream", "application/json", "Bearer s3cret", "[" + ping("1") + "]"},
		{"POST", PathMCP, "evil.example:8765", "", "*/*", "application/json", "Bearer s3cret", initLine("1", Version20250618)},
		{"POST", PathMCP, "127.0.0.1:8765", "http://evil.example", "*/*", "application/json", "Bearer s3cret", initLine("1", Version20250618)},
		{"POST", PathMCP, "127.0.0.1:8765", "http://127.0.0.1:9999", "*/*", "application/json", "Bearer s3cret", ping("1")},
		{"POST", PathMCP, "127.0.0.1:8765", "", "application/json;q=0", "application/json", "Bearer wrong", ping("1")},
		{"POST", PathMCP, "127.0.0.1", "null", "text/*;q=0.0", "text/plain", "", "{"},
		{"GET", PathMCP, "127.0.0.1:8765", "", "text/event-stream", "", "Bearer s3cret", ""},
		{"DELETE", PathMCP, "127.0.0.1:8765", "", "", "", "Bearer s3cret", ""},
		{"GET", "/healthz", "LOCALHOST", "", "", "", "", ""},
		{"HEAD", "/v1/nowframe", "127.0.0.2:1", "", "", "", "Bearer s3cret", ""},
		{"PUT", "/v1/nowframe", "0:0:0:0:0:0:0:1", "", "", "", "", ""},
		{"GET", "/other", "::1", "", "", "", "", ""},
	} {
		f.Add(r.method, r.path, r.host, r.origin, r.accept, r.ctype, r.auth, []byte(r.body))
	}
	statuses := map[int]bool{200: true, 202: true, 400: true, 401: true, 403: true, 404: true, 405: true, 406: true, 413: true, 415: true, 503: true}
	f.Fuzz(func(t *testing.T, method, path, host, origin, accept, ctype, auth string, body []byte) {
		r, err := http.NewRequest(method, "http://127.0.0.1:8765/", bytes.NewReader(body))
		if err != nil {
			return
		}
		r.URL.Path = path
		r.Host = host
		for k, v := range map[string]string{"Origin": origin, "Accept": accept, "Content-Type": ctype, "Authorization": auth} {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		be := &stageBackend{}
		tr := NewServer(be, direct(Options{MaxLineBytes: 4096})).HTTPHandler(HTTPOptions{
			Token: "s3cret",
			Other: func(w http.ResponseWriter, r *http.Request, authorized bool) {
				if authorized {
					WriteJSON(w, http.StatusOK, []byte(`{"ok":true}`))
					return
				}
				HTTPError(w, http.StatusUnauthorized, "unauthorized")
			},
		})
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := tr.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		rec := httptest.NewRecorder()
		tr.ServeHTTP(rec, r.WithContext(ctx))
		if !statuses[rec.Code] {
			t.Fatalf("status %d", rec.Code)
		}
		ct := rec.Header().Get("Content-Type")
		switch {
		case ct == "text/event-stream":
		case ct == "application/json":
			if rec.Body.Len() > 0 && !json.Valid(rec.Body.Bytes()) && method != http.MethodHead {
				t.Fatalf("%d body %q is not JSON", rec.Code, rec.Body.Bytes())
			}
		case rec.Code == 202 && rec.Body.Len() == 0:
		default:
			t.Fatalf("%d with Content-Type %q", rec.Code, ct)
		}
		if !loopbackHost(host) || !sameOrigin(origin, host) {
			if rec.Code != http.StatusForbidden || be.calls.Load() != 0 {
				t.Fatalf("Host %q Origin %q: status %d, %d calls", host, origin, rec.Code, be.calls.Load())
			}
		}
		if rec.Code/100 == 2 {
			scheme, tok, _ := strings.Cut(auth, " ")
			if !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(tok) != "s3cret" {
				t.Fatalf("%s %s answered %d with Authorization %q", method, path, rec.Code, auth)
			}
		}
	})
}

// loopbackHost is the test's own reading of a Host header: its name
// (port and brackets removed) is localhost or a loopback address.
func loopbackHost(host string) bool {
	name := host
	switch {
	case strings.HasPrefix(name, "["):
		end := strings.IndexByte(name, ']')
		if end < 0 || (end+1 < len(name) && name[end+1] != ':') {
			return false
		}
		name = name[1:end]
	case strings.Count(name, ":") == 1:
		name = name[:strings.IndexByte(name, ':')]
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// sameOrigin: no Origin, or http://<loopback name>:<the Host's port>.
func sameOrigin(origin, host string) bool {
	if origin == "" {
		return true
	}
	rest, ok := strings.CutPrefix(strings.ToLower(strings.TrimSuffix(origin, "/")), "http://")
	if !ok || !loopbackHost(rest) {
		return false
	}
	i, j := strings.LastIndexByte(rest, ':'), strings.LastIndexByte(host, ':')
	return i >= 0 && j >= 0 && rest[i:] == host[j:] && !strings.ContainsAny(rest, "/?#@")
}

// FuzzSession feeds a whole session (up to 32 lines: requests, batches,
// notifications, cancellations, resource reads and subscriptions,
// garbage) to Serve: it ends cleanly, every
// line it writes is a valid reply (a batch only in a 2025-03-26 session),
// and no id is answered more often than it was sent: no invented ids, no
// double replies, no reply to a notification.
func FuzzSession(f *testing.F) {
	seeds := []string{
		ping("1") + "\n" + ping("1") + "\n" + ping(`"1"`),
		toolCall("2", "ok", `{}`) + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`,
		toolCall("3", "ok", `{"mode":"panic"}`) + "\n" + toolCall("4", "ok", `{"mode":"execute","code":"Timeout"}`),
		initLine("5", "2025-06-18") + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + ping("6"),
		`[` + ping("7") + `,` + ping("7") + `,{"jsonrpc":"2.0","method":"x"}]` + "\n" + `[]`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/list"}` + "\n\n\r\n" + `{broken` + "\n" + `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"nowframe://current"}}` + "\n" + `{"jsonrpc":"2.0","id":9,"result":{}}`,
		`{"jsonrpc":"2.0","id":10,"method":"resources/subscribe","params":{"URI":"health://current"}}` + "\n" +
			`{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}` + "\n" +
			`{"jsonrpc":"2.0","id":12,"method":"resources/unsubscribe","params":{"uri":"health://current"}}` + "\n" +
			`{"jsonrpc":"2.0","id":13,"method":"resources/list"}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, pre uint8, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		if len(lines) > 32 {
			lines = lines[:32]
		}
		versions := append([]string{""}, SupportedVersions()...)
		v := versions[int(pre)%len(versions)]
		var in bytes.Buffer
		if v != "" {
			in.WriteString(initLine(initID, v) + "\n")
		}
		sent := map[string]int{}
		for _, l := range lines {
			in.Write(l)
			in.WriteByte('\n')
			countIDs(bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(l), []byte("\xef\xbb\xbf"))), sent)
			if len(l) > 4096 {
				// A line over the limit is answered under the id its first
				// bytes show, if any (FuzzDecodeMessage checks that reading).
				if id := idFromPrefix(l[:min(len(l), idPrefixBytes)]); id != nil {
					sent[string(id)]++
				}
			}
		}
		var out bytes.Buffer
		srv := NewServer(&resourceStage{stageBackend: &stageBackend{}}, direct(Options{MaxLineBytes: 4096}))
		if err := srv.Serve(context.Background(), &in, &out); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		got := map[string]int{}
		for _, l := range bytes.Split(out.Bytes(), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			replies := [][]byte{l}
			if l[0] == '[' {
				// The input may initialize (again: a second initialize
				// renegotiates) to the version that takes batches.
				if v != Version20250326 && !bytes.Contains(data, []byte(Version20250326)) && !bytes.Contains(data, []byte(`\u`)) {
					t.Fatalf("batch reply %q in a %q session", l, v)
				}
				var els []json.RawMessage
				if err := json.Unmarshal(l, &els); err != nil || len(els) == 0 {
					t.Fatalf("batch reply %q: %v", l, err)
				}
				replies = replies[:0]
				for _, el := range els {
					replies = append(replies, el)
				}
			}
			for _, r := range replies {
				id := checkWireReply(t, r)
				if id == initID || id == "null" {
					continue
				}
				var c bytes.Buffer
				json.Compact(&c, []byte(id))
				got[c.String()]++
			}
		}
		for id, n := range got {
			if n > sent[id] {
				t.Fatalf("id %s answered %d times, sent %d times; session:\n%s\nreplies:\n%s", id, n, sent[id], data, out.Bytes())
			}
		}
	})
}

// resourceStage is stageBackend with two resources that never change
// (a subscription sends nothing during the session).
type resourceStage struct{ *stageBackend }

func (resourceStage) ResourcesList() json.RawMessage {
	return json.RawMessage(`{"resources":[{"uri":"nowframe://current","name":"nowframe"},{"uri":"health://current","name":"health"}]}`)
}

func (r resourceStage) ReadResource(_ context.Context, uri string) (json.RawMessage, bool) {
	if !r.KnownResource(uri) {
		return nil, false
	}
	return json.RawMessage(`{"contents":[{"uri":` + quote(uri) + `,"mimeType":"application/json","text":"{}"}]}`), true
}

func (resourceStage) KnownResource(uri string) bool {
	return uri == "nowframe://current" || uri == "health://current"
}

func (resourceStage) ResourceChanged(string) <-chan struct{} { return nil }

// countIDs counts the ids of the messages in one line (an object or a
// batch of them) by their compact text.
func countIDs(line []byte, into map[string]int) {
	var msgs []json.RawMessage
	switch {
	case len(line) > 0 && line[0] == '[':
		if json.Unmarshal(line, &msgs) != nil {
			return
		}
	default:
		msgs = []json.RawMessage{line}
	}
	for _, m := range msgs {
		var obj map[string]json.RawMessage
		if json.Unmarshal(m, &obj) != nil {
			continue
		}
		if id, ok := obj["id"]; ok {
			var c bytes.Buffer
			json.Compact(&c, id)
			into[c.String()]++
		}
	}
}
