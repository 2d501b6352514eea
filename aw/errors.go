package aw

import (
	"errors"
	"strconv"

	"github.com/awbridge/awbridge/internal/text"
)

// ErrorKind says what went wrong talking to ActivityWatch; callers branch on
// it (with KindOf or errors.As). Its string form is stable and lower case.
type ErrorKind string

// The kinds of *Error.
const (
	// Unreachable: no answer (connection refused or reset, DNS failure, the
	// connection dropped while reading the body).
	Unreachable ErrorKind = "unreachable"
	// Timeout: the caller's deadline or every per-attempt timeout ran out.
	Timeout ErrorKind = "timeout"
	// Canceled: the caller's context was canceled (not the server's fault).
	Canceled ErrorKind = "canceled"
	// HTTPStatus: a status that is not 2xx (nor a JSON 404); Status and the
	// server's sanitized message are kept.
	HTTPStatus ErrorKind = "http status"
	// NotFound: a JSON 404 from the API, e.g. an unknown bucket. An HTML
	// 404 (wrong base URL or path) is HTTPStatus.
	NotFound ErrorKind = "not found"
	// Malformed: a 2xx body that is not the JSON we expect.
	Malformed ErrorKind = "malformed response"
	// TooLarge: a body bigger than Options.MaxBodyBytes, not read past it.
	TooLarge ErrorKind = "response too large"
	// InvalidArgument: an invalid bucket id or time range; nothing was sent.
	InvalidArgument ErrorKind = "invalid argument"
)

// Sentinels found in an *Error's chain (errors.Is) for the cases a person
// must fix by configuration (the server answered and refused us: retrying
// cannot help).
var (
	// ErrHostRejected: aw-server's DNS-rebinding check refused the Host
	// header (400 "host header is invalid"/"missing").
	ErrHostRejected = errors.New("host header rejected")
	// ErrUnauthorized: 401/403, e.g. aw-server-rust with [auth] api_key set
	// and no or a wrong key sent.
	ErrUnauthorized = errors.New("unauthorized")
)

// Error is every error the client returns. Its text never holds event data
// (window titles, URLs) nor the API key. Safe to share once returned.
type Error struct {
	Op      string    // what the client was doing: "info", "buckets", "events"...
	Kind    ErrorKind // what went wrong
	Status  int       // HTTP status when a response was received, else 0
	Message string    // the server's message (one line, at most 200 bytes) or our explanation
	Err     error     // the cause, if any
}

func (e *Error) Error() string {
	s := "aw " + e.Op + ": " + string(e.Kind)
	if e.Status != 0 {
		s += " " + strconv.Itoa(e.Status)
	}
	if e.Err != nil {
		// The cause may quote the server's bytes (net/http quotes a
		// malformed header line): withheld, bounded, one printable line.
		s += ": " + text.Cause(e.Err, maxCauseBytes)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of the first *Error in err's chain, or "" when there
// is none.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

const (
	maxCauseBytes   = 300 // the text of Error.Err in Error()
	maxMessageBytes = 200 // Error.Message taken from a server
)

// Transient reports whether err is a failure that may pass on its own (no
// answer, a timeout, a 5xx, a body too large), as opposed to an answer
// saying what the server has or lacks (a 404, a body of another shape).
func Transient(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Kind {
	case Unreachable, Timeout, TooLarge:
		return true
	case HTTPStatus:
		return e.Status >= 500
	}
	return false
}
