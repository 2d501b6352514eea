// Package engine is the one per-process core: it owns the upstreams, the
// frame builder, health and the tool bus, and Call is the single path for
// MCP tools, direct methods and `awbridge call`.
package engine
