//go:build !unix

package mcp

import (
	"errors"
	"net"
)

// ListenSocket is not available here yet: Windows serves on a loopback
// port with a token file (the service issue).
func ListenSocket(path string) (net.Listener, error) {
	return nil, errors.New("unix sockets are not supported on this system yet")
}

// CheckSocketDir refuses: there is no socket to trust here yet.
func CheckSocketDir(path string) error {
	return errors.New("unix sockets are not supported on this system yet")
}
