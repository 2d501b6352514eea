package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/health/protect"
	"github.com/awbridge/awbridge/install"
)

// protectLists reads the comma-separated protect.files and protect.env
// settings (tests give their own).
type protectLists func(l *config.Loaded) (files, env string)

func configProtectLists(l *config.Loaded) (string, string) {
	return l.Config.Protect.Files, l.Config.Protect.Env
}

func cmdProtect(ctx context.Context, e *env, args []string) int {
	return runProtect(ctx, e, args, configProtectLists)
}

const protectUsage = `record and compare a baseline of what awbridge trusts: its config file,
its executable, its service unit, and the files and environment variables
listed in protect.files and protect.env (hashes only, never values)

Usage:
  awbridge protect snapshot [--json] [flags]   record the baseline (<state dir>/protect-baseline.json)
  awbridge protect status [--json] [flags]     list what differs from it
                                               (exit 0: nothing, 1: something, 2: no baseline / cannot check)
`

func protectHelp(w io.Writer) {
	fmt.Fprint(w, protectUsage)
	fmt.Fprint(w, "\nExample:\n  awbridge protect snapshot && awbridge protect status --json\n")
}

func runProtect(_ context.Context, e *env, args []string, lists protectLists) int {
	if len(args) == 0 {
		protectHelp(e.stderr)
		return exitUsage
	}
	sub := args[0]
	switch sub {
	case "-h", "--help", "-help", "help":
		protectHelp(e.stdout)
		return exitOK
	case "snapshot", "status":
	default:
		fmt.Fprintf(e.stderr, "awbridge protect: unknown subcommand %q (snapshot or status)\n", sub)
		return exitUsage
	}
	fs := flag.NewFlagSet("protect "+sub, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	asJSON := fs.Bool("json", false, "print the result alone on stdout as JSON")
	fs.Usage = func() {
		protectHelp(e.stdout)
		fmt.Fprintf(e.stdout, "\nFlags of protect %s:\n", sub)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(e.stderr)
	}
	l, _, code := prepare(e, fs, args[1:])
	if l == nil {
		return code
	}
	items, path, err := protectItems(e, l, fs, lists, false)
	if err != nil {
		return fail(e, "protect", err, exitUsage)
	}
	if sub == "snapshot" {
		return protectSnapshot(e, items, path, *asJSON)
	}
	return protectStatus(e, items, path, *asJSON)
}

// protectItems builds what is protected and where the baseline lives, for
// `protect`, `install` (system: the system-wide unit) and health.
func protectItems(e *env, l *config.Loaded, fs *flag.FlagSet, lists protectLists, system bool) (protect.Items, string, error) {
	if l.Config.Paths.StateDir == "" {
		return protect.Items{}, "", fmt.Errorf("no state dir to keep the baseline in: set paths.state_dir")
	}
	path := protect.BaselinePath(l.Config.Paths.StateDir)
	home := ""
	if h, ok := e.lookup("HOME"); ok && filepath.IsAbs(h) {
		home = h
	} else if h, err := os.UserHomeDir(); err == nil {
		home = h
	}
	exe, err := protect.Executable()
	if err != nil {
		return protect.Items{}, "", err
	}
	it := protect.Items{
		ConfigFile: protectConfigFile(e, l, fs),
		Executable: exe,
		Unit:       install.Spec{GOOS: runtime.GOOS, Home: home, System: system}.UnitPath(),
		Lookup:     e.lookup,
	}
	files, vars := lists(l)
	for _, f := range protect.ParseList(files) {
		if home != "" && (f == "~" || strings.HasPrefix(f, "~/")) {
			f = filepath.Join(home, f[1:])
		}
		it.Files = append(it.Files, f)
	}
	it.Env = protect.ParseList(vars)
	if err := it.Validate(); err != nil {
		return protect.Items{}, "", fmt.Errorf("protect.files / protect.env: %w", err)
	}
	return it, path, nil
}

// protectConfigFile is the config file the process reads; the default
// path when none exists there yet (one created later would change what
// awbridge does); "" when the config was turned off (AWBRIDGE_CONFIG= or
// --config ""; fs nil reads only the environment).
func protectConfigFile(e *env, l *config.Loaded, fs *flag.FlagSet) string {
	if l.File != "" {
		return filepath.Clean(l.File)
	}
	explicit := false
	if _, ok := e.lookup(config.ConfigEnv); ok {
		explicit = true
	}
	if fs != nil {
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "config" {
				explicit = true
			}
		})
	}
	if explicit {
		return ""
	}
	return config.DefaultConfigPath(config.Env{Lookup: e.lookup, GOOS: runtime.GOOS})
}

func protectSnapshot(e *env, items protect.Items, path string, asJSON bool) int {
	b, warns, err := protect.Snapshot(items, path)
	for _, w := range warns {
		fmt.Fprintln(e.stderr, "awbridge protect: "+oneLine(w))
	}
	if err != nil {
		return fail(e, "protect", err, exitUsage)
	}
	type item struct {
		Kind   string `json:"kind"`
		Item   string `json:"item"`
		State  string `json:"state"`
		Detail string `json:"detail,omitempty"`
	}
	out := struct {
		Baseline  string    `json:"baseline"`
		CreatedAt time.Time `json:"created_at"`
		Items     []item    `json:"items"`
	}{Baseline: path, CreatedAt: b.CreatedAt, Items: []item{}}
	for _, en := range b.Entries {
		out.Items = append(out.Items, item{en.Kind, en.Name, en.State, en.Detail})
		if en.State == protect.StateUnreadable {
			fmt.Fprintf(e.stderr, "awbridge protect: %s %s cannot be read (%s): only that it exists is recorded\n", en.Kind, en.Name, en.Detail)
		}
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(out)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "Baseline of %d items written to %s\n", len(out.Items), path)
	for _, it := range out.Items {
		fmt.Fprintf(e.stdout, "  %-10s  %-10s  %s\n", it.Kind, it.State, it.Item)
	}
	return exitOK
}

func protectStatus(e *env, items protect.Items, path string, asJSON bool) int {
	r := protect.Check(items, path)
	code := exitOK
	switch {
	case !r.BaselineExists || r.Err != nil:
		code = exitUsage
	case len(r.Diffs) > 0:
		code = exitDegraded
	}
	if asJSON {
		e.stdout.Write(r.StatusJSON(path))
		return code
	}
	switch {
	case r.Err != nil:
		fmt.Fprintln(e.stderr, "awbridge protect: "+oneLine(r.Err.Error()))
	case !r.BaselineExists:
		fmt.Fprintf(e.stderr, "awbridge protect: no baseline at %s; take one with `awbridge protect snapshot`\n", path)
	case len(r.Diffs) == 0:
		fmt.Fprintf(e.stdout, "Protected environment: nothing differs from the baseline of %s (%d items checked)\n",
			r.CreatedAt.UTC().Format(time.DateTime+" MST"), r.Checked)
	default:
		fmt.Fprintf(e.stdout, "Protected environment: %d differences from the baseline of %s (%s; %d items checked)\n",
			len(r.Diffs), r.CreatedAt.UTC().Format(time.DateTime+" MST"), path, r.Checked)
		for _, d := range r.Diffs {
			line := fmt.Sprintf("  %-16s  %-10s  %s", d.Change, d.Kind, d.Item)
			if d.Detail != "" {
				line += " (" + d.Detail + ")"
			}
			fmt.Fprintln(e.stdout, line)
		}
		fmt.Fprintln(e.stdout, "If these changes are yours, take a new baseline: awbridge protect snapshot")
	}
	return code
}
