// Package artifacts owns the per-call artifacts under the context root: the
// human `.context` document and the machine `result.json` of every tool call,
// the spilled full text of bounded strings, and reading them back by URI.
//
// Layout, relative to the context root:
//
//	artifacts/runs/<trace>/tool_calls/<span>.context
//	artifacts/runs/<trace>/tool_calls/<span>/result.json
//	artifacts/runs/<trace>/tool_calls/<span>/spill-<n>.txt
//
// named by URIs artifact://runs/<trace>/tool_calls/<span>.context and so on.
// Files are written atomically (a temp file in artifacts/.tmp, then a rename
// into place; fsync only with Options.Sync) with mode 0600 in folders created
// with mode 0700. A writer killed mid-write leaves its temp file in
// artifacts/.tmp only, and Open removes the ones older than ten minutes
// (younger ones may be another process's write in progress). The package never
// follows a symbolic link below the root, and refuses every URI that does not
// name one of the three kinds of file above.
//
// The root and its artifacts folder must belong to the user running
// awbridge and be writable by no one else; Open refuses any
// other with a warning saying what to do. Store.Prune bounds what is kept:
// whole run folders go when last written longer ago than Options.MaxAge,
// then the oldest while all of them take more than Options.MaxBytes; a run
// written in the last PruneGrace always stays. It reads metadata only,
// through an os.Root on artifacts/runs, and never follows a link.
// Store.PruneIfDue runs it at most once per interval across the processes
// sharing the root: the stamp artifacts/.pruned says when a pass last
// ended, and a lock on it claims the next one.
//
// The package does not redact or bound what it is given, except for the
// .context renderer's own limits: callers pass values already redacted.
package artifacts
