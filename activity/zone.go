package activity

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// zoneRecheck is how often MachineZone looks at the machine's zone
// source (TZ, /etc/localtime) again at most.
const zoneRecheck = 2 * time.Second

// maxZoneFile bounds the bytes read of a zone file (a TZif file is a few
// KiB).
const maxZoneFile = 1 << 20

// MachineZone is the machine's time zone, followed while the process runs
// (Go reads time.Local once, so a laptop that travels would keep counting
// days in the zone it started in). On Unix the zone is $TZ when set (as Go
// reads it: empty is UTC, a leading ':' is dropped, a path is a zone file,
// else a name), else /etc/localtime (a link into a zoneinfo folder names
// the zone; a copied file is "Local"); an unreadable source is UTC, as for
// Go. It looks again at most every zoneRecheck and loads the zone again
// only when the source changed. On Windows it is time.Local, not
// followed. Safe for concurrent use.
type MachineZone struct {
	o     MachineZoneOptions
	fixed bool // Windows: time.Local

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
// machine's.
type MachineZoneOptions struct {
	LookupEnv func(string) (string, bool) // default os.LookupEnv
	Path      string                      // the zone file without TZ (default /etc/localtime)
	Now       func() time.Time            // spaces the looks (default time.Now)
}

// NewMachineZone returns the machine's zone, followed.
func NewMachineZone(o MachineZoneOptions) *MachineZone {
	m := &MachineZone{fixed: runtime.GOOS == "windows" && o.Path == "" && o.LookupEnv == nil}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	o.Path = cmp.Or(o.Path, "/etc/localtime")
	if o.Now == nil {
		o.Now = time.Now
	}
	m.o = o
	return m
}

// Zone is the machine's zone now.
func (m *MachineZone) Zone() Zone {
	if m.fixed {
		return Zone{Name: "Local", Loc: time.Local}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.Now()
	if m.loaded && now.Sub(m.checked) < zoneRecheck && !now.Before(m.checked) {
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
	st.tz, st.tzSet = m.o.LookupEnv("TZ")
	file := m.o.Path
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
	file := m.o.Path
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

// UTCOffset is t's offset from UTC in its location, "+01:00", "-09:00"
// ("Etc/GMT+9": POSIX signs are reversed in those names), with seconds
// only when it has some (historic local mean time).
func UTCOffset(t time.Time) string {
	// Not time.Format: it writes 52 s west of UTC as "+00:00:-52".
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	if off%60 != 0 {
		return fmt.Sprintf("%s%02d:%02d:%02d", sign, off/3600, off/60%60, off%60)
	}
	return fmt.Sprintf("%s%02d:%02d", sign, off/3600, off/60%60)
}

// OffsetAt is the zone's UTC offset at t (see UTCOffset).
func (z Zone) OffsetAt(t time.Time) string { return UTCOffset(t.In(z.loc())) }
