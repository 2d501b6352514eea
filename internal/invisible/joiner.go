package invisible

import (
	"unicode"
	"unicode/utf8"
)

// A joiner's fate depends on its neighbours. Out of place it splits words
// for every program that matches text ("pass<U+200D>word"), so Strip
// removes it. StripAt keeps it in place:
//
//   - U+200D between two emoji (the first may end in U+FE0F or a skin
//     tone): an emoji ZWJ sequence (👩‍💻) falls apart without it;
//   - U+200C between two letters (combining marks may sit between) of a
//     script that spells with it (Persian "می‌خواهم", Urdu, Syriac, N'Ko,
//     Mongolian, the Brahmic scripts), as RFC 5892 recognises.
//
// A kept joiner hides at most one bit per place; secret matching looks
// through it anyway (Hidden).

const (
	zwnj = '\u200c'
	zwj  = '\u200d'
)

// StripAt reports whether r, size bytes at s[i:], is one a cleaner
// removes: Strip(r), except a joiner in place. It is true only where
// Strip(r) is, so a hot loop tests Strip (inlined) first.
func StripAt[T string | []byte](s T, i int, r rune, size int) bool {
	return Strip(r) && (!Joiner(r) || !inPlace(s, i, r, size))
}

// inPlace reports whether the joiner r at s[i:] is in place (see above).
func inPlace[T string | []byte](s T, i int, r rune, size int) bool {
	next, _ := runeAt(s, i+size)
	if r == zwj {
		return emoji(next) && emoji(lastBase(s, i, emojiExtender))
	}
	sc := joiningScript(next)
	return sc != nil && unicode.Is(sc, lastBase(s, i, inheritedMark))
}

// Joiner reports the zero-width joiner and non-joiner, which StripAt
// keeps in place.
func Joiner(r rune) bool { return r&^1 == zwnj }

// maxSkip bounds how many characters lastBase steps back over.
const maxSkip = 2

// lastBase returns the character before s[i], stepping back over at most
// maxSkip characters that skip reports (RuneError when there is none).
func lastBase[T string | []byte](s T, i int, skip func(rune) bool) rune {
	for range maxSkip + 1 {
		r, size := runeBefore(s, i)
		if size == 0 || !skip(r) {
			return r
		}
		i -= size
	}
	return utf8.RuneError
}

// emojiExtender: a presentation selector or a skin tone.
func emojiExtender(r rune) bool {
	return r == 0xfe0f || r == 0xfe0e || 0x1f3fb <= r && r <= 0x1f3ff
}

// inheritedMark: a combining mark without a script of its own.
func inheritedMark(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me) && unicode.Is(unicode.Inherited, r)
}

// joinerScripts write with the zero-width non-joiner (see above).
var joinerScripts = []*unicode.RangeTable{
	unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian,
	unicode.Devanagari, unicode.Bengali, unicode.Gurmukhi, unicode.Gujarati, unicode.Oriya,
	unicode.Tamil, unicode.Telugu, unicode.Kannada, unicode.Malayalam, unicode.Sinhala,
}

// joiningScript returns the script of r when r is a letter or mark of one
// of joinerScripts, else nil.
func joiningScript(r rune) *unicode.RangeTable {
	if r < 0x600 || !unicode.In(r, unicode.L, unicode.M) {
		return nil
	}
	for _, sc := range joinerScripts {
		if unicode.Is(sc, r) {
			return sc
		}
	}
	return nil
}

// emoji reports Extended_Pictographic (emoji-data.txt, stable since
// Unicode 13): what grapheme rule GB11 joins across a ZWJ.
func emoji(r rune) bool { return r >= 0xa9 && unicode.Is(extendedPictographic, r) }

var extendedPictographic = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00a9, 0x00a9, 1}, {0x00ae, 0x00ae, 1}, {0x203c, 0x203c, 1}, {0x2049, 0x2049, 1},
		{0x2122, 0x2122, 1}, {0x2139, 0x2139, 1}, {0x2194, 0x2199, 1}, {0x21a9, 0x21aa, 1},
		{0x231a, 0x231b, 1}, {0x2328, 0x2328, 1}, {0x2388, 0x2388, 1}, {0x23cf, 0x23cf, 1},
		{0x23e9, 0x23f3, 1}, {0x23f8, 0x23fa, 1}, {0x24c2, 0x24c2, 1}, {0x25aa, 0x25ab, 1},
		{0x25b6, 0x25b6, 1}, {0x25c0, 0x25c0, 1}, {0x25fb, 0x25fe, 1}, {0x2600, 0x2605, 1},
		{0x2607, 0x2612, 1}, {0x2614, 0x2685, 1}, {0x2690, 0x2705, 1}, {0x2708, 0x2712, 1},
		{0x2714, 0x2714, 1}, {0x2716, 0x2716, 1}, {0x271d, 0x271d, 1}, {0x2721, 0x2721, 1},
		{0x2728, 0x2728, 1}, {0x2733, 0x2734, 1}, {0x2744, 0x2744, 1}, {0x2747, 0x2747, 1},
		{0x274c, 0x274c, 1}, {0x274e, 0x274e, 1}, {0x2753, 0x2755, 1}, {0x2757, 0x2757, 1},
		{0x2763, 0x2767, 1}, {0x2795, 0x2797, 1}, {0x27a1, 0x27a1, 1}, {0x27b0, 0x27b0, 1},
		{0x27bf, 0x27bf, 1}, {0x2934, 0x2935, 1}, {0x2b05, 0x2b07, 1}, {0x2b1b, 0x2b1c, 1},
		{0x2b50, 0x2b50, 1}, {0x2b55, 0x2b55, 1}, {0x3030, 0x3030, 1}, {0x303d, 0x303d, 1},
		{0x3297, 0x3297, 1}, {0x3299, 0x3299, 1},
	},
	R32: []unicode.Range32{
		{0x1f000, 0x1f0ff, 1}, {0x1f10d, 0x1f10f, 1}, {0x1f12f, 0x1f12f, 1}, {0x1f16c, 0x1f171, 1},
		{0x1f17e, 0x1f17f, 1}, {0x1f18e, 0x1f18e, 1}, {0x1f191, 0x1f19a, 1}, {0x1f1ad, 0x1f1e5, 1},
		{0x1f201, 0x1f20f, 1}, {0x1f21a, 0x1f21a, 1}, {0x1f22f, 0x1f22f, 1}, {0x1f232, 0x1f23a, 1},
		{0x1f23c, 0x1f23f, 1}, {0x1f249, 0x1f3fa, 1}, {0x1f400, 0x1f53d, 1}, {0x1f546, 0x1f64f, 1},
		{0x1f680, 0x1f6ff, 1}, {0x1f774, 0x1f77f, 1}, {0x1f7d5, 0x1f7ff, 1}, {0x1f80c, 0x1f80f, 1},
		{0x1f848, 0x1f84f, 1}, {0x1f85a, 0x1f85f, 1}, {0x1f888, 0x1f88f, 1}, {0x1f8ae, 0x1f8ff, 1},
		{0x1f90c, 0x1f93a, 1}, {0x1f93c, 0x1f945, 1}, {0x1f947, 0x1faff, 1}, {0x1fc00, 0x1fffd, 1},
	},
}

// runeAt decodes the character at s[i:] (RuneError and 0 at the end).
func runeAt[T string | []byte](s T, i int) (rune, int) {
	if i >= len(s) {
		return utf8.RuneError, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
}

// runeBefore decodes the character that ends at s[i] (RuneError and 0 at
// the start).
func runeBefore[T string | []byte](s T, i int) (rune, int) {
	if i <= 0 {
		return utf8.RuneError, 0
	}
	return utf8.DecodeLastRuneInString(string(s[max(0, i-utf8.UTFMax):i]))
}
