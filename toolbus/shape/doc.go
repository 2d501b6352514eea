// Package shape owns output shaping, the `output` argument of every tool
// call: `output {path, pick, omit, map, missing, default}`, whose
// semantics docs/tool-bus.md ("Output shaping") states for users. The
// tool bus parses the spec once per call with [Parse] and applies it to
// the result's JSON bytes with [Spec.ApplyRaw], which decodes only the
// part the spec selects.
//
// The stages run in a fixed order (path, pick, omit, map), each on the
// output of the one before. When the path cannot be followed, default
// replaces the missing data and the remaining stages shape it; else
// missing decides: "error" (a *[MissingError] naming the path), "null",
// "undefined" ([Result].Omit; inside map the element is dropped) or
// "empty" ([] with map, {} with pick or omit, else null), final answers
// the remaining stages do not touch.
//
// A [Spec] and a [Path] are immutable after parsing and safe for
// concurrent use. ApplyRaw never mutates its input; its result shares
// structure with the spec's default: treat it as read-only.
package shape
