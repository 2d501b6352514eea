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
// in lowercase hex, trimmed of spaces and tabs. ok is false for what the
// recommendation says to ignore: a malformed value, uppercase hex, version
// ff, an all-zero id, a version-00 value with more fields (a later
// version's are ignored).
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

// trace is the call's correlation. Arguments win; otherwise a valid
// traceparent makes the call a child span in the caller's trace (its
// trace-id, its parent-id as parent, a fresh W3C span id). A trace_id
// argument ignores the traceparent entirely (its parent-id belongs to
// another trace); span_id or parent_span_id alone replace only that field.
// Without either, the call gets its own trace (newID). args may be nil.
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
		t.TraceID = b.opts.newID()
	}
	switch v, ok := args[argSpanID].(string); {
	case ok:
		t.SpanID = v
	case joined:
		t.SpanID = newSpanID()
	default:
		t.SpanID = b.opts.newID()
	}
	if v, ok := args[argParentSpanID].(string); ok {
		t.ParentSpanID = &v
	} else if joined {
		t.ParentSpanID = &tp.parentID
	}
	return t
}
