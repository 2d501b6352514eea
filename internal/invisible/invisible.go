// Package invisible is awbridge's one definition of an invisible
// character: what the cleaners remove from untrusted text and what secret
// matching looks through. Invisible are Unicode's Cc and Cf (controls,
// bidi overrides and isolates, zero-width spaces, the BOM, tag
// characters), the other default-ignorables and variation selectors
// (U+034F, Hangul fillers, U+17B4-5, U+180B-F, U+FE00-F, U+E0100-EF,
// reserved ranges), U+2028-9 and the noncharacters.
//
// Strip reports those a cleaner removes; Kept those it keeps although
// invisible: tab, newline and the presentation selectors U+FE0E-F (most
// emoji need U+FE0F). The other variation selectors go: 256 values can
// hide a byte after every visible character. The joiners go unless in
// place, which only their neighbours tell: cleaners ask StripAt
// (joiner.go). Hidden reports all of them, joiners included: secret
// matching reads a text without them.
package invisible

import "unicode"

// Strip reports whether r is an invisible character a cleaner removes.
// Printable ASCII, CJK and Hangul are answered inline, the common scripts
// a few comparisons later, the rest with Unicode's tables.
func Strip(r rune) bool {
	if uint32(r-0x20) < 0x7f-0x20 || uint32(r-0x3165) < 0xfdd0-0x3165 {
		return false
	}
	return strip(r)
}

// strip is Strip beyond its inline fast path: outside U+E0000-U+E0FFF the
// default-ignorables are few and listed, so only Cf needs a table.
func strip(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r < 0x7f:
		return false
	case r <= 0x9f: // DEL and C1
		return true
	case r < 0x600:
		return r == 0xad || r == 0x34f
	case r < 0x10000:
		switch {
		case 0x2070 <= r && r < 0xfdd0:
			return r == 0x3164
		case r == 0x200c || r == 0x200d: // out of place; StripAt keeps them in place
			return true
		case r == 0xfe0e || r == 0xfe0f:
			return false
		case 0x2010 <= r && r <= 0x2027 || 0x2030 <= r && r <= 0x205f: // dashes, quotes, marks
			return false
		case r == 0x2028 || r == 0x2029 || r == 0x2065 || r == 0x115f || r == 0x1160 || r == 0x17b4 || r == 0x17b5 || r == 0xffa0,
			0x180b <= r && r <= 0x180f, 0xfdd0 <= r && r <= 0xfdef, 0xfe00 <= r && r <= 0xfe0f, 0xfff0 <= r && r <= 0xfff8, r >= 0xfffe:
			return true
		}
		return unicode.Is(unicode.Cf, r)
	case r < 0xe0000:
		return r&0xfffe == 0xfffe || unicode.Is(unicode.Cf, r)
	}
	return r < 0xe1000 || r&0xfffe == 0xfffe
}

// Kept reports the invisible characters a cleaner always keeps: tab,
// newline and the presentation selectors.
func Kept(r rune) bool {
	return r == '\t' || r == '\n' || r&^1 == 0xfe0e
}

// Hidden reports the characters secret matching looks through: Strip's
// (joiners included) and the presentation selectors, not tab or newline.
func Hidden(r rune) bool {
	return Strip(r) || r&^1 == 0xfe0e
}
