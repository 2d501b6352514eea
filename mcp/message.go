package mcp

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// message is one JSON-RPC message decoded once (see the package doc); its
// raw values are its own copy, never the caller's (reused) read buffer.
type message struct {
	id        json.RawMessage // the raw id token, byte for byte; nil when absent
	hasID     bool
	dupID     bool // a repeated "id": the message cannot be answered under an id
	jsonrpcOK bool // "jsonrpc":"2.0"
	method    string
	methodOK  bool            // "method" present and a string
	params    json.RawMessage // nil when absent or null
	response  bool            // "result" or "error" and no "method": a response
	dup       bool            // a repeated jsonrpc, method or params member
}

// errSyntax is any JSON syntax error: the message is answered with -32700.
var errSyntax = errors.New("mcp: parse error")

// eachMember calls fn with the decoded name (valid only during the call:
// a switch on string(name) costs no allocation) and the raw value of each
// member of the object raw, in order, repeated names included. Anything but
// one valid JSON object is errSyntax. It returns fn's first error.
func eachMember(raw []byte, fn func(name []byte, val json.RawMessage) error) error {
	obj := jsonw.TrimSpace(raw)
	if len(obj) == 0 || obj[0] != '{' || !json.Valid(obj) {
		return errSyntax
	}
	var err error
	jsonw.EachMember(obj, func(key, val []byte) bool {
		name := key[1 : len(key)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var s string
			_ = json.Unmarshal(key, &s) // valid: the object was validated
			name = []byte(s)
		}
		err = fn(name, val)
		return err == nil
	})
	return err
}

// decodeMessage decodes one message object. A syntax error is errSyntax.
func decodeMessage(obj []byte) (message, error) {
	var m message
	obj = bytes.Clone(obj) // the values outlive the caller's buffer
	var hasJSONRPC, hasMethod, hasParams, hasResult bool
	err := eachMember(obj, func(name []byte, val json.RawMessage) error {
		switch string(name) {
		case "id":
			m.dupID = m.dupID || m.hasID
			m.hasID, m.id = true, val
		case "jsonrpc":
			m.dup = m.dup || hasJSONRPC
			hasJSONRPC = true
			m.jsonrpcOK = string(val) == `"2.0"` || stringIs(val, "2.0")
		case "method":
			m.dup = m.dup || hasMethod
			hasMethod = true
			m.method, m.methodOK = asString(val)
		case "params":
			m.dup = m.dup || hasParams
			hasParams = true
			m.params = val
		case "result", "error":
			hasResult = true
		}
		return nil
	})
	if err != nil {
		return message{}, err
	}
	if string(m.params) == "null" {
		m.params = nil
	}
	m.response = hasResult && !hasMethod
	return m, nil
}

// request reports whether m is a request answerable under its id.
func (m message) request() bool { return !m.response && m.hasID && !m.dupID && validID(m.id) }

// asString decodes a raw JSON string; ok is false for any other value.
func asString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func stringIs(raw json.RawMessage, want string) bool {
	s, ok := asString(raw)
	return ok && s == want
}

// validID reports whether a raw id is a string or a number.
func validID(id []byte) bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// idKey is the identity of an id for cancellation and routing: strings by
// their decoded value, numbers by their exact text (so 1 and 1.0 differ).
func idKey(id []byte) string {
	if id[0] == '"' {
		s, _ := asString(id)
		return "s" + s
	}
	return "n" + string(id)
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// idFromPrefix finds the id of an over-long line among its first bytes: a
// top-level "id" member whose string or number value is complete there.
// Members before it are skipped by the same decoder. It returns nil when
// there is none, or it cannot tell.
func idFromPrefix(p []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var val json.RawMessage
		if dec.Decode(&val) != nil {
			return nil
		}
		if tok != "id" {
			continue
		}
		// The value must be followed by ',' or '}' within the prefix: a
		// number at its very end may continue past it.
		if !validID(val) {
			return nil
		}
		switch firstByte(p[dec.InputOffset():]) {
		case ',', '}':
			return val
		}
		return nil
	}
	return nil
}

// appendRawJSON appends raw JSON produced by the Backend. Empty raw becomes
// null. Raw newlines (only ever insignificant whitespace in valid JSON) are
// turned into spaces so that a pretty-printed body cannot break the framing.
func appendRawJSON(dst, raw []byte) []byte {
	if len(raw) == 0 {
		return append(dst, "null"...)
	}
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return append(dst, raw...)
	}
	for _, c := range raw {
		if c == '\n' || c == '\r' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}
