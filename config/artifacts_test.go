package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The artifact bounds default to 7 days and 256 MiB, read the environment
// and the file, and take 0 for "no limit".
func TestArtifactsBounds(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(file, []byte("[artifacts]\nmax_age = \"0\"\nmax_bytes = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		env      map[string]string
		maxAge   time.Duration
		maxBytes int64
		err      string
	}{
		{"defaults", nil, 7 * 24 * time.Hour, 256 << 20, ""},
		{"environment", map[string]string{"AWBRIDGE_ARTIFACTS_MAX_AGE": "36h", "AWBRIDGE_ARTIFACTS_MAX_BYTES": "1GiB"}, 36 * time.Hour, 1 << 30, ""},
		{"zero is no limit", map[string]string{"AWBRIDGE_ARTIFACTS_MAX_AGE": "0", "AWBRIDGE_ARTIFACTS_MAX_BYTES": "0"}, 0, 0, ""},
		{"file zero", map[string]string{"AWBRIDGE_CONFIG": file}, 0, 0, ""},
		{"negative age", map[string]string{"AWBRIDGE_ARTIFACTS_MAX_AGE": "-1h"}, 0, 0, "AWBRIDGE_ARTIFACTS_MAX_AGE"},
		{"negative size", map[string]string{"AWBRIDGE_ARTIFACTS_MAX_BYTES": "-1"}, 0, 0, "AWBRIDGE_ARTIFACTS_MAX_BYTES"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := load(t, tt.env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Load = %v, want an error naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a := l.Config.Artifacts; a.MaxAge != tt.maxAge || a.MaxBytes != tt.maxBytes {
				t.Errorf("artifacts %+v, want max_age %v, max_bytes %d", a, tt.maxAge, tt.maxBytes)
			}
			if err := validate(l.Config); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}
