//go:build !unix

package main

import "os"

// pollable is a no-op where non-blocking pipes are not supported.
func pollable(f *os.File, _ string) (*os.File, func()) { return f, func() {} }
