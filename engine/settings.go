package engine

import "github.com/awbridge/awbridge/config"

// healthSettings are the effective settings the health report shows, so
// that a terminal asking the service sees what the service uses (not what
// its own environment says): the ActivityWatch URL, the sidecar URL ("" for
// none) and the host. config refuses URLs with credentials, a query or a
// fragment, so these are bare.
func healthSettings(c config.Config) map[string]string {
	return map[string]string{
		"activitywatch_url":  c.AW.URL,
		"activitywatch_host": c.AW.Host,
		"sidecar_url":        c.Sidecar.URL,
	}
}
