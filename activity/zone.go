package activity

import (
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultZoneRecheck is how often MachineZone looks at the machine's zone
// source (TZ, /etc/localtime) again at most.
const DefaultZoneRecheck = 2 * time.Second

// maxZoneFile bounds the bytes read of a zone file (a TZif file is a few
// KiB).
const maxZoneFile = 1 << 20

// MachineZone is the machine's time zone, followed while the process runs:
// Go's time.Local is read once per process, so a laptop that travels would
// keep counting days in the zone it started in. On Unix (Linux, macOS, the
// BSDs) the zone is $TZ when set (as Go reads it: empty is UTC, a leading
// ':' is dropped, a path is a zone file, else a name in the zone database),
// else /etc/localtime (a link into a zoneinfo folder, which names the zone,
// or a copied file, "Local"), loaded from the file itself; an unreadable
// source is UTC, as for Go. It looks again at most every recheck, and loads
// the zone again only when the source changed (TZ's value, the link's
// target, the file's size or modification time). On Windows the zone is
// time.Local (Go reads it from the registry at start): it is not followed,
// a change of zone there needs a restart. Safe for concurrent use.
type MachineZone struct {
	lookupEnv func(string) (string, bool)
	path      string
	recheck   time.Duration
	now       func() time.Time
	fixed     bool // Windows: time.Local

	mu      sync.Mutex
	zone    Zone
	stamp   zoneStamp
	checked time.Time
	loaded  bool
}

// zoneStamp is what says the machine's zone source changed.
type zoneStamp struct {
	tz         string
	tzSet      bool
	link       string
	size       int64
	mod        time.Time
	unreadable bool
}

// MachineZoneOptions configure a MachineZone; the zero value is the
// machine's zone, looked at every DefaultZoneRecheck by time.Now.
type MachineZoneOptions struct {
	// LookupEnv reads the environment (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Path is the zone file used when TZ is unset (default
	// /etc/localtime).
	Path string
	// Recheck is how often the source is looked at again at most
	// (default DefaultZoneRecheck; negative: on every call).
	Recheck time.Duration
	// Now is the clock that spaces the looks (default time.Now).
	Now func() time.Time
}

// NewMachineZone returns the machine's zone, followed.
func NewMachineZone(o MachineZoneOptions) *MachineZone {
	m := &MachineZone{lookupEnv: o.LookupEnv, path: o.Path, recheck: o.Recheck, now: o.Now,
		fixed: runtime.GOOS == "windows" && o.Path == "" && o.LookupEnv == nil}
	if m.lookupEnv == nil {
		m.lookupEnv = os.LookupEnv
	}
	if m.path == "" {
		m.path = "/etc/localtime"
	}
	if m.recheck == 0 {
		m.recheck = DefaultZoneRecheck
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m
}

// Zone is the machine's zone now.
func (m *MachineZone) Zone() Zone {
	if m.fixed {
		return Zone{Name: "Local", Loc: time.Local}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.loaded && m.recheck > 0 && now.Sub(m.checked) < m.recheck && !now.Before(m.checked) {
		return m.zone
	}
	m.checked = now
	st := m.look()
	if m.loaded && st == m.stamp {
		return m.zone
	}
	m.zone, m.stamp, m.loaded = m.load(st), st, true
	return m.zone
}

// look stats the zone source.
func (m *MachineZone) look() zoneStamp {
	var st zoneStamp
	st.tz, st.tzSet = m.lookupEnv("TZ")
	file := m.path
	if st.tzSet {
		file = strings.TrimPrefix(st.tz, ":")
		if !strings.HasPrefix(file, "/") {
			return st // a name (or "": UTC)
		}
	}
	st.link, _ = os.Readlink(file)
	fi, err := os.Stat(file)
	if err != nil {
		st.unreadable = true
		return st
	}
	st.size, st.mod = fi.Size(), fi.ModTime()
	return st
}

// load loads the zone that st describes.
func (m *MachineZone) load(st zoneStamp) Zone {
	utc := Zone{Name: "UTC", Loc: time.UTC}
	file := m.path
	if st.tzSet {
		tz := strings.TrimPrefix(st.tz, ":")
		if tz == "" {
			return utc
		}
		if !strings.HasPrefix(tz, "/") {
			if knownZone(tz) == "Local" {
				return utc // as Go: an unknown TZ is UTC
			}
			loc, _ := time.LoadLocation(tz)
			return Zone{Name: tz, Loc: loc}
		}
		file = tz
	}
	if st.unreadable {
		return utc
	}
	data, err := readZoneFile(file)
	if err != nil {
		return utc
	}
	name := zoneNameOfPath(st.link)
	if name == "Local" {
		name = zoneNameOfPath(file)
	}
	loc, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		return utc
	}
	return Zone{Name: name, Loc: loc}
}

func readZoneFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxZoneFile))
}

// UTCOffset is t's offset from UTC in its location, "+01:00", "-09:00",
// "+05:45" ("Etc/GMT+9" is -09:00: POSIX signs are reversed in those
// names), with seconds only when it has some (historic local mean time).
func UTCOffset(t time.Time) string {
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	b := make([]byte, 0, 9)
	b = append(b, sign)
	b = appendTwo(b, off/3600)
	b = append(b, ':')
	b = appendTwo(b, off/60%60)
	if s := off % 60; s != 0 {
		b = append(b, ':')
		b = appendTwo(b, s)
	}
	return string(b)
}

func appendTwo(b []byte, n int) []byte {
	if n < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// OffsetAt is the zone's UTC offset at t (see UTCOffset).
func (z Zone) OffsetAt(t time.Time) string { return UTCOffset(t.In(z.loc())) }
