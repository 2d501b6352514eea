package activity

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/awbridge/awbridge/aw"
	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/nowframe"
)

// The person's other devices: ActivityWatch's sync (and its Android app)
// put other machines' buckets beside this one's, under their hostnames. A
// query's host is this machine ("", the default), a hostname, or HostAll:
// every host with a window bucket, combined as the web UI's multi-device
// view does (transform.CanonicalHosts), this machine first.

// HostAll asks for every device's activity combined.
const HostAll = "all"

// HostFromArgument is a Source's HostSource when the call named the host.
const HostFromArgument = "argument"

// maxHostsShown bounds the hostnames an answer or an error lists.
const maxHostsShown = 20

// UnknownHostError is a host argument naming no host with window or AFK
// buckets; Hosts are those that have them (bounded, sanitized: data, kept
// out of the message).
type UnknownHostError struct {
	Host  string
	Hosts []string
}

func (e *UnknownHostError) Error() string {
	return fmt.Sprintf("host: ActivityWatch has no host %s (it has %d; give one of them, or %q for all)",
		quote(e.Host), len(e.Hosts), HostAll)
}

// HostNames are the hosts with window or AFK buckets in the order the web
// UI ranks them: self (ActivityWatch's or the configured host) first, then
// hosts with both watchers, then the most recently updated; at most
// maxHostsShown, sanitized for display.
func HostNames(self string, buckets map[string]aw.Bucket) []string {
	return shown(hostOrder(self, buckets))
}

func shown(hosts []string) []string {
	out := make([]string, 0, min(len(hosts), maxHostsShown))
	for _, h := range hosts[:min(len(hosts), maxHostsShown)] {
		out = append(out, nowframe.SanitizeTitle(h, 64))
	}
	return out
}

// hostInfo is what hostOrder ranks a host by.
type hostInfo struct {
	window, afk bool
	newest      time.Time
}

// hostsOf groups the window and AFK buckets by host.
func hostsOf(buckets map[string]aw.Bucket) map[string]*hostInfo {
	hosts := map[string]*hostInfo{}
	for _, b := range buckets {
		if b.Type != aw.TypeWindow && b.Type != aw.TypeAFK {
			continue
		}
		h := hosts[b.Hostname]
		if h == nil {
			h = &hostInfo{}
			hosts[b.Hostname] = h
		}
		h.window = h.window || b.Type == aw.TypeWindow
		h.afk = h.afk || b.Type == aw.TypeAFK
		if b.LastUpdated.After(h.newest) {
			h.newest = b.LastUpdated
		}
	}
	return hosts
}

// hostOrder is every host with window or AFK buckets, self first (see
// HostNames), unsanitized.
func hostOrder(self string, buckets map[string]aw.Bucket) []string {
	hosts := hostsOf(buckets)
	rank := func(h string) int {
		i := hosts[h]
		switch {
		case h == self:
			return 3
		case i.window && i.afk:
			return 2
		}
		return 1
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		if h != "" {
			names = append(names, h)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(b), rank(a)), hosts[b].newest.Compare(hosts[a].newest), cmp.Compare(a, b))
	})
	return names
}

// selections are the buckets host means on m's server, in precedence
// order: m's own selection for "" (or the host it names), every host with
// a window bucket for HostAll, else the named host's (matched as frames
// match the configured host), or an *UnknownHostError.
func selections(m *serverMeta, host string) ([]nowframe.Selection, error) {
	switch {
	case host == "" || strings.EqualFold(host, m.Selection.Host) && m.Selection.Host != "":
		return []nowframe.Selection{m.Selection}, nil
	case host != HostAll:
		sel := nowframe.SelectBuckets(host, &m.Info, m.Buckets, m.At)
		if sel.Window == "" && sel.AFK == "" {
			return nil, &UnknownHostError{Host: host, Hosts: HostNames(m.Selection.Host, m.Buckets)}
		}
		sel.HostSource, sel.Note = HostFromArgument, ""
		return []nowframe.Selection{sel}, nil
	}
	hosts := hostsOf(m.Buckets)
	var sels []nowframe.Selection
	for _, h := range hostOrder(m.Selection.Host, m.Buckets) {
		if !hosts[h].window {
			continue // as the web UI's multi-device query
		}
		sel := m.Selection
		if h != m.Selection.Host {
			sel = nowframe.SelectBuckets(h, &m.Info, m.Buckets, m.At)
		}
		sels = append(sels, sel)
	}
	if len(sels) == 0 {
		return []nowframe.Selection{m.Selection}, nil // its notes say what is missing
	}
	return sels, nil
}

// hostsWithData are the hosts with data within [start, end): those read
// that gave events, and those not read whose window or AFK buckets were
// updated since start; in hostOrder, sanitized.
func hostsWithData(m *serverMeta, in inputs, events []int, start time.Time) []string {
	read := map[string]bool{}
	for t, tg := range in.targets {
		if tg.role != RoleWeb {
			read[in.hosts[tg.host]] = read[in.hosts[tg.host]] || events[t] > 0
		}
	}
	hosts := hostsOf(m.Buckets)
	var out []string
	for _, h := range hostOrder(m.Selection.Host, m.Buckets) {
		if r, ok := read[h]; ok && r || !ok && !hosts[h].newest.Before(start) {
			out = append(out, h)
		}
	}
	return shown(out)
}

// hostInputs groups a unit's events by host, in precedence order.
func (c *computer) hostInputs(margin span64) ([]transform.Input, [][]ev) {
	ins := make([]transform.Input, len(c.in.hosts))
	for h := range ins {
		ins[h].NoAFK = !c.in.hasAFK[h]
	}
	var editors [][]ev
	for t, tg := range c.in.targets {
		ci := &ins[tg.host]
		evs := c.in.filters.Events(tg.id, c.ld.gather(t, margin.start, margin.end))
		switch tg.role {
		case RoleWindow:
			ci.Window = evs
		case RoleAFK:
			ci.AFK = evs
		case RoleEditor:
			editors = append(editors, evs)
		default:
			if tg.excluded {
				for k := range evs {
					evs[k].Data = evs[k].Data.With(excludedMark, "1")
				}
			}
			ci.Browsers = append(ci.Browsers, transform.Browser{Name: tg.browser, Events: evs})
		}
	}
	return ins, editors
}

// canonical is the canonical events of one host or of several combined,
// and the AFK watchers' "afk" time (flooded): of several hosts, the time
// one of them reports away and none is active.
func canonical(ctx context.Context, ins []transform.Input, opt transform.Options) (transform.Result, []ev, error) {
	away := func(in transform.Input) []ev {
		return transform.Filter(transform.Flood(in.AFK, transform.DefaultPulsetime), func(f transform.Fields) bool { return f.In("status", "afk") })
	}
	if len(ins) == 1 {
		res, err := transform.CanonicalContext(ctx, ins[0], opt)
		return res, away(ins[0]), err
	}
	res, err := transform.CanonicalHosts(ctx, ins, opt)
	if err != nil {
		return res, nil, err
	}
	var all []ev
	for _, in := range ins {
		all = transform.UnionNoOverlap(all, away(in))
	}
	all = transform.Filter(transform.UnionNoOverlap(res.NotAFK, all), func(f transform.Fields) bool { return f.In("status", "afk") })
	return res, all, nil
}
