package install

import (
	"encoding/xml"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awbridge/awbridge/config"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenFile(t, filepath.Join("testdata", name), got)
}

// goldenFile compares got with the file at path, rewriting it with -update.
func goldenFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./install -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test ./install -update rewrites it):\n%s", path, got)
	}
}

func unixSpec(goos string, system bool) Spec {
	user, socket := "", ""
	if system {
		user = "alice"
	}
	if goos == "darwin" {
		if system {
			socket = config.ServiceSocket(goos, "/Users/a b", 501)
		}
		return Spec{
			Executable: "/Users/a b/bin/awbridge",
			ConfigPath: "/Users/a b/Library/Application Support/awbridge/config.toml",
			System:     system, GOOS: goos, Home: "/Users/a b", User: user, Socket: socket,
		}
	}
	if system {
		socket = config.ServiceSocket(goos, "/home/a b", 1001)
	}
	return Spec{
		Executable: "/home/a b/bin/awbridge",
		ConfigPath: "/home/a b/.config/awbridge/config.toml",
		System:     system, GOOS: goos, Home: "/home/a b", User: user, Socket: socket,
	}
}

func TestUnitsGolden(t *testing.T) {
	tests := []struct {
		golden string
		spec   Spec
		must   []string
		path   string
	}{
		{"awbridge.service.golden", unixSpec("linux", false),
			[]string{"WantedBy=default.target", "RestartSec=2s", "Restart=on-failure", "\nAfter=default.target aw-server.service\n",
				`ExecStart="/home/a b/bin/awbridge" serve --config "/home/a b/.config/awbridge/config.toml"`},
			"/home/a b/.config/systemd/user/awbridge.service"},
		{"awbridge-system.service.golden", unixSpec("linux", true),
			[]string{"WantedBy=multi-user.target", "RestartSec=2s", "\nUser=alice\n",
				// No login session: told where clients look second.
				`Environment="AWBRIDGE_SOCKET=/home/a b/.local/state/awbridge/awbridge.sock"`},
			"/etc/systemd/system/awbridge.service"},
		{"io.github.awbridge.plist.golden", unixSpec("darwin", false),
			[]string{"<key>RunAtLoad</key>\n\t<true/>", "<key>KeepAlive</key>\n\t<true/>",
				"<string>/Users/a b/Library/Logs/awbridge.log</string>", "<string>io.github.awbridge</string>"},
			"/Users/a b/Library/LaunchAgents/io.github.awbridge.plist"},
		{"io.github.awbridge-system.plist.golden", unixSpec("darwin", true),
			[]string{"<string>/Library/Logs/awbridge.log</string>", "<key>UserName</key>\n\t<string>alice</string>",
				"<key>EnvironmentVariables</key>\n\t<dict>\n\t\t<key>AWBRIDGE_SOCKET</key>\n\t\t<string>/Users/a b/Library/Application Support/awbridge/awbridge.sock</string>\n\t</dict>"},
			"/Library/LaunchDaemons/io.github.awbridge.plist"},
		{"awbridge-windows.txt.golden", Spec{
			Executable: `C:\Program Files\awbridge\awbridge.exe`,
			ConfigPath: `C:\Users\a\AppData\Roaming\awbridge\config.toml`, GOOS: "windows"},
			[]string{`Command line: "C:\Program Files\awbridge\awbridge.exe" serve --config C:\Users\a\AppData\Roaming\awbridge\config.toml`},
			""},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			got, err := Render(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, got)
			for _, must := range tt.must {
				if !strings.Contains(got, must) {
					t.Fatalf("unit lacks %q:\n%s", must, got)
				}
			}
			if p := tt.spec.UnitPath(); p != tt.path {
				t.Fatalf("UnitPath = %q, want %q", p, tt.path)
			}
			// kardianos/service parses the unit as a template: it must
			// have no action left to expand.
			if strings.Contains(got, "{{") {
				t.Fatal("the unit holds {{")
			}
		})
	}
}

// TestPackagedUnit: the unit the .deb and .rpm install for everyone
// (packaging/linux/awbridge.service, what nfpm packs) is the render of
// PackageSpec byte for byte: the per-user unit `awbridge install` writes,
// running /usr/bin/awbridge serve without --config (each person's
// service reads their own default config file).
func TestPackagedUnit(t *testing.T) {
	spec := PackageSpec()
	got, err := Render(spec)
	if err != nil {
		t.Fatal(err)
	}
	goldenFile(t, filepath.Join("..", "packaging", "linux", "awbridge.service"), got)
	for _, must := range []string{"\nExecStart=/usr/bin/awbridge serve\n", "\nAfter=default.target aw-server.service\n",
		"\nWantedBy=default.target\n", "\nRestart=on-failure\n"} {
		if !strings.Contains(got, must) {
			t.Errorf("the packaged unit lacks %q:\n%s", must, got)
		}
	}
	if strings.Contains(got, "--config") || strings.Contains(got, "User=") {
		t.Errorf("the packaged unit names a config file or an account:\n%s", got)
	}
	if p := spec.UnitPath(); p != "/usr/lib/systemd/user/awbridge.service" {
		t.Errorf("UnitPath = %q", p)
	}
	if err := spec.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	// One unit: a person's own install differs only in its command line.
	own := unixSpec("linux", false)
	ownUnit, err := Render(own)
	if err != nil {
		t.Fatal(err)
	}
	ownExec := "ExecStart=" + own.commandLine(systemdArg) + "\n"
	if !strings.Contains(ownUnit, ownExec) {
		t.Fatalf("no %q in\n%s", ownExec, ownUnit)
	}
	if strings.Replace(ownUnit, ownExec, "ExecStart=/usr/bin/awbridge serve\n", 1) != got {
		t.Errorf("the packaged unit and a person's own differ beyond ExecStart:\n%s\n%s", got, ownUnit)
	}
	// Anything beyond the executable is refused: it would not be the
	// unit every person gets.
	for _, edit := range []func(*Spec){
		func(s *Spec) { s.ConfigPath = "/etc/awbridge.toml" },
		func(s *Spec) { s.System, s.User = true, "alice" },
		func(s *Spec) { s.Home = "/home/a" },
		func(s *Spec) { s.GOOS = "darwin" },
		func(s *Spec) { s.Socket = "/run/awbridge.sock" },
	} {
		s := PackageSpec()
		edit(&s)
		if _, err := Render(s); err == nil || !strings.Contains(err.Error(), "packaged unit") {
			t.Errorf("Render(%+v) = %v, want a refusal", s, err)
		}
	}
}

// TestServiceConfigCarriesOurUnits: kardianos gets our rendered unit, not
// its built-in template (multi-user.target, RestartSec=120).
func TestServiceConfigCarriesOurUnits(t *testing.T) {
	for _, tt := range []struct {
		spec   Spec
		option string
		name   string
	}{
		{unixSpec("linux", false), "SystemdScript", "awbridge"},
		{unixSpec("darwin", false), "LaunchdConfig", "io.github.awbridge"},
	} {
		c, err := ServiceConfig(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		unit, _ := Render(tt.spec)
		if c.Option[tt.option] != unit {
			t.Fatalf("%s: option %s = %v", tt.spec.GOOS, tt.option, c.Option[tt.option])
		}
		if c.Name != tt.name || c.Option["UserService"] != true || c.Executable != tt.spec.Executable ||
			!slices.Equal(c.Arguments, []string{"serve", "--config", tt.spec.ConfigPath}) {
			t.Fatalf("%s: config %+v", tt.spec.GOOS, c)
		}
	}
	c, err := ServiceConfig(Spec{Executable: `C:\a\awbridge.exe`, ConfigPath: `C:\a\c.toml`, GOOS: "windows"})
	if err != nil {
		t.Fatal(err)
	}
	// (kardianos ignores UserService on Windows: its services are the machine's.)
	if c.Option["OnFailure"] != "restart" || c.Option["StartType"] != "automatic" {
		t.Fatalf("windows options %v", c.Option)
	}
	// A control-only spec (no executable) needs no unit.
	c, err = ServiceConfig(Spec{GOOS: "linux", Home: "/h"})
	if err != nil || c.Option["SystemdScript"] != nil || c.Name != "awbridge" {
		t.Fatalf("control config %+v %v", c, err)
	}
}

func TestValidate(t *testing.T) {
	ok := unixSpec("linux", false)
	tests := []struct {
		name  string
		edit  func(*Spec)
		want  string // in the error; "" = valid
		goRun bool
	}{
		{"valid", func(*Spec) {}, "", false},
		{"go run binary", func(s *Spec) { s.Executable = "/tmp/go-build123/b001/exe/awbridge" }, "temporary `go run` binary", true},
		{"go run binary on windows", func(s *Spec) {
			s.GOOS, s.Executable, s.ConfigPath = "windows", `C:\Users\a\AppData\Local\Temp\go-build1\b001\exe\awbridge.exe`, `C:\c.toml`
		}, "go run", true},
		{"relative executable", func(s *Spec) { s.Executable = "awbridge" }, "not an absolute path", false},
		{"relative config", func(s *Spec) { s.ConfigPath = "config.toml" }, "not an absolute path", false},
		{"newline", func(s *Spec) { s.ConfigPath = "/a\nExecStartPre=/bin/evil" }, "control character", false},
		{"template action", func(s *Spec) { s.Executable = "/a/{{Path}}/awbridge" }, "{{", false},
		{"invalid utf-8", func(s *Spec) { s.ConfigPath = "/a/\xff.toml" }, "UTF-8", false},
		{"relative socket", func(s *Spec) { s.Socket = "run/a.sock" }, "the socket \"run/a.sock\" is not an absolute path", false},
		{"socket with a newline", func(s *Spec) { s.Socket = "/a\nExecStartPre=/bin/evil" }, "control character", false},
		{"no home", func(s *Spec) { s.Home = "" }, "home folder", false},
		{"no home, system", func(s *Spec) { s.Home, s.System, s.User = "", true, "alice" }, "", false},
		{"system, no user", func(s *Spec) { s.System = true }, "run the install with sudo from that person's account", false},
		{"system as root", func(s *Spec) { s.System, s.User = true, "root" }, `cannot run as "root"`, false},
		{"system, user with a newline", func(s *Spec) { s.System, s.User = true, "a\nExecStartPre=/bin/evil" }, "not a plain account name", false},
		{"system on windows is refused: every service there is the machine's", func(s *Spec) {
			s.System, s.GOOS, s.Executable, s.ConfigPath = true, "windows", `C:\a\awbridge.exe`, `C:\c.toml`
		}, "without --system", false},
	}
	for _, tt := range tests {
		s := ok
		tt.edit(&s)
		err := s.Validate()
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
		var gr *GoRunError
		if errors.As(err, &gr) != tt.goRun {
			t.Errorf("%s: GoRunError = %v", tt.name, errors.As(err, &gr))
		}
		// Render refuses what check refuses, but renders go run binaries
		// (for --dry-run).
		if _, rerr := Render(s); (rerr == nil) != tt.goRun {
			t.Errorf("%s: Render err = %v", tt.name, rerr)
		}
	}
}

func TestSystemdArg(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/usr/bin/awbridge", "/usr/bin/awbridge"},
		{"/home/a b/x", `"/home/a b/x"`},
		{`/a"b`, `"/a\"b"`},
		{`/a\b`, `"/a\\b"`},
		{"/a'b", `"/a'b"`},
		{"/100%/x", "/100%%/x"},
		{"/$HOME/x", "/$$HOME/x"},
		{"", `""`},
	}
	for _, tt := range tests {
		if got := systemdArg(tt.in); got != tt.want {
			t.Errorf("systemdArg(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestSystemdEnv: an Environment= assignment is quoted whole, "%"
// doubled (specifiers), "$" left alone (no variables there).
func TestSystemdEnv(t *testing.T) {
	tests := []struct{ in, want string }{
		{"AWBRIDGE_SOCKET=/run/a.sock", `"AWBRIDGE_SOCKET=/run/a.sock"`},
		{"A=/home/a b/x", `"A=/home/a b/x"`},
		{`A=/a"b\c`, `"A=/a\"b\\c"`},
		{"A=/100%/$HOME", `"A=/100%%/$HOME"`},
	}
	for _, tt := range tests {
		if got := systemdEnv(tt.in); got != tt.want {
			t.Errorf("systemdEnv(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// splitExecStart splits an ExecStart value the way systemd does for what
// systemdArg produces: blank-separated words, double quotes, backslash
// escapes, then %% and $$ undoubled.
func splitExecStart(s string) []string {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		quoted bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == '"':
			quoted = !quoted
			inWord = true
		case (c == ' ' || c == '\t') && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	r := strings.NewReplacer("%%", "%", "$$", "$")
	for i := range words {
		words[i] = r.Replace(words[i])
	}
	return words
}

// FuzzSystemdUnit: whatever the paths, the unit's ExecStart splits back
// into exactly the executable and its arguments, and the unit has no
// other line than ours (no injected directive).
func FuzzSystemdUnit(f *testing.F) {
	f.Add("/home/a b/bin/awbridge", "/home/a b/.config/awbridge/config.toml")
	f.Add(`/a"b\c`, "/100%/$x")
	f.Add("/a'b", `/c\"d`)
	f.Add("/a\nExecStartPre=/bin/sh", "/c")
	f.Fuzz(func(t *testing.T, exe, cfg string) {
		s := Spec{Executable: exe, ConfigPath: cfg, GOOS: "linux", Home: "/h"}
		unit, err := Render(s)
		if err != nil {
			return
		}
		lines := strings.Split(unit, "\n")
		if len(lines) != 14 {
			t.Fatalf("unit has %d lines:\n%s", len(lines), unit)
		}
		var exec string
		for _, l := range lines {
			if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
				exec = v
			}
		}
		want := []string{exe, "serve", "--config", cfg}
		if got := splitExecStart(exec); !slices.Equal(got, want) {
			t.Fatalf("ExecStart=%s splits into %q, want %q", exec, got, want)
		}
	})
}

// FuzzPlist: whatever the paths, the plist is well-formed XML whose
// ProgramArguments are exactly the executable and its arguments.
func FuzzPlist(f *testing.F) {
	f.Add("/Users/a b/bin/awbridge", "/Users/a b/Library/Application Support/awbridge/config.toml")
	f.Add("/a&b<c>", `/"quoted'`)
	f.Add("/a]]>", "/</string><string>--evil")
	f.Add("/a\uFFFE", "/c\u0085")
	f.Fuzz(func(t *testing.T, exe, cfg string) {
		s := Spec{Executable: exe, ConfigPath: cfg, GOOS: "darwin", Home: "/Users/a"}
		plist, err := Render(s)
		if err != nil {
			return
		}
		got := plistArguments(t, plist)
		if want := []string{exe, "serve", "--config", cfg}; !slices.Equal(got, want) {
			t.Fatalf("ProgramArguments %q, want %q", got, want)
		}
	})
}

// plistArguments decodes the plist's ProgramArguments array.
func plistArguments(t *testing.T, plist string) []string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(plist))
	dec.Strict = true
	var (
		args      []string
		lastKey   string
		inArgs    bool
		elem      string
		chardata  strings.Builder
		sawArgs   bool
		depthDict int
	)
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("plist is not well-formed XML: %v\n%s", err, plist)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			elem = tk.Name.Local
			chardata.Reset()
			if elem == "dict" {
				depthDict++
			}
			if elem == "array" && lastKey == "ProgramArguments" {
				inArgs, sawArgs = true, true
			}
		case xml.CharData:
			chardata.Write(tk)
		case xml.EndElement:
			switch tk.Name.Local {
			case "key":
				lastKey = chardata.String()
			case "string":
				if inArgs {
					args = append(args, chardata.String())
				}
			case "array":
				inArgs = false
			}
		}
	}
	if !sawArgs || depthDict != 1 {
		t.Fatalf("no ProgramArguments or nested dicts (%d):\n%s", depthDict, plist)
	}
	return args
}

func TestWindowsArg(t *testing.T) {
	// The expectations are syscall.EscapeArg's.
	tests := []struct{ in, want string }{
		{`C:\a\awbridge.exe`, `C:\a\awbridge.exe`},
		{`C:\Program Files\a.exe`, `"C:\Program Files\a.exe"`},
		{`C:\a b\`, `"C:\a b\\"`},
		{`a"b`, `"a\"b"`},
		{`a\"b`, `"a\\\"b"`},
		{"", `""`},
	}
	for _, tt := range tests {
		if got := windowsArg(tt.in); got != tt.want {
			t.Errorf("windowsArg(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestEnsureConfigFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "config.toml")
	created, err := EnsureConfigFile(path, nil)
	if err != nil || !created {
		t.Fatalf("created=%v err=%v", created, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", st.Mode(), err)
	}
	if st, _ := os.Stat(filepath.Dir(path)); st.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v", st.Mode())
	}
	// The service can start with it: the config loader accepts it.
	vars := map[string]string{config.ConfigEnv: path, "HOME": dir}
	env := config.Env{GOOS: "linux", Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	if l, err := config.Load(env, nil); err != nil || l.File != path {
		t.Fatalf("the created config does not load: %v", err)
	}
	// An existing file is never touched.
	if err := os.WriteFile(path, []byte("[activitywatch]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	created, err = EnsureConfigFile(path, nil)
	if err != nil || created {
		t.Fatalf("second call: created=%v err=%v", created, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "[activitywatch]\n" {
		t.Fatalf("the existing file was rewritten: %q", b)
	}
}
