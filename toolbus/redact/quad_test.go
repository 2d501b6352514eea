package redact

import (
	"strings"
	"testing"
	"time"
)

func TestQuadProbe(t *testing.T) {
	r := New(Options{})
	for _, unit := range []string{"sk-", "eyJ-", "AIza-", "glpat-", "xoxb-", "Bearer a-", "token:\"", "token='", "://u:", "a=", "-----BEGIN PRIVATE KEY-----", "ghp_a-", "github_pat_-", "AKIA", "eyJabcd.eyJ-", "password:\\\"a"} {
		s := strings.Repeat(unit, (256<<10)/len(unit))
		t0 := time.Now()
		r.Text(s)
		t.Logf("%-30q %v", unit, time.Since(t0))
	}
}
