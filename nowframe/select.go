package nowframe

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/internal/text"
)

// Where the host of a Selection came from.
const (
	HostFromConfig       = "config"
	HostFromAWHostname   = "aw_hostname"
	HostFromLatestBucket = "latest_bucket"
	HostFromNone         = "none"
)

// legacyWebHost is the hostname old aw-watcher-web versions gave their
// buckets (an extension cannot learn the machine's name).
const legacyWebHost = "unknown"

// Selection is which ActivityWatch buckets describe "now": the buckets of
// one host, chosen by (host, type). A plain value.
type Selection struct {
	Host       string `json:"host"`        // "" if none
	HostSource string `json:"host_source"` // HostFrom...
	// Window and AFK are Host's most recently updated currentwindow and
	// afkstatus buckets (rendered as now.window.bucket, now.afk.bucket).
	Window string `json:"-"`
	AFK    string `json:"-"`
	// Web lists Host's web.tab.current buckets, most recently updated first.
	Web []string `json:"web_buckets,omitempty"`
	// Note says why a hostname was not used, or what is missing: fixed
	// text, as any local program can name a bucket's host.
	Note string `json:"note,omitempty"`
}

// hostBuckets are one host's buckets, each list most recently updated
// first.
type hostBuckets struct {
	window, afk, web []aw.Bucket
}

func (h *hostBuckets) hasActivity() bool { return len(h.window)+len(h.afk) > 0 }

// newerBucket orders buckets most recently updated first, then by id.
func newerBucket(a, b aw.Bucket) int {
	if c := b.LastUpdated.Compare(a.LastUpdated); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// SelectBuckets chooses the buckets to read: configuredHost's when set
// (else nothing: another machine is never read silently), else those of
// ActivityWatch's hostname, else those of the host of the most recently
// updated window or AFK bucket. info and buckets may be nil. Hostnames
// match exactly, else case-insensitively. Without a web bucket, the
// legacy host "unknown"'s are used. A bucket updated in the future ranks
// as never updated (anyone can date an event 2099). Pure.
func SelectBuckets(configuredHost string, info *aw.Info, buckets map[string]aw.Bucket, now time.Time) Selection {
	byHost := make(map[string]*hostBuckets)
	var latest *aw.Bucket
	future := now.Add(DefaultThresholds().FutureTolerance)
	for id, b := range buckets {
		if b.ID == "" {
			b.ID = id
		}
		if b.LastUpdated.After(future) {
			b.LastUpdated = time.Time{}
		}
		hb := byHost[b.Hostname]
		if hb == nil {
			hb = &hostBuckets{}
			byHost[b.Hostname] = hb
		}
		switch b.Type {
		case aw.TypeWindow:
			hb.window = append(hb.window, b)
		case aw.TypeAFK:
			hb.afk = append(hb.afk, b)
		case aw.TypeWeb:
			hb.web = append(hb.web, b)
		default:
			continue
		}
		if b.Type != aw.TypeWeb && (latest == nil || newerBucket(b, *latest) < 0) {
			latest = &b
		}
	}
	for _, hb := range byHost {
		slices.SortFunc(hb.window, newerBucket)
		slices.SortFunc(hb.afk, newerBucket)
		slices.SortFunc(hb.web, newerBucket)
	}

	if configuredHost != "" {
		host, hb := lookupHost(byHost, configuredHost)
		if hb == nil || !hb.hasActivity() {
			return Selection{
				Host:       configuredHost,
				HostSource: HostFromConfig,
				Note:       "the configured host has no window or AFK buckets; no other host is read",
			}
		}
		sel := fill(Selection{Host: host, HostSource: HostFromConfig}, hb, byHost)
		if host != configuredHost {
			sel.Note = text.JoinNote(sel.Note, "the configured host matched the buckets of host case-insensitively")
		}
		return sel
	}

	var note string
	switch {
	case info == nil:
		note = "ActivityWatch server info unavailable"
	case info.Hostname == "":
		note = "ActivityWatch reported no hostname"
	default:
		host, hb := lookupHost(byHost, info.Hostname)
		if hb != nil && hb.hasActivity() {
			return fill(Selection{Host: host, HostSource: HostFromAWHostname}, hb, byHost)
		}
		note = "aw_info.hostname has no window or AFK buckets"
	}
	if latest == nil {
		return Selection{HostSource: HostFromNone, Note: text.JoinNote(note, "no window or AFK buckets on this server")}
	}
	sel := fill(Selection{Host: latest.Hostname, HostSource: HostFromLatestBucket}, byHost[latest.Hostname], byHost)
	sel.Note = text.JoinNote(note, "using the host of the most recently updated bucket")
	return sel
}

// fill sets the buckets of hb into sel.
func fill(sel Selection, hb *hostBuckets, byHost map[string]*hostBuckets) Selection {
	if len(hb.window) > 0 {
		sel.Window = hb.window[0].ID
	} else {
		sel.Note = text.JoinNote(sel.Note, "no window bucket for this host")
	}
	if len(hb.afk) > 0 {
		sel.AFK = hb.afk[0].ID
	} else {
		sel.Note = text.JoinNote(sel.Note, "no AFK bucket for this host")
	}
	web := hb.web
	if len(web) == 0 && sel.Host != legacyWebHost {
		if legacy := byHost[legacyWebHost]; legacy != nil && len(legacy.web) > 0 {
			web = legacy.web
			sel.Note = text.JoinNote(sel.Note, `web buckets of host "unknown" (older aw-watcher-web) are used`)
		}
	}
	for _, b := range web {
		sel.Web = append(sel.Web, b.ID)
	}
	return sel
}

// lookupHost finds host's buckets: exactly, else the first
// case-insensitive match in sorted order.
func lookupHost(byHost map[string]*hostBuckets, host string) (string, *hostBuckets) {
	if hb, ok := byHost[host]; ok {
		return host, hb
	}
	var found string
	for h := range byHost {
		if strings.EqualFold(h, host) && (found == "" || h < found) {
			found = h
		}
	}
	if found == "" {
		return host, nil
	}
	return found, byHost[found]
}
