package mcp

import (
	"bytes"
	"errors"
	"io"
)

// idPrefixBytes is how much of an over-long line is kept to look for its id.
const idPrefixBytes = 4 << 10

// minReadBuffer is the initial buffer size of a lineReader (smaller when the
// line limit is smaller).
const minReadBuffer = 4 << 10

// maxEmptyReads bounds consecutive (0, nil) reads before giving up, as
// bufio does.
const maxEmptyReads = 100

// lineReader splits a stream into lines of at most max bytes (terminator
// excluded) while holding at most max+2 bytes of the stream, however long a
// line is. It is not safe for concurrent use.
type lineReader struct {
	r   io.Reader
	max int

	buf        []byte // buffered bytes are buf[start:end]
	start, end int
	err        error // sticky read error, reported once the buffer is drained

	// discarding means the current line was reported too long and the
	// bytes up to its '\n' must be dropped.
	discarding bool
	prefix     []byte // the first idPrefixBytes of the last too-long line
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max < 1 {
		max = 1
	}
	size := minReadBuffer
	if max+2 < size {
		size = max + 2
	}
	return &lineReader{r: r, max: max, buf: make([]byte, size)}
}

// next returns the next non-blank line without its terminator. The slice is
// valid until the following call. When tooLong is true the line exceeded the
// limit: line then holds at most its first idPrefixBytes bytes (possibly
// fewer, or none, when the whole line was not seen), and the rest of the line
// is skipped by later calls. err is io.EOF at the end of input, or the
// reader's error; no line is returned with an error.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	empty := 0
	for {
		data := lr.buf[lr.start:lr.end]
		i := bytes.IndexByte(data, '\n')
		switch {
		case lr.discarding && i >= 0:
			lr.start += i + 1
			lr.discarding = false
			continue
		case lr.discarding:
			lr.start, lr.end = 0, 0
		case i >= 0:
			lr.start += i + 1
			if l, long, ok := lr.line(data[:i]); ok {
				return l, long, nil
			}
			continue
		case len(data) > lr.max+1:
			// Even without a trailing '\r' the content exceeds the limit:
			// report now, skip the rest later.
			lr.discarding = true
			lr.start, lr.end = 0, 0
			return lr.keepPrefix(data), true, nil
		case lr.err != nil:
			lr.start, lr.end = 0, 0
			if l, long, ok := lr.line(data); ok {
				return l, long, nil
			}
		}
		if lr.err != nil {
			lr.discarding = false
			return nil, false, lr.err
		}
		n, err := lr.fill()
		if err != nil {
			return nil, false, err
		}
		if empty++; n > 0 || lr.err != nil {
			empty = 0
		} else if empty > maxEmptyReads {
			return nil, false, io.ErrNoProgress
		}
	}
}

// line reports a line (its '\n' cut off): too long, or not blank (ok).
func (lr *lineReader) line(l []byte) ([]byte, bool, bool) {
	if n := len(l); n > 0 && l[n-1] == '\r' {
		l = l[:n-1]
	}
	if len(l) > lr.max {
		return lr.keepPrefix(l), true, true
	}
	return l, false, len(bytes.TrimLeft(l, " \t\r")) > 0
}

// fill makes room and reads once, returning the byte count. It returns an
// error only for a broken reader contract; read errors are stored in lr.err.
func (lr *lineReader) fill() (int, error) {
	if lr.start > 0 {
		n := copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start, lr.end = 0, n
	}
	if lr.end == len(lr.buf) {
		// Grow, never beyond max+2: enough for max content bytes, a '\r'
		// and the '\n' (next reports a longer line before).
		nb := make([]byte, min(2*len(lr.buf), lr.max+2))
		copy(nb, lr.buf[:lr.end])
		lr.buf = nb
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	if n < 0 || n > len(lr.buf)-lr.end {
		return 0, errors.New("line reader: invalid read count")
	}
	lr.end += n
	if err != nil {
		lr.err = err
	}
	return n, nil
}

// keepPrefix copies the start of an over-long line into lr.prefix (the
// buffer is about to be reused) and returns it.
func (lr *lineReader) keepPrefix(l []byte) []byte {
	if len(l) > idPrefixBytes {
		l = l[:idPrefixBytes]
	}
	lr.prefix = append(lr.prefix[:0], l...)
	return lr.prefix
}
