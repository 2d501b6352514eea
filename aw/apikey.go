package aw

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxRustConfigBytes bounds aw-server-rust's config.toml.
const maxRustConfigBytes = 1 << 20

// ReadAPIKeyFile reads aw-server-rust's config.toml and returns its API key:
// [auth] api_key, else a top-level api_key, else "" (auth disabled; an empty
// key also disables it in aw-server-rust). Unknown keys are ignored. A missing
// file is an error wrapping fs.ErrNotExist. Errors never contain the file's
// contents (a TOML parse error could quote the key). Safe for concurrent use.
func ReadAPIKeyFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("aw: read api key: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRustConfigBytes+1))
	if err != nil {
		return "", fmt.Errorf("aw: read api key: %w", err)
	}
	if len(data) > maxRustConfigBytes {
		return "", fmt.Errorf("aw: read api key: %s is larger than %d bytes", name, maxRustConfigBytes)
	}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return "", fmt.Errorf("aw: read api key: %s: invalid TOML at line %d", name, pe.Position.Line)
		}
		return "", fmt.Errorf("aw: read api key: %s: invalid TOML", name)
	}
	if auth, ok := doc["auth"].(map[string]any); ok {
		if v, ok := auth["api_key"]; ok {
			s, ok := v.(string)
			if !ok {
				return "", fmt.Errorf("aw: read api key: %s: [auth] api_key is not a string", name)
			}
			if s != "" {
				return s, nil
			}
		}
	}
	if v, ok := doc["api_key"]; ok {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("aw: read api key: %s: api_key is not a string", name)
		}
		return s, nil
	}
	return "", nil
}

// Platform is what DefaultRustConfigPath needs to know about the machine.
type Platform struct {
	GOOS    string              // runtime.GOOS
	Getenv  func(string) string // os.Getenv; nil means an empty environment
	HomeDir string              // the user's home directory; "" if unknown
}

// DefaultRustConfigPath returns where aw-server-rust keeps config.toml:
//   - Linux and other Unix: $XDG_CONFIG_HOME (when absolute, else
//     ~/.config)/activitywatch/aw-server-rust/config.toml
//   - macOS: ~/Library/Application Support/activitywatch/aw-server-rust/config.toml
//   - Windows: %LOCALAPPDATA%\activitywatch\aw-server-rust\config.toml
//
// It returns "" when the needed directory is unknown.
func DefaultRustConfigPath(p Platform) string {
	getenv := p.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	switch p.GOOS {
	case "windows":
		base := getenv("LOCALAPPDATA")
		if !isWindowsAbs(base) {
			if !isWindowsAbs(p.HomeDir) {
				return ""
			}
			base = strings.TrimRight(p.HomeDir, `\/`) + `\AppData\Local`
		}
		return strings.TrimRight(base, `\/`) + `\activitywatch\aw-server-rust\config.toml`
	case "darwin", "ios":
		if !path.IsAbs(p.HomeDir) {
			return ""
		}
		return path.Join(p.HomeDir, "Library", "Application Support", "activitywatch", "aw-server-rust", "config.toml")
	default:
		base := getenv("XDG_CONFIG_HOME")
		if !path.IsAbs(base) {
			if !path.IsAbs(p.HomeDir) {
				return ""
			}
			base = path.Join(p.HomeDir, ".config")
		}
		return path.Join(base, "activitywatch", "aw-server-rust", "config.toml")
	}
}

// isWindowsAbs reports whether p looks like an absolute Windows path
// (C:\... or \\server\share).
func isWindowsAbs(p string) bool {
	if strings.HasPrefix(p, `\\`) {
		return len(p) > 2
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}
