package toolbus

import (
	"encoding/json"
	"github.com/awbridge/awbridge/internal/jsonw"
	"strconv"
	"time"
)

type envelope struct {
	tool     string
	call     *Call
	res      Result
	err      *ToolError
	duration time.Duration
	timeout  time.Duration
}

// appendEnvelope appends the seed 000/001/002 envelope as one JSON object,
// without reflection: it is on every call's path.
func appendEnvelope(dst []byte, e envelope) []byte {
	status := "Ok"
	if e.err != nil {
		status = "Error"
		if e.err.Retryable {
			status = "Retryable"
		}
	}
	dst = append(dst, `{"success":`...)
	dst = strconv.AppendBool(dst, e.err == nil)
	dst = append(dst, `,"tool":`...)
	dst = jsonw.AppendString(dst, e.tool)
	dst = append(dst, `,"action":null,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","result":`...)
	if e.err == nil {
		dst = append(dst, e.res.Body...)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"error":`...)
	if e.err != nil {
		b, err := json.Marshal(e.err)
		if err != nil {
			b = []byte(`{"kind":"SystemError","code":"Internal","retryable":false,"message":"error not serialisable"}`)
		}
		dst = append(dst, b...)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"duration_ms":`...)
	dst = strconv.AppendFloat(dst, float64(e.duration.Microseconds())/1000, 'f', -1, 64)
	dst = append(dst, `,"trace":{"trace_id":`...)
	dst = jsonw.AppendString(dst, e.call.Trace.TraceID)
	dst = append(dst, `,"span_id":`...)
	dst = jsonw.AppendString(dst, e.call.Trace.SpanID)
	dst = append(dst, `,"parent_span_id":`...)
	if p := e.call.Trace.ParentSpanID; p != nil {
		dst = jsonw.AppendString(dst, *p)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `},"artifact_uri_context":null,"artifact_uri_json":null,"attempts":1,"policy":{"timeout_ms":`...)
	dst = strconv.AppendInt(dst, e.timeout.Milliseconds(), 10)
	if e.res.Circuit != "" {
		dst = append(dst, `,"circuit":"`...)
		dst = append(dst, e.res.Circuit...)
		dst = append(dst, '"')
	}
	dst = append(dst, `},"cache_hit":`...)
	dst = strconv.AppendBool(dst, e.res.CacheHit)
	dst = append(dst, `,"next_actions":`...)
	dst = appendNextActions(dst, e.err)
	return append(dst, '}')
}

// appendNextActions suggests fixed recovery steps; never data from results.
func appendNextActions(dst []byte, te *ToolError) []byte {
	if te == nil {
		return append(dst, "[]"...)
	}
	switch te.Code {
	case CodeAwUnavailable, CodeSidecarUnavailable, CodeCircuitOpen, CodeTimeout:
		return append(dst, `[{"tool":"system_health","why":"see which source is down and since when"},{"tool":"nowframe_build","why":"a best-effort frame still answers with the sources that work"}]`...)
	case CodeSchemaInvalid, CodeUnknownTool:
		return append(dst, `[{"tool":"help","why":"list the tools and their arguments"}]`...)
	}
	return append(dst, "[]"...)
}
