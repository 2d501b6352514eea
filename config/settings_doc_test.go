package config

import (
	"os"
	"strings"
	"testing"
)

// settingsDoc is the document whose settings table is generated from the
// settings table in code, between settingsBegin and settingsEnd.
const (
	settingsDoc   = "../docs/settings.md"
	settingsBegin = "<!-- settings table: generated from config/table.go by `go test ./config -run TestSettingsDocs -update`; do not edit by hand -->\n"
	settingsEnd   = "<!-- end of the generated settings table -->\n"
)

// TestSettingsDocs keeps docs/settings.md's table of every setting equal to
// what Load reports of each (key, variable, flag, default, doc), so the
// document can never go stale; -update rewrites it.
func TestSettingsDocs(t *testing.T) {
	raw, err := os.ReadFile(settingsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	head, rest, ok1 := strings.Cut(doc, settingsBegin)
	_, tail, ok2 := strings.Cut(rest, settingsEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers of its generated table:\n%s%s", settingsDoc, settingsBegin, settingsEnd)
	}
	want := head + settingsBegin + settingsTable(t) + settingsEnd + tail
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(settingsDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's settings table differs from the settings in code; run go test ./config -run TestSettingsDocs -update", settingsDoc)
}

// settingsTable renders every setting with its default as Load gives it on
// Linux with nothing set, the home folder shown as ~.
func settingsTable(t *testing.T) string {
	home := t.TempDir()
	l, err := Load(Env{GOOS: "linux", Dir: home, Lookup: func(k string) (string, bool) {
		if k == "HOME" {
			return home, true
		}
		return "", false
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cell := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
	}
	var b strings.Builder
	b.WriteString("| key | environment | flag | default | what it sets |\n|---|---|---|---|---|\n")
	for _, s := range l.Settings {
		def := s.Value
		if s.List {
			def = strings.Join(s.Items, ", ")
		}
		def = cell(strings.ReplaceAll(def, home, "~"))
		if def == "" {
			def = "none"
		}
		b.WriteString("| " + strings.Join([]string{cell(s.Key), cell(s.Env), cell(s.Flag), def,
			strings.ReplaceAll(s.Doc, "|", `\|`)}, " | ") + " |\n")
	}
	return b.String()
}
