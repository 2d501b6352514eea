package aw

import "strings"

// Server names the ActivityWatch server that answered /api/0/info.
type Server struct {
	// Rust: aw-server-rust (the Tauri edition, Android), whose version
	// ends in " (rust)"; else the Python aw-server (the Qt edition's
	// default) or a server speaking its API.
	Rust bool
	// Version is its version ("v0.14.0"), "" when it did not send one
	// awbridge can show (at most 32 of [0-9A-Za-z.+-], starting "v" or a
	// digit: the text is the server's).
	Version string
}

// Server tells which server sent i.
func (i Info) Server() Server {
	v, rust := strings.CutSuffix(strings.TrimSpace(i.Version), " (rust)")
	if !plainVersion(v) {
		v = ""
	}
	return Server{Rust: rust, Version: v}
}

// String is how a person knows it: "aw-server-rust v0.14.0",
// "aw-server (Python) v0.13.2".
func (s Server) String() string {
	name := "aw-server (Python)"
	if s.Rust {
		name = "aw-server-rust"
	}
	if s.Version == "" {
		return name + " (version unknown)"
	}
	return name + " " + s.Version
}

// plainVersion reports whether v looks like a version and nothing else.
func plainVersion(v string) bool {
	if v == "" || len(v) > 32 || !(v[0] == 'v' || v[0] >= '0' && v[0] <= '9') {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// LastServer returns the server of the last /api/0/info read that
// succeeded, and false before one did. Safe for concurrent use.
func (c *Client) LastServer() (Server, bool) {
	if s := c.server.Load(); s != nil {
		return *s, true
	}
	return Server{}, false
}
