package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Memory under pipelined load (issue 10, point 1): many socket connections
// to one `awbridge serve`, each pipelining thousands of nowframe_build calls,
// every call answered exactly once, and serve's peak resident memory
// (VmHWM) stays under memLoadLimitMiB. Half the clients read their replies
// while they write; the other half write everything first and start
// reading only when the service stops taking requests (or when all are
// written), which is what fills a service that queues without bound.

// memLoadLimitMiB is the bound on serve's peak resident memory.
const memLoadLimitMiB = 64

// memLoadConns is how many connections the load opens: serve's default
// connection limit, all of them at once.
const memLoadConns = 64

// memLoadFullCalls is the calls per connection of the whole scenario
// (64 x 3,000, about 20 s here), what `go test` runs unless
// AWBRIDGE_MEMLOAD_CALLS says otherwise (500 is enough to see a service
// that queues replies without a byte bound go far over the limit).
const memLoadFullCalls = 3000

// memLoadStall is how long a write-everything-first client's write may
// block before it concludes the service is pushing back and starts
// reading. It decides only when that client starts reading, never whether
// the test passes.
const memLoadStall = 200 * time.Millisecond

// memLoadResult is what one run of the load measured.
type memLoadResult struct {
	calls     int
	restMiB   float64 // serve's resident memory after start-up
	peakMiB   float64 // serve's VmHWM after the load
	wall      time.Duration
	failed    int    // calls answered with an error (a JSON-RPC error or isError)
	firstFail string // the first of those answers
	serveLogs string
}

// memLoadCalls is the calls per connection for the test: the env var
// AWBRIDGE_MEMLOAD_CALLS, or memLoadFullCalls.
func memLoadCalls(t *testing.T) int {
	s := os.Getenv("AWBRIDGE_MEMLOAD_CALLS")
	if s == "" {
		return memLoadFullCalls
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("AWBRIDGE_MEMLOAD_CALLS=%q: want a positive number of calls per connection", s)
	}
	return n
}

// memLoadLine is nowframe_build call i of connection conn, with a numeric id.
func memLoadLine(conn, i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nowframe_build","arguments":{"reason":"mem-%d-%d"}}}`, i, conn, i)
}

// runMemLoad starts `awbridge serve` against the recorded ActivityWatch,
// opens conns connections, pipelines perConn nowframe_build calls on each
// and checks that every call got exactly one successful reply. The error
// is the first connection's problem (the result is filled in either way).
func runMemLoad(tb testing.TB, conns, perConn int) (memLoadResult, error) {
	tb.Helper()
	if runtime.GOOS != "linux" {
		tb.Skip("peak resident memory is read from /proc (Linux only)")
	}
	srv, _ := recordedAW(tb)
	sock := filepath.Join(shortDir(tb), "awbridge.sock")
	svc, stderr := startServe(tb, append(baseEnv(tb, srv.URL), "AWBRIDGE_SOCKET="+sock), sock)
	pid := svc.Process.Pid
	res := memLoadResult{calls: conns * perConn}
	if rss, _, _, ok := soakProcStatus(pid); ok {
		res.restMiB = float64(rss) / 1024
	}

	ceiling := time.Now().Add(10 * time.Minute) // for a service that stops answering; never the expectation
	cs := make([]net.Conn, conns)
	for k := range cs {
		c, err := net.Dial("unix", sock)
		if err != nil {
			tb.Fatalf("connection %d: %v", k, err)
		}
		tb.Cleanup(func() { c.Close() })
		c.SetDeadline(ceiling)
		cs[k] = c
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	start := make(chan struct{})
	t0 := time.Now()
	for k, c := range cs {
		wg.Go(func() {
			<-start
			failed, first, err := memLoadConn(c, k, perConn, k%2 == 1, ceiling)
			if err != nil {
				c.Close() // unblocks this connection's writer
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("connection %d: %w", k, err))
			}
			if res.failed += failed; res.firstFail == "" {
				res.firstFail = first
			}
		})
	}
	close(start)
	wg.Wait()
	res.wall = time.Since(t0)
	_, hwm, _, ok := soakProcStatus(pid)
	if !ok {
		tb.Fatalf("no VmHWM for serve (pid %d): did it exit?\n%s", pid, stderr.String())
	}
	res.peakMiB = float64(hwm) / 1024
	for _, c := range cs {
		c.Close()
	}
	svc.Process.Kill() // each run measures a fresh serve
	svc.Wait()
	res.serveLogs = stderr.String()
	if res.failed*2 > res.calls {
		errs = append(errs, fmt.Errorf("%d of %d calls were answered with an error, the first: %.300s", res.failed, res.calls, res.firstFail))
	}
	return res, errors.Join(errs...)
}

// memLoadConn runs one connection's calls: a writer goroutine sends every
// call without waiting for replies while this goroutine reads them. An
// eager client reads from the start; a lazy one (writeFirst) starts
// reading only once everything is written or its writes have blocked for
// memLoadStall. It returns how many calls were answered with an error and
// the first such answer.
func memLoadConn(c net.Conn, conn, n int, writeFirst bool, ceiling time.Time) (failed int, first string, err error) {
	var data []byte
	for i := range n {
		data = append(data, memLoadLine(conn, i)...)
		data = append(data, '\n')
	}
	readNow := make(chan struct{})
	var once sync.Once
	startReading := func() { once.Do(func() { close(readNow) }) }
	if !writeFirst {
		startReading()
	}
	werr := make(chan error, 1)
	go func() {
		defer startReading()
		for off := 0; off < len(data); {
			if writeFirst {
				c.SetWriteDeadline(time.Now().Add(memLoadStall))
			}
			m, err := c.Write(data[off:])
			off += m
			if writeFirst && errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(ceiling) {
				writeFirst = false // pushed back: read, then write the rest
				startReading()
				c.SetWriteDeadline(ceiling)
				continue
			}
			if err != nil {
				werr <- fmt.Errorf("writing call bytes %d of %d: %w", off, len(data), err)
				return
			}
		}
		werr <- nil
	}()
	<-readNow
	failed, first, err = memLoadRead(c, n)
	if err != nil {
		c.Close()
	}
	if e := <-werr; err == nil {
		err = e
	}
	return failed, first, err
}

// memLoadRead reads replies until each of the n calls has exactly one.
// An answer may be an error (a source that timed out on a loaded machine
// is the service's right answer): those are counted, and the first kept.
func memLoadRead(c net.Conn, n int) (failed int, first string, err error) {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	answered := make([]bool, n)
	for got := 0; got < n; got++ {
		if !sc.Scan() {
			err := sc.Err()
			if err == nil {
				err = errors.New("the service closed the connection")
			}
			return failed, first, fmt.Errorf("after %d of %d replies: %w", got, n, err)
		}
		var rep struct {
			ID     json.RawMessage `json:"id"`
			Error  json.RawMessage `json:"error"`
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		line := sc.Bytes()
		if err := json.Unmarshal(line, &rep); err != nil {
			return failed, first, fmt.Errorf("a reply that is not JSON: %v: %.200s", err, line)
		}
		i, err := strconv.Atoi(string(rep.ID))
		switch {
		case err != nil || i < 0 || i >= n:
			return failed, first, fmt.Errorf("a reply to id %s, which was never sent: %.200s", rep.ID, line)
		case answered[i]:
			return failed, first, fmt.Errorf("id %d answered twice", i)
		case rep.Error != nil || rep.Result.IsError:
			if failed++; first == "" {
				first = string(line)
			}
		}
		answered[i] = true
	}
	return failed, first, nil
}

// TestServeMemoryBoundedUnderPipelinedLoad: 64 connections each pipelining
// nowframe_build calls (3,000 each unless AWBRIDGE_MEMLOAD_CALLS says
// otherwise) are all answered
// exactly once, and serve's peak resident memory stays under 64 MiB.
func TestServeMemoryBoundedUnderPipelinedLoad(t *testing.T) {
	perConn := memLoadCalls(t)
	res, err := runMemLoad(t, memLoadConns, perConn)
	if err != nil {
		t.Fatalf("%d connections x %d pipelined nowframe_build calls: %v\nserve stderr:\n%.2000s", memLoadConns, perConn, err, res.serveLogs)
	}
	t.Logf("%d connections x %d pipelined nowframe_build calls (%d), every one answered once in %v (%d with an error); serve's resident memory %.1f MiB at rest, peak (VmHWM) %.1f MiB",
		memLoadConns, perConn, res.calls, res.wall.Round(time.Millisecond), res.failed, res.restMiB, res.peakMiB)
	if res.failed > 0 {
		t.Logf("the first call answered with an error: %.300s", res.firstFail)
	}
	if res.peakMiB >= memLoadLimitMiB {
		t.Errorf("serve's peak resident memory under %d x %d pipelined calls is %.1f MiB, want under %d MiB (bytes in flight and queued must be bounded)",
			memLoadConns, perConn, res.peakMiB, memLoadLimitMiB)
	}
}

// BenchmarkServePipelinedPeakRSS: the scenario at full scale, 64
// connections x 3,000 pipelined nowframe_build calls against one fresh
// serve per iteration; peak-MiB is serve's VmHWM (the largest of the
// iterations), calls/s the throughput, error-answers the calls answered
// with an error.
func BenchmarkServePipelinedPeakRSS(b *testing.B) {
	var peak float64
	var calls, failed int
	var wall time.Duration
	for b.Loop() {
		res, err := runMemLoad(b, memLoadConns, memLoadFullCalls)
		if err != nil {
			b.Fatalf("%v\nserve stderr:\n%.2000s", err, res.serveLogs)
		}
		peak = max(peak, res.peakMiB)
		calls += res.calls
		failed += res.failed
		wall += res.wall
	}
	b.ReportMetric(peak, "peak-MiB")
	b.ReportMetric(float64(calls)/wall.Seconds(), "calls/s")
	b.ReportMetric(float64(failed), "error-answers")
}
