package protect

import (
	"fmt"
	"os"
	"path"
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

// UnitPath is where kardianos/service installs the unit of service name
// on goos: per user ~/.config/systemd/user/<name>.service (Linux and
// other systemd systems; not XDG_CONFIG_HOME: kardianos uses the home
// folder) or ~/Library/LaunchAgents/<name>.plist (macOS); with system,
// /etc/systemd/system/<name>.service or /Library/LaunchDaemons/<name>.plist.
// "" where the service is not a file (Windows) or home is unknown.
func UnitPath(goos, home, name string, system bool) string {
	if name == "" {
		return ""
	}
	switch goos {
	case "windows", "plan9", "js", "wasip1":
		return ""
	case "darwin":
		if system {
			return "/Library/LaunchDaemons/" + name + ".plist"
		}
		if home == "" || !path.IsAbs(home) {
			return ""
		}
		return path.Join(home, "Library", "LaunchAgents", name+".plist")
	}
	if system {
		return "/etc/systemd/system/" + name + ".service"
	}
	if home == "" || !path.IsAbs(home) {
		return ""
	}
	return path.Join(home, ".config", "systemd", "user", name+".service")
}
