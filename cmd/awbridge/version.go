package main

import (
	"context"
	"fmt"
)

func cmdVersion(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "version")
	acceptConfig(fs)
	if code := parse(fs, args); code >= 0 {
		return code
	}
	fmt.Fprintln(e.stdout, "awbridge "+e.version)
	return exitOK
}
