//go:build !unix

package mcp

import (
	"net"
	"time"
)

// dialProbe bounds how long a client waits to reach the service.
const dialProbe = 500 * time.Millisecond

// ListenSocket serves where no Unix socket private to the user exists
// (Windows): a loopback port behind a token, both in the file at path
// (0600 in the user's own folder). A live service behind an existing file
// is ErrAlreadyServing; Close removes the file.
func ListenSocket(path string) (net.Listener, error) { return listenEndpoint(path) }

// DialService connects to the service at path (the endpoint file).
func DialService(path string) (net.Conn, error) { return dialEndpoint(path) }

// CheckSocketDir trusts the endpoint file's per-user folder here.
func CheckSocketDir(path string) error { return nil }
