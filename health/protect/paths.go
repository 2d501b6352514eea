package protect

import (
	"fmt"
	"os"
	"path/filepath"
)

// BaselinePath is the baseline's path in stateDir; "" when stateDir is "".
func BaselinePath(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return filepath.Join(stateDir, BaselineFile)
}

// Executable is the running binary's path with symlinks resolved. On
// Linux it names the file now at that path even after the binary was
// replaced on disk (an upgrade): the check then says the executable
// changed.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("protect: finding my executable: %w", err)
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("protect: finding my executable: %w", err)
	}
	return real, nil
}
