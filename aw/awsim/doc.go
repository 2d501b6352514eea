// Package awsim is an in-memory simulator of the ActivityWatch server's
// REST endpoints that awbridge and its tests use, plus an optional /probe
// sidecar and a generator that plays a lively, deterministic person at a
// desktop into the usual watcher buckets. `awbridge sim` and `awbridge
// demo` serve it on loopback, and tests of the bridge run against it. It
// is not a second aw-server: no query language, export or web UI. Its
// answers carry aw-server's JSON values: the fixture replay test compares
// them with the recorded answers of a real aw-server (testdata/awfixtures).
package awsim
