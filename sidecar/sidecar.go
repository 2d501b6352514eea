// Package sidecar is the client of the optional /probe sidecar: one GET that
// yields a bounded, validated raw JSON object. It imports nothing else of
// awbridge but internal helpers (text, jsonw).
package sidecar

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/internal/text"
)

// Options configure a Client.
type Options struct {
	BaseURL        string            // the sidecar's base URL; /probe is appended
	AttemptTimeout time.Duration     // one HTTP attempt (default 1 s)
	MaxBodyBytes   int64             // the probe object (default 1 MiB)
	Transport      http.RoundTripper // default: a fresh pooled one
}

// Error is a failed probe.
type Error struct {
	Status int // the HTTP status when the sidecar answered, else 0
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	s := "sidecar probe: "
	if e.Status != 0 {
		s += fmt.Sprintf("HTTP %d: ", e.Status)
	}
	s += e.Msg
	if e.Err != nil {
		// The cause without the sidecar's own bytes (see text.Cause).
		s += ": " + text.Cause(e.Err, maxErrText)
	}
	return s
}

// ErrUnauthorized is in the chain of an *Error for a 401 or 403: the
// sidecar answered and refused awbridge, which sends no credentials; a
// setting fixes it (the sidecar's access, or a sidecar.url naming the
// wrong service), not a retry.
var ErrUnauthorized = errors.New("refused awbridge (the probe must answer without credentials)")

func (e *Error) Unwrap() error { return e.Err }

// Client probes one sidecar. Safe for concurrent use.
type Client struct {
	probe, probeSlash string
	max               int64
	http              *retryablehttp.Client
}

// New validates opts and returns a Client.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sidecar: %q is not an http(s) URL with a host", opts.BaseURL)
	}
	// Defaults for what is unset (zero or negative).
	opts.AttemptTimeout = cmp.Or(max(opts.AttemptTimeout, 0), time.Second)
	opts.MaxBodyBytes = cmp.Or(max(opts.MaxBodyBytes, 0), 1<<20)
	base := strings.TrimRight(u.String(), "/")
	rc := retryablehttp.NewClient()
	rc.Logger = nil
	rc.RetryMax = 2
	rc.RetryWaitMin, rc.RetryWaitMax = 50*time.Millisecond, 250*time.Millisecond
	rc.Backoff = jitter
	rc.CheckRetry = retryablehttp.ErrorPropagatedRetryPolicy
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	rc.HTTPClient.Timeout = opts.AttemptTimeout
	if opts.Transport != nil {
		rc.HTTPClient.Transport = opts.Transport
	} else {
		// A local sidecar: never through a proxy (the payload is private).
		rc.HTTPClient.Transport = &http.Transport{
			Proxy: nil, MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second,
			ResponseHeaderTimeout: opts.AttemptTimeout, DisableCompression: true,
		}
	}
	rc.HTTPClient.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 3 {
			return errors.New("too many redirects")
		}
		if req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
			return errors.New("redirect away from the sidecar's origin refused")
		}
		return nil
	}
	return &Client{probe: base + "/probe", probeSlash: base + "/probe/", max: opts.MaxBodyBytes, http: rc}, nil
}

func jitter(lo, hi time.Duration, _ int, _ *http.Response) time.Duration {
	return lo + rand.N(hi-lo+1)
}

// Probe fetches GET <base>/probe (and, on a 404, /probe/ once more) and
// returns the compacted JSON object. Errors are *Error.
func (c *Client) Probe(ctx context.Context) (json.RawMessage, error) {
	body, err := c.get(ctx, c.probe)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		body, err = c.get(ctx, c.probeSlash)
	}
	if err != nil {
		return nil, err
	}
	return Decode(body)
}

// Decode validates a probe body: a JSON object, returned compacted, with
// any invalid UTF-8 replaced by U+FFFD.
func Decode(body []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(body)
	// Bound the depth first: whoever reads the object may recurse.
	if !jsonw.DepthWithin(trimmed, maxDepth) {
		return nil, &Error{Msg: fmt.Sprintf("answer nests deeper than %d levels", maxDepth)}
	}
	var out bytes.Buffer
	out.Grow(len(trimmed))
	if json.Compact(&out, trimmed) != nil {
		return nil, &Error{Msg: "answer is not valid JSON"}
	}
	if trimmed[0] != '{' {
		return nil, &Error{Msg: "answer is not a JSON object"}
	}
	if !utf8.Valid(out.Bytes()) {
		// Invalid bytes can only be inside strings here: U+FFFD keeps the
		// JSON valid, as encoding/json does when it decodes.
		return bytes.ToValidUTF8(out.Bytes(), []byte("\uFFFD")), nil
	}
	return out.Bytes(), nil
}

func (c *Client) get(ctx context.Context, u string) ([]byte, error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &Error{Msg: "building request", Err: err}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if resp != nil {
			// Retries gave up on a 5xx: keep the status.
			resp.Body.Close()
			return nil, &Error{Status: resp.StatusCode, Msg: http.StatusText(resp.StatusCode)}
		}
		return nil, &Error{Msg: "unreachable", Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.max+1))
	if err != nil {
		return nil, &Error{Status: resp.StatusCode, Msg: "reading answer", Err: err}
	}
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return nil, &Error{Status: code, Msg: http.StatusText(code), Err: ErrUnauthorized}
	case code < 200 || code > 299:
		return nil, &Error{Status: code, Msg: http.StatusText(code)}
	case int64(len(body)) > c.max:
		return nil, &Error{Status: code, Msg: fmt.Sprintf("answer larger than %d bytes", c.max)}
	}
	return body, nil
}

const (
	maxDepth   = 64  // the nesting of a probe object
	maxErrText = 200 // the cause's text in an error
)
