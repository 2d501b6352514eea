package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/health/protect"
	"github.com/awbridge/awbridge/internal/text"
)

// Exit codes.
const (
	exitOK       = 0
	exitDegraded = 1 // health degraded, or a tool call failed
	exitUsage    = 2 // bad usage, bad configuration, cannot check
)

// env is the process's world, passed down from main.
type env struct {
	args           []string
	stdin          io.Reader
	stdout, stderr io.Writer
	lookup         func(string) (string, bool)
	version        string
	built          string // "commit C, built D", or empty
	stderrTTY      *bool  // whether stderr is a terminal; nil: ask the file
}

type command struct {
	name, summary, usage, example string
	run                           func(ctx context.Context, e *env, args []string) int
}

func commands() []command {
	return []command{
		{"stdio", "serve JSON-RPC 2.0 / MCP on stdin and stdout (what an assistant spawns)", "awbridge stdio [flags]",
			"awbridge stdio --aw-url http://127.0.0.1:5600", cmdStdio},
		{"serve", "run the service: a warm frame (every second while in use, every 30 s at rest), JSON-RPC / MCP on a private Unix socket", "awbridge serve [--socket PATH] [flags]",
			"awbridge serve --config ~/.config/awbridge/config.toml", cmdServe},
		{"health", "check ActivityWatch, the sidecar and the bridge's preflight", "awbridge health [--json] [flags]",
			"awbridge health --json", cmdHealth},
		{"nowframe", "print what the person is doing now", "awbridge nowframe [--reason R] [--json] [flags]",
			"awbridge nowframe --reason manual --json", cmdNowframe},
		{"today", "print where today's time went: active time, top apps, the longest focus, categories",
			"awbridge today [--group-by G] [--host H] [--limit N] [--json] [flags]", "awbridge today --group-by category", cmdToday},
		{"summary", "print where a period's time went (today, yesterday, this_week, last_week, last_2h, last_7d...)",
			"awbridge summary [--period P | --start T --end T] [--group-by G] [--host H] [--limit N] [--by day] [--format F] [--json] [flags]",
			"awbridge summary --period last_week --group-by domain --limit 5", cmdSummary},
		{"tools", "list the MCP tools", "awbridge tools [--json] [flags]", "awbridge tools", cmdTools},
		{"prompts", "list the MCP prompts (standup, week_review, categorize)", "awbridge prompts [--json]", "awbridge prompts", cmdPrompts},
		{"call", "call one tool and print its envelope", "awbridge call TOOL [JSON-ARGS] [flags]",
			`awbridge call nowframe_build '{"reason":"terminal","max_age_ms":1000}'`, cmdCall},
		{"state", "list stored state", "awbridge state [--json] [flags]", "awbridge state", cmdState},
		{"config", "print each effective setting and where it came from", "awbridge config [--json] [flags]",
			"awbridge config --config ~/.config/awbridge/config.toml", cmdConfig},
		{"sim", "serve a simulated ActivityWatch (and /probe) with moving activity", "awbridge sim [--addr HOST:PORT] [--no-probe]",
			"awbridge sim --addr 127.0.0.1:5666", cmdSim},
		{"demo", "run the bridge against the simulator and show frames as they change", "awbridge demo [--duration D]",
			"awbridge demo --duration 20s", cmdDemo},
		{"install", "install (or update) the service that runs `awbridge serve` at login; --dry-run prints the unit", "awbridge install [--system] [--dry-run] [--config FILE]",
			"awbridge install --dry-run", onHost(runInstall)},
		{"uninstall", "stop and remove the service", "awbridge uninstall [--system]", "awbridge uninstall", onHost(runUninstall)},
		{"start", "start the installed service", "awbridge start [--system]", "awbridge start", onHost(runStart)},
		{"stop", "stop the service (it starts again at the next login)", "awbridge stop [--system]", "awbridge stop", onHost(runStop)},
		{"restart", "restart the service (after editing the config)", "awbridge restart [--system]", "awbridge restart", onHost(runRestart)},
		{"status", "say whether the service is installed and running and its socket answers (exit 1 when it does not)", "awbridge status [--system] [--json]",
			"awbridge status", onHost(runStatus)},
		{"protect", "record and compare a baseline of awbridge's config, executable, unit and listed files/variables",
			"awbridge protect snapshot|status [--json] [flags]", "awbridge protect snapshot && awbridge protect status --json", cmdProtect},
		{"version", "print the version", "awbridge version", "awbridge version", cmdVersion},
	}
}

func run(ctx context.Context, e *env) int {
	if len(e.args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	if e.args[0] == "-h" || e.args[0] == "-help" || e.args[0] == "--help" || e.args[0] == "help" {
		usage(e.stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == e.args[0] {
			return c.run(ctx, e, e.args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "awbridge: unknown command %q; run 'awbridge --help'\n", e.args[0])
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "awbridge: what the person at this desktop is doing now, for AI assistants (ActivityWatch -> JSON-RPC/MCP)")
	fmt.Fprintln(w, "\nUsage: awbridge COMMAND [flags]   (awbridge COMMAND --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nConfig file: "+config.ConfigPathDoc(runtime.GOOS)+" (awbridge config shows it and every setting)")
	fmt.Fprintln(w, "\nExample: awbridge health")
}

// newFlags returns a FlagSet for the command name whose --help prints the
// command's usage, flags and example on stdout.
func newFlags(e *env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		for _, c := range commands() {
			if c.name == name {
				fs.SetOutput(e.stdout)
				fmt.Fprintf(e.stdout, "%s\n\nUsage: %s\n\nFlags:\n", c.summary, c.usage)
				fs.PrintDefaults()
				fmt.Fprintf(e.stdout, "\nExample:\n  %s\n", c.example)
				fs.SetOutput(e.stderr)
			}
		}
	}
	return fs
}

// acceptConfig registers --config on a command that reads no
// configuration: `--config FILE` works after every command's name.
func acceptConfig(fs *flag.FlagSet) {
	fs.String("config", "", "configuration file (accepted for uniformity; this command does not read it)")
}

// parse parses args of a command that takes no positional argument (see
// parseArgs).
func parse(fs *flag.FlagSet, args []string) int {
	return parseArgs(fs, args, 0)
}

// parseArgs parses args of a command that takes up to most positional
// arguments, before, after or between its flags. It returns an exit code
// >= 0 when the command must stop: help shown (on stdout, exit 0), or a
// bad flag or an extra argument (one line on stderr, exit 2).
func parseArgs(fs *flag.FlagSet, args []string, most int) int {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(flagsFirst(fs, args))
	fs.Usage = usage
	fs.SetOutput(out)
	hint := fmt.Sprintf("run 'awbridge %s --help'", fs.Name())
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return exitOK
	case err != nil:
		fmt.Fprintf(out, "awbridge %s: %s; %s\n", fs.Name(), oneLine(err.Error()), hint)
		return exitUsage
	case fs.NArg() > most:
		fmt.Fprintf(out, "awbridge %s: unexpected argument %q; %s\n", fs.Name(), clipLine(fs.Arg(most), 80), hint)
		return exitUsage
	}
	return -1
}

// flagsFirst moves args's flags before its positional arguments, so that
// flags may follow them (a FlagSet stops at the first non-flag); a flag
// that takes a value keeps the argument after it.
func flagsFirst(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case len(a) < 2 || a[0] != '-':
			pos = append(pos, a)
		default:
			flags = append(flags, a)
			name := strings.TrimPrefix(a[1:], "-")
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	if len(pos) == 0 {
		return flags
	}
	return append(append(flags, "--"), pos...)
}

// isBoolFlag reports whether f takes no value (as the flag package tells).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// prepare binds the configuration flags on fs, parses args and loads the
// configuration. A nil *config.Loaded means the command must stop with
// the returned code (help shown, bad flags, bad configuration).
func prepare(e *env, fs *flag.FlagSet, args []string) (*config.Loaded, zerolog.Logger, int) {
	return prepareArgs(e, fs, args, 0)
}

// prepareArgs is prepare for a command that takes up to most positional
// arguments (fs.Args() after it; see parseArgs).
func prepareArgs(e *env, fs *flag.FlagSet, args []string, most int) (*config.Loaded, zerolog.Logger, int) {
	verbose := fs.Bool("v", false, "verbose: show informational and debug log lines on a terminal")
	f := config.Bind(fs)
	cenv := config.Env{Lookup: e.lookup, GOOS: runtime.GOOS}
	if cf := fs.Lookup("config"); cf != nil {
		def := config.DefaultConfigPath(cenv)
		if def == "" {
			def = "none here: HOME is unset"
		}
		cf.Usage = "settings `file`; empty: none (env " + config.ConfigEnv + ", default " + def + ")"
	}
	if code := parseArgs(fs, args, most); code >= 0 {
		return nil, zerolog.Nop(), code
	}
	l, err := config.Load(cenv, f)
	if err != nil {
		fmt.Fprintln(e.stderr, oneLine(err.Error()))
		return nil, zerolog.Nop(), exitUsage
	}
	c := l.Config
	c.Log.Level = logLevel(l, fs.Name(), *verbose, stderrIsTerminal(e))
	return l, newLogger(e, c), -1
}

// logLevel is the level of command name's logger: log.level when set
// explicitly; otherwise debug with -v; error for the commands that print
// a report (it says what a warning would); warn on a terminal; else the
// default (info, for a program or the journal).
func logLevel(l *config.Loaded, name string, verbose, terminal bool) string {
	if s, ok := l.Get("log.level"); ok && s.Source != config.SourceDefault {
		return l.Config.Log.Level
	}
	switch {
	case verbose:
		return "debug"
	case slices.Contains([]string{"health", "nowframe", "today", "summary", "tools", "call", "state"}, name):
		return "error"
	case terminal:
		return "warn"
	}
	return l.Config.Log.Level
}

// stderrIsTerminal reports whether a person reads stderr.
func stderrIsTerminal(e *env) bool {
	if e.stderrTTY != nil {
		return *e.stderrTTY
	}
	f, ok := e.stderr.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// newLogger builds the one logger, on stderr: console format on a
// terminal, JSON otherwise, every line redacted.
func newLogger(e *env, c config.Config) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(c.Log.Level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	w := engine.NewRedactor(c).Writer(e.stderr)
	if stderrIsTerminal(e) {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Str("app", "awbridge").Logger()
}

// startEngine builds the engine for command name with some Deps preset;
// nil means stop with exitUsage (the reason is on stderr).
func startEngine(e *env, name string, l *config.Loaded, log zerolog.Logger, d engine.Deps) *engine.Engine {
	c := l.Config
	if c.AW.APIKey == "" {
		// aw-server-rust with authentication keeps its key in its config.
		getenv := func(k string) string { v, _ := e.lookup(k); return v }
		home, _ := os.UserHomeDir()
		if h := getenv("HOME"); h != "" {
			home = h
		}
		p := aw.DefaultRustConfigPath(aw.Platform{GOOS: runtime.GOOS, Getenv: getenv, HomeDir: home})
		if key, err := aw.ReadAPIKeyFile(p); err == nil && key != "" {
			c.AW.APIKey = key
			log.Debug().Msg("using the API key of aw-server-rust's config.toml")
		}
	}
	d.Config, d.Logger, d.Version = c, log, e.version
	if d.SocketPath == "" {
		d.SocketPath = config.SocketPath(config.Env{Lookup: e.lookup, GOOS: runtime.GOOS}, os.Getuid())
	}
	var eng *engine.Engine
	items, path, err := protectItems(e, l, nil, configProtectLists, false)
	if err == nil {
		ck := protect.NewChecker()
		d.Protect = func() protect.Result { return ck.Check(items, path) }
		eng, err = engine.New(d)
	}
	if err != nil {
		fail(e, name, err, exitUsage)
		return nil
	}
	return eng
}

// fail says err on one line of stderr, after the command's name, and
// returns code.
func fail(e *env, name string, err error, code int) int {
	fmt.Fprintf(e.stderr, "awbridge %s: %s\n", name, oneLine(err.Error()))
	return code
}

// oneLine shows an error's text on one line, safe for a terminal.
func oneLine(s string) string { return text.Line(strings.ReplaceAll(s, "\n", "; ")) }
