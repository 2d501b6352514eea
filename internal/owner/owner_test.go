package owner

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestMine(t *testing.T) {
	fi, err := os.Stat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if Mine(fi) != Checked {
		t.Errorf("Mine(a folder I made) = %v on a system where Checked = %v", Mine(fi), Checked)
	}
	if Mine(fakeInfo{}) {
		t.Error("a file whose owner is unknown is mine")
	}
	if Checked {
		root, err := os.Stat(filepath.Join("/", "."))
		if err == nil && os.Geteuid() != 0 && Mine(root) {
			t.Error("/ is mine")
		}
	}
}

// fakeInfo is a FileInfo without a system stat.
type fakeInfo struct{}

func (fakeInfo) Name() string       { return "x" }
func (fakeInfo) Size() int64        { return 0 }
func (fakeInfo) Mode() os.FileMode  { return 0 }
func (fakeInfo) ModTime() time.Time { return time.Time{} }
func (fakeInfo) IsDir() bool        { return false }
func (fakeInfo) Sys() any           { return nil }
