package redact

import (
	"bytes"
	"io"
)

// Writer returns an io.Writer that redacts what is written before passing
// it on to w, for logs: a write that is one JSON document (a zerolog
// event) goes through JSON, keeping its member order; anything else
// through Text. Strings longer than MaxString are bounded without a spill.
// It is safe for concurrent use if w is; each Write makes one Write to w.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &writer{r: r, w: w} }

type writer struct {
	r *Redactor
	w io.Writer
}

func (lw *writer) Write(p []byte) (int, error) {
	out := p
	if t := bytes.TrimLeft(p, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		if j, _, err := lw.r.JSON("", p, nil); err == nil {
			out = j
		} else {
			out = lw.text(p)
		}
	} else {
		out = lw.text(p)
	}
	if _, err := lw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (lw *writer) text(p []byte) []byte {
	if scan(lw.r, p, &lw.r.text)&(scanSecret|scanUnsafe) == 0 {
		return p
	}
	t, _ := lw.r.Text(string(p))
	return []byte(t)
}
