// Command realbench measures awbridge's activity tools against a real
// ActivityWatch server (the Python aw-server of ../shared/tools/realaw,
// filled by its week.py), beside what the server itself costs for the same
// periods:
//
//   - awbridge cold: activity_summary in a new process (nothing kept), its
//     duration_ms, the median of -runs;
//
//   - raw fetch: plain GET .../events of the window, AFK and browser
//     buckets over the same period, one after another, the median of -runs;
//
//   - query: aw-server's own canonical desktop query (the web UI's) over
//     the same period, POST /api/0/query/, the median of -runs;
//
//   - serve warm: a repeated activity_summary in `awbridge serve`, its
//     duration_ms (the median of -runs after one cold call).
//
//     make build && go run ./scripts/realbench -url http://127.0.0.1:5631 -tz Etc/GMT+10
//
// Give -tz the zone week.py's week.json names, so that "today" is the
// week's complete last day. Nothing is written to the server.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/awbridge/awbridge/activity"
	"github.com/awbridge/awbridge/internal/realaw"
)

func main() {
	base := flag.String("url", "", "the ActivityWatch server (required), e.g. http://127.0.0.1:5631")
	bin := flag.String("bin", "bin/awbridge", "the awbridge binary to measure")
	tz := flag.String("tz", "", "the time zone awbridge runs in (TZ), e.g. the one week.py's week.json names")
	runs := flag.Int("runs", 3, "runs of each measurement (the median is printed)")
	periods := flag.String("periods", "today,this_week,last_7d,last_30d", "the periods measured")
	flag.Parse()
	if *base == "" {
		fmt.Fprintln(os.Stderr, "realbench: -url is required")
		os.Exit(2)
	}
	b := &bench{base: strings.TrimRight(*base, "/"), bin: *bin, tz: *tz, runs: max(1, *runs)}
	if err := b.run(context.Background(), strings.Split(*periods, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "realbench:", err)
		os.Exit(1)
	}
}

type bench struct {
	base, bin, tz string
	runs          int
	dir           string
	sel           realaw.Buckets
}

func (b *bench) run(ctx context.Context, periods []string) error {
	dir, err := os.MkdirTemp("", "realbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b.dir = dir
	if err := b.selectBuckets(ctx); err != nil {
		return err
	}
	fmt.Printf("ActivityWatch %s, buckets %s, %s, %s; TZ=%s; median of %d runs\n\n",
		b.base, b.sel.Window, b.sel.AFK, strings.Join(b.sel.Web, ", "), b.tz, b.runs)
	fmt.Println("| period | events | raw fetch | awbridge cold | cold / raw | aw-server's canonical query | apps, awbridge vs query |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|")
	for _, p := range periods {
		var (
			cold []time.Duration
			env  envelope
			err  error
		)
		for range b.runs {
			if env, err = b.call(ctx, "", p); err != nil {
				return fmt.Errorf("%s cold: %w", p, err)
			}
			cold = append(cold, env.duration())
		}
		start, end := env.Result.Period.Start, env.Result.Period.End
		var (
			raw, query []time.Duration
			answer     realaw.Answer
		)
		events := 0
		for range b.runs {
			d, n, err := b.rawFetch(ctx, start, end)
			if err != nil {
				return fmt.Errorf("%s raw fetch: %w", p, err)
			}
			raw, events = append(raw, d), n
			if d, answer, err = b.query(ctx, start, end); err != nil {
				return fmt.Errorf("%s query: %w", p, err)
			}
			query = append(query, d)
		}
		agree := "agree"
		if diff := realaw.CheckSummary(&env.Result, answer, realaw.ByApp, 1); len(diff.Problems) > 0 {
			agree = fmt.Sprintf("DIFFER: %s", strings.Join(diff.Problems, "; "))
		} else {
			agree += fmt.Sprintf(" (largest difference %.2f s)", diff.Max)
		}
		c, r := median(cold), median(raw)
		fmt.Printf("| %s | %d | %s | %s | %.2f | %s | %s |\n", p, events, ms(r), ms(c), float64(c)/float64(r), ms(median(query)), agree)
	}
	return b.serveWarm(ctx)
}

// serveWarm runs `awbridge serve` and calls this_week through it: once
// cold, then -runs times warm.
func (b *bench) serveWarm(ctx context.Context) error {
	sock := filepath.Join(b.dir, "s.sock")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin, "serve", "--socket", sock)
	cmd.Env = b.env(sock)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i == 100 {
			return errors.New("serve made no socket within 5 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The first, cold call, with fresh frames asked for while it reads.
	type result struct {
		env envelope
		err error
	}
	done := make(chan result, 1)
	go func() {
		env, err := b.call(ctx, sock, "this_week")
		done <- result{env, err}
	}()
	var frames []time.Duration
	var first result
wait:
	for {
		select {
		case first = <-done:
			break wait
		case <-time.After(200 * time.Millisecond):
		}
		env, err := b.tool(ctx, sock, "nowframe_build", `{"max_age_ms":0}`)
		if err != nil {
			return fmt.Errorf("serve: a frame during the week: %w", err)
		}
		frames = append(frames, env.duration())
	}
	if first.err != nil {
		return fmt.Errorf("serve: %w", first.err)
	}
	var warm []time.Duration
	for range max(b.runs, 5) {
		env, err := b.call(ctx, sock, "this_week")
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		warm = append(warm, env.duration())
	}
	fmt.Printf("\nserve: this_week first call %s, repeated %s (median of %d; min %s, max %s)\n",
		ms(first.env.duration()), ms(median(warm)), len(warm), ms(slices.Min(warm)), ms(slices.Max(warm)))
	if len(frames) > 0 {
		fmt.Printf("serve: fresh nowframe_build while the first call read: median %s, max %s (%d frames)\n",
			ms(median(frames)), ms(slices.Max(frames)), len(frames))
	}
	return nil
}

// envelope is what realbench reads of a tool's answer.
type envelope struct {
	Success    bool             `json:"success"`
	DurationMs float64          `json:"duration_ms"`
	Error      json.RawMessage  `json:"error"`
	Result     activity.Summary `json:"result"`
}

func (e envelope) duration() time.Duration {
	return time.Duration(e.DurationMs * float64(time.Millisecond))
}

// call runs activity_summary for period (see tool).
func (b *bench) call(ctx context.Context, sock, period string) (envelope, error) {
	return b.tool(ctx, sock, "activity_summary", fmt.Sprintf(`{"period":%q,"limit":%d}`, period, activity.MaxSummaryLimit))
}

// tool calls a tool through `awbridge call`: in process without sock,
// else through the service at sock.
func (b *bench) tool(ctx context.Context, sock, name, arguments string) (envelope, error) {
	args := []string{"call", name, arguments}
	if sock == "" {
		args = append(args, "--no-relay")
	}
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Env = b.env(sock)
	var out bytes.Buffer
	cmd.Stdout = &out
	_ = cmd.Run() // a failed call prints its envelope too
	var env envelope
	if err := json.Unmarshal(out.Bytes(), &env); err != nil {
		return env, fmt.Errorf("awbridge call: %w (%q)", err, out.String())
	}
	if !env.Success {
		return env, fmt.Errorf("awbridge call failed: %s", env.Error)
	}
	return env, nil
}

// env is awbridge's environment: this server, the zone, and private
// folders (no config file, no other service).
func (b *bench) env(sock string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "XDG_CONFIG_HOME=" + filepath.Join(b.dir, "config"),
		"AWBRIDGE_STATE_DIR=" + filepath.Join(b.dir, "state"), "AWBRIDGE_AW_URL=" + b.base, "AWBRIDGE_LOG_LEVEL=error"}
	if b.tz != "" {
		env = append(env, "TZ="+b.tz)
	}
	if sock != "" {
		env = append(env, "AWBRIDGE_SOCKET="+sock)
	} else {
		env = append(env, "AWBRIDGE_RELAY=never", "AWBRIDGE_SOCKET="+filepath.Join(b.dir, "none.sock"))
	}
	return env
}

// selectBuckets picks the server's own host's window, AFK and browser
// buckets.
func (b *bench) selectBuckets(ctx context.Context) error {
	var info struct{ Hostname string }
	if err := b.getJSON(ctx, "/api/0/info", &info); err != nil {
		return err
	}
	var buckets map[string]struct{ Type, Hostname string }
	if err := b.getJSON(ctx, "/api/0/buckets/", &buckets); err != nil {
		return err
	}
	for id, bk := range buckets {
		if bk.Hostname != info.Hostname {
			continue
		}
		switch bk.Type {
		case "currentwindow":
			b.sel.Window = id
		case "afkstatus":
			b.sel.AFK = id
		case "web.tab.current":
			b.sel.Web = append(b.sel.Web, id)
		}
	}
	if b.sel.Window == "" || b.sel.AFK == "" {
		return fmt.Errorf("host %q has no window or AFK bucket", info.Hostname)
	}
	slices.Sort(b.sel.Web)
	return nil
}

// rawFetch reads every bucket's events within [start, end), one request
// after another, and returns the time taken and the events read.
func (b *bench) rawFetch(ctx context.Context, start, end time.Time) (time.Duration, int, error) {
	t0 := time.Now()
	n := 0
	for _, id := range append([]string{b.sel.Window, b.sel.AFK}, b.sel.Web...) {
		var evs []json.RawMessage
		q := url.Values{"start": {start.Format(time.RFC3339Nano)}, "end": {end.Format(time.RFC3339Nano)}}
		if err := b.getJSON(ctx, "/api/0/buckets/"+url.PathEscape(id)+"/events?"+q.Encode(), &evs); err != nil {
			return 0, 0, err
		}
		n += len(evs)
	}
	return time.Since(t0), n, nil
}

// query runs the web UI's canonical desktop query (the recorder's, with
// ActivityWatch's default categories) over [start, end) and returns the
// time the server took and its answer.
func (b *bench) query(ctx context.Context, start, end time.Time) (time.Duration, realaw.Answer, error) {
	classes, err := realaw.Marshal(realaw.DefaultCategories())
	if err != nil {
		return 0, realaw.Answer{}, err
	}
	body, err := realaw.QueryBody(realaw.DesktopQuery(b.sel, classes), start, end)
	if err != nil {
		return 0, realaw.Answer{}, err
	}
	t0 := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/api/0/query/", bytes.NewReader(body))
	if err != nil {
		return 0, realaw.Answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, realaw.Answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, realaw.Answer{}, err
	}
	took := time.Since(t0)
	if resp.StatusCode != http.StatusOK {
		return 0, realaw.Answer{}, fmt.Errorf("query: %s", resp.Status)
	}
	a, err := realaw.DecodeAnswer(raw, 0)
	a.Start, a.End = start, end
	return took, a, err
}

func (b *bench) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
