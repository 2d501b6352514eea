package artifacts

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadArtifact writes arbitrary bytes as a call's artifacts and reads
// them back with an arbitrary mode and max_bytes: WriteCall stores them
// byte for byte, and Read returns a contiguous part of the file at
// Info.Offset (the start for get and head, the end for tail), at most the
// effective max_bytes long, Truncated exactly when it is not the whole
// file, and never splitting a UTF-8 sequence of a valid UTF-8 file. A
// mode other than get, head, tail or "" is ErrInvalidMode.
func FuzzReadArtifact(f *testing.F) {
	for _, c := range []struct {
		data string
		mode string
		max  int16
	}{
		{"[LEGEND]\nkey=value\n[CONTENT]\nnow.app=Code\n", "get", 0},
		{"héllo wörld ✓ 😀 end", "tail", 7},
		{"héllo wörld ✓ 😀 end", "head", 9},
		{"😀😀😀", "tail", 5},
		{"😀😀😀", "get", 3},
		{"", "tail", 1},
		{"\xff\xfe\xf0\x9f", "tail", 2},
		{strings.Repeat("x", 5000), "", -1},
		{"abc", "TAIL", 1},
		{"abc", "tail\x00", 1},
	} {
		f.Add([]byte(c.data), c.mode, c.max)
	}
	s := newStore(f, Options{})
	f.Fuzz(func(t *testing.T, data []byte, mode string, max int16) {
		uriContext, uriJSON, err := s.WriteCall("fuzz", "span", data, data)
		if err != nil {
			if len(data) > MaxFileBytes && errors.Is(err, ErrTooLarge) {
				return
			}
			t.Fatalf("WriteCall: %v", err)
		}
		for _, uri := range []string{uriContext, uriJSON} {
			got, info, err := s.Read(uri, Mode(mode), int(max))
			switch mode {
			case "", "get", "head", "tail":
			default:
				if !errors.Is(err, ErrInvalidMode) {
					t.Fatalf("mode %q: %v", mode, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read(%s, %q, %d): %v", uri, mode, max, err)
			}
			limit := int(max)
			if limit <= 0 || limit > MaxReadBytes {
				limit = MaxReadBytes
			}
			if info.URI != uri || info.Bytes != int64(len(data)) || len(got) > limit || info.Offset < 0 || info.Offset > int64(len(data)) {
				t.Fatalf("Read(%q, %d) of %d bytes: %d bytes, %+v", mode, max, len(data), len(got), info)
			}
			if !bytes.Equal(got, data[info.Offset:info.Offset+int64(len(got))]) {
				t.Fatalf("Read returned %q, not the file's bytes at %d", got, info.Offset)
			}
			if info.Truncated != (len(got) < len(data)) {
				t.Fatalf("Truncated %v for %d of %d bytes", info.Truncated, len(got), len(data))
			}
			if mode == "tail" && info.Offset+int64(len(got)) != int64(len(data)) {
				t.Fatalf("tail ends at %d of %d", info.Offset+int64(len(got)), len(data))
			}
			if mode != "tail" && info.Offset != 0 {
				t.Fatalf("%q starts at %d", mode, info.Offset)
			}
			if utf8.Valid(data) && !utf8.Valid(got) {
				t.Fatalf("Read split a UTF-8 sequence: %q of %q", got, data)
			}
			if len(data) > 0 && len(got) == 0 && limit >= utf8.UTFMax {
				t.Fatalf("Read(%q, %d) returned nothing of %d bytes", mode, max, len(data))
			}
		}
	})
}
