package aw

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-retryablehttp"
)

// Defaults of Options.
const (
	DefaultBaseURL        = "http://127.0.0.1:5600"
	DefaultAttemptTimeout = time.Second
	DefaultRetryMax       = 2
	DefaultBackoffMin     = 50 * time.Millisecond
	DefaultBackoffMax     = 250 * time.Millisecond
	DefaultMaxBodyBytes   = 8 << 20
	DefaultUserAgent      = "awbridge"
)

const (
	maxRedirects      = 3        // same-origin redirects a request follows
	maxErrorBodyBytes = 64 << 10 // read of a non-2xx body, for its message
	maxBucketIDLen    = 512      // a bucket id the client puts in a path
)

// Options configures a Client. The zero value of every field means its
// default.
type Options struct {
	// BaseURL is the server (http or https, a host, maybe a path prefix;
	// no user info, query or fragment).
	BaseURL string
	// HostHeader overrides the Host header. By default it is the URL's host
	// when that is an IP address or "localhost" (IPv6 loopback is sent as
	// localhost:<port>), else "127.0.0.1[:<port>]": aw-server answers 400
	// to any Host but localhost, 127.0.0.1 or its --host value.
	HostHeader string
	// APIKey, when set, is sent as "Authorization: Bearer <key>"
	// (aw-server-rust's [auth] api_key); never logged nor put in an error.
	APIKey string
	// AttemptTimeout bounds each HTTP attempt, body included; the caller's
	// ctx bounds the whole call, retries included.
	AttemptTimeout time.Duration
	// RetryMax is how many times a connection error or a 5xx is retried
	// (negative: never); a 4xx never is. BackoffMin and BackoffMax bound
	// the jittered wait between attempts.
	RetryMax               int
	BackoffMin, BackoffMax time.Duration
	// MaxBodyBytes bounds every response body; a bigger one is a TooLarge
	// error, never read past the limit.
	MaxBodyBytes int64
	// Transport replaces the HTTP transport (tests). The default one
	// ignores proxy settings: a proxy would see the person's activity.
	Transport http.RoundTripper
	UserAgent string
}

// Client reads an ActivityWatch server (aw-server or aw-server-rust). It is
// immutable after New and safe for concurrent use.
type Client struct {
	base       string // scheme://host[/prefix], no trailing slash
	origin     string // scheme://host of base, for redirects
	hostHeader string // Host header to send
	auth       string // "Bearer <key>" or ""
	userAgent  string
	maxBody    int64
	http       *http.Client
	rc         *retryablehttp.Client
	server     atomic.Pointer[Server] // of the last /api/0/info read
}

// New validates opts and builds a Client. Its errors never contain the API
// key.
func New(opts Options) (*Client, error) {
	u, err := parseBaseURL(cmp.Or(opts.BaseURL, DefaultBaseURL))
	if err != nil {
		return nil, err
	}
	switch {
	case opts.MaxBodyBytes < 0 || opts.AttemptTimeout < 0 || opts.BackoffMin < 0 || opts.BackoffMax < 0:
		return nil, errors.New("aw: negative max body bytes, attempt timeout or backoff")
	case !headerSafe(opts.APIKey):
		return nil, errors.New("aw: api key contains control characters or non-ASCII bytes")
	case !headerSafe(opts.UserAgent):
		return nil, errors.New("aw: user agent contains control characters or non-ASCII bytes")
	}
	bmin, bmax := cmp.Or(opts.BackoffMin, DefaultBackoffMin), cmp.Or(opts.BackoffMax, DefaultBackoffMax)
	if bmax < bmin {
		return nil, errors.New("aw: backoff max is below backoff min")
	}
	c := &Client{
		base:       u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"),
		origin:     u.Scheme + "://" + u.Host,
		hostHeader: defaultHostHeader(u),
		userAgent:  cmp.Or(opts.UserAgent, DefaultUserAgent),
		maxBody:    cmp.Or(opts.MaxBodyBytes, DefaultMaxBodyBytes),
	}
	if opts.HostHeader != "" {
		if err := validateHostHeader(opts.HostHeader); err != nil {
			return nil, err
		}
		c.hostHeader = opts.HostHeader
	}
	if opts.APIKey != "" {
		c.auth = "Bearer " + opts.APIKey
	}
	transport := opts.Transport
	if transport == nil {
		transport = &http.Transport{
			Proxy:                  nil,
			DialContext:            (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           8,
			MaxIdleConnsPerHost:    8,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    5 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
		}
	}
	c.http = &http.Client{
		Transport:     transport,
		Timeout:       cmp.Or(opts.AttemptTimeout, DefaultAttemptTimeout),
		CheckRedirect: c.checkRedirect,
	}
	c.rc = &retryablehttp.Client{
		HTTPClient:   c.http,
		Logger:       nil, // its default logger writes to stderr
		RetryWaitMin: bmin,
		RetryWaitMax: bmax,
		RetryMax:     max(cmp.Or(opts.RetryMax, DefaultRetryMax), 0), // negative: never
		CheckRetry:   checkRetry,
		Backoff:      jitterBackoff,
		ErrorHandler: keepLastResponse,
	}
	return c, nil
}

// BaseURL returns the normalized base URL (no trailing slash).
func (c *Client) BaseURL() string { return c.base }

// CloseIdleConnections closes the client's idle keep-alive connections.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("aw: invalid base url: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("aw: base url must be http or https")
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return nil, errors.New("aw: base url has no host")
	case u.User != nil:
		return nil, errors.New("aw: base url must not hold user info; use the api key")
	case u.RawQuery != "" || u.ForceQuery:
		return nil, errors.New("aw: base url must not have a query")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, errors.New("aw: base url must not have a fragment")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, errors.New("aw: base url has an invalid port")
		}
	}
	return u, nil
}

// defaultHostHeader is the Host to send for base URL u.
func defaultHostHeader(u *url.URL) string {
	h := u.Hostname()
	if h == "localhost" {
		return u.Host
	}
	withPort := func(name string) string {
		if p := u.Port(); p != "" {
			return net.JoinHostPort(name, p)
		}
		return name
	}
	if ip := net.ParseIP(h); ip != nil {
		if ip.IsUnspecified() {
			// http://0.0.0.0:5600 reaches the local server, which rejects
			// that Host unless it listens on 0.0.0.0.
			return withPort("127.0.0.1")
		}
		if ip.To4() == nil && ip.IsLoopback() {
			// aw-server compares the part before the first ':', so an
			// IPv6 literal never passes its check.
			return withPort("localhost")
		}
		return u.Host
	}
	return withPort("127.0.0.1")
}

func validateHostHeader(h string) error {
	if len(h) > 261 || !headerSafe(h) {
		return errors.New("aw: invalid host header override")
	}
	u, err := url.Parse("http://" + h)
	if err != nil || u.Host != h || u.Hostname() == "" || u.User != nil {
		return errors.New("aw: invalid host header override: want host or host:port")
	}
	return nil
}

// headerSafe reports whether s is printable ASCII (spaces allowed inside).
func headerSafe(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r >= 0x7f })
}

// readLimited reads r up to max+1 bytes (so a longer body shows as
// len > max). It allocates for a declared length up front and otherwise
// doubles its buffer, so reading n bytes allocates at most ~2n.
func readLimited(r io.Reader, max, declared int64) ([]byte, error) {
	size := int64(4 << 10)
	if declared >= 0 {
		size = declared + 1 // +1 to see EOF without growing
	}
	size = min(size, max+1)
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > max {
				return buf, nil
			}
			grown := make([]byte, len(buf), min(2*int64(cap(buf))+512, max+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// checkRedirect follows at most maxRedirects redirects within the base URL's
// origin; anything else ends the request with the redirect response itself,
// which becomes an HTTPStatus error.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects || req.URL.Scheme+"://"+req.URL.Host != c.origin {
		return http.ErrUseLastResponse
	}
	req.Host = via[0].Host
	return nil
}

// checkRetry retries connection errors and 5xx (via the library's policy,
// which also stops on a done ctx) but never a 4xx such as 429.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if err == nil && resp != nil && resp.StatusCode < 500 {
		return false, nil
	}
	return retryablehttp.ErrorPropagatedRetryPolicy(ctx, resp, err)
}

// jitterBackoff waits a uniformly random time in [min, min*2^(attempt+1)],
// capped at max.
func jitterBackoff(min, max time.Duration, attempt int, _ *http.Response) time.Duration {
	if max <= min {
		return min
	}
	upper := max
	if attempt < 16 {
		if u := min << (attempt + 1); u > min && u < max {
			upper = u
		}
	}
	return min + rand.N(upper-min+1)
}

// keepLastResponse is the ErrorHandler used when retries give up: a last
// response (e.g. a 503) is returned so its status reaches the caller;
// otherwise the error is.
func keepLastResponse(resp *http.Response, err error, _ int) (*http.Response, error) {
	if resp != nil {
		return resp, nil
	}
	return nil, err
}

// get performs GET base+path?query and returns the 2xx body, bounded by
// MaxBodyBytes; anything else becomes an *Error for op.
func (c *Client) get(ctx context.Context, op, path, query string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxError(op, ctx)
	}
	target := c.base + path
	if query != "" {
		target += "?" + query
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, &Error{Op: op, Kind: InvalidArgument, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	req.Host = c.hostHeader
	resp, err := c.rc.Do(req)
	if err != nil {
		return nil, transportError(op, ctx, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.statusError(op, resp)
	}
	if resp.ContentLength > c.maxBody {
		return nil, c.tooLarge(op, resp.StatusCode)
	}
	body, err := readLimited(resp.Body, c.maxBody, resp.ContentLength)
	if err != nil {
		e := transportError(op, ctx, err)
		e.Status = resp.StatusCode
		return nil, e
	}
	if int64(len(body)) > c.maxBody {
		return nil, c.tooLarge(op, resp.StatusCode)
	}
	return body, nil
}

func (c *Client) tooLarge(op string, status int) *Error {
	return &Error{Op: op, Kind: TooLarge, Status: status,
		Message: fmt.Sprintf("body exceeds %d bytes", c.maxBody)}
}

// statusError turns a non-2xx response into an *Error.
func (c *Client) statusError(op string, resp *http.Response) *Error {
	e := &Error{Op: op, Kind: HTTPStatus, Status: resp.StatusCode}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// A redirect not followed, explained without echoing its Location.
		switch loc, err := resp.Location(); {
		case err != nil:
			e.Message = "redirect without a valid Location"
		case loc.Scheme+"://"+loc.Host == c.origin:
			e.Message = fmt.Sprintf("redirect loop: stopped after %d redirects", maxRedirects)
		default:
			e.Message = "redirect away from the base URL not followed; check the base URL and Host header"
		}
		return e
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	msg, apiError := errorBody(body)
	switch resp.StatusCode {
	case http.StatusNotFound:
		if apiError {
			e.Kind = NotFound
			e.Message = msg
		} else {
			e.Message = "no such route (a 404 without an ActivityWatch error body); is the base URL an ActivityWatch server?"
		}
		return e
	case http.StatusBadRequest:
		if strings.HasPrefix(strings.ToLower(msg), "host header is") { // aw-server-rust: "Host header is invalid"
			e.Err = ErrHostRejected
			e.Message = fmt.Sprintf("aw-server accepts only the Host localhost, 127.0.0.1 or its --host value "+
				"(sent %q); set activitywatch.host_header (AWBRIDGE_AW_HOST_HEADER), e.g. to 127.0.0.1:5600",
				c.hostHeader)
			return e
		}
	case http.StatusUnauthorized, http.StatusForbidden:
		e.Err = ErrUnauthorized
		hint := "check the API key: set activitywatch.api_key (AWBRIDGE_AW_API_KEY) to aw-server-rust's [auth] api_key"
		if msg != "" {
			hint = msg + "; " + hint
		}
		e.Message = hint
		return e
	}
	e.Message = msg
	return e
}

// transportError classifies an error that left no response.
func transportError(op string, ctx context.Context, err error) *Error {
	if e := ctxError(op, ctx); e != nil {
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // drop the URL from the text
	}
	kind := Unreachable
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		kind = Timeout
	case errors.Is(err, context.Canceled):
		kind = Canceled
	}
	return &Error{Op: op, Kind: kind, Err: err}
}

// ctxError returns the *Error for a done ctx, or nil.
func ctxError(op string, ctx context.Context) *Error {
	switch err := ctx.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Op: op, Kind: Timeout, Err: err}
	default:
		return &Error{Op: op, Kind: Canceled, Err: err}
	}
}

// read GETs base+path?query for op and decodes its body; a body that does
// not decode is a Malformed error.
func read[T any](ctx context.Context, c *Client, op, path, query string, decode func([]byte) (T, error)) (T, error) {
	var zero T
	body, err := c.get(ctx, op, path, query)
	if err != nil {
		return zero, err
	}
	v, err := decode(body)
	if err != nil {
		return zero, &Error{Op: op, Kind: Malformed, Err: err}
	}
	return v, nil
}

// Info returns GET /api/0/info.
func (c *Client) Info(ctx context.Context) (Info, error) {
	info, err := read(ctx, c, "info", "/api/0/info", "", decodeInfo)
	if err == nil {
		s := info.Server()
		c.server.Store(&s)
	}
	return info, err
}

// Buckets returns GET /api/0/buckets/ (with the trailing slash the server
// requires), keyed by bucket id.
func (c *Client) Buckets(ctx context.Context) (map[string]Bucket, error) {
	return read(ctx, c, "buckets", "/api/0/buckets/", "", decodeBuckets)
}

// EventQuery selects events.
type EventQuery struct {
	// Limit > 0 asks for at most Limit newest events (limit=N). Limit <= 0
	// sends no limit: the server returns every event in range (bounded only
	// by MaxBodyBytes). aw-server answers an explicit limit=0 with [], which
	// this client never sends.
	Limit int
	// Start and End bound the events by time; the zero time means unset.
	// They are sent in UTC as RFC 3339 with "+00:00", to the microsecond.
	Start, End time.Time
	// SkipMalformed leaves out a stored event that is not well formed (a
	// negative duration, data that is not an object...) instead of
	// failing the whole read: for history, where anything that can POST to
	// ActivityWatch could otherwise hide a whole period. The answer must
	// still be a JSON array.
	SkipMalformed bool
}

// Events returns GET /api/0/buckets/<id>/events (no trailing slash), newest
// first. An unknown bucket is a NotFound error.
func (c *Client) Events(ctx context.Context, bucketID string, q EventQuery) ([]Event, error) {
	path, query, err := eventsPath("events", bucketID, "/events", q)
	if err != nil {
		return nil, err
	}
	return read(ctx, c, "events", path, query, func(b []byte) ([]Event, error) { return decodeEventList(b, q.SkipMalformed) })
}

// EventCount returns GET /api/0/buckets/<id>/events/count?start&end (zero
// times are left out): how many stored events the bucket holds in the
// range, a plain integer. aw-server (peewee) counts the events overlapping
// [start, end], both ends included; aw-server-rust ignores start and end
// and counts the whole bucket. An unknown bucket is a NotFound error.
func (c *Client) EventCount(ctx context.Context, bucketID string, start, end time.Time) (int64, error) {
	path, query, err := eventsPath("event count", bucketID, "/events/count", EventQuery{Start: start, End: end})
	if err != nil {
		return 0, err
	}
	return read(ctx, c, "event count", path, query, func(b []byte) (int64, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("not a count: %.40q", b)
		}
		return n, nil
	})
}

// eventsPath checks a request for a bucket's events and returns its path
// (base + "/api/0/buckets/<id>" + suffix) and query.
func eventsPath(op, bucketID, suffix string, q EventQuery) (path, query string, err error) {
	if err = validateBucketID(bucketID); err == nil {
		query, err = q.encode()
	}
	if err != nil {
		return "", "", &Error{Op: op, Kind: InvalidArgument, Err: err}
	}
	return "/api/0/buckets/" + url.PathEscape(bucketID) + suffix, query, nil
}

// encode returns the query string in the order aw-client uses: start, end,
// limit.
func (q EventQuery) encode() (string, error) {
	if !q.Start.IsZero() && !q.End.IsZero() && q.End.Before(q.Start) {
		return "", errors.New("end is before start")
	}
	var parts []string
	for i, t := range []time.Time{q.Start, q.End} {
		if t.IsZero() {
			continue
		}
		name := [...]string{"start", "end"}[i]
		s, err := formatTimestamp(t)
		if err != nil {
			return "", fmt.Errorf("%s %w", name, err)
		}
		parts = append(parts, name+"="+url.QueryEscape(s))
	}
	if q.Limit > 0 {
		parts = append(parts, "limit="+strconv.Itoa(q.Limit))
	}
	return strings.Join(parts, "&"), nil
}

// formatTimestamp writes t as aw-server writes timestamps: UTC, "+00:00",
// fraction absent or 6 digits (sub-microsecond parts are dropped).
func formatTimestamp(t time.Time) (string, error) {
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return "", errors.New("is outside years 1..9999")
	}
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000") + "+00:00", nil
	}
	return t.Format("2006-01-02T15:04:05") + "+00:00", nil
}

// validateBucketID rejects ids the client will not put in a path.
func validateBucketID(id string) error {
	switch {
	case id == "":
		return errors.New("empty bucket id")
	case len(id) > maxBucketIDLen:
		return fmt.Errorf("bucket id longer than %d bytes", maxBucketIDLen)
	case !utf8.ValidString(id):
		return errors.New("bucket id is not valid UTF-8")
	case id == "." || id == "..":
		return errors.New("bucket id is a dot segment")
	case strings.ContainsRune(id, '/'):
		return errors.New("bucket id contains '/'")
	case strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errors.New("bucket id contains control characters")
	}
	return nil
}
