package invisible

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// clean removes what StripAt removes, as the cleaners do (invalid bytes
// dropped: the cleaners' own business).
func clean[T string | []byte](s T) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := runeAt(s, i)
		if !(r == utf8.RuneError && size == 1) && !StripAt(s, i, r, size) {
			b.WriteString(string(s[i : i+size]))
		}
		i += size
	}
	return b.String()
}

// TestJoinersInPlace: real strings. Emoji ZWJ sequences and the
// non-joiner inside Persian and Hindi words stay whole; a joiner between
// Latin letters, at an edge or next to a space goes.
func TestJoinersInPlace(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"zwj between letters", "zero\u200dwidth", "zerowidth"},
		{"zwnj between Latin letters", "zero\u200cwidth", "zerowidth"},
		{"zwj in a secret word", "pass\u200dword", "password"},
		{"technologist", "👩\u200d💻", "👩\u200d💻"},
		{"family", "👨\u200d👩\u200d👧\u200d👦", "👨\u200d👩\u200d👧\u200d👦"},
		{"rainbow flag: selector before the joiner", "🏳\ufe0f\u200d🌈", "🏳\ufe0f\u200d🌈"},
		{"pirate flag: selector after", "🏴\u200d☠\ufe0f", "🏴\u200d☠\ufe0f"},
		{"astronaut with a skin tone", "🧑🏽\u200d🚀", "🧑🏽\u200d🚀"},
		{"woman facepalming: tone, sign, selector", "🤦🏼\u200d♀\ufe0f", "🤦🏼\u200d♀\ufe0f"},
		{"handshake couple", "🧑\u200d🤝\u200d🧑", "🧑\u200d🤝\u200d🧑"},
		{"heart on fire", "❤\ufe0f\u200d🔥", "❤\ufe0f\u200d🔥"},
		{"in a title", "Pair 👩\u200d💻 session — Zoom", "Pair 👩\u200d💻 session — Zoom"},
		{"emoji then letter", "👩\u200dx", "👩x"},
		{"letter then emoji", "x\u200d💻", "x💻"},
		{"emoji then space", "👩\u200d 💻", "👩 💻"},
		{"doubled joiner", "👩\u200d\u200d💻", "👩💻"},
		{"joiner behind a zero-width space", "👩\u200b\u200d💻", "👩💻"},
		{"edges", "\u200dtitle\u200d", "title"},
		{"alone", "\u200d", ""},
		{"regional indicators are not pictographs", "🇺\u200d🇳", "🇺🇳"},
		{"three tones are too many to look through", "👩🏽🏽🏽\u200d💻", "👩🏽🏽🏽💻"},
		{"Persian: I want", "می\u200cخواهم", "می\u200cخواهم"},
		{"Persian plural with a vowel sign", "کتاب\u064e\u200cها", "کتاب\u064e\u200cها"},
		{"Hindi: visible virama", "क्\u200cष", "क्\u200cष"},
		{"zwnj between scripts", "م\u200cx", "مx"},
		{"zwnj next to a space", "می \u200cخواهم", "می خواهم"},
		{"zwnj between emoji", "👩\u200c💻", "👩💻"},
		{"zwj between Devanagari letters", "क्\u200dष", "क्ष"},
		{"other format characters", "a\u200bb\u202ec\u2060d\U000e0041e", "abcde"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := clean(tc.in); got != tc.want {
				t.Errorf("clean(%+q) = %+q, want %+q", tc.in, got, tc.want)
			}
			if got := clean([]byte(tc.in)); got != tc.want {
				t.Errorf("clean([]byte(%+q)) = %+q, want %+q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzStripAt: cleaning is idempotent (a joiner kept has neighbours that
// stay), agrees for strings and bytes, leaves no joiner out of place and
// nothing else Strip removes.
func FuzzStripAt(f *testing.F) {
	for _, s := range []string{"zero\u200dwidth", "👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈", "می\u200cخواهم", "क्\u200cष",
		"👩\u200b\u200d💻", "\u200d\u200c\u200d", "🧑🏽\u200d🚀", "\xf0\x9f\x91\u200d💻", "👩\u200d\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := clean(s)
		if twice := clean(once); twice != once {
			t.Fatalf("not idempotent: %+q -> %+q -> %+q", s, once, twice)
		}
		if b := clean([]byte(s)); b != once {
			t.Fatalf("string %+q, bytes %+q", once, b)
		}
		for i, r := range once {
			if r == zwj && (!emoji(lastBase(once, i, emojiExtender)) || !emoji(firstRune(once[i+3:]))) {
				t.Fatalf("a joiner out of place survived at %d: %+q", i, once)
			}
			if r != zwj && r != zwnj && Strip(r) {
				t.Fatalf("%U survived: %+q", r, once)
			}
		}
	})
}

func firstRune(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }
