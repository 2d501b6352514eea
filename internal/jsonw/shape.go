package jsonw

// Shape measures a JSON document without decoding it: how deep its arrays
// and objects nest (0 for a scalar) and how many object members and array
// elements it holds in all. It stops counting depth once it exceeds
// maxDepth (returning maxDepth+1), so it is safe on input of any nesting,
// and it never allocates. Strings are skipped, escapes included. On input
// that is not valid JSON the figures are meaningless but bounded by
// len(b); callers validate separately.
func Shape(b []byte, maxDepth int) (depth, items int) {
	d := 0
	open := false // just after '[' or '{': the next value makes it non-empty
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if open {
			open = false
			if c != ']' && c != '}' {
				items++
			}
		}
		switch c {
		case '"':
			i = SkipString(b, i) - 1 // the closing quote
		case '[', '{':
			d++
			if d > depth {
				depth = d
				if depth > maxDepth {
					return depth, items
				}
			}
			open = true
		case ']', '}':
			d--
		case ',':
			items++
		}
	}
	return depth, items
}

// DepthWithin reports whether b's arrays and objects (outside strings)
// nest at most limit deep. It validates nothing else: it is the guard to
// run before a parser that recurses without a bound (gjson).
func DepthWithin(b []byte, limit int) bool {
	depth, _ := Shape(b, limit)
	return depth <= limit
}
