package mcp

import "encoding/json"

// PromptBackend is implemented by a Backend that serves MCP prompts
// (awbridge's standup, week_review, categorize). Safe for concurrent use.
type PromptBackend interface {
	// PromptsList is the result of prompts/list.
	PromptsList() json.RawMessage
	// GetPrompt is the result of prompts/get for the prompt name with the
	// client's arguments; an error says which name or argument is wrong.
	GetPrompt(name string, args map[string]string) (json.RawMessage, error)
}

// noCacheHints is modernResult's ttl for a result that carries none.
const noCacheHints = -1

// handlePrompt answers prompts/list and prompts/get; v is the modern
// version of the request ("" legacy). An unknown prompt, or arguments
// that are not an object of strings the prompt takes, is -32602.
func (s *session) handlePrompt(q *request, v string) {
	pb, _ := s.srv.backend.(PromptBackend)
	if pb == nil {
		s.fail(q, CodeMethodNotFound, "method not found", nil)
		return
	}
	modern := v != ""
	if q.method == "prompts/list" {
		res := pb.PromptsList()
		if modern {
			res = s.srv.modernResult(res, ListTTLMillis, "public")
		}
		s.replyTo(q, resultReply(q.id, res))
		return
	}
	name, raw, msg := q.params.toolCall()
	if msg != "" {
		s.fail(q, CodeInvalidParams, "invalid params: "+msg, nil)
		return
	}
	var args map[string]string
	if raw != nil {
		if err := json.Unmarshal(raw, &args); err != nil {
			s.fail(q, CodeInvalidParams, "invalid params: a prompt's arguments are strings", nil)
			return
		}
	}
	res, err := pb.GetPrompt(name, args)
	if err != nil {
		s.fail(q, CodeInvalidParams, "invalid params: "+err.Error(), nil)
		return
	}
	if modern {
		res = s.srv.modernResult(res, noCacheHints, "")
	}
	s.replyTo(q, resultReply(q.id, res))
}
