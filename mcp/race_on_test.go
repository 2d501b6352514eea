//go:build race

package mcp

// raceEnabled: the race detector adds allocations of its own.
const raceEnabled = true
