package artifacts

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A writer killed mid-write leaves its temp file in artifacts/.tmp only;
// the next Open removes the stale ones and keeps young ones (another
// process may be writing right now).
func TestOpenSweepsWhatACrashLeft(t *testing.T) {
	root := t.TempDir()
	tmp := filepath.Join(root, "artifacts", tmpDir)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	files := map[string]bool{ // path -> survives
		filepath.Join(tmp, "result.json.tmp-123"):           false,
		filepath.Join(tmp, "span.context.tmp-456"):          false,
		filepath.Join(tmp, "young.tmp-789"):                 true,
		filepath.Join(root, "artifacts", probePrefix+"1"):   false,
		filepath.Join(root, "artifacts", "unrelated.txt"):   true,
		filepath.Join(root, "artifacts", probePrefix+"new"): true,
	}
	for p, survives := range files {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if !survives || filepath.Base(p) == "unrelated.txt" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, warn := Open(Options{Root: root})
	if warn != "" || !s.Enabled() {
		t.Fatalf("Open: %q", warn)
	}
	for p, survives := range files {
		_, err := os.Stat(p)
		if survives != (err == nil) {
			t.Errorf("%s: exists %v, want %v", p, err == nil, survives)
		}
	}

	// A .tmp that is a symbolic link is never swept: the sweep does not
	// follow a link out of the root.
	elsewhere := t.TempDir()
	precious := filepath.Join(elsewhere, "precious")
	if err := os.WriteFile(precious, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(precious, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, tmp); err != nil {
		t.Fatal(err)
	}
	if _, warn := Open(Options{Root: root}); warn != "" {
		t.Fatalf("Open: %q", warn)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("the sweep followed a symbolic link out of the root: %v", err)
	}
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}

	// Writes go through .tmp, and recreate it when it was removed under
	// the running store; nothing is left in it afterwards.
	if err := os.RemoveAll(tmp); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.WriteCall("run", "call-1", []byte("[LEGEND]\n"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Spill("run", "call-1", 1, []byte("long")); err != nil {
		t.Fatal(err)
	}
	left, err := os.ReadDir(tmp)
	if err != nil || len(left) != 0 {
		t.Fatalf(".tmp after the writes: %v %v", left, err)
	}
	fi, err := os.Stat(tmp)
	if err != nil || fi.Mode().Perm() != DirMode {
		t.Fatalf(".tmp mode: %v %v", fi, err)
	}
	for _, rel := range []string{"runs/run/tool_calls/call-1.context", "runs/run/tool_calls/call-1/result.json", "runs/run/tool_calls/call-1/spill-1.txt"} {
		fi, err := os.Stat(filepath.Join(root, "artifacts", filepath.FromSlash(rel)))
		if err != nil || fi.Mode().Perm() != FileMode {
			t.Errorf("%s: %v %v", rel, fi, err)
		}
	}
}
