//go:build unix

package main

import (
	"os"
	"syscall"

	"github.com/mattn/go-isatty"
)

// pollable returns f as a non-blocking *os.File served by Go's poller when
// it is a pipe or socket: reads and writes then park a goroutine instead
// of a thread (less CPU per message). restore puts the flag back at exit.
// O_NONBLOCK belongs to the open file description, which others may
// share: terminals are left alone for that reason.
func pollable(f *os.File, name string) (rw *os.File, restore func()) {
	fd := f.Fd()
	if isatty.IsTerminal(fd) {
		return f, func() {}
	}
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		return f, func() {}
	}
	return os.NewFile(fd, name), func() { _ = syscall.SetNonblock(int(fd), false) }
}
