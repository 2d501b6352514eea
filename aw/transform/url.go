package transform

import (
	"errors"
	"net/netip"
	"strings"
)

// URL is a URL split as aw_transform.split_url_events splits a web event's
// "url" (with urllib.parse.urlparse), named after the data keys it writes.
type URL struct {
	Protocol   string // $protocol: the scheme, lower case
	Domain     string // $domain: the network location without a leading "www.", else the scheme ("file", "about")
	Path       string // $path
	Params     string // $params: after the last path segment's ";"
	Options    string // $options: the query, without "?"
	Identifier string // $identifier: the fragment, without "#"
}

// ErrInvalidURL is SplitURL's error for a URL that urlparse rejects (a
// network location with unbalanced or invalid brackets); aw-core's query
// fails on such a URL.
var ErrInvalidURL = errors.New("invalid IPv6 URL")

// usesParams are the schemes whose last path segment may carry ";params".
var usesParams = map[string]bool{"": true, "ftp": true, "hdl": true, "prospero": true, "http": true, "imap": true,
	"https": true, "shttp": true, "rtsp": true, "rtspu": true, "sip": true, "sips": true, "mms": true, "sftp": true, "tel": true}

// SplitURL splits u as split_url_events does, with the rules of CPython
// 3.11's urlparse: leading C0 controls and spaces are ignored, tabs and
// newlines removed, the scheme is the part before the first ":" when it
// starts with an ASCII letter and holds only letters, digits, "+", "-"
// and "."; the network location follows "//" up to "/", "?" or "#";
// brackets in it must hold an IPv6 address (or an IPvFuture one). Unlike
// CPython it does not reject non-ASCII network locations whose NFKC form
// holds a delimiter.
func SplitURL(u string) (URL, error) {
	u = strings.TrimLeft(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	if strings.ContainsAny(u, "\t\r\n") {
		u = strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(u)
	}
	var p URL
	if i := strings.IndexByte(u, ':'); i > 0 && isASCIILetter(u[0]) && isScheme(u[:i]) {
		p.Protocol, u = strings.ToLower(u[:i]), u[i+1:]
	}
	var netloc string
	if strings.HasPrefix(u, "//") {
		rest := u[2:]
		end := len(rest)
		if k := strings.IndexAny(rest, "/?#"); k >= 0 {
			end = k
		}
		netloc, u = rest[:end], rest[end:]
		open, closed := strings.Contains(netloc, "["), strings.Contains(netloc, "]")
		if open != closed {
			return URL{}, ErrInvalidURL
		}
		if open {
			_, after, _ := strings.Cut(netloc, "[")
			host, _, _ := strings.Cut(after, "]")
			if !bracketedHost(host) {
				return URL{}, ErrInvalidURL
			}
		}
	}
	if k := strings.IndexByte(u, '#'); k >= 0 {
		u, p.Identifier = u[:k], u[k+1:]
	}
	if k := strings.IndexByte(u, '?'); k >= 0 {
		u, p.Options = u[:k], u[k+1:]
	}
	if usesParams[p.Protocol] && strings.Contains(u, ";") {
		i := strings.IndexByte(u, ';')
		if slash := strings.LastIndexByte(u, '/'); slash >= 0 {
			if i = strings.IndexByte(u[slash:], ';'); i >= 0 {
				i += slash
			}
		}
		if i >= 0 {
			u, p.Params = u[:i], u[i+1:]
		}
	}
	p.Path = u
	switch {
	case netloc != "":
		p.Domain = strings.TrimPrefix(netloc, "www.")
	default:
		p.Domain = p.Protocol
	}
	return p, nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isASCIILetter(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// bracketedHost is CPython's _check_bracketed_host: an IPvFuture address
// ("v1.x") or an IPv6 one (not IPv4).
func bracketedHost(h string) bool {
	if rest, ok := strings.CutPrefix(h, "v"); ok {
		hex, tail, found := strings.Cut(rest, ".")
		if !found || hex == "" || tail == "" || strings.ContainsRune(tail, '\n') {
			return false
		}
		for i := 0; i < len(hex); i++ {
			c := hex[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Is6()
}
