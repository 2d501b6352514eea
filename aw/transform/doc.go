// Package transform is ActivityWatch's event transforms (aw-core's
// aw_transform, commit d628a9a, 0.5.17, the one the recorded aw-server ran)
// and its web UI's canonical desktop query (CanonicalContext), in Go, for
// the bridge's activity over time.
//
// An Event holds a period in integer microseconds and its data as Fields,
// immutable and shared between copies; a Decoder shares one Fields among
// events with identical data, so a week of events (100,000 or so) decodes
// into few allocations and equal data compares at once.
//
// As in aw-core, timestamps a transform computes are truncated to
// milliseconds and sorting is stable. Transforms never change their input
// slices; where aw-core changes events in place in a way other lists can
// see (period_union clearing data), the function says so and leaves it to
// the caller. Regular expressions are Go's RE2; see NewRule.
package transform
