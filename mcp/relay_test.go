package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// fakeService is the service's end of a relay's connection: it answers
// the relay's own ping as a real service does (unless silent: a service
// that accepts and never answers), and hands every other line it reads to
// the test, which answers (or not) on conn.
type fakeService struct {
	conn  net.Conn
	lines chan string
}

func newFakeService(conn net.Conn) *fakeService { return newFakeServiceSilent(conn, false) }

func newFakeServiceSilent(conn net.Conn, silent bool) *fakeService {
	f := &fakeService{conn: conn, lines: make(chan string, 8192)}
	go func() {
		defer close(f.lines)
		r := bufio.NewReader(conn)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.Contains(l, `"id":`+relayProbeID) {
				if !silent {
					conn.Write([]byte(`{"jsonrpc":"2.0","id":` + relayProbeID + `,"result":{}}` + "\n"))
				}
				continue
			}
			f.lines <- strings.TrimSuffix(l, "\n")
		}
	}()
	return f
}

// inProcess is a Fallback serving a real Server on the stage backend; it
// records the lines it was sent.
func inProcess(seen *[]string, mu *sync.Mutex) func(ctx context.Context, r io.Reader, w io.Writer) error {
	srv := NewServer(&stageBackend{}, Options{})
	return func(ctx context.Context, r io.Reader, w io.Writer) error {
		pr, pw := io.Pipe()
		go func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 4<<20)
			for sc.Scan() {
				mu.Lock()
				*seen = append(*seen, sc.Text())
				mu.Unlock()
				pw.Write(append(sc.Bytes(), '\n'))
			}
			pw.Close()
		}()
		return srv.Serve(ctx, pr, w)
	}
}

// relayTest is a Relay between a fake service and a client pipe, failing
// over to inProcess.
type relayTest struct {
	svcEnd net.Conn
	svc    *fakeService
	inW    *io.PipeWriter
	out    syncBuf
	done   chan error // Relay's result

	mu     sync.Mutex
	fbSeen []string // the lines the fallback was sent
}

func startRelayWithFallback() *relayTest { return startRelayWithService(false) }

// startRelayWithService is startRelayWithFallback with a service that
// never answers anything when silent.
func startRelayWithService(silent bool) *relayTest {
	svcEnd, relayEnd := net.Pipe()
	inR, inW := io.Pipe()
	rt := &relayTest{svcEnd: svcEnd, svc: newFakeServiceSilent(svcEnd, silent), inW: inW, done: make(chan error)}
	go func() {
		rt.done <- Relay(context.Background(), relayEnd, inR, &rt.out, RelayOptions{Fallback: inProcess(&rt.fbSeen, &rt.mu)})
	}()
	return rt
}

// replyIDsOf counts the replies on out by raw id.
func replyIDsOf(t *testing.T, out string) (map[string]int, map[string]string) {
	t.Helper()
	n, last := map[string]int{}, map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not one JSON message a line: %.200q", l)
		}
		if m.ID != nil {
			n[string(m.ID)]++
			last[string(m.ID)] = l
		}
	}
	return n, last
}

// TestRelayFailoverAnswersEachCallOnce: the service dies with calls in
// flight (one of them longer than any read buffer, one a modern listen):
// each gets one answer, the session goes on in-process with the legacy
// initialize and subscription replayed and their replies swallowed.
func TestRelayFailoverAnswersEachCallOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := startRelayWithFallback()
		svcEnd, svc, inW, out, done := rt.svcEnd, rt.svc, rt.inW, &rt.out, rt.done
		modern := `"_meta":{"` + MetaProtocolVersion + `":"` + ModernVersion + `","` + MetaClientCapabilities + `":{}}`
		big := `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"ok","arguments":{"pad":"` + strings.Repeat("x", 70<<10) + `"}}}`
		send := []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
			`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"awbridge://health"}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ok"}}`,
			big,
			`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{` + modern + `,"notifications":{}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":"r","result":{}}`, // a client's response: nothing owed
			`[{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"ok"}},{"jsonrpc":"2.0","id":"b2","method":"ping"},{"jsonrpc":"2.0","id":"br","error":{"code":1,"message":"x"}}]`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ok"}}`, // a reused id: two answers owed
		}
		for _, l := range send {
			io.WriteString(inW, l+"\n")
			synctest.Wait()
			if len(svc.lines) == 0 {
				t.Fatalf("not forwarded: %.100q; out: %s", l, out.String())
			}
			if got := <-svc.lines; got != l {
				t.Fatalf("forwarded %.80q, want %.80q", got, l)
			}
		}
		// The service answers initialize, the subscription and one of the two 3s.
		svcEnd.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26"}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":3,"result":{}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}` + "\n" +
			`{"jsonrpc":"2.0","id":"b1","res`)) // torn: the service dies writing it
		svcEnd.Close()
		synctest.Wait()
		io.WriteString(inW, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ok"}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{`+modern+`,"name":"ok"}}`+"\n")
		inW.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		n, last := replyIDsOf(t, out.String())
		want := map[string]int{`1`: 1, `2`: 1, `3`: 2, `"big"`: 1, `"sub"`: 1, `"b1"`: 1, `"b2"`: 1, `4`: 1, `5`: 1}
		for id, c := range want {
			if n[id] != c {
				t.Errorf("id %s answered %d times, want %d\n%s", id, n[id], c, out.String())
			}
		}
		if len(n) != len(want) {
			t.Errorf("answers %v, want %v", n, want)
		}
		for _, id := range []string{`"big"`, `"b1"`, `"b2"`} {
			if !strings.Contains(last[id], `"code":-32000`) || !strings.Contains(last[id], `"retryable":true`) {
				t.Errorf("%s: %s", id, last[id])
			}
		}
		if !strings.Contains(last[`"sub"`], `"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"sub"`) {
			t.Errorf("the listen: %s", last[`"sub"`])
		}
		if !strings.Contains(last[`5`], `"resultType":"complete"`) || !strings.Contains(last[`4`], `"isError":false`) {
			t.Errorf("after the failover: %s\n%s", last[`4`], last[`5`])
		}
		rt.mu.Lock()
		defer rt.mu.Unlock()
		fbSeen := rt.fbSeen
		if len(fbSeen) < 2 || !strings.Contains(fbSeen[0], `"id":`+relayReplayID+`,"method":"initialize","params":{"protocolVersion":"2025-03-26"}`) ||
			!strings.Contains(fbSeen[1], `"method":"resources/subscribe","params":{"uri":"awbridge://health"}`) {
			t.Errorf("the fallback was told: %q", fbSeen)
		}
	})
}

// TestRelayAnswersAnOverlongLineItself: a line over MaxLineBytes gets the
// core's one -32600 here and never reaches the service; the next line does.
func TestRelayAnswersAnOverlongLineItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svcEnd, relayEnd := net.Pipe()
		svc := newFakeService(svcEnd)
		inR, inW := io.Pipe()
		var out syncBuf
		done := make(chan error)
		go func() { done <- Relay(context.Background(), relayEnd, inR, &out, RelayOptions{MaxLineBytes: 1024}) }()
		io.WriteString(inW, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ok","arguments":{"pad":"`+strings.Repeat("x", 4096)+`"}}}`+"\n")
		next := `{"jsonrpc":"2.0","id":8,"method":"ping"}`
		io.WriteString(inW, next+"\n")
		if got := <-svc.lines; got != next {
			t.Fatalf("the service read %.100q", got)
		}
		svcEnd.Write([]byte(`{"jsonrpc":"2.0","id":8,"result":{}}` + "\n"))
		inW.Close()
		svcEnd.Close()
		<-done
		if want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"request too large"}}` + "\n" + `{"jsonrpc":"2.0","id":8,"result":{}}` + "\n"; out.String() != want {
			t.Fatalf("out:\n%s\nwant:\n%s", out.String(), want)
		}
	})
}

// TestRelayBoundsWhatTheServiceOwes: against a service that reads and never
// answers, the relay stops reading the client once maxRelayPending calls
// are owed; each reply lets one more through.
func TestRelayBoundsWhatTheServiceOwes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svcEnd, relayEnd := net.Pipe()
		svc := newFakeService(svcEnd)
		inR, inW := io.Pipe()
		var out syncBuf
		done := make(chan error)
		go func() { done <- Relay(context.Background(), relayEnd, inR, &out, RelayOptions{}) }()
		wrote := make(chan int, 1)
		go func() {
			n := 0
			for i := range maxRelayPending + 10 {
				if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":`+itoa(i)+`,"method":"ping"}`+"\n"); err != nil {
					break
				}
				n++
			}
			wrote <- n
		}()
		synctest.Wait()
		if got := len(svc.lines); got != maxRelayPending {
			t.Fatalf("the service was sent %d calls it owes, want %d", got, maxRelayPending)
		}
		svcEnd.Write([]byte(`{"jsonrpc":"2.0","id":0,"result":{}}` + "\n"))
		synctest.Wait()
		if got := len(svc.lines); got != maxRelayPending+1 {
			t.Fatalf("after one reply the service was sent %d, want %d", got, maxRelayPending+1)
		}
		svcEnd.Close() // every owed call is answered, the rest too
		<-wrote
		inW.Close()
		<-done
		n, _ := replyIDsOf(t, out.String())
		if len(n) != maxRelayPending+10 {
			t.Fatalf("%d calls answered, want %d", len(n), maxRelayPending+10)
		}
	})
}

// syncBuf is a strings.Builder safe for concurrent use.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRelayFailsOverWhenTheServiceNeverAnswers: a service that accepts and
// reads but never answers is given the default FirstReply (5 s) for its first
// line; then the relay fails over as on EOF: each owed call is answered
// once with the retryable error, and the next calls go to the fallback.
func TestRelayFailsOverWhenTheServiceNeverAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := startRelayWithService(true)
		svc, inW, out, done := rt.svc, rt.inW, &rt.out, rt.done
		defer rt.svcEnd.Close()
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ok"}}`+"\n")
		synctest.Wait()
		if len(svc.lines) != 2 {
			t.Fatalf("the service was sent %d lines", len(svc.lines))
		}
		time.Sleep(6 * time.Second)
		synctest.Wait()
		n, last := replyIDsOf(t, out.String())
		for _, id := range []string{`1`, `2`} {
			if n[id] != 1 || !strings.Contains(last[id], `"retryable":true`) {
				t.Errorf("id %s answered %d times (%s) by a silent service's deadline", id, n[id], last[id])
			}
		}
		io.WriteString(inW, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ok"}}`+"\n")
		inW.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		n, last = replyIDsOf(t, out.String())
		if n[`1`] != 1 || n[`2`] != 1 || n[`3`] != 1 || !strings.Contains(last[`3`], `"isError":false`) {
			t.Errorf("answers %v; the call after the failover: %s", n, last[`3`])
		}
		rt.mu.Lock()
		defer rt.mu.Unlock()
		fbSeen := rt.fbSeen
		if len(fbSeen) == 0 || !strings.Contains(fbSeen[0], `"method":"initialize","params":{"protocolVersion":"2025-06-18"}`) {
			t.Errorf("the fallback was told: %q", fbSeen)
		}
	})
}

// TestRelayKeepsABusyServiceOnAModernFirstCall: review of issue 16.
// The relay's first-reply bound (5 s from the first call sent) is meant
// for a service that accepts and never answers; but a 2026-07-28 client
// sends no initialize, so its first line can be a tools/call the service
// legitimately takes longer than 5 s to answer (activity_history over a
// year, history_timeout up to 10 min, a service whose activity calls wait
// their turn). The relay then closes a healthy service's connection,
// answers the call with the retryable "service gone" error, and runs the
// rest of the session in-process: the call fails and the session loses
// the shared warm engine for good. Fix: arm the bound only until the
// service answers anything, and probe liveness with a cheap request the
// relay sends itself (ping, swallowing its reply) instead of timing the
// client's first call.
func TestRelayKeepsABusyServiceOnAModernFirstCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := startRelayWithFallback()
		svc, svcEnd, inW, out, done := rt.svc, rt.svcEnd, rt.inW, &rt.out, rt.done
		defer svcEnd.Close()
		modern := `"_meta":{"` + MetaProtocolVersion + `":"` + ModernVersion + `","` + MetaClientCapabilities + `":{}}`
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+modern+`,"name":"ok"}}`+"\n")
		synctest.Wait()
		if len(svc.lines) != 1 {
			t.Fatalf("the service was sent %d lines", len(svc.lines))
		}
		<-svc.lines
		// The service is alive and answers after 8 s of work.
		time.Sleep(8 * time.Second)
		svcEnd.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false,"served_by":"service"}}` + "\n"))
		synctest.Wait()
		inW.Close()
		svcEnd.Close()
		<-done
		n, last := replyIDsOf(t, out.String())
		if n[`1`] != 1 || !strings.Contains(last[`1`], `"served_by":"service"`) {
			t.Errorf("a busy (not silent) service's answer was replaced: id 1 answered %d times, last %s", n[`1`], last[`1`])
		}
	})
}
