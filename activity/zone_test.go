package activity

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// zoneDir is a folder of zone files copied from the machine's zone
// database, laid out as one (…/zoneinfo/Area/City), so a link into it
// names its zone; the test is skipped without the database.
func zoneDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "zoneinfo")
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("/usr/share/zoneinfo", n))
		if err != nil {
			t.Skipf("no zone database: %v", err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// relink points the link at path to target, replacing it atomically as
// timedatectl does.
func relink(t *testing.T, target, path string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func noTZ(string) (string, bool) { return "", false }

// TestMachineZoneFollows: the machine's zone is read again when
// /etc/localtime changes (the link's target, a copied file), at most
// every recheck, without a restart.
func TestMachineZoneFollows(t *testing.T) {
	dir := zoneDir(t, "Europe/Berlin", "Asia/Tokyo", "America/New_York")
	localtime := filepath.Join(filepath.Dir(dir), "localtime")
	relink(t, filepath.Join(dir, "Europe/Berlin"), localtime)
	clk := &clock{t: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)}
	mz := NewMachineZone(MachineZoneOptions{LookupEnv: noTZ, Path: localtime, Now: clk.now})
	check := func(wantName, wantOffset string) {
		t.Helper()
		z := mz.Zone()
		if z.Name != wantName || z.OffsetAt(clk.now()) != wantOffset {
			t.Errorf("zone %s %s, want %s %s", z.Name, z.OffsetAt(clk.now()), wantName, wantOffset)
		}
	}
	check("Europe/Berlin", "+01:00")

	relink(t, filepath.Join(dir, "Asia/Tokyo"), localtime)
	check("Europe/Berlin", "+01:00") // within the recheck interval
	clk.set(clk.now().Add(zoneRecheck))
	check("Asia/Tokyo", "+09:00")

	// A copied file has no name; its rules still give the offset.
	b, err := os.ReadFile(filepath.Join(dir, "America/New_York"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(localtime); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(localtime, b, 0o644); err != nil {
		t.Fatal(err)
	}
	clk.set(clk.now().Add(zoneRecheck))
	check("Local", "-05:00")

	// No zone file: UTC, as Go's time.Local.
	if err := os.Remove(localtime); err != nil {
		t.Fatal(err)
	}
	clk.set(clk.now().Add(zoneRecheck))
	check("UTC", "+00:00")
}

// TestMachineZoneTZ: $TZ wins over /etc/localtime and is read as Go
// reads it.
func TestMachineZoneTZ(t *testing.T) {
	dir := zoneDir(t, "Asia/Tokyo")
	env := func(v string, set bool) func(string) (string, bool) {
		return func(string) (string, bool) { return v, set }
	}
	for _, c := range []struct {
		name   string
		lookup func(string) (string, bool)
		want   string
	}{
		{"a name", env("Europe/Berlin", true), "Europe/Berlin"},
		{"with a colon", env(":America/New_York", true), "America/New_York"},
		{"empty is UTC", env("", true), "UTC"},
		{"a path", env(filepath.Join(dir, "Asia/Tokyo"), true), "Asia/Tokyo"},
		{"a path with a colon", env(":"+filepath.Join(dir, "Asia/Tokyo"), true), "Asia/Tokyo"},
		{"unknown is UTC", env("Nowhere/Atlantis", true), "UTC"},
		{"a POSIX rule is UTC", env("CET-1CEST,M3.5.0,M10.5.0/3", true), "UTC"},
		{"Local is UTC", env("Local", true), "UTC"},
		{"a missing path is UTC", env("/nowhere/zoneinfo/Europe/Berlin", true), "UTC"},
	} {
		mz := NewMachineZone(MachineZoneOptions{LookupEnv: c.lookup, Path: "/nowhere"})
		if z := mz.Zone(); z.Name != c.want || z.Loc == nil {
			t.Errorf("%s: %+v, want %s", c.name, z, c.want)
		}
	}
}

func TestZoneNameOfPath(t *testing.T) {
	for path, want := range map[string]string{
		"/usr/share/zoneinfo/Europe/Berlin":          "Europe/Berlin",
		"/var/db/timezone/zoneinfo/America/New_York": "America/New_York",
		"../usr/share/zoneinfo/Asia/Kolkata":         "Asia/Kolkata",
		"":                                           "Local",
		"/etc/mytime":                                "Local",
		"/usr/share/zoneinfo/Mars/Base":              "Local",
	} {
		if got := zoneNameOfPath(path); got != want {
			t.Errorf("%q: %q, want %q", path, got, want)
		}
	}
}

// TestUTCOffset: offsets as a model must read them, POSIX-signed names
// included.
func TestUTCOffset(t *testing.T) {
	for _, c := range []struct {
		zone string
		at   time.Time
		want string
	}{
		{"Etc/GMT+9", time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), "-09:00"},
		{"Etc/GMT-14", time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), "+14:00"},
		{"Europe/Berlin", time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), "+01:00"},
		{"Europe/Berlin", time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC), "+02:00"},
		{"America/St_Johns", time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), "-03:30"},
		{"Asia/Kathmandu", time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), "+05:45"},
		{"UTC", time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), "+00:00"},
		{"Europe/Amsterdam", time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), "+00:19:32"}, // local mean time
	} {
		if got := zone(t, c.zone).OffsetAt(c.at); got != c.want {
			t.Errorf("%s at %s: %s, want %s", c.zone, c.at, got, c.want)
		}
	}
	// Less than a minute west of UTC (Africa/Accra's local mean time,
	// -0:00:52, in Go's zoneinfo): time.Format writes "+00:00:-52".
	if got := UTCOffset(time.Date(1900, 1, 1, 0, 0, 0, 0, time.FixedZone("LMT", -52))); got != "-00:00:52" {
		t.Errorf("52 s west of UTC: %s, want -00:00:52", got)
	}
}

// TestPeriodOffsets: a period says its zone's offset at its start, and
// each change within it.
func TestPeriodOffsets(t *testing.T) {
	type change struct{ at, off string }
	for _, c := range []struct {
		zone, now, period string
		want              string
		changes           []change
	}{
		{"Etc/GMT+9", "2026-03-30T10:00:00-09:00", "today", "-09:00", nil},
		{"Europe/Berlin", "2026-03-30T10:00:00+02:00", "last_week", "+01:00",
			[]change{{"2026-03-29T03:00:00+02:00", "+02:00"}}},
		{"Europe/Berlin", "2026-03-30T10:00:00+02:00", "today", "+02:00", nil},
		{"America/New_York", "2026-12-01T10:00:00-05:00", "last_366d", "-05:00",
			[]change{{"2026-03-08T03:00:00-04:00", "-04:00"}, {"2026-11-01T01:00:00-05:00", "-05:00"}}},
	} {
		spec, err := ParseSpec(c.period, "", "")
		if err != nil {
			t.Fatal(err)
		}
		p, err := calendar(t, c.zone, "", "").Resolve(spec, at(t, c.now))
		if err != nil {
			t.Fatal(err)
		}
		var got []change
		for _, ch := range p.UTCOffsetChanges {
			got = append(got, change{ch.At.Format(time.RFC3339), ch.UTCOffset})
		}
		gj, wj := fmt.Sprint(got), fmt.Sprint(c.changes)
		if p.UTCOffset != c.want || gj != wj {
			t.Errorf("%s %s: offset %s changes %s, want %s %s", c.zone, c.period, p.UTCOffset, gj, c.want, wj)
		}
	}
}

// TestServiceTodayFollowsMachineZone: when the machine's zone changes
// (a laptop that travels), the next call's "today" is the new zone's,
// without a restart.
func TestServiceTodayFollowsMachineZone(t *testing.T) {
	dir := zoneDir(t, "Europe/Berlin", "America/New_York")
	localtime := filepath.Join(filepath.Dir(dir), "localtime")
	relink(t, filepath.Join(dir, "Europe/Berlin"), localtime)
	env := newSimEnv(t, envOptions{week: smallWeek})
	clk := &clock{t: env.now}
	mz := NewMachineZone(MachineZoneOptions{LookupEnv: noTZ, Path: localtime, Now: clk.now})
	s := newService(t, env, clk, ServiceOptions{Zone: mz.Zone})
	today := func() Period {
		t.Helper()
		sum, err := s.Summary(t.Context(), SummaryQuery{Period: "today"})
		if err != nil {
			t.Fatal(err)
		}
		return sum.Period
	}
	for _, name := range []string{"Europe/Berlin", "America/New_York"} {
		relink(t, filepath.Join(dir, name), localtime)
		clk.set(clk.now().Add(zoneRecheck))
		p := today()
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		now := clk.now().In(loc)
		want := time.Date(now.Year(), now.Month(), now.Day(), 4, 0, 0, 0, loc)
		if want.After(now) {
			want = time.Date(now.Year(), now.Month(), now.Day()-1, 4, 0, 0, 0, loc)
		}
		if p.Timezone != name || !p.Start.Equal(want) || p.UTCOffset != UTCOffset(want) {
			t.Errorf("today in %s: %s from %s (%s), want from %s", name, p.Timezone, p.Start, p.UTCOffset, want)
		}
	}
}
