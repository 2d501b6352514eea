// Package awsim is a faithful in-memory simulator of the ActivityWatch
// server (aw-server, the Python/Flask one) and of an optional /probe
// sidecar, plus a generator that plays a lively, deterministic person at a
// desktop into the usual watcher buckets.
//
// It owns the simulated HTTP behaviour: routes, status codes, JSON shapes
// and serialisation (flask-restx's ", "/": " separators, Flask's compact
// sorted jsonify, \uXXXX escapes, Python isoformat timestamps truncated to
// ms, float durations like 88.0, newest-first events), the host-header and
// CORS rules, heartbeat merging, range clipping with the 1 ms rounding of
// end, aw-core's query2 language, and the error answers (JSON 404s with
// flask-restx's "did you mean" help, HTML 404/405 pages, 308 redirects).
// `awbridge sim` and `awbridge demo` serve it on loopback so a newcomer
// without ActivityWatch sees real frames, and tests of the bridge run
// against it.
//
// A Server is an http.Handler holding all state in memory; it is safe for
// concurrent use. Seed writes an hour of history; Run plays the watchers
// live until its context ends.
//
// # Fidelity
//
// The fixture replay test loads the state of the recorded server
// (testdata/awfixtures) through the simulator's own REST API and
// replays all 72 recorded exchanges: 71 match byte for byte (status,
// Content-Type, meaningful headers, body with only bucket "created" times
// and "device_id" masked), including all 13 query exchanges: the whole
// query2 language is ported (parser quirks included) with every function of
// aw_query/functions.py. The Swagger UI page (GET /api/) matches by status
// and content type only: awsim serves a small page pointing at
// /api/swagger.json, which itself is the recorded description, verbatim.
// CPython's own answers for the ported pieces (iso8601.parse_date, float
// repr, json.dumps, repr, difflib, int(), float()) are checked in
// testdata/python_reference.json.
//
// Deliberate differences, all in behaviour the recordings do not show:
//
//   - Heartbeats merge into the newest stored event (by timestamp). aw-server
//     merges into the event it last touched through a heartbeat (a cache);
//     the two differ only when events are inserted or edited between
//     heartbeats, or heartbeats arrive out of order (where aw-server can
//     overwrite the wrong event).
//   - An "id" in a heartbeat is ignored (aw-server would try to update that
//     row when inserting).
//   - No web UI or static files: GET / and other non-API paths are HTML 404s.
//   - GET /api/0/log answers [[], 200], the shape aw-server gives its log
//     lines, without lines. POST /api/0/import takes a JSON body only, not
//     the web UI's multipart upload.
//   - Regular expressions in categorize, tag and filter_keyvals_regex use
//     Go's RE2 syntax (no look-around or back-references); a pattern RE2
//     rejects disables its rule (aw-core's query would fail with a 500).
//     The transforms themselves are package transform's. The query
//     parser's str.isalpha/isdigit are Unicode letters and decimal digits.
//   - A 405 is JSON when an API rule matches the path and HTML otherwise
//     (werkzeug's choice depends on set ordering, which varies per process).
//   - Bounds a simulator needs: bodies over 16 MiB get 413, more than two
//     million events or durations beyond ±8e12 s a 500; JSON nested deeper
//     than ~990 levels and queries nested deeper than 300 a 500 (CPython's
//     RecursionError).
//   - Time ranges compare instants exactly; peewee compares timestamp
//     strings in SQLite, which differs at sub-millisecond boundaries.
//   - No Server header is forged; /api/0/info reports the recorded version.
package awsim
