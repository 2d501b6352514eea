package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzKey(f *testing.F) {
	for _, seed := range []string{"", "a", "run/1:result", "a b", "caf\u00e9", "\x00", strings.Repeat("k", 257), "..", "a\\b", `"`} {
		f.Add(seed)
	}
	const allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:/"
	s := open(f, Options{})
	f.Fuzz(func(t *testing.T, key string) {
		err := ValidateKey(key)
		want := key != "" && len(key) <= MaxKeyBytes
		for i := 0; i < len(key) && want; i++ {
			want = strings.IndexByte(allowed, key[i]) >= 0
		}
		if (err == nil) != want {
			t.Fatalf("ValidateKey(%q) = %v, want accepted=%v", key, err, want)
		}
		if err != nil {
			var ke *KeyError
			if !errors.As(err, &ke) || ke.Offset >= len(key) {
				t.Fatalf("ValidateKey(%q) = %#v", key, err)
			}
			return
		}
		// An accepted key works and needs no escaping in JSON.
		if _, err := s.Set(key, json.RawMessage(`1`), ""); err != nil {
			t.Fatal(err)
		}
		if v, _, ok, err := s.Get(key, ""); !ok || err != nil || string(v) != "1" {
			t.Fatalf("Get(%q) = %s, %v, %v", key, v, ok, err)
		}
		if b, _ := json.Marshal(key); string(b) != `"`+key+`"` {
			t.Fatalf("key %q needs escaping: %s", key, b)
		}
		s.Unset(key, "")
	})
}

func FuzzOpen(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"entries":{}}`,
		`{"version":1,"entries":{"a":{"value":{"x":[1,2]},"updated_at":"2026-01-02T15:04:05Z"},"b/c":{"value":"s"}}}`,
		`{"version":1,"entries":{"a":{"value":  [ 1 , 2 ] }}}`,
		`{"version":1,"entries":{"a":{"value":null}}}`,
		`{"VERSION":1,"Entries":{}}`,
		`{"version":1,"entries":{"a b":{"value":1}}}`,
		`{"version":2,"entries":{}}`,
		`{"version":1.0,"entries":{}}`,
		`{"version":1,"entries":{"a":{"value":1,"updated_at":"bad"}}}`,
		`{"version":1,"entries":{"a":{"value":1}}}x`,
		"", "null", "[]", "\xff", `{"version":1,"entries":{"a":{"value":"\ud800"}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "state")
		os.Mkdir(dir, 0o700)
		path := filepath.Join(dir, FileName)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, warnings, err := Open(Options{Dir: dir, now: clock()})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		aside := path + ".corrupt-20260102T150405Z"
		if len(warnings) == 1 && strings.Contains(warnings[0], "not a valid state document") {
			kept, err := os.ReadFile(aside)
			if err != nil || string(kept) != string(data) {
				t.Fatalf("kept aside %q, %v; want the original", kept, err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatal("state.json still there after it was kept aside")
			}
			if d, _ := s.Dump(ScopePersistent); len(d[ScopePersistent]) != 0 {
				t.Fatal("entries loaded from a rejected file")
			}
			return
		}
		if len(warnings) != 0 {
			t.Fatalf("warnings %q", warnings)
		}
		if !json.Valid(data) {
			t.Fatalf("loaded a file that is not JSON: %q", data)
		}
		if got, _ := os.ReadFile(path); string(got) != string(data) {
			t.Fatal("a loaded file was changed by Open")
		}
		// What was loaded survives a rewrite and a reopen unchanged.
		before, _ := s.Dump(ScopePersistent)
		if _, err := s.Set("fuzz.extra", json.RawMessage(`1`), ScopePersistent); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Unset("fuzz.extra", ScopePersistent); err != nil {
			t.Fatal(err)
		}
		s2, warnings, err := Open(Options{Dir: dir})
		if err != nil || len(warnings) != 0 {
			t.Fatalf("reopen: %v, %q", err, warnings)
		}
		defer s2.Close()
		after, _ := s2.Dump(ScopePersistent)
		if fmt.Sprintf("%s", before) != fmt.Sprintf("%s", after) {
			t.Fatalf("rewrite changed the data:\n%s\n%s", before, after)
		}
	})
}
