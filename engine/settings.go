package engine

import (
	"net/url"

	"github.com/awbridge/awbridge/config"
)

// healthSettings are the effective settings the health report shows, so
// that a terminal asking the service sees what the service uses (not what
// its own environment says): the ActivityWatch URL, the sidecar URL ("" for
// none) and the host. URLs lose credentials, query and fragment.
func healthSettings(c config.Config) map[string]string {
	return map[string]string{
		"activitywatch_url":  bareURL(c.AW.URL),
		"activitywatch_host": c.AW.Host,
		"sidecar_url":        bareURL(c.Sidecar.URL),
	}
}

// bareURL is u without user info, query or fragment; "" for "" and for a
// URL that does not parse.
func bareURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || u == "" {
		return ""
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}
