// Package redact owns bounding and redaction: everything that leaves
// awbridge (tool results, artifacts, state files, logs) passes through a
// Redactor first. It
//
//   - replaces values under sensitive keys (password, passphrase, secret,
//     token, api_key, authorization, private_key, keys containing
//     "secret" or "token", configured ones) by "[REDACTED]": strings,
//     numbers (a PIN) and whole objects and arrays; true, false and null
//     stay ("token":true says a token is set);
//   - masks inline secrets in any string (well-known API keys, JWTs,
//     Bearer tokens, AWS key ids, key=value leaks, URL passwords, PEM
//     private keys), keeping a short prefix, as the text reads once
//     cleaned: an invisible character inside one hides nothing (see Text);
//   - replaces strings longer than Options.MaxString (16 KiB by default)
//     by {truncated, bytes, sha256, preview, tail, artifact}, handing the
//     full, redacted text to a spill callback.
//
// It reports where it changed a document as paths (never values) in the
// syntax of output shaping: a.b[2].c, a["x.y"]. Documents go through
// Redactor.JSON (one validating pass, bounded by MaxDepth and MaxItems,
// returning the input itself when nothing changes), free text through
// Redactor.Text, logs through Redactor.Writer. Patterns (RE2) run only
// where a cheap byte scan found a candidate, so ordinary text costs one
// pass and no allocation.
package redact
