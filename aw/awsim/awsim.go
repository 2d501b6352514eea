package awsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Version is what GET /api/0/info reports: the recorded server's own
// (hard-coded, unbumped) version string.
const Version = "v0.13.2"

// Options configure a Server. The zero value is usable.
type Options struct {
	// Hostname is reported by /api/0/info (default "awsim").
	Hostname string
	// BucketHost is the hostname the simulated watchers' buckets carry, and
	// the suffix of their ids (default: Hostname).
	BucketHost string
	// Now is the clock (default time.Now); it must be safe for concurrent
	// use. Tests inject a fixed or fake one.
	Now func() time.Time
	// Seed makes the activity generator (and the device id) deterministic.
	Seed int64
	// ListenHost is the --host value aw-server would accept in the Host
	// header besides localhost and 127.0.0.1 (default "127.0.0.1"). With
	// "0.0.0.0" the check is off, as in aw-server.
	ListenHost string
	// Probe also serves GET /probe (and /probe/): a sidecar answer.
	Probe bool
}

// Server is a simulated aw-server. Safe for concurrent use: every request
// (once its body is read) and every generator step holds one mutex.
type Server struct {
	opts     Options
	deviceID string

	mu       sync.Mutex
	st       *store
	settings *object
	person   *person // the generator's state; nil until Seed or Run

	running atomic.Bool
}

// New returns a Server with no buckets; Seed and Run create the simulated
// watchers' buckets when first used.
func New(opts Options) *Server {
	if opts.Hostname == "" {
		opts.Hostname = "awsim"
	}
	if opts.BucketHost == "" {
		opts.BucketHost = opts.Hostname
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ListenHost == "" {
		opts.ListenHost = "127.0.0.1"
	}
	return &Server{
		opts:     opts,
		deviceID: deviceID(opts.Seed, opts.Hostname),
		st:       newStore(),
		settings: newObject(),
	}
}

// deviceID is a stable, UUID-shaped id derived from the seed.
func deviceID(seed int64, host string) string {
	sum := sha256.Sum256([]byte("awsim-device:" + strconv.FormatInt(seed, 10) + ":" + host))
	sum[6] = sum[6]&0x0f | 0x40
	sum[8] = sum[8]&0x3f | 0x80
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// nowUS is the clock in µs.
func (s *Server) nowUS() int64 { return s.opts.Now().UnixMicro() }

// reply is one HTTP answer.
type reply struct {
	status int
	ctype  string // "" sends no Content-Type (304)
	body   []byte
	header [][2]string
}

const (
	ctJSON = "application/json"
	ctHTML = "text/html; charset=utf-8"
)

// restx is flask-restx's output_json: json.dumps defaults plus "\n".
func restx(status int, v any) reply {
	return reply{status: status, ctype: ctJSON, body: append(appendJSON(nil, v, styleRestx), '\n')}
}

// jsonify is Flask's jsonify: compact, sorted keys, plus "\n".
func jsonify(status int, v any) reply {
	return reply{status: status, ctype: ctJSON, body: append(appendJSON(nil, v, styleJsonify), '\n')}
}

func message(status int, msg string) reply { return restx(status, obj("message", msg)) }

// internalError is an unhandled exception in aw-server.
func internalError() reply { return message(http.StatusInternalServerError, "Internal Server Error") }

// badRequest is werkzeug's BadRequest() with its default description.
func badRequest() reply {
	return message(http.StatusBadRequest, "The browser (or proxy) sent a request that this server could not understand.")
}

const html404 = "<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n<p>The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.</p>\n"

const html405 = "<!doctype html>\n<html lang=en>\n<title>405 Method Not Allowed</title>\n<h1>Method Not Allowed</h1>\n<p>The method is not allowed for the requested URL.</p>\n"

func notFoundHTML() reply {
	return reply{status: http.StatusNotFound, ctype: ctHTML, body: []byte(html404)}
}

// route names an aw-server URL rule.
type route int

const (
	rNone route = iota
	rDoc
	rSwagger
	rInfo
	rBuckets
	rBucket
	rEvents
	rEventCount
	rEvent
	rHeartbeat
	rBucketExport
	rQuery
	rExport
	rImport
	rLog
	rSettings
	rSetting
	rProbe
	rIndex
	rStatic
)

type rule struct {
	pattern string // segments; {s} is a string segment, {n} digits
	r       route
	methods []string
}

// rules are aw-server's URL rules that matter here, most specific first.
var rules = []rule{
	{"/api/", rDoc, []string{"GET"}},
	{"/api/swagger.json", rSwagger, []string{"GET"}},
	{"/api/0/info", rInfo, []string{"GET"}},
	{"/api/0/buckets/", rBuckets, []string{"GET"}},
	{"/api/0/buckets/{s}", rBucket, []string{"GET", "POST", "PUT", "DELETE"}},
	{"/api/0/buckets/{s}/events", rEvents, []string{"GET", "POST"}},
	{"/api/0/buckets/{s}/events/count", rEventCount, []string{"GET"}},
	{"/api/0/buckets/{s}/events/{n}", rEvent, []string{"GET", "DELETE"}},
	{"/api/0/buckets/{s}/heartbeat", rHeartbeat, []string{"POST"}},
	{"/api/0/buckets/{s}/export", rBucketExport, []string{"GET"}},
	{"/api/0/query/", rQuery, []string{"POST"}},
	{"/api/0/export", rExport, []string{"GET"}},
	{"/api/0/import", rImport, []string{"POST"}},
	{"/api/0/log", rLog, []string{"GET"}},
	{"/api/0/settings", rSettings, []string{"GET", "POST"}},
	{"/api/0/settings/{s}", rSetting, []string{"GET", "POST"}},
	{"/probe", rProbe, []string{"GET"}},
	{"/probe/", rProbe, []string{"GET"}},
	{"/", rIndex, []string{"GET"}},
}

// match is a rule matched against a path, with its captured segments.
type match struct {
	rule
	args []string
}

// isAPI reports whether the rule is a flask-restx resource (host-checked,
// JSON errors).
func (m match) isAPI() bool { return m.r >= rSwagger && m.r <= rSetting }

func matchPattern(pattern, path string) ([]string, bool) {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return nil, false
	}
	var args []string
	for i, p := range ps {
		switch p {
		case "{s}":
			if xs[i] == "" {
				return nil, false
			}
			args = append(args, xs[i])
		case "{n}":
			if xs[i] == "" || strings.Trim(xs[i], "0123456789") != "" {
				return nil, false
			}
			args = append(args, xs[i])
		default:
			if p != xs[i] {
				return nil, false
			}
		}
	}
	return args, true
}

// matchRules returns the rules matching path, and the redirect target when
// werkzeug would answer 308 to add a trailing slash.
func (s *Server) matchRules(path string) ([]match, string) {
	var ms []match
	for _, r := range rules {
		if r.r == rProbe && !s.opts.Probe {
			continue
		}
		if args, ok := matchPattern(r.pattern, path); ok {
			ms = append(ms, match{r, args})
		}
	}
	if len(ms) == 0 && !strings.HasSuffix(path, "/") {
		for _, r := range rules {
			if strings.HasSuffix(r.pattern, "/") && r.pattern != "/" && (r.r != rProbe) {
				if _, ok := matchPattern(r.pattern, path+"/"); ok {
					return nil, path + "/"
				}
			}
		}
	}
	// Flask's static route "/<path:filename>" (static_url_path="") matches
	// every other path; aw-server then fails to find a file: HTML 404.
	if len(path) > 1 && path[1] != '/' {
		ms = append(ms, match{rule{"/<path:filename>", rStatic, []string{"GET"}}, nil})
	}
	return ms, ""
}

func allows(methods []string, m string) bool {
	for _, x := range methods {
		if x == m || (m == "HEAD" && x == "GET") {
			return true
		}
	}
	return false
}

// allowHeader is werkzeug's Allow for the matching rules.
func allowHeader(ms []match) string {
	set := map[string]bool{"OPTIONS": true}
	for _, m := range ms {
		for _, x := range m.methods {
			set[x] = true
			if x == "GET" {
				set["HEAD"] = true
			}
		}
	}
	var out []string
	for _, x := range []string{"POST", "PUT", "DELETE", "PATCH", "HEAD", "GET", "OPTIONS"} {
		if set[x] {
			out = append(out, x)
		}
	}
	return strings.Join(out, ", ")
}

// ServeHTTP answers one request as aw-server would. Safe for concurrent use.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rep := s.dispatch(r)
	h := w.Header()
	for _, kv := range rep.header {
		h.Add(kv[0], kv[1])
	}
	if strings.HasPrefix(r.URL.Path, "/api") {
		corsHeaders(h, r)
	}
	if rep.ctype != "" {
		h.Set("Content-Type", rep.ctype)
		h.Set("Content-Length", strconv.Itoa(len(rep.body)))
	}
	w.WriteHeader(rep.status)
	if r.Method != http.MethodHead && len(rep.body) > 0 {
		_, _ = w.Write(rep.body)
	}
}

func (s *Server) dispatch(r *http.Request) reply {
	path := r.URL.Path
	if path == "" {
		path = "/"
	}
	ms, redirect := s.matchRules(path)
	if redirect != "" {
		return redirectReply(r, redirect)
	}
	if r.Method == http.MethodOptions {
		if len(ms) == 0 {
			return notFoundHTML()
		}
		return reply{status: http.StatusOK, ctype: ctHTML, header: [][2]string{{"Allow", allowHeader(ms)}}}
	}
	var m *match
	for i := range ms {
		if allows(ms[i].methods, r.Method) {
			m = &ms[i]
			break
		}
	}
	if m == nil {
		if len(ms) == 0 {
			return notFoundHTML()
		}
		allow := [][2]string{{"Allow", allowHeader(ms)}}
		for _, x := range ms {
			if x.isAPI() {
				rep := message(http.StatusMethodNotAllowed, "The method is not allowed for the requested URL.")
				rep.header = allow
				return rep
			}
		}
		return reply{status: http.StatusMethodNotAllowed, ctype: ctHTML, body: []byte(html405), header: allow}
	}
	if m.isAPI() {
		if rep, bad := s.hostCheck(r); bad {
			return rep
		}
	}
	return s.handle(r, *m)
}

// hostCheck is aw-server's host_header_check (DNS-rebinding protection),
// applied to API resources only.
func (s *Server) hostCheck(r *http.Request) (reply, bool) {
	if s.opts.ListenHost == "0.0.0.0" {
		return reply{}, false
	}
	if r.Host == "" {
		return jsonify(http.StatusBadRequest, obj("message", "host header is missing")), true
	}
	name, _, _ := strings.Cut(r.Host, ":")
	if name != "localhost" && name != "127.0.0.1" && name != s.opts.ListenHost {
		return jsonify(http.StatusBadRequest, obj("message", "host header is invalid (was "+r.Host+")")), true
	}
	return reply{}, false
}

// redirectReply is werkzeug's 308 for a missing trailing slash.
func redirectReply(r *http.Request, path string) reply {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if host == "" {
		host = "localhost"
	}
	target := scheme + "://" + host + path
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	esc := html.EscapeString(target)
	body := "<!doctype html>\n<html lang=en>\n<title>Redirecting...</title>\n<h1>Redirecting...</h1>\n" +
		"<p>You should be redirected automatically to the target URL: <a href=\"" + esc + "\">" + esc + "</a>. If not, click the link.\n"
	return reply{status: http.StatusPermanentRedirect, ctype: ctHTML, body: []byte(body), header: [][2]string{{"Location", target}}}
}

// corsHeaders is flask-cors with aw-server's default origins
// ("moz-extension://*", matched as a case-insensitive regex prefix).
func corsHeaders(h http.Header, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" || !strings.HasPrefix(strings.ToLower(origin), "moz-extension:/") {
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if r.Method == http.MethodOptions {
		if m := strings.ToUpper(r.Header.Get("Access-Control-Request-Method")); m != "" && strings.Contains(",GET,HEAD,POST,OPTIONS,PUT,PATCH,DELETE,", ","+m+",") {
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				var hs []string
				for _, x := range strings.Split(req, ",") {
					if x = strings.TrimSpace(x); x != "" {
						hs = append(hs, x)
					}
				}
				sort.Strings(hs)
				if len(hs) > 0 {
					h.Set("Access-Control-Allow-Headers", strings.Join(hs, ", "))
				}
			}
			h.Set("Access-Control-Allow-Methods", "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT")
		}
	}
	h.Add("Vary", "Origin")
}

// maxBody bounds request bodies (aw-server has no limit; a simulator should).
const maxBody = 16 << 20

// errBodyTooLarge answers like werkzeug's RequestEntityTooLarge.
var errBodyTooLarge = errors.New("request body too large")

func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("awsim: reading body: %w", err)
	}
	if len(b) > maxBody {
		return nil, errBodyTooLarge
	}
	return b, nil
}

// getJSON is Flask's request.get_json(): the Content-Type must be JSON and
// the body must parse, else a 400 (or a 500 for a RecursionError).
func getJSON(r *http.Request) (any, *reply) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]))
	}
	if mt != "application/json" && !(strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		rep := badRequest()
		return nil, &rep
	}
	body, err := readBody(r)
	if err != nil {
		rep := badRequest()
		if errors.Is(err, errBodyTooLarge) {
			rep = message(http.StatusRequestEntityTooLarge, "The data value transmitted exceeds the capacity limit.")
		}
		return nil, &rep
	}
	v, err := decodeJSON(bytes.Clone(body))
	if err != nil {
		rep := badRequest()
		if errors.Is(err, errJSONDepth) {
			rep = internalError()
		}
		return nil, &rep
	}
	return v, nil
}
