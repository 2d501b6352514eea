package redact

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/awbridge/awbridge/internal/invisible"
)

// cut records that hidden characters were removed from a text at offset
// at of its view; sum counts the bytes removed there and at every earlier
// cut.
type cut struct{ at, sum int }

// view is a text as it reads once cleaned: without its hidden characters.
// The patterns run over the view, so a hidden character inside a secret
// does not split it; and since the reader cannot see one either, a place
// where hidden characters were cut out still separates words, so that a
// secret is not glued to the word before it ("key<U+200B>sk-…" is a key
// after a word, as it was before cleaning).
type view struct {
	text string
	cuts []cut // ascending by at, one per run of hidden characters
}

func newView(s string) view {
	var b strings.Builder
	b.Grow(len(s))
	var cuts []cut
	removed := 0
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if (c != utf8.RuneError || size != 1) && invisible.Hidden(c) {
			at := b.Len()
			removed += size
			if n := len(cuts); n > 0 && cuts[n-1].at == at {
				cuts[n-1].sum = removed
			} else {
				cuts = append(cuts, cut{at: at, sum: removed})
			}
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return view{text: b.String(), cuts: cuts}
}

// cutAt reports whether hidden characters were cut out at offset j.
func cutAt(cuts []cut, j int) bool {
	k := sort.Search(len(cuts), func(k int) bool { return cuts[k].at >= j })
	return k < len(cuts) && cuts[k].at == j
}

// removedBefore is how many bytes were cut out before view offset j
// (those cut out at j included when at is true).
func removedBefore(cuts []cut, j int, at bool) int {
	k := sort.Search(len(cuts), func(k int) bool {
		if at {
			return cuts[k].at > j
		}
		return cuts[k].at >= j
	})
	if k == 0 {
		return 0
	}
	return cuts[k-1].sum
}

// origStart maps the start of a span of the view to the text: after the
// hidden characters cut out right before it.
func origStart(cuts []cut, j int) int { return j + removedBefore(cuts, j, true) }

// origEnd maps the end of a span of the view to the text: before the
// hidden characters cut out right after it.
func origEnd(cuts []cut, j int) int { return j + removedBefore(cuts, j, false) }
