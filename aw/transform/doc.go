// Package transform is ActivityWatch's event transforms (aw-core's
// aw_transform, as its query functions use them) and its web UI's
// canonical desktop query, in Go, for the bridge's activity over time.
//
// # Events
//
// An Event holds a period in integer microseconds (Start since the Unix
// epoch in UTC, Duration) and its data as Fields: the keys in the server's
// order, string values decoded, other values as JSON text; immutable and
// shared between copies. A Decoder builds events from aw.Events and shares
// one Fields among events with identical data, so a week of events
// (100,000 or so) decodes into few allocations and equal data compares at
// once.
//
// # Semantics
//
// The transforms follow aw-core (commit d628a9a, 0.5.17, the one the
// recorded aw-server ran): timestamps a transform computes are truncated
// to milliseconds as aw-core's Event does; sorting is stable; events are
// copied where aw-core deep-copies them and shared where it shares them.
// Transforms never change their input slices; where aw-core changes events
// in place in a way other lists can see (period_union clearing data,
// split_url_events and categorize adding keys), the function says so and
// leaves it to the caller (PeriodUnion reports the events it would clear).
// Regular expressions are Go's RE2; see NewRule.
//
// Ordering: Flood, FilterPeriodIntersect and PeriodUnion sort their input
// themselves (a copy) and return events in start order; Filter keeps the
// order it is given.
//
// CanonicalContext runs the web UI's query on the raw events of a period
// (each bucket's events in any order; aw-server's newest-first order is
// the fast one) and returns the window events within active time, each
// with its category (Fields.Class), the active time and the browser tab
// events that count, with split_url's $domain and the rest; all three in
// start order. Classes are ActivityWatch's categories: parsed from its "classes" setting, else
// DefaultClasses; Classes.Label names one ("Work > Programming").
package transform
