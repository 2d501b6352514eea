// Package activity is activity over time, read from ActivityWatch's stored
// events: which stretch of time a question means (ParseSpec, Calendar,
// Period: days in a time zone starting at ActivityWatch's start of day,
// weeks at its start of week, correct across daylight-saving changes) and
// the tools' answers (Service: Summary, Timeline, History, Search), read through an
// upstream source of their own (a history read's deadline and breaker are
// never the live frame's).
//
// A Service reads a period by days, a day of one bucket at a time (the
// real aw-server answers one heavy read at a time), keeping closed days
// (and the open day, read again only from a few minutes before its last
// read) in a store bounded by bytes and age; a kept day is checked again
// at most every few minutes by counting its events on the server
// (revalidate.go). Reading, stitching and keeping a day's events live in
// days.go. It runs ActivityWatch's canonical desktop query
// (aw/transform.CanonicalContext) by units, a closed day or an hour of the open
// day, each over its own time and a margin of the time around it, cut to
// the unit, so that the units add up to the whole period's computation;
// a final unit is kept. The frames' privacy (nowframe.Privacy) applies to
// every app, title, URL and domain shown. A call reads this machine's
// buckets, another host's, or every host's joined without counting time
// twice (hosts.go).
//
// Units, computed as soon as their days are read, are kept because
// computing the whole period per call costs what a person notices: a
// repeated this_week in serve on the real aw-server (46,840 events, a
// loaded 2-CPU machine) took a median 349-612 ms against 94-202 ms by
// units, far over the 50 ms asked (BenchmarkSummaryWeek/warm: 65 ms
// against 2.6 ms).
//
// Anything can write to ActivityWatch, so a call's memory is bounded by
// the events it holds (a period holding more than DefaultMaxEvents at once
// is a *DenseError), and only DefaultMaxCalls calls read and compute at
// once. Times are never read from the wall clock inside the package.
package activity
