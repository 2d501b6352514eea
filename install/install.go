// Package install renders and (with the service issue) installs awbridge as
// an OS service through kardianos/service, with awbridge's own unit
// templates. For now it renders the systemd user unit.
package install

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/kardianos/service"
)

// Platform names the service system kardianos/service detects on this
// machine (e.g. "linux-systemd", "darwin-launchd", "windows-service").
func Platform() string { return service.Platform() }

// UnitOptions are the values of a rendered unit.
type UnitOptions struct {
	// Executable is the absolute path of the awbridge binary.
	Executable string
	// ConfigPath is passed as --config when set.
	ConfigPath string
}

const systemdUser = `[Unit]
Description=awbridge: what the person at this desktop is doing now, for AI assistants
Documentation=https://github.com/awbridge/awbridge
After=default.target

[Service]
Type=simple
ExecStart={{.Exec}}
Restart=on-failure
RestartSec=2s

[Install]
WantedBy=default.target
`

// SystemdUserUnit renders the systemd user unit for o.
func SystemdUserUnit(o UnitOptions) (string, error) {
	if o.Executable == "" || !strings.HasPrefix(o.Executable, "/") {
		return "", fmt.Errorf("install: executable %q is not an absolute path", o.Executable)
	}
	if strings.Contains(o.Executable, "/go-build") {
		return "", fmt.Errorf("install: %s is a temporary `go run` binary; build awbridge (make build) and install that", o.Executable)
	}
	exec := quote(o.Executable) + " serve"
	if o.ConfigPath != "" {
		exec += " --config " + quote(o.ConfigPath)
	}
	t := template.Must(template.New("unit").Parse(systemdUser))
	var b bytes.Buffer
	if err := t.Execute(&b, map[string]string{"Exec": exec}); err != nil {
		return "", fmt.Errorf("install: rendering the unit: %w", err)
	}
	return b.String(), nil
}

// quote quotes a path for systemd's ExecStart when it needs it.
func quote(s string) string {
	if !strings.ContainsAny(s, " \t\"\\") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
