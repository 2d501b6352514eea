package nowframe

import (
	"encoding/json"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/internal/jsonw"
)

// SourceReport is one source's part in a frame; a source the person never
// configured is {"configured":false} alone.
type SourceReport struct {
	Configured bool    `json:"configured"`
	OK         bool    `json:"ok"`
	LatencyMs  float64 `json:"latency_ms"`
	// Error is why this source's fields are null, Code its stable code
	// (AwUnavailable, CircuitOpen, ...); absent when it worked.
	Error   *string `json:"error,omitempty"`
	Code    string  `json:"code,omitempty"`
	Circuit string  `json:"circuit"`
}

// MarshalJSON renders r; an unconfigured source as {"configured":false}.
func (r SourceReport) MarshalJSON() ([]byte, error) {
	if !r.Configured {
		return []byte(`{"configured":false}`), nil
	}
	type plain SourceReport
	return jsonw.Marshal(plain(r))
}

// Sources reports every source of a frame.
type Sources struct {
	ActivityWatch SourceReport `json:"activitywatch"`
	Sidecar       SourceReport `json:"sidecar"`
}

// Zone is the person's time zone, which turns a frame's UTC times into
// local time.
type Zone struct {
	Name      string `json:"name"`       // IANA name; "Local" when unknown
	UTCOffset string `json:"utc_offset"` // at the frame's timestamp: "+01:00"
}

// Frame is one assembled nowframe. Immutable once built: share it freely.
type Frame struct {
	Version   uint64 // increases with every frame the builder makes
	Timestamp time.Time
	Zone      *Zone // nil when not known
	Info      *aw.Info
	Buckets   map[string]aw.Bucket
	Probe     json.RawMessage
	Now       Now
	Sources   Sources
	Cause     string // CauseRequest or CausePoll

	head          []byte // rendered JSON before the reason
	full, compact rendered
}

// rendered is an answer after the reason, and where it was redacted and
// where a long string was bounded (paths, never values).
type rendered struct {
	tail                []byte
	redactions, bounded []string
}

func renderTail(v any, redact func([]byte) ([]byte, []string, []string)) (r rendered, err error) {
	if r.tail, err = jsonw.Marshal(v); err != nil {
		return r, err
	}
	if redact != nil {
		r.tail, r.redactions, r.bounded = redact(r.tail)
	}
	r.tail[0] = ',' // continue the object after "reason"
	return r, nil
}

// Age is how old the frame is at t.
func (f *Frame) Age(t time.Time) time.Duration { return t.Sub(f.Timestamp) }

// render pre-renders and redacts the frame's answers once; JSON splices
// the reason.
func (f *Frame) render(redact func([]byte) (out []byte, redacted, bounded []string)) (err error) {
	f.head, err = jsonw.Marshal(struct {
		Timestamp time.Time `json:"timestamp"`
		Zone      *Zone     `json:"timezone,omitempty"`
	}{f.Timestamp.UTC(), f.Zone})
	if err != nil {
		return err
	}
	f.head = append(f.head[:len(f.head)-1], `,"reason":`...)
	rest := struct {
		AWInfo    *aw.Info                  `json:"aw_info"`
		AWBuckets map[string]renderedBucket `json:"aw_buckets"`
		OmniProbe json.RawMessage           `json:"omni_probe"`
		Now       Now                       `json:"now"`
		Sources   Sources                   `json:"sources"`
		Version   uint64                    `json:"frame_version"`
		Cause     string                    `json:"built_for"`
	}{f.Info, renderBuckets(f.Buckets), f.Probe, f.Now, f.Sources, f.Version, f.Cause}
	if rest.OmniProbe == nil {
		rest.OmniProbe = json.RawMessage("null")
	}
	if f.full, err = renderTail(rest, redact); err != nil {
		return err
	}
	f.compact, err = renderTail(struct {
		Now     compactNow               `json:"now"`
		Sources map[string]compactSource `json:"sources"`
	}{f.Now.compact(), map[string]compactSource{
		"activitywatch": f.Sources.ActivityWatch.compact(), "sidecar": f.Sources.Sidecar.compact()}}, redact)
	return err
}

// JSON returns the nowframe.build result with the caller's reason, and
// where it was redacted and bounded; at a copy's cost. The compact answer
// (response_mode compact) says what the person is doing, how fresh it is
// and each source's status: no server info, buckets, probe, selection or
// notes.
func (f *Frame) JSON(reason string, compact bool) (body []byte, redactions, bounded []string) {
	r := f.full
	if compact {
		r = f.compact
	}
	body = append(make([]byte, 0, len(f.head)+len(reason)+8+len(r.tail)), f.head...)
	body = jsonw.AppendString(body, reason)
	return append(body, r.tail...), r.redactions, r.bounded
}

// compactNow is Now without its listings: summary, staleness, and per
// source what it shows, since when and how old it is.
type compactNow struct {
	Summary string          `json:"summary"`
	Stale   bool            `json:"stale"`
	Window  compactActivity `json:"window"`
	Browser compactActivity `json:"browser"`
	AFK     compactActivity `json:"afk"`
}

// compactActivity is one source of compactNow.
type compactActivity struct {
	Status         string     `json:"status,omitempty"` // AFK only
	Focused        *bool      `json:"focused,omitempty"`
	App            string     `json:"app,omitempty"`
	Browser        string     `json:"browser,omitempty"`
	URL            string     `json:"url,omitempty"`
	Title          string     `json:"title,omitempty"`
	Reason         string     `json:"reason,omitempty"`
	Private        bool       `json:"private,omitempty"`
	Excluded       bool       `json:"excluded,omitempty"`
	ExcludedReason string     `json:"excluded_reason,omitempty"`
	MatchesWindow  *bool      `json:"matches_window,omitempty"`
	Since          *time.Time `json:"since,omitempty"`
	AgeSeconds     *float64   `json:"age_seconds,omitempty"`
	Stale          bool       `json:"stale,omitempty"`
	FutureClamped  bool       `json:"future_clamped,omitempty"`
}

func (a *compactActivity) timing(t *EventTiming) {
	if t != nil {
		since, age := t.Since, t.AgeSeconds
		a.Since, a.AgeSeconds, a.Stale, a.FutureClamped = &since, &age, t.Stale, t.FutureClamped
	}
}

func (n *Now) compact() compactNow {
	w, b, k := &n.Window, &n.Browser, &n.AFK
	c := compactNow{Summary: n.Summary, Stale: n.Stale,
		Window: compactActivity{App: w.App, Title: w.Title, Reason: w.Reason, Excluded: w.Excluded, ExcludedReason: w.ExcludedReason},
		Browser: compactActivity{Focused: &b.Focused, Browser: b.Name, URL: b.URL, Title: b.Title, Reason: b.Reason,
			Private: b.Private, Excluded: b.Excluded, ExcludedReason: b.ExcludedReason, MatchesWindow: b.MatchesWindow},
		AFK: compactActivity{Status: k.Status, Reason: k.Reason}}
	c.Window.timing(w.EventTiming)
	c.Browser.timing(b.EventTiming)
	c.AFK.timing(k.EventTiming)
	return c
}

// compactSource is a source's status: whether it answered, and why not.
type compactSource struct {
	Configured *bool   `json:"configured,omitempty"` // only when false
	OK         *bool   `json:"ok,omitempty"`
	Error      *string `json:"error,omitempty"`
	Code       string  `json:"code,omitempty"`
}

func (r SourceReport) compact() compactSource {
	if !r.Configured {
		return compactSource{Configured: &r.Configured}
	}
	return compactSource{OK: &r.OK, Error: r.Error, Code: r.Code}
}

// renderedBucket is a bucket without a null name or empty data.
type renderedBucket struct {
	ID          string          `json:"id"`
	Created     time.Time       `json:"created"`
	Name        *string         `json:"name,omitempty"`
	Type        string          `json:"type"`
	Client      string          `json:"client"`
	Hostname    string          `json:"hostname"`
	Data        json.RawMessage `json:"data,omitempty"`
	LastUpdated time.Time       `json:"last_updated,omitzero"`
}

func renderBuckets(bs map[string]aw.Bucket) map[string]renderedBucket {
	if bs == nil {
		return nil // aw_buckets null: the read failed
	}
	out := make(map[string]renderedBucket, len(bs))
	for id, b := range bs {
		r := renderedBucket{b.ID, b.Created, b.Name, b.Type, b.Client, b.Hostname, b.Data, b.LastUpdated}
		if string(b.Data) == "{}" {
			r.Data = nil
		}
		out[id] = r
	}
	return out
}
