package redact

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Planted secrets, one per kind; none is a real credential.
const (
	skKey      = "sk-proj-4fJ9xQ2mLp7Rz0TbW8vYc3KdN6sH1gE5"
	skOld      = "sk-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF"
	ghpKey     = "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF2hJ4"
	ghsKey     = "ghs_0123456789abcdefghijABCDEFGHIJ012345"
	ghPatKey   = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH0123456789abcdefghijklmn"
	glpatKey   = "glpat-x1Y2z3A4b5C6d7E8f9G0"
	slackKey   = "xoxb-123456789012-1234567890123-aBcDeFgHiJkLmNoPqRsTuVwX"
	googleKey  = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"
	awsKey     = "AKIAIOSFODNN7EXAMPLE"
	awsSession = "ASIAY34FZKBOKMUTVV7A"
	jwtToken   = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemBody    = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu"
	pemKey     = "-----BEGIN PRIVATE KEY-----\n" + pemBody + "\n-----END PRIVATE KEY-----"
	antKey     = "sk-ant-api03-Xy7Qp2Lm9Rt4Vw8Zb1Nc6Df3Gh5Jk0"
	stripeKey  = "sk_live_51HxYzAbCdEfGhIjKlMnOpQr"
	stripeTest = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"
	stripeRK   = "rk_live_51HxYzAbCdEfGhIjKlMnOp"
	npmKey     = "npm_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF2hJ4"
	hfKey      = "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH"
	slackApp   = "xapp-1-A0123456789-1234567890123-abcdef0123456789"
)

func TestTextSecrets(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name, in, want string
	}{
		// OpenAI-style keys.
		{"sk project", "key " + skKey + " end", "key sk-…[REDACTED] end"},
		{"sk legacy", "OPENAI=" + skOld, "OPENAI=sk-…[REDACTED]"},
		{"sk in parens", "(" + skOld + ")", "(sk-…[REDACTED])"},
		{"sk inside a word", "task-list-0123456789-abcdefghijkl-xyz", "task-list-0123456789-abcdefghijkl-xyz"},
		{"sk kebab word", "sk-this-is-a-long-kebab-case-name-here", "sk-this-is-a-long-kebab-case-name-here"},
		{"sk too short", "sk-abc123", "sk-abc123"},
		{"anthropic", "ANTHROPIC_API_KEY " + antKey, "ANTHROPIC_API_KEY sk-…[REDACTED]"},
		// Stripe.
		{"stripe live", "charge with " + stripeKey + ".", "charge with sk_live_…[REDACTED]."},
		{"stripe test", stripeTest, "sk_test_…[REDACTED]"},
		{"stripe restricted", "(" + stripeRK + ")", "(rk_live_…[REDACTED])"},
		{"stripe too short", "sk_live_abc123", "sk_live_abc123"},
		{"stripe inside a word", "task_live_0123456789abcdefghij", "task_live_0123456789abcdefghij"},
		{"stripe snake case", "sk_test_handles_the_live_case_well_enough", "sk_test_handles_the_live_case_well_enough"},
		// npm and Hugging Face.
		{"npm", "//registry.npmjs.org/:_authToken " + npmKey, "//registry.npmjs.org/:_authToken npm_…[REDACTED]"},
		{"npm words", "npm_modules npm_config_cache npm_package_json_version_number", "npm_modules npm_config_cache npm_package_json_version_number"},
		{"npm too short", "npm_aB3dE6gH9jK2mN5pQ8", "npm_aB3dE6gH9jK2mN5pQ8"},
		{"hf", "HF_TOKEN " + hfKey, "HF_TOKEN hf_…[REDACTED]"},
		{"hf words", "hf_hub_download hf_transfer_enabled_for_the_large_files", "hf_hub_download hf_transfer_enabled_for_the_large_files"},
		{"hf inside a word", "pdf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH", "pdf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH"},
		// GitHub and GitLab.
		{"ghp", "use " + ghpKey, "use ghp_…[REDACTED]"},
		{"ghs", ghsKey + ".", "ghs_…[REDACTED]."},
		{"github_pat", "t=" + ghPatKey, "t=github_pat_…[REDACTED]"},
		{"ghp short", "ghp_short", "ghp_short"},
		{"ghp inside a word", "bigghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7", "bigghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7"},
		{"glpat", "GITLAB " + glpatKey, "GITLAB glpat-…[REDACTED]"},
		// Slack.
		{"slack bot", slackKey, "xoxb-…[REDACTED]"},
		{"slack user", "xoxp-1234567890-abcdef", "xoxp-…[REDACTED]"},
		{"xoxo", "xoxo-hugs-and-kisses-forever", "xoxo-hugs-and-kisses-forever"},
		{"slack app", "SLACK_APP_TOKEN " + slackApp, "SLACK_APP_TOKEN xapp-…[REDACTED]"},
		{"xapp short", "xapp-mobile", "xapp-mobile"},
		// Google.
		{"google", "k=" + googleKey + "&x=1", "k=AIza…[REDACTED]&x=1"},
		{"google short", "AIzaSyA1b2C3d4", "AIzaSyA1b2C3d4"},
		// AWS.
		{"aws akia", "id " + awsKey + " ok", "id AKIA…[REDACTED] ok"},
		{"aws asia", awsSession, "ASIA…[REDACTED]"},
		{"aws too short", "AKIAIOSFODNN7EXAMP", "AKIAIOSFODNN7EXAMP"},
		{"aws word", "ASIAN food", "ASIAN food"},
		// JWT.
		{"jwt", "cookie " + jwtToken + "; path=/", "cookie eyJ…[REDACTED]; path=/"},
		{"jwt header only", "eyJhbGciOiJIUzI1NiJ9 is base64", "eyJhbGciOiJIUzI1NiJ9 is base64"},
		// Bearer.
		{"bearer", "curl -H 'x: y' --oauth2-bearer x Bearer abcDEF123456ghi", "curl -H 'x: y' --oauth2-bearer x Bearer [REDACTED]"},
		{"bearer lower", "bearer 9f8e7d6c5b4a3f2e1d", "bearer [REDACTED]"},
		{"bearer jwt", "Bearer " + jwtToken, "Bearer [REDACTED]"},
		{"bearer prose", "the bearer of this letter is welcome", "the bearer of this letter is welcome"},
		{"bearer prose 2", "Bearer token authentication is described in RFC 6750", "Bearer token authentication is described in RFC 6750"},
		{"bearer bonds", "Bearer bonds", "Bearer bonds"},
		{"bearer after dashes", "-----Bearer abcdef123456", "-----Bearer [REDACTED]"},
		// key=value and key: value.
		{"password=", "login password=hunter2 ok", "login password=[REDACTED] ok"},
		{"token:", "token: abc", "token: [REDACTED]"},
		{"api_key query", "GET /v1?api_key=xyz123&page=2", "GET /v1?api_key=[REDACTED]&page=2"},
		{"access_token url", "https://example.com/cb?state=1&access_token=abc.def-ghi", "https://example.com/cb?state=1&access_token=[REDACTED]"},
		{"secret spaces", "client_secret = 'abc def'", "client_secret = '[REDACTED]'"},
		{"json in text", `{"password":"p\"w","user":"bob"}`, `{"password":"[REDACTED]","user":"bob"}`},
		{"escaped json in text", `{\"apiKey\":\"abc\",\"x\":1}`, `{\"apiKey\":\"[REDACTED]\",\"x\":1}`},
		{"env", "DB_PASSWORD=hunter2\nHOME=/root", "DB_PASSWORD=[REDACTED]\nHOME=/root"},
		{"authorization header", "Authorization: Bearer abcdef", "Authorization: Bearer [REDACTED]"},
		{"authorization basic", "authorization: Basic dXNlcjpwYXNz", "authorization: Basic [REDACTED]"},
		{"passphrase arrow", "passphrase => correct", "passphrase => [REDACTED]"},
		{"private_key", "private_key=abc", "private_key=[REDACTED]"},
		{"tab_count", "tab_count=3 url=https://x.org/a title: Inbox", "tab_count=3 url=https://x.org/a title: Inbox"},
		{"password prose", "password reset link sent", "password reset link sent"},
		{"secret prose", "the secret garden", "the secret garden"},
		{"kv already masked", "password=[REDACTED]", "password=[REDACTED]"},
		// URL userinfo.
		{"userinfo", "postgres://app:hunter2@db:5432/x", "postgres://app:[REDACTED]@db:5432/x"},
		{"userinfo user only", "https://user@example.com/ and git@github.com:org/repo", "https://user@example.com/ and git@github.com:org/repo"},
		// PEM.
		{"pem", "key:\n" + pemKey + "\nafter", "key:\n-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----\nafter"},
		{"pem rsa", "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----"},
		{"pem openssh two", "-----BEGIN OPENSSH PRIVATE KEY-----\na\n-----END OPENSSH PRIVATE KEY----- and -----BEGIN EC PRIVATE KEY-----\nb\n-----END EC PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY----- and -----BEGIN EC PRIVATE KEY-----[REDACTED]-----END EC PRIVATE KEY-----"},
		{"pem pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nx\n-----END PGP PRIVATE KEY BLOCK-----", "-----BEGIN PGP PRIVATE KEY BLOCK-----[REDACTED]-----END PGP PRIVATE KEY BLOCK-----"},
		{"pem cut", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + pemBody, "-----BEGIN ENCRYPTED PRIVATE KEY-----[REDACTED]"},
		{"pem public", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----"},
		{"pem certificate", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		// Several in one line.
		{"mixed", "a=" + ghpKey + " b " + awsKey + " password: x", "a=ghp_…[REDACTED] b AKIA…[REDACTED] password: [REDACTED]"},
		// Ordinary text.
		{"plain", "rest.go - aw-bridge - Visual Studio Code", "rest.go - aw-bridge - Visual Studio Code"},
		{"timestamp", "2026-11-22T01:36:06.123456+00:00", "2026-11-22T01:36:06.123456+00:00"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := r.Text(tt.in)
			if got != tt.want {
				t.Fatalf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if changed != (tt.in != tt.want) {
				t.Errorf("changed = %v", changed)
			}
			again, changed2 := r.Text(got)
			if again != got || changed2 {
				t.Errorf("not idempotent: Text(%q) = %q", got, again)
			}
		})
	}
}

func TestTextExtraKeys(t *testing.T) {
	r := New(Options{ExtraKeys: []string{"cookie", "Session_ID"}})
	for in, want := range map[string]string{
		"Set-Cookie: sid=abc":   "Set-Cookie: [REDACTED]",
		"session-id=42; path=/": "session-id=[REDACTED] path=/",
		"cookies are tasty":     "cookies are tasty",
	} {
		if got, _ := r.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTextCleanDoesNotAllocate(t *testing.T) {
	r := New(Options{})
	s := "2026-11-22T01:36:06Z INF upstream ok url=http://127.0.0.1:5600/api/0/buckets/ title=\"Bearer bonds - Google Chrome\" tab_count=3"
	allocs := testing.AllocsPerRun(100, func() {
		if out, changed := r.Text(s); changed || out != s {
			t.Fatal("changed")
		}
	})
	if allocs != 0 {
		t.Errorf("Text of clean text allocates %v times", allocs)
	}
}

func TestTextLongInput(t *testing.T) {
	// A mega-byte of text with anchors everywhere stays linear and masks
	// what it should.
	r := New(Options{})
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString("bbb ggg kkk xxx AAA JJJ a=b c:d password=")
	}
	b.WriteString("hunter2")
	out, changed := r.Text(b.String())
	if !changed || strings.Contains(out, "hunter2") || !strings.HasSuffix(out, "password=[REDACTED]") {
		t.Fatalf("tail %q", out[len(out)-40:])
	}
}

// sensitive reports whether JSON redacts the value under key k.
func sensitive(r *Redactor, k string) bool {
	doc, _ := json.Marshal(map[string]int{k: 1})
	out, _, err := r.JSON("", doc, nil)
	return err == nil && strings.Contains(string(out), Mask)
}

func TestSensitiveKey(t *testing.T) {
	r := New(Options{ExtraKeys: []string{"cookie"}})
	yes := []string{
		"password", "Password", "PASSWORD", "db_password", "passwd", "passphrase",
		"secret", "client_secret", "clientSecret", "SECRET_KEY",
		"token", "access_token", "accessToken", "refresh-token", "tokens", "pageToken",
		"api_key", "apiKey", "api-key", "API_KEY", "x-api-key", "ApiKey",
		"authorization", "Authorization", "Proxy-Authorization",
		"private_key", "privateKey", "private-key", "PRIVATE.KEY",
		"Set-Cookie", "cookie",
	}
	no := []string{"tab_count", "title", "app", "url", "key", "id", "pass", "auth", "author", "tokn", "secre", "", "keys", "private", "api", "hostname", "timestamp"}
	for _, k := range yes {
		if !sensitive(r, k) {
			t.Errorf("%q is not sensitive", k)
		}
	}
	for _, k := range no {
		if sensitive(r, k) {
			t.Errorf("%q is sensitive", k)
		}
	}
	if sensitive(New(Options{}), "cookie") {
		t.Error("cookie is sensitive without ExtraKeys")
	}
}

// TestTextAdversarialIsLinear: inputs made of nothing but candidates. A
// quadratic scan takes minutes on these; the ceiling is generous.
func TestTextAdversarialIsLinear(t *testing.T) {
	r := New(Options{})
	for _, unit := range []string{
		"sk-", "eyJ-", "AIza-", "glpat-", "xoxb-", "ghp_a-", "github_pat_-", "AKIA", "eyJabcd.eyJ-",
		"sk_live_", "rk_test_-", "npm_", "hf_-", "xapp-",
		"sk-\u200b", "a\u200bsk-", "sk_live_a\u200b", "npm_\u200b", "github_pat_\u200b", "xapp-\u200d", "\u200beyJ-", "a=\u200b",
		"Bearer a-", "bearer ", "token:\"", "token='", `password:\"a`, "a=", "://u:", "x-api-key:",
		"-----BEGIN PRIVATE KEY-----", "-----BEGIN PUBLIC KEY-----",
	} {
		s := strings.Repeat(unit, (256<<10)/len(unit))
		start := time.Now()
		r.Text(s)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Text of %q repeated took %v", unit, d)
		}
	}
}

// TestSecretsSurviveHiddenCharacters: an invisible character before a
// secret (gluing it to the word before once cleaned) or inside it
// (splitting it for a pattern) hides nothing, in free text, JSON strings
// and keys, and decoded values: what leaves, once cleaned, holds no part
// of the secret.
func TestSecretsSurviveHiddenCharacters(t *testing.T) {
	r := New(Options{})
	secrets := []struct{ secret, body string }{
		{antKey, antKey[7:]}, {skKey, skKey[3:]}, {stripeKey, stripeKey[8:]}, {npmKey, npmKey[4:]}, {hfKey, hfKey[3:]},
		{ghpKey, ghpKey[4:]}, {ghPatKey, ghPatKey[11:]}, {glpatKey, glpatKey[6:]}, {slackKey, slackKey[5:]},
		{slackApp, slackApp[5:]}, {googleKey, googleKey[4:]}, {awsKey, awsKey[4:]}, {jwtToken, jwtToken[3:]},
	}
	hiddenChars := map[string]string{
		"zero-width space": "\u200b", "left-to-right mark": "\u200e", "right-to-left override": "\u202e",
		"first strong isolate": "\u2068", "word joiner": "\u2060", "BOM": "\ufeff", "soft hyphen": "\u00ad",
		"tag": "\U000E0041", "zero-width joiner": "\u200d", "zero-width non-joiner": "\u200c", "carriage return": "\r",
		"combining grapheme joiner": "\u034f", "emoji presentation selector": "\ufe0f", "text presentation selector": "\ufe0e",
		"variation selector 1": "\ufe00", "ideographic variation selector": "\U000E0100", "Hangul choseong filler": "\u115f",
		"Hangul jungseong filler": "\u1160", "Hangul filler": "\u3164", "halfwidth Hangul filler": "\uffa0",
		"Khmer inherent vowel": "\u17b4", "Khmer inherent vowel aa": "\u17b5", "Mongolian free variation selector": "\u180b",
		"Mongolian vowel separator": "\u180e", "Mongolian free variation selector four": "\u180f", "noncharacter": "\ufdd0",
	}
	for _, sc := range secrets {
		for name, h := range hiddenChars {
			mid := len(sc.secret) / 2
			inputs := map[string]string{
				"before, after a word": "key" + h + sc.secret,
				"inside":               "key " + sc.secret[:mid] + h + sc.secret[mid:],
				"before and inside":    "key" + h + sc.secret[:mid] + h + h + sc.secret[mid:] + h + "end",
				"in the prefix":        "key " + sc.secret[:2] + h + sc.secret[2:],
			}
			for where, in := range inputs {
				leaks := func(out string) bool {
					c := Clean(out)
					half := len(sc.body) / 2
					return strings.Contains(c, sc.body[:half]) || strings.Contains(c, sc.body[half:])
				}
				if out, _ := r.Text(in); leaks(out) {
					t.Errorf("Text, %s %s of %.12s…: %q", name, where, sc.secret, out)
				}
				doc, _ := json.Marshal(map[string]string{"title": in, in: "x"})
				out, rep, err := r.JSON("result", doc, nil)
				if err != nil || leaks(string(out)) || rep.RedactedTotal != 2 {
					t.Errorf("JSON, %s %s of %.12s…: %s %+v %v", name, where, sc.secret, out, rep, err)
				}
			}
		}
	}
}

// TestTextKeepsHiddenCharactersOutsideWhatItMasks: Text does not clean
// (the caller does, after), and masking twice changes nothing.
func TestTextKeepsHiddenCharactersOutsideWhatItMasks(t *testing.T) {
	r := New(Options{})
	for in, want := range map[string]string{
		"key\u200b" + skOld + "\u200b end": "key\u200bsk-…[REDACTED]\u200b end",
		// A token glued to what follows once cleaned takes it along.
		"key\u200b" + skOld + "\u200bend":                                   "key\u200bsk-…[REDACTED]",
		"id " + awsKey + "\u200bend":                                        "id AKIA…[REDACTED]\u200bend",
		"a " + skOld[:10] + "\u200d" + skOld[10:] + " b":                    "a sk-…[REDACTED] b",
		"pass\u200bword=hunter2 \u202eok":                                   "pass\u200bword=[REDACTED] \u202eok",
		"👩\u200d💻 \u200c plain":                                             "👩\u200d💻 \u200c plain",
		"-----BEGIN\u200b PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----": "-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----",
	} {
		got, _ := r.Text(in)
		if got != want {
			t.Errorf("Text(%q)\n got %q\nwant %q", in, got, want)
		}
		if again, changed := r.Text(got); again != got || changed {
			t.Errorf("not idempotent: Text(%q) = %q", got, again)
		}
	}
}
