// Package shape owns output shaping, the `output` argument of every tool
// call: `output {path, pick, omit, map, missing, default}`. The tool bus
// parses the spec once per call with [Parse] and applies it to the tool's
// result's JSON bytes with [Spec.ApplyRaw], which decodes only the part
// the spec selects.
//
// # Stages
//
// A spec runs its stages in a fixed order, each on the output of the one
// before:
//
//  1. path selects a value inside the result (syntax below); the empty path
//     selects the whole result.
//  2. pick keeps only the listed keys of an object. On an array it applies
//     to each element that is an object. Other values pass unchanged.
//     Keys are literal: "a.b" picks the key "a.b", not a nested value.
//     A listed key the object does not have is simply absent from the
//     output: it is not missing data.
//  3. omit drops the listed keys, with the same rules as pick.
//  4. map is a nested spec. On an array it is applied to each element, and
//     an element whose nested spec answers "undefined" (see missing) is
//     dropped from the array. On any other value (object, scalar, null) it
//     is applied to that value itself, so map also chains a second shaping
//     step.
//
// # Missing data
//
// Data is missing when the path cannot be followed: an absent key, an index
// out of range, a key asked of an array or any step into a string, number,
// boolean or null. A null that is present is a value, not missing. When the
// data at the path is missing:
//
//   - with default set, the default replaces the missing data and the
//     remaining stages (pick, omit, map) shape it like the data it replaces;
//   - else missing decides:
//     "error" (the default): ApplyRaw returns a *[MissingError] naming the
//     path, e.g. rows[3].id;
//     "null": the result is null;
//     "undefined": the result is left out ([Result].Omit; inside map, the
//     element is dropped);
//     "empty": an empty value of the kind the spec expects: [] when the spec
//     has map, else {} when it has pick or omit, else null (with only a path
//     the expected kind is unknown, and null is JSON's empty value).
//
// The results of "null", "undefined" and "empty" are final: the remaining
// stages do not run on them.
//
// # Path syntax
//
// See [PathSyntax]. A bare segment (`a.b`) or a bracketed integer (`[0]`,
// `[-1]`) that is an integer indexes an array (negative counts from the end:
// -1 is the last element) and is a key on an object (`a.0` and `a[0]` look
// up the key "0" on an object). A quoted segment (`["key.with.dots"]`,
// `['x']`, JSON escapes) is always a key, never an index.
//
// # Concurrency and memory
//
// A [Spec] and a [Path] are immutable after parsing and safe for concurrent
// use. ApplyRaw never mutates its input; the value it returns shares
// structure with the spec's default, so treat it as read-only.
package shape
