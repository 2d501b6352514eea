package toolbus

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// traceParent is what the bus takes from a W3C Trace Context traceparent:
// the caller's trace-id and the id of its span that made this call.
type traceParent struct {
	traceID  string // 32 lowercase hex, not all zero
	parentID string // 16 lowercase hex, not all zero
}

// traceParentLen is the length of a version-00 traceparent:
// 2 + 1 + 32 + 1 + 16 + 1 + 2.
const traceParentLen = 55

// parseTraceParent reads a W3C traceparent, version-traceid-parentid-flags
// in lowercase hex. ok is false for anything the recommendation says to
// ignore: a short or malformed value, uppercase hex, version ff, an
// all-zero trace-id or parent-id, or a version-00 value with more fields.
// A later version may append fields after a dash; they are ignored.
// Spaces and tabs around the value (HTTP's optional whitespace) are
// trimmed.
func parseTraceParent(s string) (traceParent, bool) {
	s = strings.Trim(s, " \t")
	if len(s) < traceParentLen {
		return traceParent{}, false
	}
	version, traceID, parentID, flags := s[0:2], s[3:35], s[36:52], s[53:55]
	switch {
	case s[2] != '-' || s[35] != '-' || s[52] != '-':
		return traceParent{}, false
	case !lowerHex(version) || version == "ff":
		return traceParent{}, false
	case version == "00" && len(s) != traceParentLen:
		return traceParent{}, false
	case len(s) > traceParentLen && s[traceParentLen] != '-':
		return traceParent{}, false
	case !lowerHex(traceID) || !lowerHex(parentID) || !lowerHex(flags):
		return traceParent{}, false
	case allZero(traceID) || allZero(parentID):
		return traceParent{}, false
	}
	return traceParent{traceID: traceID, parentID: parentID}, true
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }

// newSpanID returns a W3C span id: 8 random bytes in lowercase hex, not
// all zero.
func newSpanID() string {
	var b [8]byte
	for {
		rand.Read(b[:]) // never fails (crypto/rand)
		if b != [8]byte{} {
			return hex.EncodeToString(b[:])
		}
	}
}

// trace is the call's correlation. Explicit arguments win. Otherwise a
// valid traceparent joins the caller's trace: its trace-id is the trace
// id, its parent-id the parent span id, and the span id is a fresh W3C
// span id, so the call is a child span in the caller's OpenTelemetry
// trace. A trace_id argument names another trace, so the traceparent is
// then ignored entirely (its parent-id belongs to a different trace); a
// parent_span_id or span_id argument alone replaces only that field. An
// invalid traceparent is ignored: the call gets its own trace (NewID).
// args may be nil (a call rejected before its arguments were read).
func (b *Bus) trace(args map[string]any, traceparent string) Trace {
	var (
		t      Trace
		tp     traceParent
		joined bool
	)
	if v, ok := args[argTraceID].(string); ok {
		t.TraceID = v
	} else if tp, joined = parseTraceParent(traceparent); joined {
		t.TraceID = tp.traceID
	} else {
		t.TraceID = b.opts.NewID()
	}
	switch v, ok := args[argSpanID].(string); {
	case ok:
		t.SpanID = v
	case joined:
		t.SpanID = newSpanID()
	default:
		t.SpanID = b.opts.NewID()
	}
	if v, ok := args[argParentSpanID].(string); ok {
		t.ParentSpanID = &v
	} else if joined {
		t.ParentSpanID = &tp.parentID
	}
	return t
}
