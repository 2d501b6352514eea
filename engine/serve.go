package engine

import (
	"context"

	"github.com/tidwall/gjson"
)

// Warm returns a channel closed once Run has made its first attempt at a
// frame: a service accepts its first caller after it, so that caller is
// answered from the warm frame.
func (e *Engine) Warm() <-chan struct{} { return e.poller.Tried() }

// HealthJSON is system.health's result exactly as the tool answers it
// (redacted and cleaned once per render) and whether it says healthy:
// what an HTTP /healthz writes, never a second marshalling of the report.
func (e *Engine) HealthJSON(ctx context.Context) (body []byte, healthy bool) {
	body, _, _ = e.health.Rendered(ctx)
	return body, gjson.GetBytes(body, "status").Str == "healthy"
}
