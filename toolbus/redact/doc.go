// Package redact owns bounding and redaction: everything that leaves
// awbridge (tool results, artifacts, state files, logs) passes through a
// Redactor first.
//
// It does three things:
//
//   - values under sensitive keys (password, passphrase, secret, token,
//     api_key, authorization, private_key, any key containing "secret" or
//     "token", plus configured ones) become the string "[REDACTED]":
//     strings, numbers (a numeric password or PIN), objects and arrays
//     (whole); true, false and null stay, as they carry no secret
//     ("token":true says a token is set);
//   - inline secrets in any string (API keys of the well-known kinds, JWTs,
//     Bearer tokens, AWS access key ids, key=value leaks, URL passwords, PEM
//     private keys) are masked, keeping a short recognisable prefix; they
//     are recognised as the text reads once cleaned, so an invisible
//     character inside or before one hides nothing (see Text);
//   - strings longer than Options.MaxString (16 KiB by default) become a small object
//     {truncated, bytes, sha256, preview, tail, artifact}, the full
//     (already redacted) text being handed to a spill callback.
//
// It reports where it changed a document as paths (never values), in the
// syntax of output shaping: a.b[2].c, with keys that are not identifiers
// quoted: a["x.y"].
//
// Documents come as raw JSON (Redactor.JSON, a single validating pass
// that returns the input itself, without allocating, when there is
// nothing to do), bounded in depth and item count (MaxDepth, MaxItems: *LimitError). Free text (log lines,
// .context documents, error messages) goes through Redactor.Text, log
// output through Redactor.Writer.
//
// Matching uses Go's regexp (RE2, linear time) anchored at positions a
// cheap byte scan has found, so ordinary text costs one pass over its
// bytes and no allocation.
package redact
