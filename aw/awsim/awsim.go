package awsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// version is what GET /api/0/info reports: the recorded server's own
// (hard-coded, unbumped) version string.
const version = "v0.13.2"

const (
	usPerSecond = int64(1_000_000)
	usPerMilli  = int64(1000)
	// maxDurUS keeps a timestamp plus a duration within int64 µs.
	maxDurUS = 1_000_000_000_000 * usPerSecond
	// maxBody bounds request bodies (aw-server has no limit).
	maxBody = 64 << 20
)

// Options configure a Server. The zero value is usable.
type Options struct {
	// Hostname is reported by /api/0/info and carried by the simulated
	// watchers' buckets, the suffix of their ids (default "awsim").
	Hostname string
	// Now is the clock (default time.Now); it must be safe for concurrent
	// use. Tests inject a fixed or fake one.
	Now func() time.Time
	// Seed makes the activity generator deterministic.
	Seed int64
	// Probe also serves GET /probe (and /probe/): a sidecar answer.
	Probe bool
}

// Server is a simulated aw-server. Safe for concurrent use: every request
// (once its body is read) and every generator step holds one mutex.
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu       sync.Mutex
	st       *store
	settings map[string]json.RawMessage
	person   *person // the generator's state; nil until Seed or Run

	running atomic.Bool
}

// New returns a Server with no buckets; Seed and Run create the simulated
// watchers' buckets when first used.
func New(opts Options) *Server {
	if opts.Hostname == "" {
		opts.Hostname = "awsim"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), st: &store{}, settings: map[string]json.RawMessage{}}
	for pattern, h := range map[string]func(*http.Request) (int, any){
		"GET /api/0/info":                       s.info,
		"GET /api/0/buckets/{$}":                s.getBuckets,
		"GET /api/0/buckets/{id}":               s.getBucket,
		"POST /api/0/buckets/{id}":              s.createBucket,
		"DELETE /api/0/buckets/{id}":            s.deleteBucket,
		"GET /api/0/buckets/{id}/events":        s.getEvents,
		"POST /api/0/buckets/{id}/events":       s.postEvents,
		"GET /api/0/buckets/{id}/events/count":  s.getEventCount,
		"POST /api/0/buckets/{id}/heartbeat":    s.postHeartbeat,
		"DELETE /api/0/buckets/{id}/events/{n}": s.deleteEvent,
		"POST /api/0/import":                    s.importBuckets,
		"GET /api/0/settings":                   s.getSetting,
		"GET /api/0/settings/{key}":             s.getSetting,
		"POST /api/0/settings/{key}":            s.postSetting,
	} {
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			status, v := h(r)
			writeJSON(w, status, v)
		})
	}
	if opts.Probe {
		s.mux.HandleFunc("GET /probe", s.probe)
		s.mux.HandleFunc("GET /probe/", s.probe)
	}
	return s
}

// ServeHTTP answers one request as aw-server would. Safe for concurrent use.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// writeJSON writes v as aw-server's JSON answers are: one value and "\n".
func writeJSON(w http.ResponseWriter, status int, v any) {
	if status == http.StatusNotModified {
		w.WriteHeader(status)
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status, b = http.StatusInternalServerError, *bytes.NewBufferString(`{"message": "Internal Server Error"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// message is aw-server's error body.
func message(status int, msg string) (int, any) { return status, map[string]string{"message": msg} }

// internalError is an unhandled exception in aw-server.
func internalError() (int, any) {
	return message(http.StatusInternalServerError, "Internal Server Error")
}

func badRequest() (int, any) {
	return message(http.StatusBadRequest, "The browser (or proxy) sent a request that this server could not understand.")
}

func noSuchBucket(id string) (int, any) {
	return message(http.StatusNotFound, "There's no bucket named "+id)
}

// obj is a JSON object with its keys in the given order: key, value, ...
func obj(kv ...any) json.RawMessage {
	b := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}')
}

// readJSON decodes the request's JSON body into v: a 400 when it is not
// JSON or too large.
func readJSON(r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody))
	return dec.Decode(v) == nil
}

// isoformat is datetime.isoformat() of a UTC instant: no fraction when the
// microseconds are zero, else six digits; always "+00:00".
func isoformat(us int64) string {
	t := time.UnixMicro(us).UTC()
	if us%usPerSecond == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

// parseISO reads an ISO 8601 instant (naive ones are UTC), in µs.
func parseISO(s string) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t, err = time.Parse("2006-01-02T15:04:05.999999999", s)
	}
	return t.UnixMicro(), err
}

// truncMS is aw-core's timestamp resolution: microseconds floored to ms.
func truncMS(us int64) int64 { return us - ((us%usPerMilli)+usPerMilli)%usPerMilli }

var errDuration = errors.New("awsim: duration out of range")

// micros converts a duration in seconds to µs, as timedelta does.
func micros(seconds float64) (int64, error) {
	us := math.RoundToEven(seconds * 1e6)
	if math.IsNaN(us) || math.Abs(us) > float64(maxDurUS) {
		return 0, errDuration
	}
	return int64(us), nil
}

func (s *Server) nowUS() int64 { return s.opts.Now().UnixMicro() }

func (s *Server) info(*http.Request) (int, any) {
	return http.StatusOK, obj("hostname", s.opts.Hostname, "version", version, "testing", false,
		"device_id", deviceID(s.opts.Seed, s.opts.Hostname))
}

// deviceID is a stable, UUID-shaped id derived from the seed.
func deviceID(seed int64, host string) string {
	sum := sha256.Sum256([]byte("awsim-device:" + strconv.FormatInt(seed, 10) + ":" + host))
	sum[6] = sum[6]&0x0f | 0x40
	sum[8] = sum[8]&0x3f | 0x80
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func (s *Server) getBuckets(*http.Request) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var kv []any
	for _, b := range s.st.buckets {
		md := b.metadata()
		if e := b.newest(); e != nil {
			md.LastUpdated = isoformat(e.end())
		}
		kv = append(kv, b.id, md)
	}
	return http.StatusOK, obj(kv...)
}

func (s *Server) getBucket(r *http.Request) (int, any) {
	return s.inBucket(r, func(b *bucket) (int, any) { return http.StatusOK, b.metadata() })
}

// inBucket answers f's answer for the bucket named in r's path, holding
// s.mu; a 404 when there is no such bucket.
func (s *Server) inBucket(r *http.Request, f func(*bucket) (int, any)) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.st.bucket(r.PathValue("id"))
	if b == nil {
		return noSuchBucket(r.PathValue("id"))
	}
	return f(b)
}

func (s *Server) createBucket(r *http.Request) (int, any) {
	var body struct{ Type, Client, Hostname *string }
	if !readJSON(r, &body) {
		return badRequest()
	}
	if body.Type == nil || body.Client == nil || body.Hostname == nil {
		return internalError() // KeyError
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.st.createBucket(&bucket{id: r.PathValue("id"), created: s.nowUS(), typ: *body.Type, client: *body.Client, hostname: *body.Hostname}) {
		return http.StatusNotModified, nil
	}
	return http.StatusOK, struct{}{}
}

func (s *Server) deleteBucket(r *http.Request) (int, any) {
	if r.URL.Query().Get("force") != "1" {
		return message(http.StatusUnauthorized, "Deleting buckets is only permitted if aw-server is running in testing mode or if ?force=1")
	}
	return s.inBucket(r, func(b *bucket) (int, any) {
		s.st.deleteBucket(b)
		return http.StatusOK, struct{}{}
	})
}

// rangeArgs parses start and end as the events endpoints do.
func rangeArgs(r *http.Request) (tr timeRange, err error) {
	q := r.URL.Query()
	tr.hasStart, tr.hasEnd = q.Has("start"), q.Has("end")
	if tr.hasStart {
		if tr.start, err = parseISO(q.Get("start")); err != nil {
			return tr, err
		}
	}
	if tr.hasEnd {
		tr.end, err = parseISO(q.Get("end"))
	}
	return tr, err
}

func (s *Server) getEvents(r *http.Request) (int, any) {
	limit := -1
	if v := r.URL.Query().Get("limit"); r.URL.Query().Has("limit") {
		n, err := strconv.Atoi(v)
		if err != nil {
			return internalError()
		}
		limit = n
	}
	tr, err := rangeArgs(r)
	if err != nil {
		return internalError()
	}
	return s.inBucket(r, func(b *bucket) (int, any) { return http.StatusOK, b.get(limit, tr.rounded()) })
}

func (s *Server) getEventCount(r *http.Request) (int, any) {
	tr, err := rangeArgs(r)
	if err != nil {
		return internalError()
	}
	return s.inBucket(r, func(b *bucket) (int, any) { return http.StatusOK, b.count(tr) })
}

// deleteEvent answers {"success": 1} when the bucket held the event, else 0.
func (s *Server) deleteEvent(r *http.Request) (int, any) {
	n, err := strconv.ParseInt(r.PathValue("n"), 10, 64)
	if err != nil {
		return internalError()
	}
	return s.inBucket(r, func(b *bucket) (int, any) {
		i := slices.IndexFunc(b.events, func(e *event) bool { return e.id == n })
		if i >= 0 {
			b.events = slices.Delete(b.events, i, i+1)
			s.st.events--
		}
		return http.StatusOK, obj("success", min(i+1, 1))
	})
}

// newEvent is an event as a request carries it: aw-core's Event(**fields);
// a missing timestamp is now.
type newEvent struct {
	Timestamp *string         `json:"timestamp"`
	Duration  float64         `json:"duration"`
	Data      json.RawMessage `json:"data"`
}

// parse returns the event's start (truncated to ms) and duration in µs.
func (s *Server) parse(e *newEvent) (ts, dur int64, err error) {
	ts = s.nowUS()
	if e.Timestamp != nil {
		if ts, err = parseISO(*e.Timestamp); err != nil {
			return 0, 0, err
		}
	}
	if len(e.Data) == 0 || string(e.Data) == "null" {
		e.Data = json.RawMessage("{}")
	}
	dur, err = micros(e.Duration)
	return truncMS(ts), dur, err
}

func (s *Server) postEvents(r *http.Request) (int, any) {
	var raw json.RawMessage
	if !readJSON(r, &raw) {
		return badRequest()
	}
	var evs []newEvent
	if err := json.Unmarshal(raw, &evs); err != nil {
		var one newEvent
		if json.Unmarshal(raw, &one) != nil {
			return message(http.StatusBadRequest, "")
		}
		evs = []newEvent{one}
	}
	return s.inBucket(r, func(b *bucket) (int, any) {
		if s.insert(b, evs) != nil {
			return internalError()
		}
		return http.StatusOK, nil
	})
}

// insert adds evs to b. Caller holds s.mu.
func (s *Server) insert(b *bucket, evs []newEvent) error {
	for _, e := range evs {
		ts, dur, err := s.parse(&e)
		if err != nil {
			return err
		}
		if _, err := s.st.insert(b, ts, dur, e.Data); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) postHeartbeat(r *http.Request) (int, any) {
	var hb newEvent
	if !readJSON(r, &hb) || hb.Timestamp == nil {
		return message(http.StatusBadRequest, "Input payload validation failed")
	}
	ts, dur, err := s.parse(&hb)
	if err != nil {
		return internalError()
	}
	if !r.URL.Query().Has("pulsetime") {
		return message(http.StatusBadRequest, "Missing required parameter pulsetime")
	}
	pulsetime, err := strconv.ParseFloat(r.URL.Query().Get("pulsetime"), 64)
	if err != nil {
		return internalError()
	}
	pt, err := micros(pulsetime)
	if err != nil {
		return internalError()
	}
	return s.inBucket(r, func(b *bucket) (int, any) {
		e, err := s.st.heartbeat(b, ts, dur, hb.Data, pt)
		if err != nil {
			return internalError()
		}
		return http.StatusOK, e.json()
	})
}

// importBuckets is POST /api/0/import with a JSON body {"buckets": {...}}
// in aw-server's export shape (tests load recordings through it). An
// existing bucket is a 500, as in aw-server.
func (s *Server) importBuckets(r *http.Request) (int, any) {
	var body struct {
		Buckets map[string]struct {
			ID, Type, Client, Hostname, Created string
			Events                              []newEvent
		}
	}
	if !readJSON(r, &body) {
		return badRequest()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range body.Buckets {
		created, err := parseISO(b.Created)
		nb := &bucket{id: b.ID, created: created, typ: b.Type, client: b.Client, hostname: b.Hostname}
		if err != nil || !s.st.createBucket(nb) {
			return internalError()
		}
		if err := s.insert(nb, b.Events); err != nil {
			return internalError()
		}
	}
	return http.StatusOK, nil
}

// getSetting is GET /api/0/settings[/<key>]: all settings, or one (null
// when unset).
func (s *Server) getSetting(r *http.Request) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key := r.PathValue("key"); key != "" {
		return http.StatusOK, s.settings[key]
	}
	return http.StatusOK, s.settings
}

// postSetting stores any JSON value and echoes it.
func (s *Server) postSetting(r *http.Request) (int, any) {
	var v json.RawMessage
	if !readJSON(r, &v) {
		return badRequest()
	}
	s.mu.Lock()
	s.settings[r.PathValue("key")] = v
	s.mu.Unlock()
	return http.StatusOK, v
}

// probe is the /probe sidecar's answer.
func (s *Server) probe(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	nb, ne := len(s.st.buckets), s.st.events
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "preflight_ok": true, "source": "awsim", "version": version,
		"checks": map[string]any{
			"aw_api":             map[string]any{"ok": true, "buckets": nb, "events": ne},
			"activity_generator": map[string]any{"ok": true, "running": s.running.Load()},
		},
		"ts": s.opts.Now().UTC().Format(time.RFC3339Nano)})
}
