package activity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"time"
)

// MaxCursorLen bounds a cursor argument (a cursor is about 80 bytes).
const MaxCursorLen = 200

// cursor is where a timeline page ends: the period it pages through, its
// min_block_s, and the time the next page starts at.
type cursor struct {
	label      string
	start, end time.Time // end is ignored when open
	open       bool      // the period ends at now, on every page
	weekStart  bool      // the period is a week (its WeekStart is shown)
	minBlockS  int
	pos        time.Time
	host       [8]byte // hostMark of the host asked
}

// hostMark names a host argument in a cursor, in fixed size.
func hostMark(host string) (m [8]byte) {
	sum := sha256.Sum256([]byte(host))
	copy(m[:], sum[:])
	return m
}

const (
	cursorVersion = 2
	cursorKind    = 't'
	cursorMACLen  = 16
	maxLabelLen   = 32
)

// errBadCursor is the one answer to a cursor that does not verify.
func errBadCursor() error {
	return specError("cursor", "is not a cursor this server gave (altered, truncated, or from before a restart): call again without cursor")
}

// encodeCursor signs c with key.
func encodeCursor(key []byte, c cursor) string {
	b := []byte{cursorVersion, cursorKind, 0}
	if c.open {
		b[2] |= 1
	}
	if c.weekStart {
		b[2] |= 2
	}
	b = binary.BigEndian.AppendUint64(b, uint64(c.start.UnixMilli()))
	b = binary.BigEndian.AppendUint64(b, uint64(c.end.UnixMilli()))
	b = binary.BigEndian.AppendUint64(b, uint64(c.pos.UnixMicro())) // blocks end on microseconds
	b = binary.BigEndian.AppendUint32(b, uint32(c.minBlockS))
	b = append(b, c.host[:]...)
	label := c.label
	if len(label) > maxLabelLen {
		label = label[:maxLabelLen]
	}
	b = append(b, byte(len(label)))
	b = append(b, label...)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	b = m.Sum(b)[:len(b)+cursorMACLen]
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor verifies and reads a cursor.
func decodeCursor(key []byte, s string) (cursor, error) {
	if len(s) > MaxCursorLen {
		return cursor{}, errBadCursor()
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	const fixed = 3 + 8 + 8 + 8 + 4 + 8 + 1
	if err != nil || len(b) < fixed+cursorMACLen {
		return cursor{}, errBadCursor()
	}
	body, mac := b[:len(b)-cursorMACLen], b[len(b)-cursorMACLen:]
	m := hmac.New(sha256.New, key)
	m.Write(body)
	if !hmac.Equal(m.Sum(nil)[:cursorMACLen], mac) {
		return cursor{}, errBadCursor()
	}
	if body[0] != cursorVersion || body[1] != cursorKind || int(body[fixed-1]) != len(body)-fixed {
		return cursor{}, errBadCursor()
	}
	ms := func(i int) time.Time { return time.UnixMilli(int64(binary.BigEndian.Uint64(body[i:]))) }
	c := cursor{open: body[2]&1 != 0, weekStart: body[2]&2 != 0, start: ms(3), end: ms(11),
		pos:       time.UnixMicro(int64(binary.BigEndian.Uint64(body[19:]))),
		minBlockS: int(binary.BigEndian.Uint32(body[27:])), label: string(body[fixed:])}
	copy(c.host[:], body[31:39])
	if c.pos.Before(c.start) || (!c.open && (c.pos.After(c.end) || !c.start.Before(c.end))) || c.minBlockS > MaxMinBlockS {
		return cursor{}, errBadCursor()
	}
	return c, nil
}

// names reports whether spec is the period the cursor pages through: the
// same label, and for a range the same start and an end no earlier than
// the cursor's (a range reaching past now was cut to now).
func (c cursor) names(spec Spec) bool {
	if spec.String() != c.label {
		return false
	}
	if spec.label != LabelCustom || spec.startWall != nil || spec.endWall != nil {
		return true // a local time is placed on the calendar only later
	}
	return spec.start.Equal(c.start) && !spec.end.Before(c.end)
}
