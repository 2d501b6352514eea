// Command restcost measures what `awbridge serve` costs at rest (Linux):
// it serves the built-in ActivityWatch simulator (the one `awbridge sim`
// and `make demo` run, its simulated person at work), starts `serve` on
// it, asks the service nothing, and reports over one window (default one
// minute) the requests serve made to ActivityWatch, per minute and by
// endpoint, and serve's own CPU time (the sum of its threads' run time
// from /proc/<pid>/task/*/schedstat).
//
//	make build && go run ./scripts/restcost -bin bin/awbridge
//
// Point -bin at another build for a before/after comparison; run them
// one after the other on the same machine (CPU figures on a shared
// machine vary from run to run). The window starts after serve says it
// is ready and -settle has passed, so start-up is not counted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/awbridge/awbridge/aw/awsim"
)

func main() {
	bin := flag.String("bin", "bin/awbridge", "the awbridge binary to measure")
	window := flag.Duration("for", time.Minute, "how long to measure")
	settle := flag.Duration("settle", 3*time.Second, "how long to wait after serve is ready before measuring")
	probe := flag.Bool("probe", false, "also serve the simulator's /probe as serve's sidecar")
	flag.Parse()
	if err := run(*bin, *window, *settle, *probe); err != nil {
		fmt.Fprintln(os.Stderr, "restcost: "+err.Error())
		os.Exit(1)
	}
}

// counter counts requests by endpoint class.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(path string) {
	class := path
	switch {
	case strings.HasSuffix(path, "/events"):
		class = "/api/0/buckets/<id>/events"
	case strings.HasPrefix(path, "/api/0/buckets/") && path != "/api/0/buckets/":
		class = "/api/0/buckets/<id>"
	}
	c.mu.Lock()
	c.n[class]++
	c.mu.Unlock()
}

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

func run(bin string, window, settle time.Duration, probe bool) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("the binary: %w (build it with make build, or pass -bin)", err)
	}
	var wg sync.WaitGroup
	defer wg.Wait() // after cancel (deferred calls run last first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	sim := awsim.New(awsim.Options{Hostname: "awsim", Seed: 1, Probe: probe})
	sim.Seed(time.Now())
	wg.Go(func() { _ = sim.Run(ctx, time.Second) })
	count := &counter{n: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.add(r.URL.Path)
		sim.ServeHTTP(w, r)
	})}
	wg.Go(func() { _ = srv.Serve(ln) })
	defer srv.Close()
	url := "http://" + ln.Addr().String()

	dir, err := os.MkdirTemp("", "restcost")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	notifyName := filepath.Join(dir, "notify")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyName, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer notify.Close()

	cmd := exec.Command(bin, "serve", "--socket", filepath.Join(dir, "s.sock"))
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "AWBRIDGE_AW_URL=" + url, "AWBRIDGE_LOG_LEVEL=warn",
		"AWBRIDGE_RELAY=never", "NOTIFY_SOCKET=" + notifyName}
	if probe {
		cmd.Env = append(cmd.Env, "AWBRIDGE_SIDECAR_URL="+url)
	}
	// Pass the poller's settings through, so one binary can be measured
	// with several rhythms.
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AWBRIDGE_POLL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()

	_ = notify.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 64)
	n, _, err := notify.ReadFromUnix(buf)
	if err != nil || string(buf[:n]) != "READY=1" {
		return fmt.Errorf("serve did not say it was ready: %q %v", buf[:n], err)
	}
	time.Sleep(settle) // a measured quiet period, not a wait for something to happen

	pid := cmd.Process.Pid
	cpu0, err := cpuTime(pid)
	if err != nil {
		return err
	}
	req0, t0 := count.snapshot(), time.Now()
	time.Sleep(window)
	cpu1, err := cpuTime(pid)
	if err != nil {
		return err
	}
	req1, elapsed := count.snapshot(), time.Since(t0)

	perMin := func(n int) float64 { return float64(n) / elapsed.Minutes() }
	var classes []string
	aw := 0
	for _, k := range slices.Sorted(maps.Keys(req1)) {
		if d := req1[k] - req0[k]; d > 0 {
			classes = append(classes, k)
			if strings.HasPrefix(k, "/api/") {
				aw += d
			}
		}
	}
	fmt.Printf("awbridge serve at rest (%s), %v measured after %v of quiet, nothing asked\n", bin, elapsed.Round(time.Millisecond), settle)
	fmt.Printf("requests to ActivityWatch: %d (%.1f per minute)\n", aw, perMin(aw))
	for _, k := range classes {
		d := req1[k] - req0[k]
		fmt.Printf("  %-28s %5d (%.1f/min)\n", k, d, perMin(d))
	}
	used := cpu1 - cpu0
	fmt.Printf("serve's CPU: %v over %v (%.3f%% of one core)\n", used.Round(time.Microsecond), elapsed.Round(time.Millisecond),
		100*used.Seconds()/elapsed.Seconds())
	return nil
}

// cpuTime is the CPU time process pid has used so far: the sum of its
// threads' run time (nanoseconds, from schedstat).
func cpuTime(pid int) (time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, fmt.Errorf("reading serve's CPU time (Linux only): %w", err)
	}
	var sum time.Duration
	for _, task := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, task.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread ended between the listing and the read
		}
		if err != nil {
			return 0, err
		}
		f := strings.Fields(string(raw))
		if len(f) == 0 {
			return 0, errors.New("an empty schedstat")
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, err
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}
