package jsonw

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping: <, > and & go out as they
// are ("Work > Programming", not "Work \u003e Programming"). Everything a
// model or a client reads (tool results, envelopes, JSON-RPC messages) is
// rendered by it or by AppendString, the one home of that choice: nothing
// awbridge writes is embedded in HTML.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
