//go:build unix

package main

import (
	"os"
	"syscall"

	"github.com/mattn/go-isatty"
)

// pollable returns f as a non-blocking *os.File served by Go's poller when
// it is a pipe or socket (not a terminal): reads and writes then park a
// goroutine instead of a thread, which costs less CPU per message and
// lets deadlines interrupt them. restore puts the flag back at exit.
//
// O_NONBLOCK belongs to the open file description: a client that spawns
// `awbridge stdio` gives it pipe ends of its own, so nobody else sees the
// flag; a process sharing the same description (a shell pipeline feeding
// several readers) would, until restore runs or, after a kill -9, never.
// Terminals are left alone for that reason.
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
