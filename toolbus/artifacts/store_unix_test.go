//go:build unix

package artifacts

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The modes are exact whatever the umask: a strict one would otherwise make
// files 0400 and folders 0500, a lax one cannot widen them.
func TestWriteModesIgnoreUmask(t *testing.T) {
	for _, mask := range []int{0o277, 0o022, 0} {
		root := t.TempDir()
		s := newStore(t, Options{Root: root})
		old := syscall.Umask(mask)
		_, _, err := s.WriteCall("t", "s", []byte("c"), []byte("{}"))
		if err == nil {
			_, err = s.Spill("t", "s", 0, []byte("x"))
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatalf("umask %#o: %v", mask, err)
		}
		calls := filepath.Join(root, "artifacts", "runs", "t", "tool_calls")
		for _, f := range []string{"s.context", "s/result.json", "s/spill-0.txt"} {
			wantMode(t, filepath.Join(calls, filepath.FromSlash(f)), 0o600)
		}
		for _, d := range []string{root + "/artifacts", root + "/artifacts/runs", root + "/artifacts/runs/t", calls, calls + "/s"} {
			wantMode(t, d, 0o700)
		}
	}
}

// A FIFO planted where an artifact should be is refused, not opened (which
// would block until a writer came).
func TestReadRefusesFIFO(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, Options{Root: root})
	if _, _, err := s.WriteCall("t", "s", []byte("c"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(root, "artifacts", "runs", "t", "tool_calls", "f.context")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, _, err := s.Read("artifact://runs/t/tool_calls/f.context", ModeGet, 0)
	var ue *URIError
	if !errors.As(err, &ue) {
		t.Errorf("Read(fifo) = %v, want a *URIError", err)
	}
	items, _, err := s.List("t")
	if err != nil || len(items) != 2 {
		t.Errorf("List = %v, %v; want the two real files", items, err)
	}
	_ = os.Remove(fifo)
}
