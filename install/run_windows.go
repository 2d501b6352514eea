//go:build windows

package install

import (
	"context"
	"fmt"
	"sync"

	"github.com/kardianos/service"
)

// RunService runs run as the body of the service. When the Windows
// service control manager started this process, it speaks the manager's
// protocol (without it the manager kills the process after 30 s): run's
// ctx is cancelled when the manager stops the service, and a run that
// ends by itself stops the service. From a terminal it is just run(ctx).
// It returns run's error. Call it once per process.
func RunService(ctx context.Context, run func(ctx context.Context) error) error {
	if service.Interactive() {
		return run(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		runErr error
		done   = make(chan struct{})
		wg     sync.WaitGroup
		svc    service.Service
	)
	p := program{
		start: func() error {
			wg.Go(func() {
				defer close(done)
				runErr = run(ctx)
				if ctx.Err() == nil {
					// Ended by itself: ask the manager to stop us, so that
					// it does not show a service that serves nothing.
					_ = svc.Stop()
				}
			})
			return nil
		},
		stop: func() error {
			cancel()
			<-done
			return nil
		},
	}
	svc, err := service.New(p, &service.Config{Name: Name})
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	err = svc.Run()
	cancel()
	wg.Wait()
	if runErr != nil {
		return runErr
	}
	if err != nil {
		return fmt.Errorf("install: running as a Windows service: %w", err)
	}
	return nil
}

// program adapts two funcs to service.Interface.
type program struct{ start, stop func() error }

func (p program) Start(service.Service) error { return p.start() }
func (p program) Stop(service.Service) error  { return p.stop() }
