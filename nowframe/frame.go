package nowframe

import (
	"encoding/json"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/internal/jsonw"
)

// SourceReport is one source's part in a frame.
type SourceReport struct {
	Configured bool    `json:"configured"`
	OK         bool    `json:"ok"`
	LatencyMs  float64 `json:"latency_ms"`
	// Error is why this source's fields are null; null when it worked.
	Error *string `json:"error"`
	// Code is the failure's stable code (AwUnavailable, AwAuthFailed,
	// AwHostRejected, AwEventsUnreadable, CircuitOpen, ...); absent when
	// the source worked.
	Code    string `json:"code,omitempty"`
	Circuit string `json:"circuit"`
}

// Sources reports every source of a frame.
type Sources struct {
	ActivityWatch SourceReport `json:"activitywatch"`
	Sidecar       SourceReport `json:"sidecar"`
}

// Frame is one assembled nowframe. Immutable once built: share it freely.
type Frame struct {
	// Version increases with every frame the builder makes.
	Version   uint64
	Timestamp time.Time
	Info      *aw.Info
	Buckets   map[string]aw.Bucket
	Probe     json.RawMessage
	Now       Now
	Sources   Sources
	// Redactions and Bounded list where the frame was redacted and where a
	// long string was bounded (paths, never values).
	Redactions, Bounded []string
	// Cause is why it was built: CauseRequest or CausePoll.
	Cause string

	head, tail []byte // rendered JSON around "reason"
}

// Age is how old the frame is at t.
func (f *Frame) Age(t time.Time) time.Duration { return t.Sub(f.Timestamp) }

// render pre-renders the frame's JSON once; AppendJSON splices the reason.
func (f *Frame) render(redact func([]byte) (out []byte, redacted, bounded []string)) error {
	head := []byte(`{"timestamp":`)
	head = jsonw.AppendString(head, f.Timestamp.UTC().Format(time.RFC3339Nano))
	head = append(head, `,"reason":`...)
	rest := struct {
		AWInfo    *aw.Info             `json:"aw_info"`
		AWBuckets map[string]aw.Bucket `json:"aw_buckets"`
		OmniProbe json.RawMessage      `json:"omni_probe"`
		Now       Now                  `json:"now"`
		Sources   Sources              `json:"sources"`
		Version   uint64               `json:"frame_version"`
		Cause     string               `json:"built_for"`
	}{f.Info, f.Buckets, f.Probe, f.Now, f.Sources, f.Version, f.Cause}
	if rest.OmniProbe == nil {
		rest.OmniProbe = json.RawMessage("null")
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return err
	}
	if redact != nil {
		b, f.Redactions, f.Bounded = redact(b)
	}
	b[0] = ',' // continue the object after "reason"
	f.head, f.tail = head, b
	return nil
}

// Size is an upper bound of the frame's JSON length for a short reason.
func (f *Frame) Size() int { return len(f.head) + len(f.tail) + 256 }

// AppendJSON appends the frame as the nowframe.build result, with
// the caller's reason. It costs a copy, not a re-encoding.
func (f *Frame) AppendJSON(dst []byte, reason string) []byte {
	dst = append(dst, f.head...)
	dst = jsonw.AppendString(dst, reason)
	return append(dst, f.tail...)
}
