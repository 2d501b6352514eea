// Command awbridge tells a personal AI assistant what the person at this
// desktop is doing now, from ActivityWatch, over line-oriented JSON-RPC 2.0
// and MCP. main is small: a signal context, the command table, an exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{
		args: os.Args[1:], stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		lookup: os.LookupEnv, version: version,
	})
	stop()
	os.Exit(code)
}
