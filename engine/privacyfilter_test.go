package engine

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/awbridge/awbridge/toolbus"
)

// A privacy filter the person wrote that cannot be used is one failing
// check in health, naming the rule by number and why, never its pattern;
// frames go on.
func TestHealthSaysWhichPrivacyFiltersAreSkipped(t *testing.T) {
	e, _, _, _ := switchEngine(t, func(sw *switchable) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/0/settings" {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"privacy_filters": [
					{"enabled": true, "field": "title", "pattern": "(?i)banking", "action": "drop"},
					{"enabled": true, "field": "title", "pattern": "(secret-project", "action": "drop"},
					{"enabled": true, "field": "title", "pattern": "x", "action": "redact"}]}`))
				return
			}
			sw.ServeHTTP(w, r)
		})
	})
	ctx := context.Background()
	if out := e.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build"}); out.Err != nil {
		t.Fatalf("nowframe.build: %v", out.Err)
	}
	h := e.health.Report(ctx)
	var found int
	for _, c := range h.Preflight {
		if c.Name != "privacy_filters" {
			continue
		}
		found++
		if c.OK || !strings.Contains(c.Detail, "rule 2: its pattern does not compile") || !strings.Contains(c.Detail, "rule 3: a redact rule needs") ||
			strings.Contains(c.Detail, "rule 1") || strings.Contains(c.Detail, "secret-project") {
			t.Errorf("the check: %+v", c)
		}
	}
	if found != 1 || h.Status != "degraded" {
		t.Fatalf("%d privacy_filters checks, status %s: %+v", found, h.Status, h.Preflight)
	}
}
