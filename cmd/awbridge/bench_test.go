package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchBin is the binary the benchmarks run: $AWBRIDGE_BENCH_BIN when set
// (to measure another build, e.g. an older commit's, with the same
// benchmarks), else the one TestMain built.
func benchBin() string {
	if p := os.Getenv("AWBRIDGE_BENCH_BIN"); p != "" {
		return p
	}
	return binPath
}

// benchStdio runs the benchmarks' binary's `awbridge stdio` in env.
func benchStdio(b *testing.B, env []string) *proc {
	cmd := exec.Command(benchBin(), "stdio")
	cmd.Env = env
	return startCmd(b, cmd)
}

// cpuTime is the CPU time the process has used so far (Linux): the sum of
// its threads' run time in nanoseconds from /proc/<pid>/task/*/schedstat,
// or, where that is missing, user+system time from /proc/<pid>/stat (in
// ticks of 10 ms).
func cpuTime(pid int) (time.Duration, bool) {
	if tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid)); err == nil {
		var sum int64
		ok := len(tasks) > 0
		for _, task := range tasks {
			raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, task.Name()))
			f := strings.Fields(string(raw))
			if err != nil || len(f) == 0 {
				ok = false
				break
			}
			ns, err := strconv.ParseInt(f[0], 10, 64)
			ok = ok && err == nil
			sum += ns
		}
		if ok {
			return time.Duration(sum), true
		}
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100), true // USER_HZ is 100 on Linux
}

// peakRSS is VmHWM of the process in MiB.
func peakRSS(pid int) (float64, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return kb / 1024, true
		}
	}
	return 0, false
}

// benchInit is the initialize request the stdio benchmarks open with.
const benchInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`

// benchEnv is a clean environment for `awbridge stdio` with its engine in
// process (no relay to a service), reading the recorded ActivityWatch.
func benchEnv(b *testing.B, extra ...string) []string {
	srv, _ := recordedAW(b)
	return baseEnv(b, srv.URL, append([]string{"AWBRIDGE_RELAY=0"}, extra...)...)
}

// BenchmarkStartToFirstAnswer: from exec of `awbridge stdio` to the reply
// to its first request, as a client starting the server sees it.
// ms-to-first-answer is that time (ns/op also counts the process's exit);
// ms-to-initialize is the time to the initialize reply where there is one;
// cpu-ms is the CPU time (user and system) the process used in all, exit
// included, which a loaded machine blurs less than the wall clock.
// version_floor is the floor under both: exec of `awbridge version` to its
// line (loading the binary and Go's start, no engine).
func BenchmarkStartToFirstAnswer(b *testing.B) {
	for _, bc := range []struct {
		name    string
		command string
		lines   []string // requests; the last one's reply is the first answer
	}{
		{"initialize_tools_list", "stdio", []string{benchInit,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}},
		{"system.health_direct", "stdio", []string{`{"jsonrpc":"2.0","id":1,"method":"system.health"}`}},
		{"version_floor", "version", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			env := benchEnv(b)
			var input string
			replies := 0
			for _, l := range bc.lines {
				input += l + "\n"
				if strings.Contains(l, `"id":`) {
					replies++
				}
			}
			var toInit, toAnswer, cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(benchBin(), bc.command)
				cmd.Env = env
				in, _ := cmd.StdinPipe()
				out, _ := cmd.StdoutPipe()
				t0 := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				io.WriteString(in, input)
				r := bufio.NewReader(out)
				for n := range max(replies, 1) {
					if _, err := r.ReadString('\n'); err != nil {
						b.Fatal(err)
					}
					if n == 0 {
						toInit += time.Since(t0)
					}
				}
				toAnswer += time.Since(t0)
				in.Close()
				io.Copy(io.Discard, r)
				cmd.Wait()
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(float64(toAnswer.Microseconds())/1000/float64(b.N), "ms-to-first-answer")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms")
			if replies > 1 {
				b.ReportMetric(float64(toInit.Microseconds())/1000/float64(b.N), "ms-to-initialize")
			}
		})
	}
}

// TestPackageInitIsCheap: what the project's packages do before main
// runs (package-level variables) is paid by every start, before the first
// answer. Go's init trace counts it; the allocations (not the time, which
// a loaded machine blurs) must stay small: compiling counted-repetition
// regexps at start-up cost toolbus and config some 3,600 of them.
func TestPackageInitIsCheap(t *testing.T) {
	code, _, trace := runBin(t, append(os.Environ(), "GODEBUG=inittrace=1"), "version")
	if code != 0 {
		t.Fatalf("awbridge version: exit %d\n%s", code, trace)
	}
	const budget = 1000
	total := 0
	var each []string
	for _, line := range strings.Split(trace, "\n") {
		// init github.com/awbridge/awbridge/mcp @14 ms, 0.09 ms clock, 760 bytes, 6 allocs
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/awbridge/awbridge") || f[len(f)-1] != "allocs" {
			continue
		}
		n, err := strconv.Atoi(f[len(f)-2])
		if err != nil {
			t.Fatalf("unreadable init trace line %q", line)
		}
		total += n
		each = append(each, fmt.Sprintf("%s %d", f[1], n))
	}
	if total > budget {
		t.Errorf("the project's packages allocate %d times at start-up (budget %d): %s", total, budget, strings.Join(each, ", "))
	}
}

// benchRoundTrip measures calls over one stdio session (engine in process):
// p50 and p99 latency, the server's CPU per call read from /proc before
// and after the measured calls, and the session's peak resident memory.
func benchRoundTrip(b *testing.B, warmup, line string, env ...string) {
	p := benchStdio(b, benchEnv(b, env...))
	if warmup != "" {
		p.roundTrip(warmup)
	}
	for range 200 {
		p.roundTrip(line)
	}
	lat := make([]time.Duration, 0, b.N)
	cpu0, okCPU := cpuTime(p.cmd.Process.Pid)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		p.roundTrip(line)
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	cpu1, _ := cpuTime(p.cmd.Process.Pid)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1000, "p99-µs")
	if okCPU && len(lat) > 0 {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/1000/float64(len(lat)), "server-cpu-µs/op")
	}
	if rss, ok := peakRSS(p.cmd.Process.Pid); ok {
		b.ReportMetric(rss, "peak-rss-MiB")
	}
}

func BenchmarkStdioSystemHealth(b *testing.B) {
	benchRoundTrip(b, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"system_health","arguments":{}}}`)
}

// BenchmarkStdioSystemHealthArtifacts: the same with artifacts on (two
// files written atomically per call).
func BenchmarkStdioSystemHealthArtifacts(b *testing.B) {
	benchRoundTrip(b, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"system_health","arguments":{}}}`,
		"AWBRIDGE_CONTEXT_ROOT="+b.TempDir())
}

// BenchmarkStdioSystemHealthArtifactsTmpfs: artifacts on a memory file
// system (/dev/shm), where creating a file costs ~15 µs instead of the
// ~270 µs of this VM's ext4.
func BenchmarkStdioSystemHealthArtifactsTmpfs(b *testing.B) {
	dir, err := os.MkdirTemp("/dev/shm", "awbridge-bench-")
	if err != nil {
		b.Skip("no /dev/shm")
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	benchRoundTrip(b, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"system_health","arguments":{}}}`,
		"AWBRIDGE_CONTEXT_ROOT="+dir)
}

func BenchmarkStdioWarmNowframe(b *testing.B) {
	benchRoundTrip(b, `{"jsonrpc":"2.0","id":0,"method":"nowframe.build"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nowframe_build","arguments":{"reason":"bench","max_age_ms":3600000}}}`)
}

func BenchmarkStdioPing(b *testing.B) {
	benchRoundTrip(b, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
}

// modelToolsBytes is what a client hands the model for all tools in a
// tools/list result: the compact JSON of each tool's name, description and
// inputSchema, summed.
func modelToolsBytes(result json.RawMessage) (int, error) {
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(result, &list); err != nil {
		return 0, err
	}
	if len(list.Tools) == 0 {
		return 0, errors.New("tools/list has no tools")
	}
	total := 0
	for _, t := range list.Tools {
		var schema bytes.Buffer
		if err := json.Compact(&schema, t.InputSchema); err != nil {
			return 0, fmt.Errorf("%s inputSchema: %w", t.Name, err)
		}
		t.InputSchema = schema.Bytes()
		var one bytes.Buffer
		enc := json.NewEncoder(&one)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(t); err != nil {
			return 0, err
		}
		total += len(bytes.TrimSpace(one.Bytes()))
	}
	return total, nil
}

// answerText is the text content of a tools/call reply line.
func answerText(line string) (string, error) {
	var rep struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		return "", err
	}
	if rep.Result.IsError || len(rep.Result.Content) != 1 {
		return "", fmt.Errorf("not a one-text answer: %.300s", line)
	}
	return rep.Result.Content[0].Text, nil
}

// BenchmarkModelBytes: what the model reads, from the real binary over
// stdio. tools-list-model-B is the tools as the model sees them (see
// modelToolsBytes), tools-list-reply-B the whole tools/list reply line;
// nowframe-ai-text-B and nowframe-compact-text-B are a warm
// nowframe_build answer's text content in response_mode ai (the default)
// and compact. ns/op is one tools/list round trip.
func BenchmarkModelBytes(b *testing.B) {
	p := benchStdio(b, benchEnv(b))
	p.roundTrip(benchInit)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	reply := p.roundTrip(list)
	var rep struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(reply), &rep); err != nil {
		b.Fatal(err)
	}
	modelBytes, err := modelToolsBytes(rep.Result)
	if err != nil {
		b.Fatal(err)
	}
	call := func(mode string) string {
		return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nowframe_build","arguments":{"reason":"bench","response_mode":"` + mode + `"}}}`
	}
	p.roundTrip(call("ai")) // warm: the frame is fetched once
	texts := map[string]int{}
	for _, mode := range []string{"ai", "compact"} {
		text, err := answerText(p.roundTrip(call(mode)))
		if err != nil {
			b.Fatalf("nowframe_build in %s mode: %v", mode, err)
		}
		texts[mode] = len(text)
	}
	for b.Loop() {
		p.roundTrip(list)
	}
	b.ReportMetric(float64(modelBytes), "tools-list-model-B")
	b.ReportMetric(float64(len(strings.TrimSpace(reply))), "tools-list-reply-B")
	b.ReportMetric(float64(texts["ai"]), "nowframe-ai-text-B")
	b.ReportMetric(float64(texts["compact"]), "nowframe-compact-text-B")
}
