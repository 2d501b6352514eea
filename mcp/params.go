package mcp

import (
	"encoding/json"
	"errors"
)

// Keys of a request's params._meta (MCP 2026-07-28, and W3C trace context
// in either era).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaTraceParent        = "traceparent"
	MetaProgressToken      = "progressToken"
)

// params are the members of a request's params the server reads, decoded
// once with exact (case-sensitive) names; each method reads its own.
type params struct {
	meta            json.RawMessage // _meta
	name, arguments json.RawMessage // tools/call
	uri             json.RawMessage // resources/*
	protocolVersion json.RawMessage // initialize
	requestID       json.RawMessage // notifications/cancelled
	notifications   json.RawMessage // subscriptions/listen
	dupCall         bool            // name or arguments repeated
}

// decodeParams decodes a params object.
func decodeParams(raw json.RawMessage) (params, error) {
	var p params
	err := eachMember(raw, func(name []byte, val json.RawMessage) error {
		switch string(name) {
		case "_meta":
			p.meta = val
		case "name":
			p.dupCall = p.dupCall || p.name != nil
			p.name = val
		case "arguments":
			p.dupCall = p.dupCall || p.arguments != nil
			p.arguments = val
		case "uri":
			p.uri = val
		case "protocolVersion":
			p.protocolVersion = val
		case "requestId":
			p.requestID = val
		case "notifications":
			p.notifications = val
		}
		return nil
	})
	return p, err
}

// toolCall is tools/call's name and arguments; msg is non-empty when they
// are unusable.
func (p params) toolCall() (name string, args json.RawMessage, msg string) {
	switch {
	case p.dupCall:
		return "", nil, "repeated name or arguments"
	case p.name == nil:
		return "", nil, "name is required"
	}
	name, ok := asString(p.name)
	if !ok {
		return "", nil, "name must be a string"
	}
	if p.arguments != nil && string(p.arguments) != "null" {
		if !isObject(p.arguments) {
			return "", nil, "arguments must be an object"
		}
		args = p.arguments // the message's own copy (decodeMessage)
	}
	return name, args, ""
}

// requestMeta is what a request's _meta says.
type requestMeta struct {
	hasVersion  bool   // io.modelcontextprotocol/protocolVersion is present
	version     string // its value
	hasCaps     bool   // io.modelcontextprotocol/clientCapabilities is an object
	traceParent string // W3C traceparent, "" when none
	// progressToken is the raw progressToken when it is one MCP allows
	// (a string or an integer), nil otherwise: the caller wants progress.
	progressToken json.RawMessage
}

// modern reports whether the request is served as MCP 2026-07-28 or later:
// it names its version in _meta, and that version is not one the
// initialize era negotiates.
func (m requestMeta) modern() bool {
	return m.hasVersion && !legacyVersion(m.version)
}

// decodeMeta decodes params._meta (nil: none).
func decodeMeta(raw json.RawMessage) (requestMeta, error) {
	var m requestMeta
	if raw == nil || string(raw) == "null" {
		return m, nil
	}
	if !isObject(raw) {
		return m, errors.New("_meta must be an object")
	}
	err := eachMember(raw, func(name []byte, val json.RawMessage) error {
		switch string(name) {
		case MetaProtocolVersion:
			v, ok := asString(val)
			if !ok {
				return errors.New(MetaProtocolVersion + " must be a string")
			}
			m.hasVersion, m.version = true, v
		case MetaClientCapabilities:
			m.hasCaps = isObject(val)
		case MetaTraceParent:
			m.traceParent, _ = asString(val)
		case MetaProgressToken:
			m.progressToken = progressToken(val)
		}
		return nil
	})
	return m, err
}

// splitMeta parts a direct method's params (a valid object) into the
// arguments, every member but _meta, and _meta, protocol metadata that is
// no argument (nil: none; the last one when repeated). Without _meta the
// arguments are obj itself.
func splitMeta(obj json.RawMessage) (args, meta json.RawMessage) {
	args = []byte{'{'}
	_ = eachMember(obj, func(name []byte, val json.RawMessage) error {
		if string(name) == "_meta" {
			meta = val
			return nil
		}
		if len(args) > 1 {
			args = append(args, ',')
		}
		args = append(append(append(args, marshal(string(name))...), ':'), val...)
		return nil
	})
	if meta == nil {
		return obj, nil
	}
	return append(args, '}'), meta
}
