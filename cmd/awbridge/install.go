package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/awbridge/awbridge/install"
)

func cmdInstall(_ context.Context, e *env, args []string) int {
	fs := newFlags(e, "install")
	dry := fs.Bool("dry-run", false, "print the unit it would write and exit")
	l, _, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge install: cannot find my own executable: "+err.Error())
		return exitUsage
	}
	unit, err := install.SystemdUserUnit(install.UnitOptions{Executable: exe, ConfigPath: l.File})
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge "+oneLine(err.Error()))
		return exitUsage
	}
	if !*dry {
		fmt.Fprintln(e.stderr, "awbridge install: installing the service arrives with `awbridge serve`; for now --dry-run shows the unit")
		return exitUsage
	}
	fmt.Fprintf(e.stdout, "# awbridge systemd user unit (~/.config/systemd/user/awbridge.service); service system here: %s\n", install.Platform())
	fmt.Fprint(e.stdout, unit)
	return exitOK
}
