package nowframe

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/internal/invisible"
)

// Bounds of what a frame shows.
const (
	DefaultMaxTitleLength = 300      // runes of a title
	MaxURLLength          = 512      // bytes of a sanitized URL, "…" included
	maxURLInput           = 64 << 10 // a longer raw URL is withheld unparsed
	maxSchemeLength       = 32       // a longer "scheme" is data (a fuzz finding)
	maxAppLength          = 100      // runes of an application name
)

// Privacy are the privacy defaults ComputeNow applies, once. A plain value.
type Privacy struct {
	MaxTitleLength int // runes; DefaultMaxTitleLength when <= 0
	// ExcludeApps are apps (case-insensitive, ".exe" optional) whose
	// windows are excluded like a password manager's.
	ExcludeApps []string
	// TitleRules and URLRules rewrite titles and URLs after the defaults.
	TitleRules, URLRules []config.Rule
	// MaskSecrets, when set, masks inline secrets (the redactor; safe for
	// concurrent use). Titles are masked while sanitizing, where a removed
	// invisible character still separates words: "key<U+200B>sk-ant-..."
	// would otherwise read as a key glued to a word once sanitized.
	MaskSecrets func(string) string
}

// maskSlack is how many runes past the cap a title is masked over before
// it is cut: more than the longest secret pattern needs (a PEM header,
// ~75), so a secret straddling the cap is masked whole, not shown in part.
const maskSlack = 128

// cleanText sanitizes an untrusted title or app name (SanitizeTitle),
// masking inline secrets when MaskSecrets is set: a zero-width space
// stands where something was removed, so masking sees a word boundary
// there, and the second pass removes it.
func (p Privacy) cleanText(raw string, max int) string {
	if p.MaskSecrets == nil {
		return SanitizeTitle(raw, max)
	}
	return SanitizeTitle(p.MaskSecrets(sanitizeTitle(raw, max+maskSlack, true)), max)
}

// App, Title and URL apply these rules as frames do ("" for a withheld
// URL); Excluded reports an app of ExcludeApps. Package activity shows
// stored events through them.
func (p Privacy) App(raw string) string { return p.cleanText(raw, maxAppLength) }

// Title: see App.
func (p Privacy) Title(raw string) string {
	max := p.MaxTitleLength
	if max <= 0 {
		max = DefaultMaxTitleLength
	}
	return rewrite(p.cleanText(raw, max), p.TitleRules, func(s string) string { return SanitizeTitle(s, max) })
}

// URL: see App.
func (p Privacy) URL(raw string) string { return rewrite(SanitizeURL(raw), p.URLRules, SanitizeURL) }

// Excluded: see App.
func (p Privacy) Excluded(app string) bool {
	a := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(app)), ".exe")
	for _, x := range p.ExcludeApps {
		if strings.TrimSuffix(strings.ToLower(x), ".exe") == a {
			return true
		}
	}
	return false
}

// rewrite applies rules to s in order, bounding the result after each, so
// rules never compound (an empty pattern with a long replacement, twice,
// would grow a title to hundreds of MiB).
func rewrite(s string, rules []config.Rule, bound func(string) string) string {
	if s == "" || len(rules) == 0 {
		return s
	}
	for _, r := range rules {
		s = bound(r.Pattern.ReplaceAllString(s, r.Replacement))
	}
	return s
}

// SanitizeTitle makes an untrusted title safe to show: it removes terminal
// escape sequences and invisible characters (invisible.StripAt), replaces
// invalid UTF-8 with U+FFFD, turns every run of whitespace into one
// space, trims, and caps the result at max runes (DefaultMaxTitleLength
// when max <= 0) followed by "…" when cut. Its work is bounded by the
// output, not the input.
func SanitizeTitle(s string, max int) string { return sanitizeTitle(s, max, false) }

// gapMark stands, in sanitizeTitle's marked output, for what was removed
// between two runes.
const gapMark = "\u200b"

// sanitizeTitle is SanitizeTitle; with mark, a zero-width space (not
// counted) takes the place of what was removed between two runes.
func sanitizeTitle(s string, max int, mark bool) string {
	if max <= 0 {
		max = DefaultMaxTitleLength
	}
	var b strings.Builder
	b.Grow(min(len(s), 4*max) + len("…"))
	n := 0 // runes written
	space := false
	gap := false // something was removed since the last rune written
	cut := false
	emit := func(r rune) bool {
		if space && n > 0 {
			if n >= max {
				return false
			}
			b.WriteByte(' ')
			n++
		}
		if gap && !space && n > 0 && mark {
			b.WriteString(gapMark)
		}
		space, gap = false, false
		if n >= max {
			return false
		}
		b.WriteRune(r)
		n++
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == 0x1b:
				i, gap = skipEscape(s, i+1), true
				continue
			case c == ' ' || (c >= '\t' && c <= '\r'):
				space = true
				i++
				continue
			case c < 0x20 || c == 0x7f:
				i, gap = i+1, true
				continue
			}
			if !emit(rune(c)) {
				cut = true
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// A run of invalid bytes becomes one replacement character.
			for i < len(s) {
				if r2, sz := utf8.DecodeRuneInString(s[i:]); r2 != utf8.RuneError || sz != 1 {
					break
				}
				i++
			}
			if !emit(utf8.RuneError) {
				cut = true
				break
			}
			continue
		}
		i += size
		switch {
		case r == 0x9b: // C1 CSI
			i, gap = skipCSI(s, i), true
			continue
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // C1 DCS, SOS, OSC, PM, APC
			i, gap = skipString(s, i), true
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		case invisible.Strip(r) && invisible.StripAt(s, i-size, r, size):
			gap = true
			continue
		}
		if !emit(r) {
			cut = true
			break
		}
	}
	if !cut {
		return b.String()
	}
	// A joiner cut off from what it joined is out of place.
	return strings.TrimRight(b.String(), " \u200c\u200d") + "…"
}

// skipEscape skips an escape sequence whose ESC precedes s[i].
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC
		return skipString(s, i+1)
	}
	// nF, Fp, Fe, Fs escapes: intermediates, then one final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI skips a control sequence's parameters, intermediates and final
// byte, starting after its introducer.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString skips a control string up to and including its terminator
// (BEL, ESC \ or U+009C); an unterminated one runs to the end.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
		i++
	}
	return i
}

// opaqueSchemes carry their content in the URL itself: only the scheme is
// kept.
var opaqueSchemes = map[string]bool{
	"data": true, "javascript": true, "blob": true, "vbscript": true, "mailto": true,
	"tel": true, "sms": true, "about": true, "view-source": true, "filesystem": true,
}

// SanitizeURL keeps scheme://host[:port]/path of an untrusted URL and
// drops the query, fragment, userinfo and path parameters (";jsessionid=",
// state as a query is). URLs that carry their content inline (data:,
// javascript:, mailto:, any URL without an authority) become "scheme:".
// The result is ASCII, at most MaxURLLength bytes, ending in "…" when
// cut. A URL that does not parse, has no or a long scheme or an unusual
// host becomes "": the caller reports it as redacted.
func SanitizeURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > maxURLInput {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || len(u.Scheme) > maxSchemeLength {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	rest := raw[len(u.Scheme)+1:]
	if opaqueSchemes[scheme] || u.Opaque != "" || !strings.HasPrefix(rest, "//") {
		return scheme + ":"
	}
	host := strings.ToLower(u.Host)
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte(".-_:[]%", c) >= 0) {
			return ""
		}
	}
	s := scheme + "://" + host + withoutParams(u.EscapedPath())
	if len(s) <= MaxURLLength {
		return s
	}
	cut := MaxURLLength - len("…")
	// Never cut a percent-escape in two.
	if i := strings.LastIndexByte(s[cut-2:cut], '%'); i >= 0 {
		cut = cut - 2 + i
	}
	return s[:cut] + "…"
}

// withoutParams drops the parameters of every segment of an escaped path:
// "/a;jsessionid=1/b;v=2" -> "/a/b". An escaped ";" (%3B) is data and
// stays.
func withoutParams(p string) string {
	if !strings.Contains(p, ";") {
		return p
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if j := strings.IndexByte(seg, ';'); j >= 0 {
			segs[i] = seg[:j]
		}
	}
	return strings.Join(segs, "/")
}

// passwordManager names a password manager and how its application is
// recognised (keys normalised by normApp).
type passwordManager struct {
	name   string
	exact  []string // whole app name (or one of its dotted parts)
	prefix []string
	title  bool // a window titled name, or "... - name", is one too
}

// passwordManagers is consulted in order: KeePassXC before KeePass.
var passwordManagers = []passwordManager{
	{name: "1Password", prefix: []string{"1password"}, title: true},
	{name: "Bitwarden", prefix: []string{"bitwarden"}, title: true},
	{name: "KeePassXC", prefix: []string{"keepassxc"}, title: true},
	{name: "KeePassX", prefix: []string{"keepassx"}, title: true},
	{name: "KeePass", prefix: []string{"keepass"}, title: true},
	{name: "KeeWeb", prefix: []string{"keeweb"}, title: true},
	{name: "LastPass", prefix: []string{"lastpass"}, title: true},
	{name: "Dashlane", prefix: []string{"dashlane"}, title: true},
	{name: "Enpass", prefix: []string{"enpass"}, title: true},
	{name: "Keeper", exact: []string{"keeper"}, prefix: []string{"keeperpassword", "keepersecurity", "keeperdesktop"}},
	{name: "NordPass", prefix: []string{"nordpass"}, title: true},
	{name: "Proton Pass", prefix: []string{"protonpass"}, title: true},
	{name: "RoboForm", prefix: []string{"roboform"}, title: true},
	{name: "Keychain Access", exact: []string{"keychainaccess"}, title: true},
	{name: "Passwords", exact: []string{"passwords", "applepasswords"}},
	{name: "Seahorse", exact: []string{"seahorse", "passwordsandkeys"}, title: true},
	{name: "KWalletManager", prefix: []string{"kwalletmanager"}, title: true},
	{name: "QtPass", prefix: []string{"qtpass"}, title: true},
	{name: "pass", exact: []string{"pass", "gopass", "gopassui", "passmenu", "rofipass"}},
	{name: "Secrets", exact: []string{"secrets", "gnomesecrets"}},
	{name: "Passbolt", prefix: []string{"passbolt"}, title: true},
	{name: "Psono", prefix: []string{"psono"}, title: true},
	{name: "Padloc", prefix: []string{"padloc"}, title: true},
	{name: "Buttercup", exact: []string{"buttercup"}},
	{name: "Zoho Vault", prefix: []string{"zohovault"}, title: true},
}

// normApp lower-cases an application name and drops ".exe"/".app" and
// spaces, dashes and underscores: "1Password.exe" -> "1password",
// "Proton Pass" -> "protonpass".
func normApp(app string) string {
	app = strings.ToLower(strings.TrimSpace(app))
	if i := strings.LastIndexAny(app, `/\`); i >= 0 {
		app = app[i+1:]
	}
	app = strings.TrimSuffix(strings.TrimSuffix(app, ".exe"), ".app")
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '_' {
			return -1
		}
		return r
	}, app)
}

func (pm *passwordManager) matchKey(k string) bool {
	for _, e := range pm.exact {
		if k == e {
			return true
		}
	}
	for _, p := range pm.prefix {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// PasswordManager reports whether the focused application is a known
// password manager, and its name. App names match in their per-OS
// spellings ("1Password.exe", "org.keepassxc.KeePassXC"); for distinctive
// names a window title that is the name, or ends in " - name", counts
// too (pop-out windows, generic hosts). Safe for concurrent use.
func PasswordManager(app, title string) (name string, ok bool) {
	k := normApp(app)
	var parts []string
	if strings.Contains(k, ".") {
		parts = strings.Split(k, ".")
	}
	for i := range passwordManagers {
		pm := &passwordManagers[i]
		if k != "" && pm.matchKey(k) {
			return pm.name, true
		}
		for _, p := range parts {
			if p != "" && pm.matchKey(p) {
				return pm.name, true
			}
		}
	}
	title = strings.TrimSpace(title)
	if title == "" {
		return "", false
	}
	for i := range passwordManagers {
		pm := &passwordManagers[i]
		if pm.title && titleNames(title, pm.name) {
			return pm.name, true
		}
	}
	return "", false
}

// titleNames reports whether title is name, or ends in a separator and
// name, case-insensitively.
func titleNames(title, name string) bool {
	if len(title) < len(name) || !strings.EqualFold(title[len(title)-len(name):], name) {
		return false
	}
	head := strings.TrimRight(title[:len(title)-len(name)], " ")
	if head == "" {
		return true // the title is the name (it was trimmed)
	}
	for _, sep := range []string{"-", "–", "—", "|", "·", ":"} {
		if strings.HasSuffix(head, sep) {
			return true
		}
	}
	return false
}

// PasswordManagerURL reports whether u (raw or sanitized) is a password
// manager's web vault or a browser's password page (about:logins, ...).
func PasswordManagerURL(u string) bool {
	u = strings.TrimSpace(u)
	if len(u) > maxURLInput {
		return false
	}
	lower := strings.ToLower(u)
	if strings.HasPrefix(lower, "about:logins") || strings.HasPrefix(lower, "about:passwords") {
		return true
	}
	p, err := url.Parse(lower)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(p.Hostname(), ".")
	path := p.Path
	switch p.Scheme {
	case "chrome", "edge", "brave", "opera", "vivaldi", "arc":
		return host == "password-manager" || host == "wallet" ||
			(host == "settings" && (strings.HasPrefix(path, "/passwords") || strings.HasPrefix(path, "/autofill")))
	case "http", "https":
	default:
		return false
	}
	switch host {
	case "vault.bitwarden.com", "vault.bitwarden.eu", "app.dashlane.com", "app.nordpass.com",
		"pass.proton.me", "online.roboform.com", "app.keeweb.info", "passwords.google.com",
		"vault.zoho.com", "vault.zoho.eu", "vault.zoho.in", "app.enpass.io":
		return true
	case "lastpass.com", "www.lastpass.com", "lastpass.eu", "www.lastpass.eu":
		return strings.HasPrefix(path, "/vault")
	case "keepersecurity.com", "keepersecurity.eu", "keepersecurity.com.au", "keepersecurity.jp",
		"keepersecurity.ca", "govcloud.keepersecurityus.com":
		return strings.HasPrefix(path, "/vault")
	}
	for _, d := range []string{".1password.com", ".1password.eu", ".1password.ca"} {
		if sub, ok := strings.CutSuffix(host, d); ok {
			switch sub {
			case "www", "support", "blog", "developer", "releases", "app-updates":
				return false
			}
			return sub != ""
		}
	}
	return false
}
