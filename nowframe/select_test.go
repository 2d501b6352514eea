package nowframe

import (
	"flag"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/awbridge/awbridge/aw"
)

// updateGolden reports -update: rewrite golden files under testdata/
// (go test ./nowframe -run Golden -update). The flag is shared with any
// other test file of this package that registered it first.
var updateGolden = lookupOrDefineBool("update", "rewrite golden files under testdata/")

func lookupOrDefineBool(name, usage string) func() bool {
	if f := flag.Lookup(name); f != nil {
		return func() bool { return f.Value.String() == "true" }
	}
	p := flag.Bool(name, false, usage)
	return func() bool { return *p }
}

func bucket(id, typ, host string, updated time.Time) aw.Bucket {
	return aw.Bucket{ID: id, Type: typ, Hostname: host, LastUpdated: updated}
}

func bucketMap(bs ...aw.Bucket) map[string]aw.Bucket {
	m := make(map[string]aw.Bucket, len(bs))
	for _, b := range bs {
		m[b.ID] = b
	}
	return m
}

func TestSelectBucketsFixtures(t *testing.T) {
	var info aw.Info
	var buckets map[string]aw.Bucket
	loadBody(t, "info.json", &info)
	loadBody(t, "buckets.json", &buckets)
	if info.Hostname != "vm" || len(buckets) != 3 {
		t.Fatalf("fixtures changed: info hostname %q, %d buckets", info.Hostname, len(buckets))
	}
	tests := []struct {
		name       string
		configured string
		info       *aw.Info
		want       Selection
		noteHas    []string
	}{
		{
			name: "aw hostname has no buckets: latest bucket's host",
			info: &info,
			want: Selection{Host: "testhost", HostSource: HostFromLatestBucket,
				Window: "aw-watcher-window_testhost", AFK: "aw-watcher-afk_testhost",
				Web: []string{"aw-watcher-web-chrome_testhost"}},
			noteHas: []string{"aw_info.hostname", "most recently updated"},
		},
		{
			name: "info unavailable",
			want: Selection{Host: "testhost", HostSource: HostFromLatestBucket,
				Window: "aw-watcher-window_testhost", AFK: "aw-watcher-afk_testhost",
				Web: []string{"aw-watcher-web-chrome_testhost"}},
			noteHas: []string{"info unavailable"},
		},
		{
			name: "aw hostname matches the buckets",
			info: &aw.Info{Hostname: "testhost"},
			want: Selection{Host: "testhost", HostSource: HostFromAWHostname,
				Window: "aw-watcher-window_testhost", AFK: "aw-watcher-afk_testhost",
				Web: []string{"aw-watcher-web-chrome_testhost"}},
		},
		{
			name:       "configured host present",
			configured: "testhost",
			info:       &info,
			want: Selection{Host: "testhost", HostSource: HostFromConfig,
				Window: "aw-watcher-window_testhost", AFK: "aw-watcher-afk_testhost",
				Web: []string{"aw-watcher-web-chrome_testhost"}},
		},
		{
			name:       "configured host matches case-insensitively",
			configured: "TestHost",
			info:       &info,
			want: Selection{Host: "testhost", HostSource: HostFromConfig,
				Window: "aw-watcher-window_testhost", AFK: "aw-watcher-afk_testhost",
				Web: []string{"aw-watcher-web-chrome_testhost"}},
			noteHas: []string{"case-insensitively"},
		},
		{
			name:       "configured host absent: nothing from another host",
			configured: "laptop",
			info:       &aw.Info{Hostname: "testhost"},
			want:       Selection{Host: "laptop", HostSource: HostFromConfig},
			noteHas:    []string{"configured host", "no window or AFK buckets", "no other host"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SelectBuckets(tt.configured, tt.info, buckets, time.Now())
			note := got.Note
			got.Note = ""
			if !selectionEqual(got, tt.want) {
				t.Errorf("SelectBuckets = %+v, want %+v", got, tt.want)
			}
			for _, s := range tt.noteHas {
				if !strings.Contains(note, s) {
					t.Errorf("note %q lacks %q", note, s)
				}
			}
			// Hostnames are watcher data: never inside a note.
			for _, h := range []string{tt.configured, "testhost", "vm"} {
				if h != "" && strings.Contains(note, h) {
					t.Errorf("note %q holds the hostname %q", note, h)
				}
			}
			if len(tt.noteHas) == 0 && note != "" {
				t.Errorf("unexpected note %q", note)
			}
		})
	}
}

func selectionEqual(a, b Selection) bool {
	return a.Host == b.Host && a.HostSource == b.HostSource && a.Window == b.Window &&
		a.AFK == b.AFK && slices.Equal(a.Web, b.Web) && a.Note == b.Note
}

func TestSelectBucketsRules(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		configured string
		info       *aw.Info
		buckets    map[string]aw.Bucket
		want       Selection // Note compared by substring
	}{
		{
			name: "no buckets at all",
			info: &aw.Info{Hostname: "vm"},
			want: Selection{HostSource: HostFromNone, Note: "no window or AFK buckets on this server"},
		},
		{
			name: "only web and other types",
			buckets: bucketMap(
				bucket("aw-watcher-web-chrome_a", aw.TypeWeb, "a", t0),
				bucket("aw-stopwatch", "general.stopwatch", "a", t0.Add(time.Hour)),
			),
			want: Selection{HostSource: HostFromNone, Note: "no window or AFK buckets"},
		},
		{
			name: "several window buckets for one host: most recently updated",
			info: &aw.Info{Hostname: "a"},
			buckets: bucketMap(
				bucket("aw-watcher-window_a", aw.TypeWindow, "a", t0),
				bucket("aw-watcher-window-wayland_a", aw.TypeWindow, "a", t0.Add(time.Second)),
				bucket("aw-watcher-afk_a", aw.TypeAFK, "a", t0),
			),
			want: Selection{Host: "a", HostSource: HostFromAWHostname,
				Window: "aw-watcher-window-wayland_a", AFK: "aw-watcher-afk_a"},
		},
		{
			name: "window buckets tie: lowest id",
			info: &aw.Info{Hostname: "a"},
			buckets: bucketMap(
				bucket("w2_a", aw.TypeWindow, "a", t0),
				bucket("w1_a", aw.TypeWindow, "a", t0),
				bucket("w3_a", aw.TypeWindow, "a", t0),
			),
			want: Selection{Host: "a", HostSource: HostFromAWHostname, Window: "w1_a", Note: "no AFK bucket"},
		},
		{
			name: "latest bucket decides the host",
			buckets: bucketMap(
				bucket("aw-watcher-window_old", aw.TypeWindow, "old", t0),
				bucket("aw-watcher-afk_old", aw.TypeAFK, "old", t0),
				bucket("aw-watcher-afk_new", aw.TypeAFK, "new", t0.Add(time.Minute)),
				// A web bucket never decides the host.
				bucket("aw-watcher-web-chrome_old", aw.TypeWeb, "old", t0.Add(time.Hour)),
			),
			want: Selection{Host: "new", HostSource: HostFromLatestBucket, AFK: "aw-watcher-afk_new",
				Note: "info unavailable; using the host of the most recently updated bucket"},
		},
		{
			name: "latest bucket tie between hosts: lowest bucket id",
			info: &aw.Info{Hostname: ""},
			buckets: bucketMap(
				bucket("aw-watcher-window_zed", aw.TypeWindow, "zed", t0),
				bucket("aw-watcher-window_alpha", aw.TypeWindow, "alpha", t0),
			),
			want: Selection{Host: "alpha", HostSource: HostFromLatestBucket, Window: "aw-watcher-window_alpha",
				Note: "no hostname"},
		},
		{
			name: "aw hostname wins over a newer host",
			info: &aw.Info{Hostname: "desk"},
			buckets: bucketMap(
				bucket("aw-watcher-window_desk", aw.TypeWindow, "desk", t0),
				bucket("aw-watcher-window_laptop", aw.TypeWindow, "laptop", t0.Add(time.Hour)),
			),
			want: Selection{Host: "desk", HostSource: HostFromAWHostname, Window: "aw-watcher-window_desk",
				Note: "no AFK bucket"},
		},
		{
			name: "web buckets most recently updated first, other hosts' left out",
			info: &aw.Info{Hostname: "a"},
			buckets: bucketMap(
				bucket("aw-watcher-window_a", aw.TypeWindow, "a", t0),
				bucket("aw-watcher-afk_a", aw.TypeAFK, "a", t0),
				bucket("aw-watcher-web-chrome_a", aw.TypeWeb, "a", t0),
				bucket("aw-watcher-web-firefox_a", aw.TypeWeb, "a", t0.Add(time.Second)),
				bucket("aw-watcher-web-edge_a", aw.TypeWeb, "a", t0),
				bucket("aw-watcher-web-chrome_b", aw.TypeWeb, "b", t0.Add(time.Hour)),
			),
			want: Selection{Host: "a", HostSource: HostFromAWHostname, Window: "aw-watcher-window_a",
				AFK: "aw-watcher-afk_a",
				Web: []string{"aw-watcher-web-firefox_a", "aw-watcher-web-chrome_a", "aw-watcher-web-edge_a"}},
		},
		{
			name:       "legacy web buckets of host unknown",
			configured: "a",
			buckets: bucketMap(
				bucket("aw-watcher-window_a", aw.TypeWindow, "a", t0),
				bucket("aw-watcher-afk_a", aw.TypeAFK, "a", t0),
				bucket("aw-watcher-web-chrome", aw.TypeWeb, "unknown", t0),
			),
			want: Selection{Host: "a", HostSource: HostFromConfig, Window: "aw-watcher-window_a",
				AFK: "aw-watcher-afk_a", Web: []string{"aw-watcher-web-chrome"}, Note: `"unknown"`},
		},
		{
			name:       "configured host with only web buckets selects nothing",
			configured: "b",
			buckets: bucketMap(
				bucket("aw-watcher-window_a", aw.TypeWindow, "a", t0),
				bucket("aw-watcher-web-chrome_b", aw.TypeWeb, "b", t0),
			),
			want: Selection{Host: "b", HostSource: HostFromConfig, Note: "no other host is read"},
		},
		{
			name: "bucket without id uses its key; a hostile hostname stays out of the note",
			info: &aw.Info{Hostname: "vm\u202e\x1b[31m"},
			buckets: map[string]aw.Bucket{
				"aw-watcher-window_x": {Type: aw.TypeWindow, Hostname: "x", LastUpdated: t0},
			},
			want: Selection{Host: "x", HostSource: HostFromLatestBucket, Window: "aw-watcher-window_x",
				Note: `aw_info.hostname has no window`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Map order must not matter.
			for range 5 {
				got := SelectBuckets(tt.configured, tt.info, maps.Clone(tt.buckets), time.Now())
				note := got.Note
				got.Note = ""
				want := tt.want
				want.Note = ""
				if !selectionEqual(got, want) {
					t.Fatalf("SelectBuckets = %+v, want %+v", got, want)
				}
				if tt.want.Note == "" && note != "" {
					t.Fatalf("unexpected note %q", note)
				}
				if !strings.Contains(note, tt.want.Note) {
					t.Fatalf("note %q, want it to contain %q", note, tt.want.Note)
				}
				for _, b := range tt.buckets {
					if len(b.Hostname) > 2 && b.Hostname != "unknown" && strings.Contains(note, b.Hostname) {
						t.Fatalf("note %q holds the hostname %q", note, b.Hostname)
					}
				}
				if tt.info != nil && tt.info.Hostname != "" && strings.Contains(note, tt.info.Hostname) {
					t.Fatalf("note %q holds the hostname %q", note, tt.info.Hostname)
				}
			}
		})
	}
}

// TestSelectIgnoresBucketsUpdatedInTheFuture: anyone may create a second
// window bucket for the host and date an event 2099 in it; its
// last_updated must not make it the bucket read (nor its host the one
// chosen), while the real bucket heartbeats now.
func TestSelectIgnoresBucketsUpdatedInTheFuture(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	far := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	buckets := map[string]aw.Bucket{
		"aw-watcher-window_me":  bucket("aw-watcher-window_me", aw.TypeWindow, "me", now.Add(-time.Second)),
		"aw-watcher-afk_me":     bucket("aw-watcher-afk_me", aw.TypeAFK, "me", now.Add(-time.Second)),
		"aw-watcher-window_evi": bucket("aw-watcher-window_evi", aw.TypeWindow, "me", far),
		"aw-watcher-window_x":   bucket("aw-watcher-window_x", aw.TypeWindow, "other", far),
		"aw-watcher-afk_x":      bucket("aw-watcher-afk_x", aw.TypeAFK, "other", far),
	}
	for _, info := range []*aw.Info{{Hostname: "me"}, nil} {
		got := SelectBuckets("", info, buckets, now)
		if got.Host != "me" || got.Window != "aw-watcher-window_me" {
			t.Errorf("info %v: selected %s's %s, want me's aw-watcher-window_me", info, got.Host, got.Window)
		}
	}
}
