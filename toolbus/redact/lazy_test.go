package redact

import (
	"strings"
	"sync"
	"testing"
)

// TestNewIsCheap: every start builds redactors (the logger's, the
// engine's) before its first answer; the token patterns are compiled when
// a text first needs them, not in New.
func TestNewIsCheap(t *testing.T) {
	if allocs := testing.AllocsPerRun(10, func() { New(Options{}) }); allocs > 100 {
		t.Errorf("New allocates %v times, want at most 100", allocs)
	}
}

// TestPatternsFirstUseIsShared: callers redacting at once, on a redactor
// that has not compiled its patterns yet, all mask every token.
func TestPatternsFirstUseIsShared(t *testing.T) {
	r := New(Options{})
	in := "keys " + skKey + " and " + ghpKey + " and token=" + skOld + "\n-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----"
	var wg sync.WaitGroup
	outs := make([]string, 8)
	for i := range outs {
		wg.Go(func() { outs[i], _ = r.Text(in) })
	}
	wg.Wait()
	for i, out := range outs {
		for _, secret := range []string{skKey, ghpKey, skOld, "MIIE"} {
			if strings.Contains(out, secret) {
				t.Fatalf("caller %d: %q survived in %q", i, secret, out)
			}
		}
		if out != outs[0] {
			t.Fatalf("caller %d got %q, caller 0 %q", i, out, outs[0])
		}
	}
}
