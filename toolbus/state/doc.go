// Package state owns the key/value state behind the tool bus's store_as
// argument and its state tool.
//
// A Store has two scopes: session, in memory for the life of the process
// and shared by every connection to it; and persistent, enabled by a state
// dir: one JSON document, Dir/state.json (0600 in a 0700 folder), replaced
// atomically and durably before a change returns:
//
//	{"version":1,"entries":{
//	"key":{"value":<any JSON>,"updated_at":"2026-01-02T15:04:05.123456789Z"}
//	}}
//
// Values are compacted JSON, passed through Options.Redact before they are
// kept; keys are ASCII letters, digits and . _ - : / only. A Store is safe
// for concurrent use, and readers never see a half-applied change.
//
// Several processes may share a state dir. Each change holds an advisory
// lock on Dir/state.json.lock (flock; LockFileEx on Windows), re-reads the
// file if another process replaced it, and writes only the keys it
// changes, so no confirmed write is lost; a read re-reads the file when its
// identity, size or modification time changed.
package state
