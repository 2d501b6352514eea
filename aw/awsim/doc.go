// Package awsim is an in-memory simulator of the ActivityWatch server's
// REST endpoints that awbridge and its tests use, plus an optional /probe
// sidecar and a generator that plays a lively, deterministic person at a
// desktop into the usual watcher buckets. `awbridge sim` and `awbridge
// demo` serve it on loopback so a newcomer without ActivityWatch sees real
// frames, and tests of the bridge run against it. It is not a second
// aw-server: no query language, export, web UI or Python formatting.
//
// Served: GET /api/0/info; GET /api/0/buckets/; GET, POST (create) and
// DELETE (?force=1) /api/0/buckets/<id>; GET and POST .../events (start,
// end, limit: newest first, clipped to the range with aw-server's 1 ms
// rounding of end); GET .../events/count; DELETE .../events/<n>; POST .../heartbeat?pulsetime=
// (merged into the newest event when the data is equal and it falls
// within the pulse); GET /api/0/settings[/<key>] and POST
// /api/0/settings/<key>; POST /api/0/import (aw-server's export shape, as
// the tests load recordings). Answers carry aw-server's JSON values: the
// fixture replay test compares them, decoded, with the recorded answers of
// a real aw-server (testdata/awfixtures).
//
// A Server is an http.Handler holding all state in memory; it is safe for
// concurrent use. Seed writes an hour of history; Run plays the watchers
// live until its context ends.
package awsim
