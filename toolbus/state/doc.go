// Package state owns the key/value state behind the tool bus's store_as
// argument and its state tool (alias mcp_state).
//
// A Store has two scopes. The session scope lives in memory for the life of
// the process; one Store per process is shared by every connection, so a
// value stored by one assistant is read back by another. The persistent
// scope, enabled by a state dir, is one JSON document, Dir/state.json
// (0600 in a 0700 folder), replaced atomically (temp file in the same
// folder, fsync, rename, fsync of the folder) before any call that changes
// it returns:
//
//	{"version":1,"entries":{
//	"key":{"value":<any JSON>,"updated_at":"2026-01-02T15:04:05.123456789Z"}
//	}}
//
// Values are JSON documents held as compacted bytes (json.RawMessage),
// passed through Options.Redact before they are stored. Keys are ASCII
// letters, digits and . _ - : / only.
//
// A Store is safe for concurrent use by many goroutines; readers never see a
// half-applied change, and a persistent change is visible to readers only
// once it is durable.
//
// Several processes may share a state dir (two `awbridge stdio` without a
// service). Each change takes an advisory lock on Dir/state.json.lock
// (flock; LockFileEx on Windows), re-reads state.json if another process
// replaced it since, applies only the keys it changes and replaces the
// file, then releases the lock: no confirmed write of any process is lost.
// A read looks at the file's identity, size and modification time (one
// Lstat) and re-reads it, under the lock, only when it changed, so it sees
// every change another process confirmed. Open removes only temp files
// older than a few minutes: a younger one may be another process's write
// in progress. The lock file stays (empty, 0600).
package state
