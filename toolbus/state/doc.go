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
// once it is durable. One process owns a state dir: two processes sharing
// one never corrupt the file (every write replaces it whole, by rename), but
// the last writer wins and neither sees the other's changes until it
// reopens the store.
package state
