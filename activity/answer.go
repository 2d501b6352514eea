package activity

import "time"

// Shorten leaves out of s what a compact answer does without: the bucket
// listing and the freshness detail (see shortenSource).
func (s *Summary) Shorten() { shortenSource(&s.Source, &s.Freshness) }

// Shorten leaves out of h what a compact answer does without (see
// shortenSource).
func (h *History) Shorten() { shortenSource(&h.Source, &h.Freshness) }

// shortenSource drops the buckets read and the time the answer was
// computed at; whose time it is (host, hosts, note) and the stale
// watchers, which say the numbers may miss time, stay.
func shortenSource(src *Source, f *Freshness) {
	src.Buckets, f.AsOf = nil, time.Time{}
}

// noteDomains explains why domains can add up to more than the browser's
// time: the web UI's query keeps a tab's time while its browser window has
// focus, before the AFK cut (on the real aw-server's recorded day, 14,141 s
// of domains beside 12,135 s of active Chrome time).
const noteDomains = "domain time counts the browser's focus even while away, as ActivityWatch's web UI does; share divides by active time"

// domainNote adds noteDomains to s when it shows domains.
func (s *Summary) domainNote() {
	if len(s.TopDomains) > 0 || s.GroupBy == GroupByDomain && len(s.Top) > 0 {
		s.Notes = appendNote(s.Notes, noteDomains)
	}
}
