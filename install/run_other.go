//go:build !windows

package install

import "context"

// RunService runs run as the body of the service: here (systemd, launchd
// or a terminal) it is just run(ctx), as those need nothing beyond the
// SIGTERM that main turns into ctx's cancellation. On Windows it also
// speaks the service control manager's protocol (see run_windows.go). It
// returns run's error. Call it once per process.
func RunService(ctx context.Context, run func(ctx context.Context) error) error {
	return run(ctx)
}
