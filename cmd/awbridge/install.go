package main

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/health/protect"
	"github.com/awbridge/awbridge/install"
)

// runInstall installs (or updates) the service that runs
// `<this binary> serve --config <config file>`; --dry-run prints the unit
// it would write instead and changes nothing.
func runInstall(_ context.Context, e *env, args []string, d serviceDeps) int {
	fs := newFlags(e, "install")
	system := fs.Bool("system", false, "install a system-wide service (needs root) instead of the per-user one")
	dry := fs.Bool("dry-run", false, "print the unit it would write and change nothing")
	l, _, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	exe, err := d.executable()
	if err != nil {
		return fail(e, "install", fmt.Errorf("cannot find my own executable: %w", err), exitUsage)
	}
	spec := install.Spec{System: *system, GOOS: d.goos, Home: homeDir(e, d.goos), Executable: exe}
	var acct account
	if spec.System && d.goos != "windows" {
		if acct, err = systemAccount(e, d); err != nil {
			return fail(e, "install", err, exitUsage)
		}
		spec.User = acct.name
		// The service has no login session (no XDG_RUNTIME_DIR): it is
		// told where to listen, the place clients look second.
		spec.Socket = config.ServiceSocket(d.goos, acct.home, acct.uid)
	}
	spec.ConfigPath, err = serviceConfigPath(e, l, d.goos, acct)
	if err != nil {
		return fail(e, "install", err, exitUsage)
	}
	if *dry {
		return dryRun(e, spec, l, d)
	}
	if err := spec.Validate(); err != nil {
		serviceError(e, "install", spec, err)
		return exitUsage
	}
	svc, err := d.newService(spec)
	if err != nil {
		serviceError(e, "install", spec, err)
		return exitUsage
	}
	if d.uid == 0 && !spec.System && d.goos != "windows" {
		fmt.Fprintln(e.stderr, "awbridge install: note: this installs a per-user service for root; for a system-wide one: awbridge install --system")
	}
	// Under sudo the file is made inside the person's home, never through
	// a link out of it, and given to them.
	var owner *install.Owner
	if acct.sudo {
		owner = &install.Owner{Name: acct.name, Home: acct.home, UID: acct.uid, GID: acct.gid}
	}
	created, err := install.EnsureConfigFile(spec.ConfigPath, owner)
	if err != nil {
		serviceError(e, "install", spec, err)
		return exitDegraded
	}
	if created {
		fmt.Fprintf(e.stdout, "created the config file %s (empty: every setting has its default)\n", spec.ConfigPath)
	}
	m := &install.Manager{Spec: spec, Service: svc}
	res, err := m.Install()
	if err != nil {
		serviceError(e, "install", spec, err)
		return exitDegraded
	}
	where := unitWhere(spec)
	switch {
	case res.Unchanged:
		fmt.Fprintf(e.stdout, "awbridge is already installed (%s), unchanged and running\n", where)
	case res.Restarted:
		fmt.Fprintf(e.stdout, "updated the %s and restarted awbridge with it\n", where)
	case res.Previous != install.NotInstalled:
		fmt.Fprintf(e.stdout, "updated the %s\n", where)
	default:
		fmt.Fprintf(e.stdout, "installed the %s\n", where)
	}
	fmt.Fprintf(e.stdout, "  runs: %s\n", strings.Join(append([]string{spec.Executable}, spec.Arguments()...), " "))
	if p := spec.LogPath(); p != "" {
		fmt.Fprintf(e.stdout, "  logs: %s\n", p)
	}
	if !res.Unchanged && !res.Restarted {
		fmt.Fprintf(e.stdout, "it starts at each %s; start it now: %sawbridge start%s\n", startsAt(spec), sudo(spec), systemFlag(spec))
	}
	warnUncarried(e, l, spec)
	// The protected-environment baseline covers what was just installed.
	items, path, err := protectItems(e, l, fs, configProtectLists, spec.System)
	if err == nil {
		_, _, err = protect.Snapshot(items, path)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge install: no protection baseline: "+oneLine(err.Error()))
	} else {
		fmt.Fprintf(e.stdout, "  protection baseline: %s (awbridge protect status)\n", path)
	}
	return exitOK
}

// dryRun prints on stdout exactly what an install would write, and on
// stderr where and what else.
func dryRun(e *env, spec install.Spec, l *config.Loaded, d serviceDeps) int {
	unit, err := install.Render(spec)
	if err != nil {
		serviceError(e, "install", spec, err)
		return exitUsage
	}
	fmt.Fprint(e.stdout, unit)
	where := "in the registry"
	if p := spec.UnitPath(); p != "" {
		where = "to " + p
	}
	fmt.Fprintf(e.stderr, "awbridge install: dry run, nothing changed: above is the %s it would write %s (service manager here: %s)\n",
		spec.Kind(), where, d.platform())
	if err := spec.Validate(); err != nil {
		fmt.Fprintf(e.stderr, "awbridge install: note: a real install would refuse: %s\n", strings.TrimPrefix(oneLine(err.Error()), "install: "))
	}
	if l.File == "" {
		fmt.Fprintf(e.stderr, "awbridge install: note: it would create the config file %s (empty: every setting has its default)\n", spec.ConfigPath)
	}
	warnUncarried(e, l, spec)
	return exitOK
}

// serviceConfigPath is the config file the service gets as --config, made
// absolute: the one this command read, else the default path (under sudo,
// that of the account the service runs as, not root's).
func serviceConfigPath(e *env, l *config.Loaded, goos string, acct account) (string, error) {
	p := l.File
	if acct.sudo && (p == "" || l.FileSource == config.SourceDefault) {
		home := acct.home
		p = config.DefaultConfigPath(config.Env{GOOS: goos, Lookup: func(k string) (string, bool) {
			if k == "HOME" && home != "" {
				return home, true
			}
			return "", false
		}})
	}
	if p == "" {
		p = config.DefaultConfigPath(config.Env{Lookup: e.lookup, GOOS: goos})
	}
	if p == "" {
		return "", errors.New("no config file path for the service (HOME is unset): pass --config FILE")
	}
	if filepath.IsAbs(p) || (goos == "windows" && len(p) > 2 && p[1] == ':') {
		return p, nil
	}
	return filepath.Abs(p)
}

// warnUncarried names the settings taken from the environment or flags:
// the service does not see them.
func warnUncarried(e *env, l *config.Loaded, spec install.Spec) {
	var names []string
	for _, s := range l.Settings {
		if s.Source == config.SourceEnv || s.Source == config.SourceFlag {
			names = append(names, s.Origin)
		}
	}
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(e.stderr, "awbridge install: note: %s set here but the service does not see it: it reads only %s (put the settings there)\n",
		strings.Join(names, ", "), spec.ConfigPath)
}

// runUninstall stops and removes the service.
func runUninstall(_ context.Context, e *env, args []string, d serviceDeps) int {
	return control(e, "uninstall", args, d, func(m *install.Manager) (string, error) {
		if err := m.Uninstall(); errors.Is(err, install.ErrNotInstalled) {
			return "awbridge is not installed as a " + m.Spec.Kind() + ": nothing to remove", nil
		} else if err != nil {
			return "", err
		}
		return "stopped and removed the " + unitWhere(m.Spec) + " (the config file stays)", nil
	})
}

// account is who a system-wide service runs as.
type account struct {
	name, home string
	uid, gid   int
	// sudo: the install runs as root for this account (SUDO_USER).
	sudo bool
}

// systemAccount is the account a system-wide service runs as: the person
// installing it (under sudo, SUDO_USER); root is refused by the spec.
func systemAccount(e *env, d serviceDeps) (account, error) {
	lookup, current := d.lookupUser, d.currentUser
	if lookup == nil {
		lookup = user.Lookup
	}
	if current == nil {
		current = user.Current
	}
	var (
		u   *user.User
		err error
		a   account
	)
	if d.uid == 0 {
		name, _ := e.lookup("SUDO_USER")
		if name == "" || name == "root" {
			return account{name: name}, nil
		}
		a.sudo = true
		if u, err = lookup(name); err != nil {
			return account{}, fmt.Errorf("the account %q that ran sudo: %w", clipLine(name, 64), err)
		}
	} else if u, err = current(); err != nil {
		return account{}, fmt.Errorf("this account: %w", err)
	}
	a.name, a.home = u.Username, u.HomeDir
	a.uid, _ = strconv.Atoi(u.Uid)
	a.gid, _ = strconv.Atoi(u.Gid)
	return a, nil
}
