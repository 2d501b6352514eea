package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Load (CI): 1,000 calls in flight at once over one stdio connection of the
// real binary, and 1,000 over eight socket connections to one `awbridge
// serve`; every call is answered exactly once, and every answer is the
// right one for its own request (no answer swapped, torn or lost).

// loadCall is one request of the load mix and the check of its answer.
type loadCall struct {
	id    string // the raw JSON id, as it must be echoed
	kind  string
	line  string
	check func(result json.RawMessage) error // the reply's result (an error reply fails first)
}

// loadHelpNames are the tool names (and aliases) help is asked about, with
// the canonical name its answer must carry.
var loadHelpNames = [][2]string{
	{"help", "help"}, {"state", "state"}, {"mcp_state", "state"}, {"artifacts", "artifacts"},
	{"nowframe_build", "nowframe_build"}, {"nowframe.build", "nowframe_build"},
	{"system_health", "system_health"}, {"system.health", "system_health"},
	{"aw_get_state", "aw_get_state"}, {"aw.get_state", "aw_get_state"},
}

// loadKinds is how many kinds of call loadMixCall cycles through.
const loadKinds = 9

// loadPreKeys is how many keys loadPreload stores per prefix (state get
// reads them back during the load).
const loadPreKeys = 16

// loadMixCall is call number i of the mix for one client (prefix names its
// keys and reasons, so that answers from different clients cannot be
// confused). keyMod > 0 bounds the keys state set writes (the soak reuses
// them); 0 gives every set its own key. Even calls have numeric ids, odd
// ones string ids.
func loadMixCall(prefix string, i, keyMod int) loadCall {
	id := fmt.Sprintf("%q", fmt.Sprintf("%s-%d", prefix, i))
	if i%2 == 0 {
		id = fmt.Sprint(i)
	}
	tool := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	c := loadCall{id: id}
	switch i % loadKinds {
	case 0:
		c.kind = "ping"
		c.line = `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`
		c.check = func(res json.RawMessage) error {
			if string(res) != "{}" {
				return fmt.Errorf("ping result %s", res)
			}
			return nil
		}
	case 1:
		c.kind = "state_set"
		n := i
		if keyMod > 0 {
			n = i % keyMod
		}
		key := fmt.Sprintf("%s/set/%d", prefix, n)
		value := fmt.Sprintf(`{"i":%d,"p":%q}`, i, prefix)
		c.line = tool("state", `{"action":"set","key":"`+key+`","value":`+value+`}`)
		c.check = loadEnvelopeCheck("state", func(res json.RawMessage) error {
			var r struct {
				Stored struct {
					Key   string `json:"key"`
					Scope string `json:"scope"`
					Bytes int    `json:"bytes"`
				} `json:"stored"`
			}
			if err := json.Unmarshal(res, &r); err != nil || r.Stored.Key != key || r.Stored.Scope != "session" || r.Stored.Bytes != len(value) {
				return fmt.Errorf("state set %s (%d bytes) answered %s", key, len(value), res)
			}
			return nil
		})
	case 2:
		c.kind = "state_get"
		k := i % loadPreKeys
		key := fmt.Sprintf("%s/pre/%d", prefix, k)
		c.line = tool("state", `{"action":"get","key":"`+key+`"}`)
		c.check = loadEnvelopeCheck("state", func(res json.RawMessage) error {
			var r struct {
				Key   string `json:"key"`
				Scope string `json:"scope"`
				Value struct {
					N int    `json:"n"`
					P string `json:"p"`
				} `json:"value"`
			}
			if err := json.Unmarshal(res, &r); err != nil || r.Key != key || r.Scope != "session" || r.Value.N != k || r.Value.P != prefix {
				return fmt.Errorf("state get %s answered %s", key, res)
			}
			return nil
		})
	case 3:
		c.kind = "help"
		h := loadHelpNames[(i/loadKinds)%len(loadHelpNames)]
		c.line = tool("help", `{"tool":"`+h[0]+`","output":{"path":"name"}}`)
		c.check = loadEnvelopeCheck("help", func(res json.RawMessage) error {
			if string(res) != `"`+h[1]+`"` {
				return fmt.Errorf("help about %s answered %s, want %q", h[0], res, h[1])
			}
			return nil
		})
	case 4:
		c.kind = "system_health"
		c.line = tool("system_health", `{"output":{"pick":["aw_ok","preflight_ok"]}}`)
		c.check = loadEnvelopeCheck("system_health", func(res json.RawMessage) error {
			if string(res) != `{"aw_ok":true,"preflight_ok":true}` {
				return fmt.Errorf("system_health answered %s", res)
			}
			return nil
		})
	case 5:
		c.kind = "nowframe_build"
		reason := fmt.Sprintf("%s-r%d", prefix, i)
		c.line = tool("nowframe_build", `{"reason":"`+reason+`","output":{"pick":["reason","aw_info"]}}`)
		c.check = loadEnvelopeCheck("nowframe_build", func(res json.RawMessage) error {
			var r struct {
				Reason string `json:"reason"`
				AWInfo struct {
					Hostname string `json:"hostname"`
				} `json:"aw_info"`
			}
			if err := json.Unmarshal(res, &r); err != nil || r.Reason != reason || r.AWInfo.Hostname != "vm" {
				return fmt.Errorf("nowframe_build for %s answered %.300s", reason, res)
			}
			return nil
		})
	case 6:
		c.kind = "nowframe.build"
		reason := fmt.Sprintf("%s-d%d", prefix, i)
		c.line = `{"jsonrpc":"2.0","id":` + id + `,"method":"nowframe.build","params":{"reason":"` + reason + `"}}`
		c.check = func(res json.RawMessage) error {
			var r struct {
				Reason string `json:"reason"`
				AWInfo struct {
					Hostname string `json:"hostname"`
				} `json:"aw_info"`
				AWBuckets map[string]json.RawMessage `json:"aw_buckets"`
			}
			if err := json.Unmarshal(res, &r); err != nil || r.Reason != reason || r.AWInfo.Hostname != "vm" || len(r.AWBuckets) == 0 {
				return fmt.Errorf("nowframe.build for %s answered %.300s", reason, res)
			}
			return nil
		}
	case 7:
		c.kind = "aw_get_state"
		c.line = tool("aw_get_state", `{"output":{"path":"info.hostname"}}`)
		c.check = loadEnvelopeCheck("aw_get_state", func(res json.RawMessage) error {
			if string(res) != `"vm"` {
				return fmt.Errorf("aw_get_state answered %.300s", res)
			}
			return nil
		})
	default:
		c.kind = "system.health"
		c.line = `{"jsonrpc":"2.0","id":` + id + `,"method":"system.health"}`
		c.check = func(res json.RawMessage) error {
			var r struct {
				AWOK        bool   `json:"aw_ok"`
				PreflightOK bool   `json:"preflight_ok"`
				Status      string `json:"status"`
			}
			if err := json.Unmarshal(res, &r); err != nil || !r.AWOK || !r.PreflightOK || r.Status != "healthy" {
				return fmt.Errorf("system.health answered %.300s", res)
			}
			return nil
		}
	}
	return c
}

// loadEnvelopeCheck checks a tools/call result: not an error, the text content
// and structuredContent are the same envelope, the envelope is a success of
// tool, and its result passes check.
func loadEnvelopeCheck(tool string, check func(json.RawMessage) error) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var r struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("tools/call result: %v", err)
		}
		if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" {
			return fmt.Errorf("%s: isError or no text content: %.300s", tool, raw)
		}
		var text, structured bytes.Buffer
		if json.Compact(&text, []byte(r.Content[0].Text)) != nil || json.Compact(&structured, r.Structured) != nil ||
			!bytes.Equal(text.Bytes(), structured.Bytes()) {
			return fmt.Errorf("%s: the text content is not the structured envelope: %.300s", tool, raw)
		}
		var env struct {
			Success bool            `json:"success"`
			Tool    string          `json:"tool"`
			Status  string          `json:"status"`
			Result  json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(r.Structured, &env); err != nil || !env.Success || env.Tool != tool || env.Status != "Ok" {
			return fmt.Errorf("%s: envelope %.300s", tool, r.Structured)
		}
		return check(env.Result)
	}
}

// loadPreload stores the keys state get reads during the load, one call at
// a time, and waits until health has probed ActivityWatch once (so that the
// load's health answers are all settled ones).
func loadPreload(lc loadConn, prefix string) error {
	var calls []loadCall
	for k := range loadPreKeys {
		key := fmt.Sprintf("%s/pre/%d", prefix, k)
		calls = append(calls, loadCall{
			id: fmt.Sprintf(`"pre-%d"`, k), kind: "preload",
			line:  fmt.Sprintf(`{"jsonrpc":"2.0","id":"pre-%d","method":"tools/call","params":{"name":"state","arguments":{"action":"set","key":%q,"value":{"n":%d,"p":%q}}}}`, k, key, k, prefix),
			check: loadEnvelopeCheck("state", func(json.RawMessage) error { return nil }),
		})
	}
	for _, c := range calls {
		if _, err := loadExchange(lc, []loadCall{c}); err != nil {
			return err
		}
	}
	for try := range 100 {
		c := loadCall{id: fmt.Sprintf(`"health-%d"`, try), kind: "health", line: fmt.Sprintf(`{"jsonrpc":"2.0","id":"health-%d","method":"system.health"}`, try)}
		var healthy bool
		c.check = func(res json.RawMessage) error {
			healthy = strings.Contains(string(res), `"status":"healthy"`)
			return nil
		}
		if _, err := loadExchange(lc, []loadCall{c}); err != nil {
			return err
		}
		if healthy {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("health never said healthy against the recorded ActivityWatch")
}

// loadConn is one client connection of the load: where requests go, where
// replies come from, and how to end it when the test gives up on it (kill
// the process, close the socket), so that a writer blocked on a peer that
// no longer reads returns.
type loadConn struct {
	w     io.Writer
	r     *bufio.Reader
	abort func()
}

// loadExchange writes every call's line from its own goroutine, without
// waiting for any reply, and reads replies until each call
// has its answer. It returns how many answers came after the answer to a
// later request (evidence that the calls ran concurrently), and the first
// problem: a reply that is not JSON-RPC, an error reply, an answer that
// fails its call's check, an id answered twice or never sent, or the
// stream ending early.
func loadExchange(lc loadConn, calls []loadCall) (reordered int, err error) {
	byID := make(map[string]int, len(calls))
	for i := range calls {
		if _, dup := byID[calls[i].id]; dup {
			return 0, fmt.Errorf("test bug: id %s used twice", calls[i].id)
		}
		byID[calls[i].id] = i
	}
	werr := make(chan error, 1)
	go func() {
		bw := bufio.NewWriterSize(lc.w, 64<<10)
		for _, c := range calls {
			if _, err := bw.WriteString(c.line + "\n"); err != nil {
				werr <- fmt.Errorf("writing the requests: %w", err)
				return
			}
		}
		werr <- bw.Flush()
	}()
	reordered, err = loadRead(lc.r, calls, byID)
	if err != nil {
		lc.abort()
	}
	if e := <-werr; err == nil && e != nil {
		err = e
	}
	return reordered, err
}

func loadRead(r *bufio.Reader, calls []loadCall, byID map[string]int) (reordered int, err error) {
	answered := make(map[string]bool, len(calls))
	latest := -1
	for len(answered) < len(calls) {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return reordered, fmt.Errorf("after %d of %d answers: %w", len(answered), len(calls), err)
		}
		var rep struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &rep); err != nil || rep.JSONRPC != "2.0" {
			return reordered, fmt.Errorf("a reply that is not JSON-RPC 2.0: %.300s", line)
		}
		id := string(rep.ID)
		i, ok := byID[id]
		switch {
		case !ok:
			return reordered, fmt.Errorf("a reply to id %s, which was never sent: %.300s", id, line)
		case answered[id]:
			return reordered, fmt.Errorf("id %s answered twice: %.300s", id, line)
		case rep.Error != nil:
			return reordered, fmt.Errorf("%s call %s got an error: %.300s", calls[i].kind, id, line)
		}
		answered[id] = true
		if i < latest {
			reordered++
		}
		latest = max(latest, i)
		if err := calls[i].check(rep.Result); err != nil {
			return reordered, fmt.Errorf("%s call %s: %w", calls[i].kind, id, err)
		}
	}
	return reordered, nil
}

// loadMix is n calls of the mix for one client.
func loadMix(prefix string, n int) []loadCall {
	calls := make([]loadCall, n)
	for i := range n {
		calls[i] = loadMixCall(prefix, i, 0)
	}
	return calls
}

// loadCheckSets asks, on a quiet stream, for the keys stored under
// prefix/set/ and checks that they are exactly those the calls set.
func loadCheckSets(lc loadConn, prefix string, calls []loadCall) error {
	var want []string
	for i, c := range calls {
		if c.kind == "state_set" {
			want = append(want, fmt.Sprintf("%s/set/%d", prefix, i))
		}
	}
	slices.Sort(want)
	list := loadCall{id: `"list"`, kind: "state_list",
		line: `{"jsonrpc":"2.0","id":"list","method":"tools/call","params":{"name":"state","arguments":{"action":"list","prefix":"` + prefix + `/set/"}}}`}
	list.check = loadEnvelopeCheck("state", func(res json.RawMessage) error {
		var l struct {
			Entries []struct {
				Key string `json:"key"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(res, &l); err != nil {
			return err
		}
		var got []string
		for _, e := range l.Entries {
			got = append(got, e.Key)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("after the load, %d keys under %s/set/, want the %d that were set", len(got), prefix, len(want))
		}
		return nil
	})
	_, err := loadExchange(lc, []loadCall{list})
	return err
}

func loadCounts(calls []loadCall) string {
	n := map[string]int{}
	for _, c := range calls {
		n[c.kind]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, n[k])
	}
	return strings.TrimSpace(b.String())
}

func TestConcurrentCallsOneStdioConnection(t *testing.T) {
	srv, _ := recordedAW(t)
	p := start(t, baseEnv(t, srv.URL))
	p.rd.SetReadDeadline(time.Now().Add(2 * faultCeiling)) // a ceiling, never the expectation
	lc := loadConn{w: p.in, r: p.out, abort: func() { p.cmd.Process.Kill() }}
	if err := loadPreload(lc, "stdio"); err != nil {
		t.Fatal(err)
	}
	calls := loadMix("stdio", 1000)
	t0 := time.Now()
	reordered, err := loadExchange(lc, calls)
	if err != nil {
		t.Fatalf("1,000 calls in flight over one stdio connection: %v\nstderr:\n%s", err, p.stderr.String())
	}
	t.Logf("1,000 calls in flight at once over stdio, all answered correctly in %v, %d answered out of order (%s)",
		time.Since(t0).Round(time.Millisecond), reordered, loadCounts(calls))
	if err := loadCheckSets(lc, "stdio", calls); err != nil {
		t.Fatal(err)
	}
	// Nothing more comes: at the end of input the process exits cleanly.
	p.close()
	if len(p.unread) != 0 {
		t.Fatalf("lines after every call was answered: %.300s", p.unread)
	}
}

func TestConcurrentCallsSeveralSocketConnections(t *testing.T) {
	const conns, perConn = 8, 125
	srv, _ := recordedAW(t)
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	svc, stderr := startServe(t, append(baseEnv(t, srv.URL), "AWBRIDGE_SOCKET="+sock), sock)

	dial := func() (loadConn, error) {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return loadConn{}, err
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(60 * time.Second)) // a ceiling, never the expectation
		return loadConn{w: c, r: bufio.NewReaderSize(c, 1<<20), abort: func() { c.Close() }}, nil
	}
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		errs      []error
		all       []loadCall
		reordered int
	)
	start := make(chan struct{})
	for k := range conns {
		prefix := fmt.Sprintf("sock%d", k)
		lc, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		if err := loadPreload(lc, prefix); err != nil {
			t.Fatal(err)
		}
		calls := loadMix(prefix, perConn)
		mu.Lock()
		all = append(all, calls...)
		mu.Unlock()
		wg.Go(func() {
			<-start // every connection's calls go out together
			n, err := loadExchange(lc, calls)
			if err == nil {
				err = loadCheckSets(lc, prefix, calls)
			}
			mu.Lock()
			defer mu.Unlock()
			reordered += n
			if err != nil {
				errs = append(errs, fmt.Errorf("connection %d: %w", k, err))
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("%d socket connections with %d calls in flight each: %v\nserve stderr:\n%s", conns, perConn, err, stderr.String())
	}
	t.Logf("%d socket connections x %d calls in flight, all answered correctly in %v, %d answered out of order (%s)",
		conns, perConn, time.Since(t0).Round(time.Millisecond), reordered, loadCounts(all))
	// The service is still there for the next client, and still whole.
	if got := socketCall(t, sock, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); strings.TrimSpace(got[0]) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("ping after the load: %q\n%s", got, stderr.String())
	}
	if svc.ProcessState != nil {
		t.Fatalf("serve exited during the load: %s", stderr.String())
	}
}
