package engine

import "github.com/awbridge/awbridge/toolbus"

// ToolNames lists the canonical name of every tool the engine answers,
// the tool bus's built-ins included: the names limits.rate_limits may use.
// It builds the tool list alone (no engine, no I/O).
func ToolNames() []string {
	bus, err := toolbus.New(toolbus.Options{}, (&Engine{}).tools()...)
	if err != nil {
		return nil
	}
	return bus.Names()
}
