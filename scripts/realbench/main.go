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

	"github.com/awbridge/awbridge/aw/transform"
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
	buckets       []string // window, AFK, browser buckets, in that order
	browsers      []transform.BrowserBucket
	window, afk   string
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
	fmt.Printf("ActivityWatch %s, buckets %s; TZ=%s; median of %d runs\n\n", b.base, strings.Join(b.buckets, ", "), b.tz, b.runs)
	fmt.Println("| period | events | raw fetch | awbridge cold | cold / raw | aw-server's canonical query |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, p := range periods {
		var (
			cold  []time.Duration
			start string
			end   string
		)
		for range b.runs {
			env, err := b.call(ctx, "", p)
			if err != nil {
				return fmt.Errorf("%s cold: %w", p, err)
			}
			cold = append(cold, env.duration())
			start, end = env.Result.Period.Start, env.Result.Period.End
		}
		var raw, query []time.Duration
		events := 0
		for range b.runs {
			d, n, err := b.rawFetch(ctx, start, end)
			if err != nil {
				return fmt.Errorf("%s raw fetch: %w", p, err)
			}
			raw, events = append(raw, d), n
			d, err = b.query(ctx, start, end)
			if err != nil {
				return fmt.Errorf("%s query: %w", p, err)
			}
			query = append(query, d)
		}
		c, r := median(cold), median(raw)
		fmt.Printf("| %s | %d | %s | %s | %.2f | %s |\n", p, events, ms(r), ms(c), float64(c)/float64(r), ms(median(query)))
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
	first, err := b.call(ctx, sock, "this_week")
	if err != nil {
		return fmt.Errorf("serve: %w", err)
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
		ms(first.duration()), ms(median(warm)), len(warm), ms(slices.Min(warm)), ms(slices.Max(warm)))
	return nil
}

// envelope is what realbench reads of a tool's answer.
type envelope struct {
	Success    bool            `json:"success"`
	DurationMs float64         `json:"duration_ms"`
	Error      json.RawMessage `json:"error"`
	Result     struct {
		Period struct{ Start, End string } `json:"period"`
	} `json:"result"`
}

func (e envelope) duration() time.Duration {
	return time.Duration(e.DurationMs * float64(time.Millisecond))
}

// call runs activity_summary for period through `awbridge call`: in
// process without sock, else through the service at sock.
func (b *bench) call(ctx context.Context, sock, period string) (envelope, error) {
	args := []string{"call", "activity_summary", `{"period":"` + period + `"}`}
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
	var web []string
	for id, bk := range buckets {
		if bk.Hostname != info.Hostname {
			continue
		}
		switch bk.Type {
		case "currentwindow":
			b.window = id
		case "afkstatus":
			b.afk = id
		case "web.tab.current":
			web = append(web, id)
		}
	}
	if b.window == "" || b.afk == "" {
		return fmt.Errorf("host %q has no window or AFK bucket", info.Hostname)
	}
	slices.Sort(web)
	b.browsers = transform.BrowserBuckets(web)
	b.buckets = []string{b.window, b.afk}
	for _, bb := range b.browsers {
		b.buckets = append(b.buckets, bb.BucketID)
	}
	return nil
}

// rawFetch reads every bucket's events within [start, end), one request
// after another, and returns the time taken and the events read.
func (b *bench) rawFetch(ctx context.Context, start, end string) (time.Duration, int, error) {
	t0 := time.Now()
	n := 0
	for _, id := range b.buckets {
		var evs []json.RawMessage
		q := url.Values{"start": {start}, "end": {end}}
		if err := b.getJSON(ctx, "/api/0/buckets/"+url.PathEscape(id)+"/events?"+q.Encode(), &evs); err != nil {
			return 0, 0, err
		}
		n += len(evs)
	}
	return time.Since(t0), n, nil
}

// query runs the web UI's canonical desktop query (by app, title,
// category and domain, with ActivityWatch's default categories) over
// [start, end) and returns the time the server took.
func (b *bench) query(ctx context.Context, start, end string) (time.Duration, error) {
	body, err := json.Marshal(map[string]any{"timeperiods": []string{start + "/" + end}, "query": b.queryLines()})
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/api/0/query/", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("query: %s", resp.Status)
	}
	return time.Since(t0), nil
}

// queryLines is the canonical query: window events within not-AFK time
// (audible tabs count as active), browser tabs only while their browser's
// window has focus, merged by app, app and title, category and domain.
// Every statement ends with ";": the Python server joins the lines.
func (b *bench) queryLines() []string {
	q := []string{
		fmt.Sprintf("events = flood(query_bucket(%q));", b.window),
		fmt.Sprintf("not_afk = flood(query_bucket(%q));", b.afk),
		`not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);`,
		"browser_events = [];",
	}
	for i, bb := range b.browsers {
		names, pattern, _ := transform.BrowserApps(bb.Browser)
		apps, _ := json.Marshal(names)
		v := fmt.Sprintf("b%d", i)
		q = append(q,
			fmt.Sprintf("%s = flood(query_bucket(%q));", v, bb.BucketID),
			fmt.Sprintf(`%s_w = filter_keyvals(events, "app", %s);`, v, apps),
			fmt.Sprintf(`%s_r = filter_keyvals_regex(events, "app", "%s");`, v, pattern),
			fmt.Sprintf("%[1]s_w = sort_by_timestamp(concat(%[1]s_w, %[1]s_r));", v),
			fmt.Sprintf("%[1]s = filter_period_intersect(%[1]s, %[1]s_w);", v),
			fmt.Sprintf("%[1]s = split_url_events(%[1]s);", v),
			fmt.Sprintf("browser_events = concat(browser_events, %s);", v),
			"browser_events = sort_by_timestamp(browser_events);")
	}
	q = append(q,
		`audible_events = filter_keyvals(browser_events, "audible", [true]);`,
		"not_afk = period_union(not_afk, audible_events);",
		"events = filter_period_intersect(events, not_afk);",
		"events = categorize(events, "+classesForQuery()+");",
		`title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));`,
		`app_events = sort_by_duration(merge_events_by_keys(title_events, ["app"]));`,
		`cat_events = sort_by_duration(merge_events_by_keys(events, ["$category"]));`,
		"browser_events = split_url_events(browser_events);",
		`domains = sort_by_duration(merge_events_by_keys(browser_events, ["$domain"]));`,
		"duration = sum_durations(events);",
		`RETURN = {"app_events": app_events, "title_events": title_events, "cat_events": cat_events, "domains": domains, "duration": duration};`)
	return q
}

// classesForQuery writes ActivityWatch's default categories as the web UI
// sends them to a query: [[name, rule], ...], rules without a regex left
// out.
func classesForQuery() string {
	var out []any
	for _, c := range transform.DefaultClasses() {
		if c.Rule.Regex == "" {
			continue
		}
		rule := map[string]any{"type": "regex", "regex": c.Rule.Regex}
		if c.Rule.IgnoreCase {
			rule["ignore_case"] = true
		}
		out = append(out, []any{c.Name, rule})
	}
	s, _ := json.Marshal(out)
	return string(s)
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
