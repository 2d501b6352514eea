// Package activity is activity over time, read from ActivityWatch's stored
// events: which stretch of time a question means (ParseSpec, Calendar,
// Period: days in a time zone starting at ActivityWatch's start of day,
// weeks at its start of week, correct across daylight-saving changes), the
// raw window, AFK and browser events of one host for that period (Fetcher,
// through the upstream breaker that frames use), and the results the tools
// return (Summary, Timeline, History).
//
// It does not compute summaries: ActivityWatch's event transforms and its
// canonical desktop computation live in their own package, shared with the
// simulator; the computation builds on Raw.
//
// Times are never read from the wall clock inside the package: callers
// pass now (a clock function or an instant).
package activity
