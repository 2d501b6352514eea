package nowframe

import (
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/internal/invisible"
	"github.com/awbridge/awbridge/toolbus/redact"
)

func TestSanitizeTitle(t *testing.T) {
	long := strings.Repeat("a", 400)
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain", "main.go - aw-bridge - Visual Studio Code", 0, "main.go - aw-bridge - Visual Studio Code"},
		{"unicode kept", "bash — ~/src/aw-bridge · Ünïcødé 日本語 🎉", 0, "bash — ~/src/aw-bridge · Ünïcødé 日本語 🎉"},
		{"bidi override extension trick", "invoice\u202Egnp.exe", 0, "invoicegnp.exe"},
		{"leading RLO", "\u202Egnp.exe", 0, "gnp.exe"},
		{"bidi isolates and marks", "a\u2066b\u2067c\u2068d\u2069e\u200ef\u200fg\u061ch\u202ai\u202bj\u202ck\u202dl", 0, "abcdefghijkl"},
		{"zero width and BOM", "\ufeffpay\u200bpal.com\u2060", 0, "paypal.com"},
		{"joiners and emoji presentation kept", "👩\u200d💻 ❤\ufe0f 1\ufe0f\u20e3 \u0645\u200c\u06cc", 0, "👩\u200d💻 ❤\ufe0f 1\ufe0f\u20e3 \u0645\u200c\u06cc"},
		{"emoji ZWJ sequences kept whole", "👨\u200d👩\u200d👧\u200d👦 🧑🏽\u200d🚀 🏳\ufe0f\u200d🌈 🤦🏼\u200d♀\ufe0f", 0, "👨\u200d👩\u200d👧\u200d👦 🧑🏽\u200d🚀 🏳\ufe0f\u200d🌈 🤦🏼\u200d♀\ufe0f"},
		{"joiner between letters (the real aw-server's title)", "zero\u200dwidth - Notes", 0, "zerowidth - Notes"},
		{"non-joiner between Latin letters", "pass\u200cword", 0, "password"},
		{"Hindi non-joiner after a virama kept", "क्\u200cष", 0, "क्\u200cष"},
		{"joiners at the edges and by spaces", "\u200dtitle \u200c👩\u200d", 0, "title 👩"},
		{"cap does not end in a joiner", "👩\u200d💻", 2, "👩…"},
		{"default-ignorables", "a\u034fb\u115f\u1160c\u3164d\uffa0e\u17b4\u17b5f\u180b\u180e\u180fg", 0, "abcdefg"},
		{"other variation selectors (smuggled bytes)", "😀\ufe00\ufe0d\U000E0100\U000E01EF!", 0, "😀!"},
		{"noncharacters", "a\ufdd0b\uffffc", 0, "abc"},
		{"tag characters (ASCII smuggling)", "ok\U000E0049\U000E0067\U000E006E", 0, "ok"},
		{"C0 controls", "a\x00b\x01c\x07d\x08e\x7ff", 0, "abcdef"},
		{"C1 controls (NEL is a line break)", "a\u0080b\u0085c\u0084d", 0, "ab cd"},
		{"C1 APC string", "a\u009fhidden\u009cb", 0, "ab"},
		{"newlines tabs collapse", "line1\nline2\r\n\tline3   end", 0, "line1 line2 line3 end"},
		{"unicode spaces collapse and trim", "\u00a0 \u2028 a \u3000\u2003 b \u2029", 0, "a b"},
		{"ANSI colours", "\x1b[31mred\x1b[0m text \x1b[1;38;5;196mbold\x1b[m", 0, "red text bold"},
		{"ANSI cursor and erase", "\x1b[2J\x1b[Hclean\x1b[K", 0, "clean"},
		{"OSC title set BEL", "\x1b]0;evil title\x07shown", 0, "shown"},
		{"OSC hyperlink ST", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ here", 0, "click here"},
		{"unterminated OSC swallows the rest", "keep\x1b]0;gone", 0, "keep"},
		{"two-byte escape", "a\x1bMb\x1b(Bc", 0, "abc"},
		{"C1 CSI", "a\u009b31mb", 0, "ab"},
		{"lone ESC at end", "a\x1b", 0, "a"},
		{"invalid UTF-8 run is one replacement", "a\xff\xfe\xfdb\xc3", 0, "a\uFFFDb\uFFFD"},
		{"surrogate encoding is invalid", "x\xed\xa0\x80y", 0, "x\uFFFDy"},
		{"default cap 300", long, 0, strings.Repeat("a", 300) + "…"},
		{"negative max is default", long, -1, strings.Repeat("a", 300) + "…"},
		{"cap", "abcdefghij", 5, "abcde…"},
		{"exactly max", "abcde", 5, "abcde"},
		{"cap counts runes", "日本語テキスト", 3, "日本語…"},
		{"cap does not end in space", "abcd efgh", 5, "abcd…"},
		{"cap after collapse", "a   \n\n   b", 3, "a b"},
		{"only junk", "\u202e\x1b[0m\u200b\n\t", 0, ""},
		{"empty", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SanitizeTitle(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("SanitizeTitle(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			checkTitle(t, got, tt.max)
		})
	}
}

// checkTitle asserts what SanitizeTitle promises for any input.
func checkTitle(t *testing.T, got string, max int) {
	t.Helper()
	if max <= 0 {
		max = DefaultMaxTitleLength
	}
	if !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8: %q", got)
	}
	if n := utf8.RuneCountInString(got); n > max+1 {
		t.Fatalf("%d runes, max %d+1: %q", n, max, got)
	}
	for i, r := range got {
		if invisible.StripAt(got, i, r, utf8.RuneLen(r)) || (r != ' ' && unicode.IsSpace(r)) {
			t.Fatalf("hidden rune %U in %q", r, got)
		}
	}
	if strings.Contains(got, "  ") || strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") {
		t.Fatalf("uncollapsed whitespace in %q", got)
	}
}

func FuzzSanitizeTitle(f *testing.F) {
	for _, s := range []string{
		"encoding/json - Go Packages - Google Chrome", "\u202Egnp.exe", "\x1b[31mred\x1b[0m",
		"\x1b]8;;x\x1b\\y", "a\xff\xfeb", "line\nline\ttab", "日本語", "\ufeff\u200b\u2066", "\u009b1m",
		strings.Repeat("é ", 400),
	} {
		f.Add(s, 0)
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max > 1000 {
			max = 1000
		}
		got := SanitizeTitle(s, max)
		checkTitle(t, got, max)
		// Gap marks change nothing once removed (with nothing to mask).
		if again := SanitizeTitle(sanitizeTitle(s, max, true), max); again != got {
			t.Fatalf("marked then sanitized %q, sanitized %q", again, got)
		}
	})
}

func TestSanitizeURL(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("abcdefghij", 60)
	tests := []struct{ in, want string }{
		{"https://pkg.go.dev/encoding/json", "https://pkg.go.dev/encoding/json"},
		{"https://www.youtube.com/watch?v=jfKfPfyJRdk", "https://www.youtube.com/watch"},
		{"https://app.example.com/callback?code=SECRET&state=x#access_token=TOKEN", "https://app.example.com/callback"},
		{"https://example.com/page#section", "https://example.com/page"},
		{"https://user:p4ss@example.com:8443/admin", "https://example.com:8443/admin"},
		{"https://token@github.com/org/repo.git", "https://github.com/org/repo.git"},
		{"http://a@b@evil.example/x", "http://evil.example/x"},
		{"HTTPS://Example.COM/Path", "https://example.com/Path"},
		{"https://example.com", "https://example.com"},
		{"https://example.com/?", "https://example.com/"},
		{"https://example.com/a%3Fb%23c", "https://example.com/a%3Fb%23c"},
		// Path parameters go with the query.
		{"https://shop.example.com/cart;jsessionid=0A1B2C3D4E5F?x=1", "https://shop.example.com/cart"},
		{"https://example.com/a;v=1/b;session=s3cr3t;x=y/c", "https://example.com/a/b/c"},
		{"https://example.com/;jsessionid=ABC", "https://example.com/"},
		{"http://example.com:8080/app/;JSESSIONID=ABC/", "http://example.com:8080/app//"},
		{"https://example.com/a%3Bb", "https://example.com/a%3Bb"},
		{"https://example.com/with space/é", "https://example.com/with%20space/%C3%A9"},
		{"https://example.com/\u202egnp.exe", "https://example.com/%E2%80%AEgnp.exe"},
		{"http://[::1]:5600/api/0/info", "http://[::1]:5600/api/0/info"},
		{"http://127.0.0.1:5600/#/timeline", "http://127.0.0.1:5600/"},
		{"file:///home/user/doc.pdf", "file:///home/user/doc.pdf"},
		{"chrome://settings/privacy", "chrome://settings/privacy"},
		{"moz-extension://0c3a1e1e-1111/popup.html?x=1", "moz-extension://0c3a1e1e-1111/popup.html"},
		{"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "data:"},
		{"javascript:alert(document.cookie)", "javascript:"},
		{"JavaScript:/x", "javascript:"},
		{"blob:https://example.com/3f2a-uuid", "blob:"},
		{"about:blank", "about:"},
		{"mailto:someone@example.com?subject=hi", "mailto:"},
		{"urn:isbn:0451450523", "urn:"},
		{"  https://example.com/trim  ", "https://example.com/trim"},
		{"", ""},
		{"not a url", ""},
		{"example.com/no-scheme", ""},
		{"//example.com/scheme-relative", ""},
		{"http://exa mple.com/", ""},
		{"https://example.com/\x00nul", ""},
		{"https://exa\u202emple.com/", ""},
		{"https://bücher.de/", ""},
		{"http://%41.com/", ""},
		{long, long[:MaxURLLength-len("…")] + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := SanitizeURL(tt.in)
			if got != tt.want {
				t.Errorf("SanitizeURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			checkURL(t, got)
		})
	}
	// A cut never splits a percent-escape.
	esc := "https://example.com/x" + strings.Repeat("%C3%A9", 200) // an escape straddles the cut
	got := SanitizeURL(esc)
	body := strings.TrimSuffix(got, "…")
	if len(got) > MaxURLLength || body == got {
		t.Fatalf("long escaped URL not cut: %d bytes", len(got))
	}
	if _, err := url.PathUnescape(body[len("https://example.com"):]); err != nil {
		t.Fatalf("cut split an escape: %q: %v", body[len(body)-8:], err)
	}
	if SanitizeURL("https://example.com/"+strings.Repeat("a", maxURLInput)) != "" {
		t.Fatal("an oversized URL must be withheld")
	}
}

// checkURL asserts what SanitizeURL promises for any input.
func checkURL(t *testing.T, got string) {
	t.Helper()
	if len(got) > MaxURLLength {
		t.Fatalf("%d bytes > %d: %q", len(got), MaxURLLength, got)
	}
	if strings.ContainsAny(got, "?#;") {
		t.Fatalf("query, fragment or path parameters kept: %q", got)
	}
	for _, r := range strings.TrimSuffix(got, "…") {
		if r >= utf8.RuneSelf || r <= ' ' || r == 0x7f {
			t.Fatalf("non-ASCII, space or control %U in %q", r, got)
		}
	}
	if _, rest, ok := strings.Cut(got, "://"); ok {
		authority, _, _ := strings.Cut(rest, "/")
		if strings.Contains(authority, "@") {
			t.Fatalf("userinfo kept: %q", got)
		}
	}
}

func FuzzSanitizeURL(f *testing.F) {
	for _, s := range []string{
		"https://pkg.go.dev/encoding/json", "https://u:p@h.example:8080/p?q=1#f", "http://a@b@c/d",
		"data:text/plain,hi", "javascript:alert(1)", "blob:https://x/y", "file:///etc/passwd",
		"http://[fe80::1%25eth0]/", "https://example.com/%zz", "https://example.com/a?b#c@d",
		"https://example.com/" + strings.Repeat("%41", 300), "https://example.com/a;jsessionid=1/b;c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkURL(t, SanitizeURL(s))
	})
}

func TestPasswordManager(t *testing.T) {
	tests := []struct {
		app, title string
		want       string // "" = not a password manager
	}{
		{"1Password", "", "1Password"},
		{"1password", "All Items", "1Password"},
		{"1Password.exe", "", "1Password"},
		{"1Password 7", "", "1Password"},
		{`C:\Program Files\1Password\app\8\1Password.exe`, "", "1Password"},
		{"com.1password.1password", "", "1Password"},
		{"Bitwarden", "My Vault", "Bitwarden"},
		{"bitwarden.exe", "", "Bitwarden"},
		{"com.bitwarden.desktop", "", "Bitwarden"},
		{"KeePassXC", "Passwords.kdbx - KeePassXC", "KeePassXC"},
		{"keepassxc", "", "KeePassXC"},
		{"org.keepassxc.KeePassXC", "", "KeePassXC"},
		{"KeePass", "", "KeePass"},
		{"KeePass.exe", "", "KeePass"},
		{"keepass2", "", "KeePass"},
		{"KeeWeb", "", "KeeWeb"},
		{"LastPass", "", "LastPass"},
		{"Dashlane", "", "Dashlane"},
		{"Enpass", "", "Enpass"},
		{"Keeper Password Manager", "", "Keeper"},
		{"keeper", "", "Keeper"},
		{"NordPass", "", "NordPass"},
		{"Proton Pass", "", "Proton Pass"},
		{"proton-pass", "", "Proton Pass"},
		{"ProtonPass.exe", "", "Proton Pass"},
		{"RoboForm", "", "RoboForm"},
		{"Keychain Access", "", "Keychain Access"},
		{"Passwords", "", "Passwords"},
		{"Seahorse", "", "Seahorse"},
		{"org.gnome.seahorse.Application", "", "Seahorse"},
		{"Passwords and Keys", "", "Seahorse"},
		{"kwalletmanager5", "", "KWalletManager"},
		{"org.kde.kwalletmanager5", "", "KWalletManager"},
		{"QtPass", "", "QtPass"},
		{"pass", "", "pass"},
		{"org.gnome.World.Secrets", "", "Secrets"},
		// By title: pop-out windows and generic hosts.
		{"Google-chrome", "Bitwarden", "Bitwarden"},
		{"ApplicationFrameHost.exe", "Vault — 1Password", "1Password"},
		{"java", "Database.kdbx - KeePass", "KeePass"},
		// Not password managers.
		{"Code", "main.go - aw-bridge - Visual Studio Code", ""},
		{"Google-chrome", "Why I left LastPass for Bitwarden - YouTube - Google Chrome", ""},
		{"Google-chrome", "Blog - 1Password - Google Chrome", ""},
		{"Gnome-terminal", "pass show email", ""},
		{"Slack", "MyKeePass fans", ""},
		{"passport", "", ""},
		{"compass", "", ""},
		{"zookeeper", "", ""},
		{"Gnome-terminal", "Keeper", ""}, // "Keeper" alone is too common a title
		{"", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.app+"|"+tt.title, func(t *testing.T) {
			name, ok := PasswordManager(tt.app, tt.title)
			if ok != (tt.want != "") || name != tt.want {
				t.Errorf("PasswordManager(%q, %q) = %q, %v; want %q", tt.app, tt.title, name, ok, tt.want)
			}
		})
	}
}

func TestPasswordManagerURL(t *testing.T) {
	tests := []struct {
		url  string
		want bool
	}{
		{"https://vault.bitwarden.com/#/vault", true},
		{"https://vault.bitwarden.eu/", true},
		{"https://my.1password.com/vaults/all/allitems", true},
		{"https://acme-team.1password.com/", true},
		{"https://my.1password.eu/", true},
		{"https://lastpass.com/vault/", true},
		{"https://www.lastpass.com/vault/?ac=1", true},
		{"https://app.dashlane.com/passwords", true},
		{"https://keepersecurity.com/vault/#", true},
		{"https://keepersecurity.eu/vault/", true},
		{"https://app.nordpass.com/", true},
		{"https://pass.proton.me/u/0", true},
		{"https://passwords.google.com/", true},
		{"https://online.roboform.com/", true},
		{"chrome://password-manager/passwords", true},
		{"chrome://settings/passwords", true},
		{"edge://wallet/passwords", true},
		{"about:logins", true},
		{"HTTPS://VAULT.BITWARDEN.COM/", true},
		{"https://vault.bitwarden.com.", true},
		{"https://1password.com/", false},
		{"https://www.1password.com/", false},
		{"https://support.1password.com/", false},
		{"https://bitwarden.com/", false},
		{"https://lastpass.com/", false},
		{"https://keepersecurity.com/", false},
		{"https://vault.bitwarden.com.evil.example/", false},
		{"https://evil.example/vault.bitwarden.com", false},
		{"https://pkg.go.dev/encoding/json", false},
		{"chrome://settings/privacy", false},
		{"not a url", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			if got := PasswordManagerURL(tt.url); got != tt.want {
				t.Errorf("PasswordManagerURL(%q) = %v, want %v", tt.url, got, tt.want)
			}
		})
	}
}

// TestTitleSecretsSurviveRemovedCharacters: a secret in a title is masked
// even where sanitizing removes an invisible character, control or
// escape sequence right before it (which glues it to the word before) or
// inside it; masking sees the title as it will read. Rules apply after.
func TestTitleSecretsSurviveRemovedCharacters(t *testing.T) {
	const key = "sk-ant-api03-Xy7Qp2Lm9Rt4Vw8Zb1Nc6Df3Gh5Jk0"
	rules, err := config.ParseRules("Acme Corp => [client]")
	if err != nil {
		t.Fatal(err)
	}
	p := Privacy{TitleRules: rules, MaskSecrets: func(s string) string {
		out, _ := redact.New(redact.Options{}).Text(s)
		return out
	}}
	for in, want := range map[string]string{
		"key\u200b" + key + " - Acme Corp":          "keysk-…[REDACTED] - [client]",
		"key\u202e" + key:                           "keysk-…[REDACTED]",
		"key\x1b[31m" + key + "\x1b[0m":             "keysk-…[REDACTED]",
		"key\x07" + key:                             "keysk-…[REDACTED]",
		"key " + key[:20] + "\u200e" + key[20:]:     "key sk-…[REDACTED]",
		"key " + key[:20] + "\x1b[1m" + key[20:]:    "key sk-…[REDACTED]",
		"Acme\u200b Corp \U000E0041invoice.pdf":     "[client] invoice.pdf",
		"pay\u200bpal.com — \u202egnp.exe \u200bok": "paypal.com — gnp.exe ok",
		// Default-ignorables outside Cc and Cf (a reviewer's repro).
		"ghp_abcdefghij\u034fklmnopqrstuvwxyz0123456789 AKIA\ufe0fIOSFODNN7EXAMPLE " + key[:20] + "\u3164" + key[20:]: "ghp_…[REDACTED] AKIA…[REDACTED] sk-…[REDACTED]",
		"key\u115f" + key:                             "keysk-…[REDACTED]",
		"key " + key[:20] + "\u1160" + key[20:]:       "key sk-…[REDACTED]",
		"key " + key[:20] + "\uffa0" + key[20:]:       "key sk-…[REDACTED]",
		"key " + key[:20] + "\u17b4\u17b5" + key[20:]: "key sk-…[REDACTED]",
		"key " + key[:20] + "\u180b\u180f" + key[20:]: "key sk-…[REDACTED]",
		"key " + key[:20] + "\ufe00" + key[20:]:       "key sk-…[REDACTED]",
		"key " + key[:20] + "\U000E0100" + key[20:]:   "key sk-…[REDACTED]",
	} {
		got := p.Title(in)
		if got != want {
			t.Errorf("title(%q) = %q, want %q", in, got, want)
		}
		checkTitle(t, got, 0)
		if strings.Contains(got, gapMark) {
			t.Errorf("title(%q) kept a gap mark", in)
		}
	}
	// Without a masker, sanitizing is unchanged (the frame's redactor
	// masks later what it can still see).
	if got := (Privacy{}).Title("key\u200b" + key); got != "key"+key {
		t.Errorf("unmasked title %q", got)
	}
	// The cap counts no gap marks.
	if got := p.cleanText("a\u200bb\u200bcdef", 4); got != "abcd…" {
		t.Errorf("capped %q", got)
	}
}

// TestTitleSecretAtTheCapIsMasked: a secret that straddles the cap on a
// title's length is masked before the title is cut, so no part of it is
// shown (cut first, it was too short to match and its first characters
// were printed).
func TestTitleSecretAtTheCapIsMasked(t *testing.T) {
	p := Privacy{MaskSecrets: func(s string) string {
		out, _ := redact.New(redact.Options{}).Text(s)
		return out
	}}
	secrets := []string{
		"ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36],
		"sk-ant-api03-Xy7Qp2Lm9Rt4Vw8Zb1Nc6Df3Gh5Jk0",
		"AKIAIOSFODNN7EXAMPLE",
		"AIza" + strings.Repeat("Sy0123456789", 3)[:35],
		"github_pat_" + strings.Repeat("11ABCDEFG0", 6),
		"password=hunter2hunter2",
	}
	for _, secret := range secrets {
		// The reviewer's case: 280 x's, a space, then the token.
		for start := DefaultMaxTitleLength - len(secret); start < DefaultMaxTitleLength; start++ {
			in := strings.Repeat("x", start-1) + " " + secret + " tail"
			got := p.Title(in)
			if strings.Contains(got, secret[len(secret)-6:]) || strings.Contains(got, secret[len(secret)/2:][:4]) {
				t.Fatalf("secret %.8s… at rune %d shows in %q", secret, start, got[start-1:])
			}
			checkTitle(t, got, 0)
		}
	}
	// The cap still holds, and a title without a secret is cut as before.
	long := strings.Repeat("a", 400)
	if got := p.Title(long); got != strings.Repeat("a", 300)+"…" {
		t.Errorf("plain long title %q", got)
	}
}
