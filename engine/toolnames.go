package engine

import (
	"encoding/json"

	"github.com/awbridge/awbridge/toolbus"
)

// ToolNames lists the canonical name of every tool the engine answers,
// the tool bus's built-ins included: the names limits.rate_limits may use.
// It builds the tool list alone (no engine, no I/O).
func ToolNames() []string {
	bus, err := toolbus.New(toolbus.Options{}, (&Engine{}).tools()...)
	if err != nil {
		return nil
	}
	var v struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if json.Unmarshal(bus.ToolsList(""), &v) != nil {
		return nil
	}
	names := make([]string, 0, len(v.Tools))
	for _, t := range v.Tools {
		names = append(names, t.Name)
	}
	return names
}
