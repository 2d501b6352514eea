package redact

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/awbridge/awbridge/internal/jsonw"
	"github.com/awbridge/awbridge/internal/text"
)

// bound returns the JSON summary that replaces s (already redacted), a
// string longer than MaxString, and spills s.
func (r *Redactor) bound(path, s string, spill SpillFunc) []byte {
	sum := sha256.Sum256([]byte(s))
	b := struct {
		Truncated bool    `json:"truncated"`
		Bytes     int     `json:"bytes"`
		SHA256    string  `json:"sha256"`
		Preview   string  `json:"preview"`
		Tail      string  `json:"tail"`
		Artifact  *string `json:"artifact"` // nil when none was written
	}{true, len(s), hex.EncodeToString(sum[:]), text.Head(s, r.preview), text.Tail(s, r.tail), nil}
	if spill != nil {
		if uri := spill(path, s); uri != "" {
			b.Artifact = &uri
		}
	}
	out, _ := jsonw.Marshal(b) // strings and numbers cannot fail
	return out
}
