package invisible

import (
	"testing"
	"unicode"
)

// definition is the package documentation, spelled without fast paths.
func definition(r rune) bool {
	if Kept(r) {
		return false
	}
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r) ||
		r == 0x2028 || r == 0x2029 || 0xfdd0 <= r && r <= 0xfdef || r&0xfffe == 0xfffe
}

// TestStripMatchesItsDefinition: the fast paths of Strip agree with its
// definition for every rune.
func TestStripMatchesItsDefinition(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := Strip(r), definition(r); got != want {
			t.Fatalf("Strip(%U) = %v, want %v", r, got, want)
		}
		if Hidden(r) != (Strip(r) || Kept(r) && r != '\t' && r != '\n') {
			t.Fatalf("Hidden(%U) = %v", r, Hidden(r))
		}
	}
}

// TestDefaultIgnorablesAreInvisible: the characters a reviewer found
// slipping through, which Unicode calls default-ignorable.
func TestDefaultIgnorablesAreInvisible(t *testing.T) {
	for _, r := range []rune{0x34f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180b, 0x180e, 0x180f, 0x3164, 0xfe00, 0xfe0d, 0xffa0,
		0xe0100, 0xe01ef, 0x200b, 0x202e, 0xe0041, 0xad, 0x2028} {
		if !Strip(r) || !Hidden(r) {
			t.Errorf("%U: Strip %v, Hidden %v, want both", r, Strip(r), Hidden(r))
		}
	}
	for _, r := range []rune{0xfe0e, 0xfe0f} {
		if Strip(r) || !Hidden(r) {
			t.Errorf("%U: Strip %v, Hidden %v, want kept and hidden", r, Strip(r), Hidden(r))
		}
	}
	for _, r := range []rune{0x200c, 0x200d} { // kept only in place: StripAt
		if !Strip(r) || !Hidden(r) || Kept(r) {
			t.Errorf("%U: Strip %v, Hidden %v, Kept %v, want stripped out of place and hidden", r, Strip(r), Hidden(r), Kept(r))
		}
	}
}
