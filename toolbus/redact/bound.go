package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/internal/text"
)

// bounded is the summary that replaces a string longer than MaxString.
type bounded struct {
	bytes         int
	sha256        string
	preview, tail string
	artifact      string // "" when none
}

// bound summarises s (already redacted) and spills it.
func (r *Redactor) bound(path, s string, spill SpillFunc) bounded {
	sum := sha256.Sum256([]byte(s))
	b := bounded{
		bytes:   len(s),
		sha256:  hex.EncodeToString(sum[:]),
		preview: text.Head(s, r.preview),
		tail:    text.Tail(s, r.tail),
	}
	if spill != nil {
		b.artifact = spill(path, s)
	}
	return b
}

// appendJSON appends the summary as a JSON object.
func (b bounded) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"truncated":true,"bytes":`...)
	dst = strconv.AppendInt(dst, int64(b.bytes), 10)
	dst = append(dst, `,"sha256":"`...)
	dst = append(dst, b.sha256...)
	dst = append(dst, `","preview":`...)
	dst = jsonw.AppendString(dst, b.preview)
	dst = append(dst, `,"tail":`...)
	dst = jsonw.AppendString(dst, b.tail)
	dst = append(dst, `,"artifact":`...)
	if b.artifact == "" {
		dst = append(dst, "null"...)
	} else {
		dst = jsonw.AppendString(dst, b.artifact)
	}
	return append(dst, '}')
}
