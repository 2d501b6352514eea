// Command awbridge tells a personal AI assistant what the person at this
// desktop is doing now, from ActivityWatch, over line-oriented JSON-RPC 2.0
// and MCP. main is small: a signal context, the command table, an exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// A release sets these at link time (-ldflags "-X main.version=... -X
// main.commit=... -X main.date=..."); otherwise they come from what Go
// records in the binary (buildStamp).
var version, commit, date string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	info, _ := debug.ReadBuildInfo()
	v, built := buildStamp(version, commit, date, info)
	code := run(ctx, &env{
		args: os.Args[1:], stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		lookup: os.LookupEnv, version: v, built: built,
	})
	stop()
	os.Exit(code)
}
