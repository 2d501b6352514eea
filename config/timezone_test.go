package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTimezoneSetting checks activity.timezone: empty means the local
// zone, a known IANA name is kept, and anything else is refused when the
// configuration loads, naming the key and where the value came from.
func TestTimezoneSetting(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		problem string // part of the error; "" for none
	}{
		{name: "default is the local zone", want: ""},
		{name: "iana name", env: map[string]string{"AWBRIDGE_TIMEZONE": "Europe/Berlin"}, want: "Europe/Berlin"},
		{name: "utc", env: map[string]string{"AWBRIDGE_TIMEZONE": "UTC"}, want: "UTC"},
		{name: "set but empty", env: map[string]string{"AWBRIDGE_TIMEZONE": ""}, want: ""},
		{name: "unknown", env: map[string]string{"AWBRIDGE_TIMEZONE": "Mars/Olympus_Mons"},
			problem: `activity.timezone from AWBRIDGE_TIMEZONE: "Mars/Olympus_Mons" is not a known IANA time zone`},
		{name: "offset is not a zone", env: map[string]string{"AWBRIDGE_TIMEZONE": "+02:00"},
			problem: "is not a known IANA time zone"},
		{name: "path escape", env: map[string]string{"AWBRIDGE_TIMEZONE": "../../etc/passwd"},
			problem: "is not a known IANA time zone"},
		{name: "absolute path", env: map[string]string{"AWBRIDGE_TIMEZONE": "/etc/localtime"},
			problem: "is not a known IANA time zone"},
		{name: "Local", env: map[string]string{"AWBRIDGE_TIMEZONE": "Local"}, problem: `"Local" is not a zone name`},
		{name: "control characters", env: map[string]string{"AWBRIDGE_TIMEZONE": "Europe/Berlin\n"},
			problem: "contains control characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := load(t, tt.env)
			if tt.problem != "" {
				var ce *Error
				if !errors.As(err, &ce) || ce.Key != "activity.timezone" || !strings.Contains(err.Error(), tt.problem) {
					t.Fatalf("err = %v, want a config error containing %q", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Config.Activity.Timezone; got != tt.want {
				t.Errorf("timezone = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTimezoneFromFile reads the setting from the TOML file's [activity]
// table and refuses an unknown zone there with its line.
func TestTimezoneFromFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(good, []byte("[activity]\ntimezone = \"America/New_York\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("[activity]\n\ntimezone = \"America/Gotham\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := mustLoad(t, map[string]string{"AWBRIDGE_CONFIG": good})
	if s := get(t, l, "activity.timezone"); s.Value != "America/New_York" || s.Source != SourceFile {
		t.Errorf("setting = %+v", s)
	}
	_, err := load(t, map[string]string{"AWBRIDGE_CONFIG": bad})
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "activity.timezone" || ce.Line != 3 {
		t.Errorf("err = %v (%+v), want activity.timezone on line 3", err, ce)
	}
	c := Defaults()
	c.Paths.StateDir = "/state"
	c.Activity.Timezone = "Nowhere/Atlantis"
	if err := validate(c); err == nil || !strings.Contains(err.Error(), "activity.timezone") {
		t.Errorf("Validate = %v, want the timezone refused", err)
	}
}
