package redact

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// plantable secrets and the part of each that must never survive.
var plantable = []struct{ secret, body string }{
	{skKey, skKey[3:]},
	{skOld, skOld[3:]},
	{ghpKey, ghpKey[4:]},
	{ghsKey, ghsKey[4:]},
	{ghPatKey, ghPatKey[11:]},
	{glpatKey, glpatKey[6:]},
	{slackKey, slackKey[5:]},
	{googleKey, googleKey[4:]},
	{awsKey, awsKey[4:]},
	{awsSession, awsSession[4:]},
	{jwtToken, jwtToken[3:]},
	{pemKey, pemBody},
	{"password=hunter2-Xy9", "hunter2-Xy9"},
	{"Bearer 9f8e7d6c5b4a3f2e1d0c", "9f8e7d6c5b4a3f2e1d0c"},
	{antKey, antKey[7:]},
	{stripeKey, stripeKey[8:]},
	{stripeRK, stripeRK[8:]},
	{npmKey, npmKey[4:]},
	{hfKey, hfKey[3:]},
	{slackApp, slackApp[5:]},
}

// hiddenRunes are invisible characters that may be slipped into a secret.
var hiddenRunes = []string{"\u200b", "\u200e", "\u202e", "\u2066", "\u00ad", "\ufeff", "\U000E0041", "\u200d", "\r", "\u034f", "\ufe0f", "\ufe00", "\u3164", "\U000E0100", "\u180e"}

func FuzzText(f *testing.F) {
	for _, s := range []string{
		"", "plain text", "password=hunter2", "token: abc", "Authorization: Bearer abcdef123456",
		"-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "https://u:p@h/", "sk-", "ghp_", "xoxb-", "eyJ",
		`{"token":"x"}`, `{\"secret\":\"x\"}`, "password='a", "token=\"a\nb\"", "Bearer", "AKIA", "a=b=c:d",
		"key\u200b", "sk_live_", "npm_", "hf_", "xapp-", "a\u200d", "\u202e", "s\u200bk-",
	} {
		f.Add(s, "tail", uint8(0))
		f.Add("head", s, uint8(len(s)))
	}
	r := New(Options{})
	f.Fuzz(func(t *testing.T, a, b string, which uint8) {
		for _, s := range []string{a, a + b} {
			out, changed := r.Text(s)
			if changed != (out != s) {
				t.Fatalf("changed = %v for %q -> %q", changed, s, out)
			}
			again, changed2 := r.Text(out)
			if again != out || changed2 {
				t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q", s, out, again)
			}
		}
		p := plantable[int(which)%len(plantable)]
		s := a + " " + p.secret + " " + b
		out, _ := r.Text(s)
		if strings.Contains(out, p.body) && !strings.Contains(a, p.body) && !strings.Contains(b, p.body) {
			t.Fatalf("planted secret survived:\n in  %q\n out %q", s, out)
		}
		// Hidden characters glued before the secret and inside it hide
		// nothing once the text is cleaned.
		h := hiddenRunes[int(which)%len(hiddenRunes)]
		k := 1 + int(which)%(len(p.secret)-1)
		s = a + h + p.secret[:k] + h + p.secret[k:] + " " + b
		out, _ = r.Text(s)
		if c := Clean(out); strings.Contains(c, p.body) && !strings.Contains(Clean(a), p.body) && !strings.Contains(Clean(b), p.body) {
			t.Fatalf("planted secret with hidden characters survived:\n in  %q\n out %q", s, c)
		}
	})
}

func FuzzJSON(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.json")
	for _, name := range seeds {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{}`, `[]`, `null`, `"x"`, `1.5e3`, `{"token":{"a":[1,{"b":2}]}}`, `{"a":"password=x"}`, `["\u0073k-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF"]`, `{"k\u200bsk-ant-api03-Xy7Qp2Lm9Rt4Vw8Zb1Nc6Df3Gh5Jk0":"a\u200d` + npmKey[:9] + `\u200d` + npmKey[9:] + `"}`,
		`{"a":"\ud800\udc00 \ud800 x"}`, "[\"\xff\"]", `{"a" 1}`, `[1,]`, `"\u00"`, `{"a":1}{}`, `{"x.y":{"secret":1},"` + awsKey + `":2}`,
	} {
		f.Add([]byte(s))
	}
	r := New(Options{MaxString: 64})
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := slices.Clone(in)
		out, rep, err := r.JSON("r", in, func(p, _ string) string { return "artifact://" + p })
		if !slices.Equal(in, orig) {
			t.Fatal("input modified")
		}
		valid := json.Valid(in)
		var le *LimitError
		switch {
		case errors.As(err, &le):
			return
		case err != nil:
			if valid {
				t.Fatalf("valid JSON %q rejected: %v", in, err)
			}
			return
		case !valid:
			t.Fatalf("invalid JSON %q accepted", in)
		}
		if !json.Valid(out) {
			t.Fatalf("output is not valid JSON:\n in  %q\n out %q", in, out)
		}
		if !rep.Changed() && string(out) != string(in) && utf8.Valid(in) {
			t.Fatalf("unreported change:\n in  %q\n out %q", in, out)
		}
		if rep.BoundedTotal == 0 {
			again, rep2, err := r.JSON("r", out, nil)
			if err != nil || string(again) != string(out) || rep2.Changed() {
				t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q %+v %v", in, out, again, rep2, err)
			}
		}
	})
}
