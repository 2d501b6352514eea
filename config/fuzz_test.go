package config

import (
	"errors"
	"flag"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzLoadTOML feeds arbitrary bytes as the config file: Load must not
// panic, and must either return one line of *Error naming the file or a
// Config that validates. Seeds: every file in testdata.
func FuzzLoadTOML(f *testing.F) {
	for _, pattern := range []string{"testdata/*.toml", "testdata/bad/*.toml"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("[activitywatch]\nurl = \"http://127.0.0.1:5600\"\nurl = 1\n"))
	f.Add([]byte("a.b.c.d.e = 1\n"))
	f.Add([]byte("[paths]\ncontext_root = '~'\n"))
	f.Add([]byte("\xef\xbb\xbf[log]\nlevel='trace'\n"))
	f.Add([]byte("[[activitywatch.url]]\n"))
	f.Add([]byte("sidecar = { url = { a = [1, {b = 2}] } }\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		env := mapEnv(map[string]string{"HOME": "/home/fuzz", ConfigEnv: p})
		l, err := Load(env, nil)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *config.Error: %v", err, err)
			}
			if ce.Source != SourceFile || ce.Origin != p {
				t.Errorf("error does not name the file: %#v", ce)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error is not one line: %q", msg)
			}
			// Deterministic: the same file gives the same first error.
			if _, again := Load(env, nil); again == nil || again.Error() != err.Error() {
				t.Errorf("second load: %v, first: %v", again, err)
			}
			return
		}
		if err := validate(l.Config); err != nil {
			t.Errorf("loaded config does not validate: %v", err)
		}
		if l.File != p || len(l.Settings) != len(table()) {
			t.Errorf("file %q, %d settings", l.File, len(l.Settings))
		}
	})
}

// FuzzParseRules: the privacy rule parser never panics, says what is wrong
// on one line, accepts at most maxRules rules, and what it accepts
// round-trips: printing each rule as "PATTERN => REPLACEMENT" on its own
// line parses back to the same rules.
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{
		"", "# comment\nAcme (Corp|Inc) => [client]\n\n;; secret-\\d+ => [redacted]",
		"^https://intranet\\.example\\.com/.* => https://intranet.example.com/",
		"no arrow", "([ => x", "a => b => c", " => empty pattern", "(?P<n>x) => ${n}$1",
		"a => b;;c => d;;;;", "\r\n# x\r\n a\r => b\r", "(?i)x{1000} => y", "x{1001} => y",
		strings.Repeat("a => b\n", 65), "\xff => \xfe", "\u2028 => \u2029",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseRules(s)
		if err != nil {
			if rules != nil {
				t.Fatalf("rules with an error: %v", err)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\n") || !strings.HasPrefix(msg, "rule ") && !strings.HasPrefix(msg, "more than ") {
				t.Fatalf("error %q: want one line starting with \"rule N:\"", msg)
			}
			// Through Load, the same text gives one clean line.
			env := mapEnv(map[string]string{"HOME": "/home/fuzz", ConfigEnv: "", "AWBRIDGE_TITLE_RULES": s})
			if _, lerr := Load(env, nil); lerr == nil || strings.ContainsAny(lerr.Error(), "\n\r\u2028\u2029") {
				t.Fatalf("Load with the rules: %q", lerr)
			}
			return
		}
		if len(rules) > maxRules {
			t.Fatalf("%d rules accepted", len(rules))
		}
		var b strings.Builder
		for _, r := range rules {
			b.WriteString(r.Pattern.String() + " => " + r.Replacement + "\n")
		}
		again, err := ParseRules(b.String())
		if err != nil || len(again) != len(rules) {
			t.Fatalf("printed rules %q do not parse back: %d rules, %v", b.String(), len(again), err)
		}
		for i := range rules {
			if again[i].Pattern.String() != rules[i].Pattern.String() || again[i].Replacement != rules[i].Replacement {
				t.Fatalf("rule %d: %q => %q, then %q => %q", i, rules[i].Pattern, rules[i].Replacement, again[i].Pattern, again[i].Replacement)
			}
		}
	})
}

// FuzzParseRateLimits: the rate-limit parser never panics, every rate it
// accepts is a positive finite number with a burst inside its syntax, and
// a rate in calls a second printed back in that syntax parses to itself.
func FuzzParseRateLimits(f *testing.F) {
	for _, s := range []string{
		"", " ", "nowframe_build=5/s:10, aw_get_state=30/m", "a=0/s", "a=5", "a=5/h", "a=5/s,a=6/s", "a b=5/s",
		"a=0.000001/m", "a=1" + strings.Repeat("0", 400) + "/s", "a=5/s:999999", "a=5/s:1000000", ",", "a=1/s,",
		"a=1/s ,\tb=2/m:0", "é=1/s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rates, err := ParseRateLimits(s)
		if err != nil {
			if rates != nil || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("rates %v with error %q", rates, err)
			}
			return
		}
		if strings.TrimSpace(s) != "" && len(rates) != strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d tools from %d parts", s, len(rates), strings.Count(s, ",")+1)
		}
		for name, r := range rates {
			if name == "" || len(name) > 64 || math.IsInf(r.PerSecond, 0) || math.IsNaN(r.PerSecond) || r.PerSecond <= 0 || r.Burst < 0 || r.Burst > 999999 {
				t.Fatalf("%q: %q = %+v", s, name, r)
			}
			text := name + "=" + strconv.FormatFloat(r.PerSecond, 'f', -1, 64) + "/s"
			if r.Burst > 0 {
				text += ":" + strconv.Itoa(r.Burst)
			}
			back, err := ParseRateLimits(text)
			if err != nil || len(back) != 1 || back[name] != r {
				t.Fatalf("%q printed as %q parses to %v, %v", s, text, back, err)
			}
		}
	})
}

// secretProblem is every problem a secret's value may produce: fixed
// texts that never hold the value.
var secretProblem = regexp.MustCompile(`^(must not be empty|the value is too long \(at most \d+ bytes\)|the value has spaces, control characters or non-ASCII bytes \(expected printable ASCII\))$`)

// FuzzSettingValue feeds one text to one setting, from the environment or
// a flag, on one OS: Load never panics; a refusal is a one-line *Error
// naming the setting and the layer (and never a secret's value); an
// accepted value validates, and its canonical text is a fixed point (fed
// back through the same layer it reads the same).
// quotedInMessage finds the quoted strings of an error message.
var quotedInMessage = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

func FuzzSettingValue(f *testing.F) {
	specs := table()
	index := func(key string) uint8 {
		for i := range specs {
			if specs[i].key == key {
				return uint8(i)
			}
		}
		f.Fatalf("no setting %s", key)
		return 0
	}
	for _, c := range []struct {
		key, value string
	}{
		{"activitywatch.url", "HTTP://localhost:5601/"}, {"activitywatch.url", "http://u:p@h/"}, {"activitywatch.url", "http://[::1]:0"},
		{"activitywatch.url", "http://h:65536"}, {"activitywatch.url", "http://user:hunter2pw@h:bad/"}, {"sidecar.url", "http://h/?token=abcdef#frag"},
		{"sidecar.url", "http://[::1%zz]/?k=secretvalue"}, {"activitywatch.url", "http://h:/"}, {"activitywatch.url", "https://h/a%2F/"},
		{"activitywatch.host", "desk"}, {"activitywatch.host", "a\u202eb"}, {"activitywatch.host_header", "[::1]:5600"},
		{"activitywatch.host_header", "a:b:c"}, {"activitywatch.api_key", "s3cret-token"}, {"activitywatch.api_key", "s3cret token"},
		{"activitywatch.timeout", "750ms"}, {"activitywatch.timeout", "-1s"}, {"activitywatch.timeout", "1e3s"},
		{"activitywatch.max_body_bytes", "16MiB"}, {"activitywatch.max_body_bytes", "9223372036854775807GiB"}, {"activitywatch.max_body_bytes", "1 kib"},
		{"server.max_in_flight", "64"}, {"server.max_in_flight", "+64"}, {"server.max_in_flight", "99999999999999999999"},
		{"paths.context_root", "~/ctx/../x/"}, {"paths.context_root", `C:\ctx`}, {"paths.state_dir", "~"}, {"paths.state_dir", "~user/x"},
		{"log.level", "DEBUG"}, {"log.level", "verbose"}, {"server.relay", "never"},
		{"privacy.title_rules", "Acme => [client]"}, {"limits.rate_limits", "nowframe_build=5/s:10"},
	} {
		for _, how := range []uint8{0, 1, 2} {
			f.Add(index(c.key), how, c.value)
		}
	}
	f.Fuzz(func(t *testing.T, which, how uint8, value string) {
		sp := specs[int(which)%len(specs)]
		goos := []string{"linux", "darwin", "windows"}[int(how>>1)%3]
		useFlag := how&1 == 1
		if useFlag && sp.flag == "" || !useFlag && sp.env == "" {
			return
		}
		home := "/home/fuzz"
		if goos == "windows" {
			home = `C:\Users\fuzz`
		}
		vars := map[string]string{"HOME": home, "USERPROFILE": home, "LocalAppData": home + `\AppData\Local`, ConfigEnv: ""}
		load := func(text string) (*Loaded, error) {
			m := maps.Clone(vars)
			fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fl := Bind(fs)
			if useFlag {
				if err := fs.Parse([]string{"--" + sp.flag, text}); err != nil {
					t.Fatalf("flag parse: %v", err)
				}
			} else {
				m[sp.env] = text
			}
			env := mapEnv(m)
			env.GOOS = goos
			return Load(env, fl)
		}
		wantSource, wantOrigin := SourceEnv, sp.env
		if useFlag {
			wantSource, wantOrigin = SourceFlag, "--"+sp.flag
		}
		l, err := load(value)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *config.Error: %v", err, err)
			}
			if ce.Key != sp.key || ce.Source != wantSource || ce.Origin != wantOrigin {
				t.Fatalf("error names %s from %s %s, want %s from %s %s", ce.Key, ce.Source, ce.Origin, sp.key, wantSource, wantOrigin)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r\u2028\u2029") || !utf8.ValidString(msg) {
				t.Fatalf("error is not one clean line: %q", msg)
			}
			if sp.secret() && !secretProblem.MatchString(ce.Msg) {
				t.Fatalf("a secret's problem %q is not one of the fixed texts", ce.Msg)
			}
			if sp.kind == kindURL {
				// The value can only be echoed inside a quoted string; the
				// fixed explanations ("query or fragment") are not an echo.
				msg := strings.Join(quotedInMessage.FindAllString(err.Error(), -1), " ")
				for _, part := range urlSecrets(value) {
					if strings.Contains(msg, part) || strings.Contains(msg, strings.Trim(strconv.Quote(part), `"`)) {
						t.Fatalf("error %q echoes the URL's credentials, query or fragment %q", msg, part)
					}
				}
			}
			return
		}
		if err := validate(l.Config); err != nil && goos == runtime.GOOS {
			t.Fatalf("accepted %q but the config does not validate: %v", value, err)
		}
		st, _ := l.Get(sp.key)
		if st.Source != wantSource || st.Origin != wantOrigin {
			t.Fatalf("setting from %s %s, want %s %s", st.Source, st.Origin, wantSource, wantOrigin)
		}
		if sp.secret() {
			if st.Value != "********" && !(value == "" && st.Value == "") {
				t.Fatalf("secret shown as %q", st.Value)
			}
			return
		}
		l2, err := load(st.Value)
		if err != nil {
			t.Fatalf("%q is canonical %q, which is refused: %v", value, st.Value, err)
		}
		if st2, _ := l2.Get(sp.key); st2.Value != st.Value {
			t.Fatalf("%q is canonical %q, then %q", value, st.Value, st2.Value)
		}
	})
}

// urlSecrets returns the parts of a URL setting that may be secret and
// that an error must describe, never echo: the user info (everything
// before an '@' in the authority of a scheme:// URL) and the query and fragment. Parts under
// 4 bytes are left out (they occur in any text).
func urlSecrets(v string) []string {
	var out []string
	if i := strings.Index(v, "://"); i >= 0 {
		authority := v[i+3:]
		if i := strings.IndexAny(authority, "/?#"); i >= 0 {
			authority = authority[:i]
		}
		if i := strings.LastIndex(authority, "@"); i >= 4 {
			out = append(out, authority[:i])
		}
	}
	if i := strings.IndexAny(v, "?#"); i >= 0 && len(v)-i > 4 {
		out = append(out, v[i+1:])
	}
	return out
}
