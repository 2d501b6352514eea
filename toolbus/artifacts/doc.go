// Package artifacts owns the per-call artifacts under the context root: the
// human `.context` document and the machine `result.json` of every tool call
// and the spilled full text of bounded strings, written as
//
//	artifacts/runs/<trace>/tool_calls/<span>.context
//	artifacts/runs/<trace>/tool_calls/<span>/result.json
//	artifacts/runs/<trace>/tool_calls/<span>/spill-<n>.txt
//
// and read back by URI (artifact://runs/<trace>/tool_calls/<span>.context
// and so on). Files are written atomically through artifacts/.tmp, 0600 in
// 0700 folders; no link below the root is ever followed. The root must
// belong to the user and be writable by no one else. Store.PruneIfDue
// bounds what is kept, at most once per interval across the processes
// sharing the root. Callers pass values already redacted.
package artifacts
