package jsonw

// Shape measures a JSON document without decoding or allocating: how deep
// it nests (0 for a scalar; it stops past maxDepth) and how many members
// and elements it holds. Invalid JSON gives meaningless, bounded figures.
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

// DepthWithin reports whether b nests at most limit deep: the guard before
// a parser that recurses without a bound (gjson).
func DepthWithin(b []byte, limit int) bool {
	depth, _ := Shape(b, limit)
	return depth <= limit
}
