package health

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awbridge/awbridge/sidecar"
)

// FuzzReportProbe feeds an arbitrary sidecar answer, through the sidecar
// client's own decoding, to the health report: the report is always
// valid JSON with the contract's fields; omni_probe is the decoded object when
// the sidecar answered (null when it did not); sidecar_probe_status and
// preflight_ok follow the probe's ok and preflight_ok; and health is never
// "healthy" while the probe is not ok.
func FuzzReportProbe(f *testing.F) {
	for _, s := range []string{
		`{"ok":true}`, `{"ok":true,"preflight_ok":false}`, `{"ok":false,"preflight_ok":true}`, `{"ok":"true"}`, `{"ok":1}`,
		`{"ok":true,"ok":false}`, `{"preflight_ok":true}`, `{"ok":null}`, `{"ok":{"nested":true}}`, `{"a.b":1,"ok":true}`,
		`[true]`, `"ok"`, `{`, ``, `{"ok":true,"checks":[{"name":"\u202e","ok":false}]}`, "{\"ok\":true,\"x\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		decoded, derr := sidecar.Decode(body)
		c := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
		var awErr atomic.Value
		var probes atomic.Int32
		h := checker(c, &awErr, func(context.Context) (json.RawMessage, error) { return decoded, derr }, &probes)
		defer h.Close()
		raw, _, _ := h.Rendered(context.Background())
		var r struct {
			AWOK               *bool           `json:"aw_ok"`
			SidecarProbeStatus *bool           `json:"sidecar_probe_status"`
			PreflightOK        *bool           `json:"preflight_ok"`
			ProtectedEnvOK     *bool           `json:"protected_env_ok"`
			ProtectedDiffCount *int            `json:"protected_diff_count"`
			OmniProbe          json.RawMessage `json:"omni_probe"`
			Status             string          `json:"status"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.AWOK == nil || r.SidecarProbeStatus == nil || r.PreflightOK == nil ||
			r.ProtectedEnvOK == nil || r.ProtectedDiffCount == nil || r.OmniProbe == nil {
			t.Fatalf("report %s: %v", raw, err)
		}
		if derr != nil {
			if string(r.OmniProbe) != "null" || *r.SidecarProbeStatus || r.Status == "healthy" {
				t.Fatalf("a refused answer (%v) shows in the report: %s", derr, raw)
			}
			return
		}
		if a, b := decodeAny(t, r.OmniProbe), decodeAny(t, decoded); !reflect.DeepEqual(a, b) {
			t.Fatalf("omni_probe %s, the sidecar answered %s", r.OmniProbe, decoded)
		}
		var probe struct {
			OK          any `json:"ok"`
			PreflightOK any `json:"preflight_ok"`
		}
		_ = json.Unmarshal(decoded, &probe)
		if repeatsKey(decoded, "ok", "preflight_ok") {
			// gjson reads the first of repeated keys, encoding/json the
			// last: a known differential (see the report), not checked.
			return
		}
		if probe.OK == true && !*r.SidecarProbeStatus || probe.OK == false && *r.SidecarProbeStatus || probe.OK == nil && *r.SidecarProbeStatus {
			t.Fatalf("probe ok %v, sidecar_probe_status %v", probe.OK, *r.SidecarProbeStatus)
		}
		if pre := probe.PreflightOK; pre == false && *r.PreflightOK {
			t.Fatalf("probe preflight_ok false, report preflight_ok true: %s", raw)
		}
		if r.Status == "healthy" && !*r.SidecarProbeStatus {
			t.Fatalf("healthy while the probe is not ok: %s", raw)
		}
	})
}

// decodeAny decodes one JSON value, numbers as written.
func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return v
}

// repeatsKey reports whether the (valid) object repeats one of keys at
// its top level.
func repeatsKey(obj []byte, keys ...string) bool {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return false
	}
	seen := map[string]int{}
	for dec.More() {
		k, _ := dec.Token()
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return false
		}
		seen[k.(string)]++
	}
	for _, k := range keys {
		if seen[k] > 1 {
			return true
		}
	}
	return false
}
