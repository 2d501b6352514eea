package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// Soak (make soak, outside CI; skipped unless AWBRIDGE_SOAK=1):
//
//   - TestSoakCalls: 1,000,000 calls (AWBRIDGE_SOAK_CALLS) against one
//     `awbridge serve`, over 4 socket connections (AWBRIDGE_SOAK_CONNS) with
//     16 calls in flight each (AWBRIDGE_SOAK_WINDOW), every connection closed
//     and reopened every 10,000 calls; every answer is checked. The process's
//     RSS (/proc/<pid>/status), live heap (GODEBUG=gctrace=1) and goroutine
//     count (GODEBUG=schedtrace,scheddetail: the runtime's own list of
//     goroutines, no change to the product) are sampled every second and
//     must stay flat.
//   - TestSoakKill9: 200 times (AWBRIDGE_SOAK_KILLS) a stdio process making
//     calls with artifacts on and persistent state writes is killed with
//     SIGKILL at a random moment (0-300 ms after start); after each kill
//     every file it wrote parses (.context, result.json, spill), the state
//     file loads at the next start without being kept aside, every
//     persistent write it acknowledged is on disk, and temp files are left
//     only where the next start removes them.
//
// TestSoakCheckersRefuseTornFiles (in CI) shows those file checks can fail.

func soakEnabled(t *testing.T) {
	t.Helper()
	if os.Getenv("AWBRIDGE_SOAK") != "1" {
		t.Skip("soak: set AWBRIDGE_SOAK=1 (make soak)")
	}
}

// soakInt is a positive integer from the environment, or def.
func soakInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// soakProcStatus reads VmRSS and VmHWM (KiB) and Threads of a process (Linux).
func soakProcStatus(pid int) (rssKiB, hwmKiB, threads int, ok bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	for _, l := range strings.Split(string(raw), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "VmRSS:":
			rssKiB = n
		case "VmHWM:":
			hwmKiB = n
		case "Threads:":
			threads = n
		}
	}
	return rssKiB, hwmKiB, threads, rssKiB > 0
}

// soakRuntime parses the Go runtime's own traces on the process's stderr:
// one scheduler dump a second (every goroutine, with its status) and one
// line per garbage collection (the live heap after it). Each sample is
// tagged with the number of calls answered when it was read. Safe for
// concurrent use.
type soakRuntime struct {
	calls func() int64

	mu     sync.Mutex
	sched  []soakSched
	gcs    []soakGC
	other  []string // lines that are not runtime traces (the product's logs), the first few
	others int
}

type soakSched struct {
	calls   int64
	live    int            // goroutines not dead (status 6), the runtime's own included
	all     int            // every goroutine struct ever made (dead ones are kept for reuse)
	reasons map[string]int // live goroutines by status and wait reason
}

type soakGC struct {
	calls  int64
	liveMB int
}

var (
	soakGLine  = regexp.MustCompile(`^  G\d+: status=(\d+)\(([^)]*)\)`)
	soakGCLine = regexp.MustCompile(`^gc \d+ @.* (\d+)->(\d+)->(\d+) MB`)
	// soakContextHead is the first content line of a .context document.
	soakContextHead = regexp.MustCompile(`^A: tool=\S+ status=(Ok|Error|Retryable) trace=(\S+) span=(\S+)$`)
)

// read consumes the trace until EOF (the process exited).
func (rt *soakRuntime) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	inBlock := false
	var cur soakSched
	flush := func() {
		if inBlock {
			rt.mu.Lock()
			rt.sched = append(rt.sched, cur)
			rt.mu.Unlock()
		}
	}
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "SCHED "):
			flush()
			inBlock, cur = true, soakSched{calls: rt.calls(), reasons: map[string]int{}}
		case strings.HasPrefix(l, "  G"):
			if m := soakGLine.FindStringSubmatch(l); m != nil {
				cur.all++
				if m[1] != "6" {
					cur.live++
					cur.reasons[m[1]+"("+m[2]+")"]++
				}
			}
		case strings.HasPrefix(l, "  P"), strings.HasPrefix(l, "  M"):
		case strings.HasPrefix(l, "gc "):
			if m := soakGCLine.FindStringSubmatch(l); m != nil {
				mb, _ := strconv.Atoi(m[3])
				rt.mu.Lock()
				rt.gcs = append(rt.gcs, soakGC{calls: rt.calls(), liveMB: mb})
				rt.mu.Unlock()
			}
		default:
			rt.mu.Lock()
			rt.others++
			if len(rt.other) < 10 {
				rt.other = append(rt.other, l)
			}
			rt.mu.Unlock()
		}
	}
	flush()
}

func (rt *soakRuntime) schedCount() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return len(rt.sched)
}

// quiet waits (ceiling 60 s) for n scheduler dumps after this moment and
// returns the one with the fewest live goroutines: the process at rest,
// with a timer or a poll that happened to run filtered out.
func (rt *soakRuntime) quiet(t *testing.T, n int) soakSched {
	t.Helper()
	from := rt.schedCount() + 1 // the dump being printed now may predate this moment
	for deadline := time.Now().Add(60 * time.Second); rt.schedCount() < from+n; {
		if time.Now().After(deadline) {
			t.Fatalf("no scheduler dumps on stderr (GODEBUG=schedtrace): %d so far", rt.schedCount())
		}
		time.Sleep(100 * time.Millisecond)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	least := rt.sched[from]
	for _, s := range rt.sched[from+1 : from+n] {
		if s.live < least.live {
			least = s
		}
	}
	return least
}

// soakReasonDiff says which kinds of goroutine there are more of in b than in a.
func soakReasonDiff(a, b map[string]int) string {
	var out []string
	for k, n := range b {
		if n > a[k] {
			out = append(out, fmt.Sprintf("%s +%d", k, n-a[k]))
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// soakRSS is one sample of the process's memory.
type soakRSS struct {
	calls   int64
	rssKiB  int
	threads int
}

// soakSpan is min and max of the values whose calls fall in [lo, hi).
func soakSpan[S any](xs []S, calls func(S) int64, val func(S) int, lo, hi int64) (least, most, n int) {
	least = -1
	for _, x := range xs {
		if c := calls(x); c < lo || c >= hi {
			continue
		}
		v := val(x)
		if least < 0 || v < least {
			least = v
		}
		most = max(most, v)
		n++
	}
	return least, most, n
}

// soakServe starts `awbridge serve` with the runtime's traces on a pipe
// that rt reads; it returns once the socket answers. Cleanup stops the
// process (SIGTERM, then SIGKILL) and waits for it and for the reader.
func soakServe(t *testing.T, env []string, sock string, rt *soakRuntime) *exec.Cmd {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "serve", "--socket", sock)
	cmd.Env = append(env, "GODEBUG=schedtrace=1000,scheddetail=1,gctrace=1")
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		rt.read(pr)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		<-readDone
		pr.Close()
	})
	for range 400 {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return cmd
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("serve never answered on its socket")
	return nil
}

// soakClient drives calls over socket connections and checks every answer.
// Safe for concurrent use by its workers.
type soakClient struct {
	sock     string
	window   int
	perConn  int // calls per connection before it is closed and reopened
	answered atomic.Int64
	conns    atomic.Int64

	mu   sync.Mutex
	next int // the next call number to hand out
	end  int // the phase ends before this call number
	errs []error
}

func (s *soakClient) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, err)
	s.end = s.next // stop handing out calls
}

// claim reserves up to n call numbers of the phase.
func (s *soakClient) claim(n int) (first, count int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	count = min(n, s.end-s.next)
	first = s.next
	s.next += count
	return first, count
}

// phase runs calls [from, to) over conns connections and returns when all
// are answered (or one failed).
func (s *soakClient) phase(conns, from, to int) {
	s.mu.Lock()
	s.next, s.end = from, to
	s.mu.Unlock()
	var wg sync.WaitGroup
	for w := range conns {
		prefix := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			for {
				first, n := s.claim(s.perConn)
				if n == 0 {
					return
				}
				if err := s.session(prefix, first, n); err != nil {
					s.fail(fmt.Errorf("connection of %s, calls %d..%d: %w", prefix, first, first+n-1, err))
					return
				}
			}
		})
	}
	wg.Wait()
}

// soakKeyMod bounds the keys state set writes in the soak (the store would
// otherwise grow by design, not by a leak).
const soakKeyMod = 64

// session opens a connection, initializes, sends calls first..first+n-1
// keeping s.window in flight, checks each answer and closes.
func (s *soakClient) session(prefix string, first, n int) error {
	c, err := net.Dial("unix", s.sock)
	if err != nil {
		return err
	}
	defer c.Close()
	s.conns.Add(1)
	c.SetDeadline(time.Now().Add(10 * time.Minute)) // a ceiling for a stuck server, never an expectation
	r := bufio.NewReaderSize(c, 256<<10)
	init := `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"0"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	if _, err := io.WriteString(c, init); err != nil {
		return err
	}
	if l, err := r.ReadString('\n'); err != nil || !strings.Contains(l, `"id":"init","result":{`) {
		return fmt.Errorf("initialize: %q %v", l, err)
	}

	slots := make(chan struct{}, s.window)
	readerDone := make(chan struct{})
	werr := make(chan error, 1)
	go func() {
		for i := first; i < first+n; i++ {
			select {
			case slots <- struct{}{}:
			case <-readerDone:
				werr <- nil
				return
			}
			if _, err := io.WriteString(c, loadMixCall(prefix, i, soakKeyMod).line+"\n"); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	err = s.readAnswers(r, prefix, first, n, slots)
	close(readerDone)
	if err != nil {
		c.Close() // a writer blocked on a full socket returns
	}
	if e := <-werr; err == nil {
		err = e
	}
	return err
}

func (s *soakClient) readAnswers(r *bufio.Reader, prefix string, first, n int, slots chan struct{}) error {
	seen := make([]bool, n)
	for got := 0; got < n; got++ {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("after %d of %d answers: %w", got, n, err)
		}
		var rep struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &rep); err != nil {
			return fmt.Errorf("not JSON: %.300s", line)
		}
		id := string(rep.ID)
		i, err := strconv.Atoi(strings.TrimPrefix(strings.Trim(id, `"`), prefix+"-"))
		var call loadCall
		if err == nil && i >= first && i < first+n {
			call = loadMixCall(prefix, i, soakKeyMod)
		}
		if call.id != id {
			return fmt.Errorf("a reply to an id never sent on this connection: %.300s", line)
		}
		if seen[i-first] {
			return fmt.Errorf("id %s answered twice", id)
		}
		seen[i-first] = true
		if rep.Error != nil {
			return fmt.Errorf("%s call %s: error %.300s", call.kind, id, rep.Error)
		}
		if err := call.check(rep.Result); err != nil {
			return fmt.Errorf("%s call %s: %w", call.kind, id, err)
		}
		s.answered.Add(1)
		<-slots
	}
	return nil
}

func TestSoakCalls(t *testing.T) {
	soakEnabled(t)
	total := soakInt(t, "AWBRIDGE_SOAK_CALLS", 1_000_000)
	conns := soakInt(t, "AWBRIDGE_SOAK_CONNS", 4)
	window := soakInt(t, "AWBRIDGE_SOAK_WINDOW", 16)
	warm := max(total/50, 2000)
	if warm >= total {
		t.Fatalf("AWBRIDGE_SOAK_CALLS=%d: too few calls for a warm-up of %d", total, warm)
	}

	srv, awfs := recordedAW(t)
	sock := filepath.Join(t.TempDir(), "awbridge", "awbridge.sock")
	client := &soakClient{sock: sock, window: window, perConn: 10_000}
	rt := &soakRuntime{calls: client.answered.Load}
	cmd := soakServe(t, append(baseEnv(t, srv.URL), "AWBRIDGE_SOCKET="+sock), sock, rt)
	pid := cmd.Process.Pid

	// The keys state get reads back, and a settled health.
	for w := range conns {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		err = loadPreload(loadConn{w: c, r: bufio.NewReader(c), abort: func() { c.Close() }}, fmt.Sprintf("w%d", w))
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}

	// RSS once a second, tagged with the calls answered so far.
	var (
		rssMu   sync.Mutex
		rss     []soakRSS
		stopRSS = make(chan struct{})
		rssDone = make(chan struct{})
	)
	go func() {
		defer close(rssDone)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stopRSS:
				return
			case <-tick.C:
			}
			if r, _, th, ok := soakProcStatus(pid); ok {
				rssMu.Lock()
				rss = append(rss, soakRSS{calls: client.answered.Load(), rssKiB: r, threads: th})
				rssMu.Unlock()
			}
		}
	}()
	stopSampler := sync.OnceFunc(func() { close(stopRSS); <-rssDone })
	defer stopSampler()

	// Warm-up, then the process at rest: the baseline.
	client.phase(conns, 0, warm)
	if err := errors.Join(client.errs...); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	restBefore := rt.quiet(t, 5)
	gBefore := restBefore.live
	rssBefore, _, thBefore, _ := soakProcStatus(pid)

	t0 := time.Now()
	client.phase(conns, warm, total)
	elapsed := time.Since(t0)
	if err := errors.Join(client.errs...); err != nil {
		t.Fatalf("after %d calls answered: %v", client.answered.Load(), err)
	}
	restAfter := rt.quiet(t, 5)
	gAfter := restAfter.live
	rssAfter, hwm, thAfter, _ := soakProcStatus(pid)

	if got := client.answered.Load(); got != int64(total) {
		t.Fatalf("%d answers for %d calls", got, total)
	}
	stopSampler()

	// Quarters of the measured phase (after the warm-up).
	measured := int64(total - warm)
	q1lo, q1hi := int64(warm), int64(warm)+measured/4
	q4lo, q4hi := int64(total)-measured/4, int64(total)+1
	rssMu.Lock()
	samples := slices.Clone(rss)
	rssMu.Unlock()
	rt.mu.Lock()
	sched, gcs, others, otherLines := slices.Clone(rt.sched), slices.Clone(rt.gcs), rt.others, slices.Clone(rt.other)
	rt.mu.Unlock()

	rssOf := func(s soakRSS) int64 { return s.calls }
	r1min, r1max, r1n := soakSpan(samples, rssOf, func(s soakRSS) int { return s.rssKiB }, q1lo, q1hi)
	r4min, r4max, r4n := soakSpan(samples, rssOf, func(s soakRSS) int { return s.rssKiB }, q4lo, q4hi)
	_, th1max, _ := soakSpan(samples, rssOf, func(s soakRSS) int { return s.threads }, q1lo, q1hi)
	_, th4max, _ := soakSpan(samples, rssOf, func(s soakRSS) int { return s.threads }, q4lo, q4hi)
	gcOf := func(g soakGC) int64 { return g.calls }
	h1min, h1max, h1n := soakSpan(gcs, gcOf, func(g soakGC) int { return g.liveMB }, q1lo, q1hi)
	h4min, h4max, h4n := soakSpan(gcs, gcOf, func(g soakGC) int { return g.liveMB }, q4lo, q4hi)
	schedOf := func(s soakSched) int64 { return s.calls }
	g1min, g1max, _ := soakSpan(sched, schedOf, func(s soakSched) int { return s.live }, q1lo, q1hi)
	g4min, g4max, _ := soakSpan(sched, schedOf, func(s soakSched) int { return s.live }, q4lo, q4hi)
	_, all1, _ := soakSpan(sched, schedOf, func(s soakSched) int { return s.all }, q1lo, q1hi)
	_, all4, _ := soakSpan(sched, schedOf, func(s soakSched) int { return s.all }, q4lo, q4hi)

	t.Logf("calls: %d (%d warm-up + %d measured) over %d connections opened in turn (%d at a time, %d in flight each); every answer checked",
		total, warm, measured, client.conns.Load(), conns, window)
	t.Logf("measured: %v, %.0f calls/s", elapsed.Round(time.Millisecond), float64(measured)/elapsed.Seconds())
	t.Logf("RSS MiB: at rest after warm-up %.1f, at rest at the end %.1f; first quarter %.1f..%.1f (%d samples), last quarter %.1f..%.1f (%d samples); peak (VmHWM) %.1f",
		soakMiB(rssBefore), soakMiB(rssAfter), soakMiB(r1min), soakMiB(r1max), r1n, soakMiB(r4min), soakMiB(r4max), r4n, soakMiB(hwm))
	t.Logf("live heap after GC, MB: first quarter %d..%d (%d GCs), last quarter %d..%d (%d GCs); %d GCs in all",
		h1min, h1max, h1n, h4min, h4max, h4n, len(gcs))
	t.Logf("goroutines (runtime's own included): at rest after warm-up %d, at rest at the end %d; under load first quarter %d..%d, last quarter %d..%d; goroutine structs ever made %d then %d",
		gBefore, gAfter, g1min, g1max, g4min, g4max, all1, all4)
	if d := soakReasonDiff(restBefore.reasons, restAfter.reasons); d != "" {
		t.Logf("goroutines at rest, more at the end than after the warm-up: %s", d)
	}
	t.Logf("OS threads: at rest %d then %d; under load max %d then %d", thBefore, thAfter, th1max, th4max)
	t.Logf("ActivityWatch window event reads: %d; other stderr lines: %d %q", awfs.Hits("/api/0/buckets/aw-watcher-window_testhost/events"), others, otherLines)

	if r1n == 0 || r4n == 0 || h1n == 0 || h4n == 0 {
		t.Fatalf("too few samples to judge (RSS %d/%d, GC %d/%d): run more calls", r1n, r4n, h1n, h4n)
	}
	if limit := r1max*3/2 + 4<<10; r4max > limit {
		t.Errorf("RSS grew: last quarter max %.1f MiB > 1.5 x first quarter max %.1f MiB + 4 MiB", soakMiB(r4max), soakMiB(r1max))
	}
	if limit := h1max*3/2 + 4; h4max > limit {
		t.Errorf("live heap grew: last quarter max %d MB > 1.5 x first quarter max %d MB + 4 MB", h4max, h1max)
	}
	// At rest the same goroutines run: the poller, the listener, the
	// HTTP client's idle connections (a few, bounded by the transport).
	if gAfter > gBefore+8 {
		t.Errorf("goroutines at rest grew from %d to %d over %d calls: %s", gBefore, gAfter, measured, soakReasonDiff(restBefore.reasons, restAfter.reasons))
	}
}

func soakMiB(kib int) float64 { return float64(kib) / 1024 }

// TestSoakKill9 kills a process making calls (artifacts on, persistent
// state writes) with SIGKILL at random moments, and checks the disk after
// each kill.
func TestSoakKill9(t *testing.T) {
	soakEnabled(t)
	iterations := soakInt(t, "AWBRIDGE_SOAK_KILLS", 200)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AWBRIDGE_SOAK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (AWBRIDGE_SOAK_SEED reproduces the kill times)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	srv, _ := recordedAW(t)
	root, stateDir := t.TempDir(), t.TempDir()
	env := baseEnv(t, srv.URL, "AWBRIDGE_CONTEXT_ROOT="+root, "AWBRIDGE_STATE_DIR="+stateDir, "AWBRIDGE_MAX_STRING_BYTES=4096")
	k := &killCheck{root: root, stateDir: stateDir, acked: map[string]int{}}

	var replies []int
	t0 := time.Now()
	for it := range iterations {
		delay := time.Duration(rng.IntN(300)) * time.Millisecond
		n, stderr := k.run(t, env, it, delay, rng)
		replies = append(replies, n)
		if strings.Contains(stderr, "not a valid state document") || strings.Contains(stderr, "panic") {
			t.Errorf("iteration %d: stderr at start: %s", it, stderr)
		}
		k.checkState(t, it, n > 0)
		k.checkRun(t, it)
		if t.Failed() {
			t.Fatalf("iteration %d (killed after %v, %d answers)", it, delay, n)
		}
	}
	loopTime := time.Since(t0)

	// One more start, to the end: the state file loads, stale temp files
	// of the state store are gone, and every file of every run parses.
	lines, errs := session(t, env, []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"state","arguments":{"action":"list","scope":"persistent"}}}`})
	if len(lines) != 1 || !strings.Contains(lines[0], `"success":true`) || strings.Contains(errs, "not a valid state document") {
		t.Fatalf("the start after the last kill: %s\n%s", lines, errs)
	}
	k.checkState(t, iterations, true)
	if k.stateTemps != 0 {
		t.Errorf("state temp files left after a clean start: %v", k.stateTempNames)
	}
	k.files = map[string]int{}
	for it := range iterations + 1 {
		k.checkRun(t, it)
	}

	slices.Sort(replies)
	zero := 0
	sum := 0
	for _, n := range replies {
		sum += n
		if n == 0 {
			zero++
		}
	}
	t.Logf("kill -9: %d iterations in %v; answers before the kill: %d in all, median %d, max %d; %d kills before the first answer (during start-up)",
		iterations, loopTime.Round(time.Millisecond), sum, replies[len(replies)/2], replies[len(replies)-1], zero)
	t.Logf("files on disk at the end, all parsed: %d .context, %d result.json, %d spill; state file parsed after every kill (%d times), %d checks that an acknowledged persistent write (%d keys) was on disk",
		k.files["context"], k.files["result"], k.files["spill"], k.stateChecks, k.ackChecks, len(k.acked))
	t.Logf("left by kills: %d state temp files (all removed at the next start), %d artifact temp files, %d calls with result.json but no .context (killed between the two renames)",
		k.stateTempsSeen, k.artifactTemps, k.files["half"])
	if k.artifactTemps > 0 {
		t.Errorf("%d artifact temp files were left outside artifacts/.tmp by kill -9: e.g. %v", k.artifactTemps, k.artifactTempNames)
	}

	// What kills left is in artifacts/.tmp (and at most a writability
	// probe); once older than the sweep age, the next start removes it.
	debris := soakDebris(k.root)
	old := time.Now().Add(-time.Hour)
	for _, p := range debris {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if lines, errs := session(t, env, []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}); len(lines) != 1 || !strings.Contains(lines[0], `"result":{}`) {
		t.Fatalf("the sweeping start: %s %s", lines, errs)
	}
	if left := soakDebris(k.root); len(left) > 0 {
		t.Errorf("%d of %d debris files outlived the sweep: e.g. %v", len(left), len(debris), left[:min(5, len(left))])
	}
	t.Logf("debris of the kills: %d files in artifacts/.tmp or probes, all removed by the first start once older than 10 min", len(debris))
}

// soakDebris lists artifacts/.tmp's files and writability probes.
func soakDebris(root string) []string {
	tmp, _ := filepath.Glob(filepath.Join(root, "artifacts", ".tmp", "*"))
	for _, dir := range []string{root, filepath.Join(root, "artifacts")} {
		m, _ := filepath.Glob(filepath.Join(dir, ".awbridge-probe-*"))
		tmp = append(tmp, m...)
	}
	return tmp
}

// killCheck runs the kill loop's processes and checks what they leave.
type killCheck struct {
	root, stateDir string
	acked          map[string]int // persistent key -> iteration of its last acknowledged write

	stateChecks, ackChecks     int
	stateTemps, stateTempsSeen int
	stateTempNames             []string
	artifactTemps              int
	artifactTempNames          []string
	files                      map[string]int
}

// killCallLine is call j of iteration it: persistent state writes (with a
// pad of 0-8 KiB), frames stored persistently, calls with larger answers
// (help, aw_get_state), and reads of an earlier help call's result.json,
// whose content is over the 4 KiB string limit and is spilled to an
// artifact; all with artifacts. key is the persistent key the call writes
// ("" for none).
func killCallLine(it, j int, pad int) (line, key string) {
	ids := fmt.Sprintf(`"trace_id":"k%d","span_id":"s%d"`, it, j)
	tool := func(name, args string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{%s,%s}}}`, j, name, ids, args)
	}
	switch j % 6 {
	case 0:
		key = fmt.Sprintf("kp/%d", j%64)
		return tool("state", fmt.Sprintf(`"action":"set","scope":"persistent","key":%q,"value":{"it":%d,"j":%d,"pad":%q}`, key, it, j, strings.Repeat("x", pad))), key
	case 1:
		key = fmt.Sprintf("kf/%d", j%8)
		return tool("nowframe_build", fmt.Sprintf(`"reason":"k%d-%d","output":{"pick":["reason","now"]},"store_as":{"key":%q,"scope":"persistent"}`, it, j, key)), key
	case 2:
		return tool("help", `"response_mode":"ai"`), ""
	case 3:
		return tool("system_health", `"response_mode":"ai"`), ""
	case 4:
		return tool("aw_get_state", `"response_mode":"ai"`), ""
	default:
		ref := j - 9 // call j-9 was help, and is most likely done
		if ref < 0 {
			ref = 2
		}
		return tool("artifacts", fmt.Sprintf(`"action":"get","uri":"artifact://runs/k%d/tool_calls/s%d/result.json"`, it, ref)), ""
	}
}

// run starts `awbridge stdio`, keeps 8 calls in flight, kills it with
// SIGKILL after delay, and returns how many calls were answered and its
// stderr.
func (k *killCheck) run(t *testing.T, env []string, it int, delay time.Duration, rng *rand.Rand) (int, string) {
	t.Helper()
	cmd := exec.Command(binPath, "stdio")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	pads := make([]int, 1024)
	for i := range pads {
		pads[i] = rng.IntN(8 << 10)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slots := make(chan struct{}, 8)
	readerDone := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for j := 0; ; j++ {
			select {
			case slots <- struct{}{}:
			case <-readerDone:
				return
			}
			line, _ := killCallLine(it, j, pads[j%len(pads)])
			if _, err := io.WriteString(stdin, line+"\n"); err != nil {
				return
			}
		}
	}()
	answered := 0
	var acked []string
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(readerDone)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			answered++
			<-slots
			var rep struct {
				ID     int `json:"id"`
				Result struct {
					Structured struct {
						Success bool `json:"success"`
						Stored  struct {
							Key   string `json:"key"`
							Scope string `json:"scope"`
						} `json:"stored"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if json.Unmarshal(line, &rep) != nil || !rep.Result.Structured.Success {
				continue
			}
			// A persistent write is durable before its answer.
			_, key := killCallLine(it, rep.ID, 0)
			switch {
			case key == "":
			case strings.HasPrefix(key, "kp/"):
				acked = append(acked, key)
			case rep.Result.Structured.Stored.Key == key && rep.Result.Structured.Stored.Scope == "persistent":
				acked = append(acked, key)
			}
		}
	}()
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	<-readDone
	stdin.Close()
	<-writerDone
	cmd.Wait()
	for _, key := range acked {
		k.acked[key] = it
	}
	return answered, stderr.String()
}

// checkState parses the state file as the store would load it, checks
// every acknowledged write is there, and tracks temp files: they may be
// left by a kill, and the store removes them when it next opens (started
// says the iteration's process got that far).
func (k *killCheck) checkState(t *testing.T, it int, started bool) {
	t.Helper()
	entries, err := os.ReadDir(k.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	var temps []string
	for _, e := range entries {
		n := e.Name()
		switch {
		case n == "state.json", n == "state.json.lock": // the lock file stays
		case strings.HasPrefix(n, "state.json.tmp-"):
			temps = append(temps, n)
		case strings.HasPrefix(n, "state.json.corrupt-"):
			t.Errorf("iteration %d: the state file was kept aside as corrupt: %s", it, n)
		default:
			t.Errorf("iteration %d: unexpected file in the state dir: %s", it, n)
		}
	}
	if started {
		for _, old := range k.stateTempNames {
			if slices.Contains(temps, old) {
				t.Errorf("iteration %d: the state temp file %s survived the next start", it, old)
			}
		}
	}
	for _, n := range temps {
		if !slices.Contains(k.stateTempNames, n) {
			k.stateTempsSeen++
		}
		// A start removes the temp files older than a write can take (a
		// younger one may be another process's write in flight): age it.
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(filepath.Join(k.stateDir, n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	k.stateTemps, k.stateTempNames = len(temps), temps

	raw, err := os.ReadFile(filepath.Join(k.stateDir, "state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		if len(k.acked) > 0 {
			t.Errorf("iteration %d: no state file, but %d persistent writes were acknowledged", it, len(k.acked))
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	k.stateChecks++
	doc, err := soakParseState(raw)
	if err != nil {
		t.Errorf("iteration %d: %v: %.300s", it, err, raw)
		return
	}
	for key, last := range k.acked {
		e, ok := doc[key]
		if !ok {
			t.Errorf("iteration %d: acknowledged persistent key %s is not in the state file", it, key)
			continue
		}
		k.ackChecks++
		var v struct {
			It     int    `json:"it"`     // state set
			Reason string `json:"reason"` // a stored frame: k<it>-<j>
		}
		err := json.Unmarshal(e, &v)
		if strings.HasPrefix(key, "kf/") {
			_, err = fmt.Sscanf(v.Reason, "k%d-", &v.It)
		}
		// A later write of the same key (unanswered when the kill came) may
		// have replaced it, never an older one.
		if err != nil || v.It < last {
			t.Errorf("iteration %d: persistent key %s holds %.100s, but a write of iteration %d was acknowledged", it, key, e, last)
		}
	}
}

// soakParseState parses a state file strictly: {"version":1,"entries":{key:
// {"value":<JSON>,"updated_at":<RFC 3339>}}} and nothing after it.
func soakParseState(raw []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var doc struct {
		Version int `json:"version"`
		Entries map[string]struct {
			Value     json.RawMessage `json:"value"`
			UpdatedAt time.Time       `json:"updated_at"`
		} `json:"entries"`
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("state file is not a state document: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF || doc.Version != 1 || doc.Entries == nil {
		return nil, errors.New("state file is not a state document: data after it, another version or no entries")
	}
	out := make(map[string]json.RawMessage, len(doc.Entries))
	for k, e := range doc.Entries {
		if len(e.Value) == 0 {
			return nil, fmt.Errorf("state file: entry %s has no value", k)
		}
		out[k] = e.Value
	}
	return out, nil
}

// checkRun checks every file under runs/k<it>: .context documents have
// their [LEGEND]/[CONTENT] structure and name their own call, result.json
// is the call's envelope, temp files are counted.
func (k *killCheck) checkRun(t *testing.T, it int) {
	t.Helper()
	if k.files == nil {
		k.files = map[string]int{}
	}
	trace := fmt.Sprintf("k%d", it)
	dir := filepath.Join(k.root, "artifacts", "runs", trace, "tool_calls")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return filepath.SkipDir // killed before any artifact
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		name := d.Name()
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-"):
			k.noteArtifactTemp(path)
		case strings.HasSuffix(name, ".context") && filepath.Dir(rel) == ".":
			span := strings.TrimSuffix(name, ".context")
			if err := soakCheckContext(raw, trace, span); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
			k.files["context"]++
		case name == "result.json":
			span := filepath.Dir(rel)
			var env struct {
				Trace struct {
					TraceID string `json:"trace_id"`
					SpanID  string `json:"span_id"`
				} `json:"trace"`
				Status string `json:"status"`
			}
			if err := json.Unmarshal(raw, &env); err != nil || env.Trace.TraceID != trace || env.Trace.SpanID != span || env.Status == "" {
				t.Errorf("%s: not the call's envelope (%v): %.200s", rel, err, raw)
			}
			if _, err := os.Stat(filepath.Join(dir, span+".context")); err != nil {
				k.files["half"]++
			}
			k.files["result"]++
		case strings.HasPrefix(name, "spill-") && strings.HasSuffix(name, ".txt"):
			// The full text of a result.json read back: JSON itself.
			if !json.Valid(raw) {
				t.Errorf("%s: a spilled result.json that does not parse: %.200s", rel, raw)
			}
			k.files["spill"]++
		default:
			t.Errorf("%s: an unexpected file", rel)
		}
		return nil
	})
	if err != nil {
		t.Errorf("walking %s: %v", dir, err)
	}
}

func (k *killCheck) noteArtifactTemp(paths ...string) {
	for _, p := range paths {
		rel, _ := filepath.Rel(k.root, p)
		if slices.Contains(k.artifactTempNames, rel) {
			continue
		}
		k.artifactTemps++
		if len(k.artifactTempNames) < 5 {
			k.artifactTempNames = append(k.artifactTempNames, rel)
		}
	}
}

// soakCheckContext checks the structure of a .context document: the
// [LEGEND] block ("X = meaning" lines), a blank line, [CONTENT], then only
// "A:", "N:" and "R:" lines, the first naming the call, one reference to
// its result.json; valid UTF-8, ending with a newline.
func soakCheckContext(b []byte, trace, span string) error {
	if !utf8.Valid(b) || len(b) == 0 || b[len(b)-1] != '\n' {
		return errors.New("not whole lines of UTF-8")
	}
	legend, content, ok := strings.Cut(string(b), "\n\n[CONTENT]\n")
	if !ok || !strings.HasPrefix(legend, "[LEGEND]\n") {
		return errors.New("no [LEGEND] then [CONTENT]")
	}
	for _, l := range strings.Split(strings.TrimPrefix(legend, "[LEGEND]\n"), "\n") {
		if len(l) < 5 || l[1:4] != " = " {
			return fmt.Errorf("legend line %q", l)
		}
	}
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	head := soakContextHead.FindStringSubmatch(lines[0])
	if head == nil || head[2] != trace || head[3] != span {
		return fmt.Errorf("first content line %q does not name the call", lines[0])
	}
	refs := 0
	for _, l := range lines[1:] {
		if len(l) < 2 || !strings.Contains("ANR", l[:1]) || l[1] != ':' {
			return fmt.Errorf("content line %q", l)
		}
		if l == "R: artifact://runs/"+trace+"/tool_calls/"+span+"/result.json" {
			refs++
		}
	}
	if refs != 1 {
		return fmt.Errorf("%d references to its result.json", refs)
	}
	return nil
}

// The soak's checkers can fail: a torn copy of a whole .context document
// or state file is refused wherever it is cut, except (the format has no
// end marker) a .context cut at a line end after its result.json
// reference. Runs in CI.
func TestSoakCheckersRefuseTornFiles(t *testing.T) {
	doc, err := os.ReadFile("../../toolbus/artifacts/testdata/small.context")
	if err != nil {
		t.Fatal(err)
	}
	const trace, span = "0190b1c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d", "call-1"
	state := []byte("{\"version\":1,\"entries\":{\n\"kp/1\":{\"value\":{\"it\":3,\"pad\":\"xx\"},\"updated_at\":\"2026-01-02T15:04:05.123456789Z\"},\n\"kf/2\":{\"value\":\"a\"}\n}}\n")
	if err := soakCheckContext(doc, trace, span); err != nil {
		t.Fatalf("a whole .context document: %v", err)
	}
	if err := soakCheckContext(doc, trace, "call-2"); err == nil {
		t.Fatal("a .context document of another call passed")
	}
	if _, err := soakParseState(state); err != nil {
		t.Fatalf("a whole state file: %v", err)
	}
	ref := []byte("R: artifact://runs/" + trace + "/tool_calls/" + span + "/result.json\n")
	undetectable := bytes.Index(doc, ref) + len(ref) // a line end from here on looks whole
	for _, c := range []struct {
		name  string
		whole []byte
		check func([]byte) error
		cutOK func(n int) bool
	}{
		{"context", doc, func(b []byte) error { return soakCheckContext(b, trace, span) },
			func(n int) bool { return n > 0 && n >= undetectable && doc[n-1] == '\n' }},
		// The state file's last byte is a newline the parser does without.
		{"state", state, func(b []byte) error { _, err := soakParseState(b); return err },
			func(n int) bool { return n == len(state)-1 }},
	} {
		for n := range len(c.whole) {
			if c.check(c.whole[:n]) == nil && !c.cutOK(n) {
				t.Errorf("%s cut to %d of %d bytes passed: %q", c.name, n, len(c.whole), c.whole[:n])
			}
		}
	}
	for _, bad := range []string{`{"version":1,"entries":{}}x`, `{"version":2,"entries":{}}`, `{"version":1}`, `{"version":1,"entries":{"k":{}}}`, `{"version":1,"entries":{},"more":1}`} {
		if _, err := soakParseState([]byte(bad)); err == nil {
			t.Errorf("state file %s passed", bad)
		}
	}
}
