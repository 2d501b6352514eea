package mcp

import "testing"

// legacyVersion and SupportedVersions name the same versions.
func TestLegacyVersionMatchesSupportedVersions(t *testing.T) {
	for _, v := range SupportedVersions() {
		if !legacyVersion(v) {
			t.Errorf("legacyVersion(%q) = false", v)
		}
	}
	for _, v := range []string{ModernVersion, "", "2099-01-01"} {
		if legacyVersion(v) {
			t.Errorf("legacyVersion(%q) = true", v)
		}
	}
}
