package protect

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite golden files")

// world is a temp dir with a config, an executable, a unit path, listed
// files and an environment.
type world struct {
	t     *testing.T
	root  string
	env   map[string]string
	items Items
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, root: t.TempDir(), env: map[string]string{"AWBRIDGE_AW_URL": "http://127.0.0.1:5600"}}
	w.write("config.toml", "[activitywatch]\nurl = \"http://127.0.0.1:5600\"\n")
	w.write("bin/awbridge", "\x7fELF version one")
	w.write("etc/hosts", "127.0.0.1 localhost\n")
	w.items = Items{
		ConfigFile: w.path("config.toml"),
		Executable: w.path("bin/awbridge"),
		Unit:       w.path("home/.config/systemd/user/awbridge.service"),
		Files:      []string{w.path("etc/hosts"), w.path("etc/later")},
		Env:        []string{"AWBRIDGE_AW_URL", "LD_PRELOAD"},
		Lookup: func(k string) (string, bool) {
			v, ok := w.env[k]
			return v, ok
		},
	}
	return w
}

func (w *world) path(rel string) string { return filepath.Join(w.root, filepath.FromSlash(rel)) }

func (w *world) write(rel, content string) {
	w.t.Helper()
	p := w.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) remove(rel string) {
	w.t.Helper()
	if err := os.Remove(w.path(rel)); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) baseline() string { return filepath.Join(w.root, "state", BaselineFile) }

func (w *world) snapshot() *Baseline {
	w.t.Helper()
	b, warns, err := Snapshot(w.items, w.baseline())
	if err != nil {
		w.t.Fatal(err)
	}
	if len(warns) > 0 {
		w.t.Fatalf("warnings on a fresh state dir: %v", warns)
	}
	return b
}

// short is a Diff with the item relative to the world's root.
type short struct{ kind, item, change, detail string }

func (w *world) shorten(ds []Diff) []short {
	out := []short{}
	for _, d := range ds {
		rel, err := filepath.Rel(w.root, d.Item)
		if err != nil || strings.HasPrefix(rel, "..") || !filepath.IsAbs(d.Item) {
			rel = d.Item
		}
		det := strings.ReplaceAll(d.Detail, w.root+string(filepath.Separator), "")
		out = append(out, short{d.Kind, filepath.ToSlash(rel), d.Change, det})
	}
	return out
}

func TestCheckReportsWhatDiffers(t *testing.T) {
	unit := "home/.config/systemd/user/awbridge.service"
	cases := []struct {
		name   string
		change func(w *world)
		want   []short
	}{
		{"nothing changed", func(w *world) {}, []short{}},
		{"file edited, same size", func(w *world) { w.write("etc/hosts", "127.0.0.1 evil.test\n") },
			[]short{{"file", "etc/hosts", "changed", "content differs"}}},
		{"file grew", func(w *world) { w.write("etc/hosts", "127.0.0.1 localhost\n10.0.0.1 x\n") },
			[]short{{"file", "etc/hosts", "changed", "size 20 -> 31 bytes"}}},
		{"listed file appeared", func(w *world) { w.write("etc/later", "new") },
			[]short{{"file", "etc/later", "appeared", ""}}},
		{"listed file vanished", func(w *world) { w.remove("etc/hosts") },
			[]short{{"file", "etc/hosts", "vanished", ""}}},
		{"file replaced by a folder", func(w *world) {
			w.remove("etc/hosts")
			if err := os.Mkdir(w.path("etc/hosts"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, []short{{"file", "etc/hosts", "unreadable", "not a regular file"}}},
		{"config edited", func(w *world) { w.write("config.toml", "[activitywatch]\nurl = \"http://evil.test:5600\"\n") },
			[]short{{"config", "config.toml", "changed", "content differs"}}},
		{"config moved", func(w *world) {
			w.write("other.toml", "x")
			w.items.ConfigFile = w.path("other.toml")
		}, []short{{"config", "other.toml", "moved", "baseline: " + "config.toml"}}},
		{"executable replaced", func(w *world) { w.write("bin/awbridge", "\x7fELF version two") },
			[]short{{"executable", "bin/awbridge", "changed", "content differs"}}},
		{"unit installed", func(w *world) { w.write(unit, "[Service]\n") },
			[]short{{"unit", unit, "appeared", ""}}},
		{"variable changed", func(w *world) { w.env["AWBRIDGE_AW_URL"] = "http://evil.test" },
			[]short{{"env", "AWBRIDGE_AW_URL", "changed", ""}}},
		{"variable set", func(w *world) { w.env["LD_PRELOAD"] = "/tmp/x.so" },
			[]short{{"env", "LD_PRELOAD", "appeared", ""}}},
		{"variable set to empty", func(w *world) { w.env["LD_PRELOAD"] = "" },
			[]short{{"env", "LD_PRELOAD", "appeared", ""}}},
		{"variable unset", func(w *world) { delete(w.env, "AWBRIDGE_AW_URL") },
			[]short{{"env", "AWBRIDGE_AW_URL", "vanished", ""}}},
		{"item listed after the snapshot", func(w *world) { w.items.Env = append(w.items.Env, "HTTP_PROXY") },
			[]short{{"env", "HTTP_PROXY", "not_in_baseline", "take a new baseline with `awbridge protect snapshot`"}}},
		{"item no longer listed", func(w *world) { w.items.Files = w.items.Files[:1] },
			[]short{{"file", "etc/later", "no_longer_listed", ""}}},
		{"several at once, in item order", func(w *world) {
			w.env["LD_PRELOAD"] = "x"
			w.write("bin/awbridge", "\x7fELF version two")
			w.remove("etc/hosts")
		}, []short{
			{"executable", "bin/awbridge", "changed", "content differs"},
			{"file", "etc/hosts", "vanished", ""},
			{"env", "LD_PRELOAD", "appeared", ""},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.snapshot()
			// A warm Checker must see the change as well as a cold check.
			c := NewChecker()
			if r := c.Check(w.items, w.baseline()); r.Err != nil || len(r.Diffs) != 0 {
				t.Fatalf("right after the snapshot: %+v", r)
			}
			tc.change(w)
			for _, check := range []struct {
				name string
				r    Result
			}{{"cached", c.Check(w.items, w.baseline())}, {"uncached", Check(w.items, w.baseline())}} {
				r := check.r
				if r.Err != nil {
					t.Fatalf("%s: %v", check.name, r.Err)
				}
				if got := w.shorten(r.Diffs); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%s diffs:\n got %q\nwant %q", check.name, got, tc.want)
				}
				if r.DiffCount() != len(tc.want) || r.OK() != (len(tc.want) == 0) {
					t.Errorf("%s: count %d ok %v for %d diffs", check.name, r.DiffCount(), r.OK(), len(tc.want))
				}
				if !r.Configured || !r.BaselineExists || r.Checked == 0 {
					t.Errorf("%s: %+v", check.name, r)
				}
			}
		})
	}
}

func TestSnapshotRecordsEachItem(t *testing.T) {
	w := newWorld(t)
	b := w.snapshot()
	type row struct{ kind, name, state string }
	var got []row
	for _, e := range b.Entries {
		got = append(got, row{e.Kind, e.Name, e.State})
	}
	want := []row{
		{"config", w.path("config.toml"), "present"},
		{"executable", w.path("bin/awbridge"), "present"},
		{"unit", w.path("home/.config/systemd/user/awbridge.service"), "absent"},
		{"file", w.path("etc/hosts"), "present"},
		{"file", w.path("etc/later"), "absent"},
		{"env", "AWBRIDGE_AW_URL", "set"},
		{"env", "LD_PRELOAD", "unset"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n got %v\nwant %v", got, want)
	}
	sum := sha256.Sum256([]byte("127.0.0.1 localhost\n"))
	if e := b.Entries[3]; e.SHA256 != hex.EncodeToString(sum[:]) || e.Size != 20 {
		t.Errorf("hosts entry %+v: want the file's plain SHA-256 (what sha256sum prints) and size", e)
	}
	data, err := os.ReadFile(w.baseline())
	if err != nil {
		t.Fatal(err)
	}
	read, err := DecodeBaseline(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(read, b) {
		t.Errorf("read back %+v\nwritten %+v", read, b)
	}
}

func TestNoValueOfAVariableReachesTheBaseline(t *testing.T) {
	const secret = "s3cr3t-Planted-Value-7f1e9c"
	w := newWorld(t)
	w.env["API_TOKEN"] = secret
	w.items.Env = append(w.items.Env, "API_TOKEN")
	b1 := w.snapshot()
	data, err := os.ReadFile(w.baseline())
	if err != nil {
		t.Fatal(err)
	}
	plain := sha256.Sum256([]byte(secret))
	for _, leak := range []string{secret, strings.ToLower(secret), hex.EncodeToString(plain[:]), "http://127.0.0.1:5600"} {
		if bytes.Contains(bytes.ToLower(data), []byte(strings.ToLower(leak))) {
			t.Fatalf("the baseline holds %q (or its plain hash):\n%s", leak, data)
		}
	}
	// A new snapshot draws a new salt: the same value hashes differently.
	b2 := w.snapshot()
	if b1.Salt == b2.Salt || b1.Entries[7].HMAC == b2.Entries[7].HMAC || b1.Entries[7].HMAC == "" {
		t.Fatalf("salt or HMAC repeated across snapshots: %q %q", b1.Entries[7].HMAC, b2.Entries[7].HMAC)
	}
	// The same value under two names does not look equal either.
	w.env["OTHER"] = secret
	w.items.Env = append(w.items.Env, "OTHER")
	b3 := w.snapshot()
	if b3.Entries[7].HMAC == b3.Entries[8].HMAC {
		t.Fatal("equal values under two names have equal HMACs")
	}
}

func TestConfiguredSemantics(t *testing.T) {
	cases := []struct {
		name                          string
		prepare                       func(w *world) string // returns the baseline path
		configured, exists, ok, isErr bool
		count                         int
	}{
		{"nothing listed, no baseline", func(w *world) string {
			w.items.Files, w.items.Env = nil, nil
			return w.baseline()
		}, false, false, true, false, 0},
		{"files listed, no baseline", func(w *world) string {
			w.items.Env = nil
			return w.baseline()
		}, true, false, false, false, -1},
		{"variables listed, no baseline", func(w *world) string {
			w.items.Files = nil
			return w.baseline()
		}, true, false, false, false, -1},
		{"baseline, nothing listed, nothing differs", func(w *world) string {
			w.items.Files, w.items.Env = nil, nil
			w.snapshot()
			return w.baseline()
		}, true, true, true, false, 0},
		{"baseline, two differ", func(w *world) string {
			w.snapshot()
			w.write("etc/later", "x")
			w.env["LD_PRELOAD"] = "x"
			return w.baseline()
		}, true, true, false, false, 2},
		{"corrupt baseline", func(w *world) string {
			w.write("state/"+BaselineFile, `{"version":1,"salt":"zz"}`)
			return w.baseline()
		}, true, true, false, true, -1},
		{"corrupt baseline, nothing listed", func(w *world) string {
			w.items.Files, w.items.Env = nil, nil
			w.write("state/"+BaselineFile, "not json")
			return w.baseline()
		}, true, true, false, true, -1},
		{"no state dir, items listed", func(w *world) string { return "" }, true, false, false, true, -1},
		{"no state dir, nothing listed", func(w *world) string {
			w.items.Files, w.items.Env = nil, nil
			return ""
		}, false, false, true, false, 0},
		{"state dir is a file", func(w *world) string {
			w.write("state", "x")
			return w.baseline()
		}, true, false, false, false, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			path := tc.prepare(w)
			r := NewChecker().Check(w.items, path)
			if r.Configured != tc.configured || r.BaselineExists != tc.exists || r.OK() != tc.ok ||
				(r.Err != nil) != tc.isErr || r.DiffCount() != tc.count {
				t.Fatalf("got configured=%v exists=%v ok=%v err=%v count=%d; want %v %v %v err=%v %d",
					r.Configured, r.BaselineExists, r.OK(), r.Err, r.DiffCount(),
					tc.configured, tc.exists, tc.ok, tc.isErr, tc.count)
			}
		})
	}
}

func TestCorruptBaselineIsABaselineError(t *testing.T) {
	w := newWorld(t)
	w.write("state/"+BaselineFile, "{")
	r := Check(w.items, w.baseline())
	var be *BaselineError
	if !errors.As(r.Err, &be) || !errors.Is(r.Err, ErrCorruptBaseline) || !strings.Contains(r.Err.Error(), "protect snapshot") {
		t.Fatalf("err %v: want a BaselineError saying how to fix it", r.Err)
	}
}

func TestCheckerDoesNotRereadUnchangedFiles(t *testing.T) {
	w := newWorld(t)
	w.snapshot()
	c := NewChecker()
	c.Check(w.items, w.baseline())
	first := c.m.reads
	if first != 3 { // config, executable, etc/hosts
		t.Fatalf("first check read %d files, want 3", first)
	}
	for range 5 {
		if r := c.Check(w.items, w.baseline()); len(r.Diffs) != 0 || r.Err != nil {
			t.Fatalf("%+v", r)
		}
	}
	if c.m.reads != first {
		t.Fatalf("unchanged files read again: %d reads after %d", c.m.reads, first)
	}
	w.write("etc/hosts", "changed!")
	r := c.Check(w.items, w.baseline())
	if c.m.reads != first+1 || len(r.Diffs) != 1 {
		t.Fatalf("after one edit: %d reads (want %d), diffs %v", c.m.reads, first+1, r.Diffs)
	}
	// Dropping an item drops its cache entry: the cache stays bounded.
	w.items.Files = nil
	c.Check(w.items, w.baseline())
	if _, ok := c.m.cache[w.path("etc/hosts")]; ok || len(c.m.cache) != 2 {
		t.Fatalf("cache holds %d entries after the files were dropped", len(c.m.cache))
	}
}

func TestCheckerSeesAnEditThatKeepsSizeAndMtime(t *testing.T) {
	w := newWorld(t)
	w.snapshot()
	c := NewChecker()
	c.Check(w.items, w.baseline())
	p := w.path("etc/hosts")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	w.write("etc/hosts", "127.0.0.1 evil.test\n") // same size
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	r := c.Check(w.items, w.baseline())
	if len(r.Diffs) != 1 || r.Diffs[0].Change != ChangeChanged {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
			t.Fatalf("an edit keeping size and mtime went unseen: %v", r.Diffs)
		}
		t.Skipf("no ctime/inode here to tell the edit from the cache (%v); only size and mtime key it", r.Diffs)
	}
}

func TestLargeFilesAreHashedUpToTheCap(t *testing.T) {
	w := newWorld(t)
	w.write("etc/hosts", strings.Repeat("a", 32))
	b, _, err := snapshot(w.items, w.baseline(), 16)
	if err != nil {
		t.Fatal(err)
	}
	if e := b.Entries[3]; !e.Truncated || e.Size != 32 || b.MaxFileBytes != 16 {
		t.Fatalf("entry %+v cap %d", e, b.MaxFileBytes)
	}
	w.write("etc/hosts", strings.Repeat("a", 20)+"b"+strings.Repeat("a", 11))
	if r := Check(w.items, w.baseline()); len(r.Diffs) != 0 {
		t.Fatalf("an edit past the cap, same size: %v (documented as unseen)", r.Diffs)
	}
	w.write("etc/hosts", "b"+strings.Repeat("a", 31))
	if r := Check(w.items, w.baseline()); len(r.Diffs) != 1 || r.Diffs[0].Detail != "content differs" {
		t.Fatalf("an edit before the cap: %v", r.Diffs)
	}
	w.write("etc/hosts", strings.Repeat("a", 33))
	if r := Check(w.items, w.baseline()); len(r.Diffs) != 1 || r.Diffs[0].Detail != "size 32 -> 33 bytes" {
		t.Fatalf("a size change past the cap: %v", r.Diffs)
	}
}

func TestSnapshotReplacesAtomically(t *testing.T) {
	w := newWorld(t)
	w.snapshot()
	w.env["LD_PRELOAD"] = "x"
	w.snapshot()
	if r := Check(w.items, w.baseline()); len(r.Diffs) != 0 {
		t.Fatalf("after a new snapshot: %v", r.Diffs)
	}
	ents, err := os.ReadDir(filepath.Dir(w.baseline()))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != BaselineFile {
		t.Fatalf("state dir holds %v: temp files left behind", ents)
	}
}

func TestSnapshotRefusesBadItems(t *testing.T) {
	cases := []struct {
		name   string
		modify func(it *Items)
		want   string
	}{
		{"relative file", func(it *Items) { it.Files = []string{"etc/hosts"} }, "not an absolute path"},
		{"unclean file", func(it *Items) { it.Files = []string{"/etc/../etc/hosts"} }, "not a clean path"},
		{"name with =", func(it *Items) { it.Env = []string{"A=B"} }, "not an environment variable name"},
		{"no lookup", func(it *Items) { it.Lookup = nil }, "Lookup is nil"},
		{"too many files", func(it *Items) {
			it.Files = nil
			for i := range MaxListed + 1 {
				it.Files = append(it.Files, "/f"+strings.Repeat("x", i))
			}
		}, "at most 256 files"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.modify(&w.items)
			_, _, err := Snapshot(w.items, w.baseline())
			var ie *ItemError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want an ItemError with %q", err, tc.want)
			}
			if _, err := os.Stat(w.baseline()); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("a baseline was written for bad items")
			}
		})
	}
	w := newWorld(t)
	if _, _, err := Snapshot(w.items, "state/x.json"); err == nil {
		t.Fatal("a relative baseline path was accepted")
	}
}

func TestStatusJSON(t *testing.T) {
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	results := []struct {
		name string
		r    Result
	}{
		{"clean", Result{Configured: true, BaselineExists: true, CreatedAt: created, Checked: 5}},
		{"differs", Result{Configured: true, BaselineExists: true, CreatedAt: created, Checked: 7, Diffs: []Diff{
			{Kind: KindExecutable, Item: "/usr/local/bin/awbridge", Change: ChangeChanged, Detail: "size 100 -> 120 bytes"},
			{Kind: KindEnv, Item: "LD_PRELOAD", Change: ChangeAppeared},
			{Kind: KindFile, Item: "/etc/hosts", Change: ChangeVanished},
		}}},
		{"listed, no baseline", Result{Configured: true}},
		{"not configured", Result{}},
		{"corrupt", Result{Configured: true, BaselineExists: true,
			Err: &BaselineError{Path: "/state/protect-baseline.json", Problem: "corrupt; take a new one with `awbridge protect snapshot`", Err: ErrCorruptBaseline}}},
	}
	var buf bytes.Buffer
	for _, x := range results {
		buf.WriteString(x.name + ": " + string(x.r.StatusJSON("/state/protect-baseline.json")))
	}
	golden := filepath.Join("testdata", "status.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("status JSON differs from %s (go test -update to rewrite):\n%s", golden, buf.String())
	}
}

func TestParseList(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{"/a, /b ,/a,,/c", []string{"/a", "/b", "/c"}},
		{"HOME", []string{"HOME"}},
	}
	for _, tc := range cases {
		if got := ParseList(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestExecutable(t *testing.T) {
	exe, err := Executable()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(exe)
	if err != nil || !fi.Mode().IsRegular() || !filepath.IsAbs(exe) {
		t.Fatalf("Executable() = %q (%v)", exe, err)
	}
	// It is an item like any other: protected, then compared.
	w := newWorld(t)
	w.items.Executable = exe
	w.snapshot()
	if r := Check(w.items, w.baseline()); len(r.Diffs) != 0 || r.Err != nil {
		t.Fatalf("%+v", r)
	}
}

func FuzzDecodeBaseline(f *testing.F) {
	valid := `{"version":1,"created_at":"2026-03-01T12:00:00Z","salt":"` + strings.Repeat("ab", 32) +
		`","max_file_bytes":67108864,"entries":[` +
		`{"kind":"config","name":"/c.toml","state":"present","sha256":"` + strings.Repeat("0", 64) + `","size":3},` +
		`{"kind":"file","name":"/x","state":"absent"},` +
		`{"kind":"file","name":"/d","state":"unreadable","detail":"not a regular file"},` +
		`{"kind":"env","name":"A","state":"set","hmac_sha256":"` + strings.Repeat("f", 64) + `"},` +
		`{"kind":"env","name":"B","state":"unset"}]}`
	for _, s := range []string{valid, "", "{}", "null", `{"version":1}`, valid + "{}", strings.Replace(valid, `"A"`, `"B"`, 1)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBaseline(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptBaseline) {
				t.Fatalf("error %v does not say corrupt", err)
			}
			return
		}
		// A valid baseline compared with itself differs nowhere, and it
		// survives a round trip.
		if d := compare(b.Entries, b.Entries); len(d) != 0 {
			t.Fatalf("self-compare: %v", d)
		}
		again, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		b2, err := DecodeBaseline(again)
		if err != nil {
			t.Fatalf("round trip: %v", err)
		}
		if again2, _ := json.Marshal(b2); !bytes.Equal(again, again2) {
			t.Fatalf("round trip:\n%s\n%s", again, again2)
		}
	})
}

func TestChecksDuringSnapshotsNeverSeeATornBaseline(t *testing.T) {
	w := newWorld(t)
	w.snapshot()
	c := NewChecker()
	done := make(chan struct{})
	var errs []error
	go func() {
		defer close(done)
		for range 20 {
			if _, _, err := Snapshot(w.items, w.baseline()); err != nil {
				errs = append(errs, err)
			}
		}
	}()
	var bad []Result
	for checking := true; checking; {
		select {
		case <-done:
			checking = false
		default:
			if r := c.Check(w.items, w.baseline()); r.Err != nil || len(r.Diffs) != 0 {
				bad = append(bad, r)
			}
		}
	}
	if len(errs) > 0 || len(bad) > 0 {
		t.Fatalf("snapshot errors %v; checks during snapshots: %+v", errs, bad)
	}
}

// The detail of an unreadable file (shown by system.health) is cut on a
// rune boundary: a long error text in another script stays valid UTF-8
// (it was cut at byte 117, in the middle of a rune).
func TestUnreadableDetailKeepsRunesWhole(t *testing.T) {
	long := errors.New(strings.Repeat("a", 116) + strings.Repeat("é", 20))
	e := (&measurer{}).fileErr(Entry{Kind: KindFile, Name: "/x"}, "/x", long)
	if e.State != StateUnreadable || !utf8.ValidString(e.Detail) || len(e.Detail) > 120 || !strings.HasPrefix(e.Detail, strings.Repeat("a", 116)) {
		t.Errorf("detail %q (%d bytes, valid UTF-8 %v)", e.Detail, len(e.Detail), utf8.ValidString(e.Detail))
	}
	err := (&ItemError{Kind: KindFile, Name: strings.Repeat("é", 100), Problem: "path too long"}).Error()
	if strings.Contains(err, `\x`) {
		t.Errorf("the item's name is cut inside a rune: %s", err)
	}
}
