package state

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var fixedNow = time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.UTC)

func clock() func() time.Time { return func() time.Time { return fixedNow } }

// open opens a store in a fresh temp dir (dir "" = session only).
func open(t testing.TB, o Options) *Store {
	t.Helper()
	if o.now == nil {
		o.now = clock()
	}
	s, warnings, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if len(warnings) > 0 {
		t.Fatalf("Open warnings: %q", warnings)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func persistentStore(t testing.TB, o Options) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	o.Dir = dir
	return open(t, o), dir
}

// lowered is defaultLimits with some lowered.
func lowered(lower func(*limits)) limits {
	l := defaultLimits
	lower(&l)
	return l
}

func mustGet(t *testing.T, s *Store, key string, sc Scope) (string, Scope) {
	t.Helper()
	v, from, ok, err := s.Get(key, sc)
	if err != nil || !ok {
		t.Fatalf("Get(%q, %q) = ok %v, err %v", key, sc, ok, err)
	}
	return string(v), from
}

func TestValidateKey(t *testing.T) {
	long := strings.Repeat("k", MaxKeyBytes)
	tests := []struct {
		name, key string
		max       int
		ok        bool
		reason    string
		offset    int
	}{
		{"simple", "last_frame", 0, true, "", 0},
		{"all allowed characters", "A-z_0.9:a/b", 0, true, "", 0},
		{"at the default limit", long, 0, true, "", 0},
		{"over the default limit", long + "k", 0, false, "too long", -1},
		{"custom limit", "abcd", 3, false, "too long", -1},
		{"empty", "", 0, false, "empty", -1},
		{"space", "a b", 0, false, "character not allowed", 1},
		{"newline", "a\n", 0, false, "character not allowed", 1},
		{"NUL", "\x00", 0, false, "character not allowed", 0},
		{"quote", `a"b`, 0, false, "character not allowed", 1},
		{"backslash", `a\b`, 0, false, "character not allowed", 1},
		{"non-ASCII letter", "caf\u00e9", 0, false, "character not allowed", 3},
		{"invalid UTF-8", "a\xff", 0, false, "character not allowed", 1},
		{"plus", "a+b", 0, false, "character not allowed", 1},
		{"dot-dot is fine (keys name no files)", "..", 0, true, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkKey(tt.key, cmp.Or(tt.max, MaxKeyBytes), false)
			if tt.ok {
				if err != nil {
					t.Fatalf("ValidateKey = %v, want nil", err)
				}
				return
			}
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("ValidateKey = %v, want *KeyError", err)
			}
			if ke.Reason != tt.reason || ke.Offset != tt.offset {
				t.Fatalf("KeyError = %+v, want reason %q offset %d", ke, tt.reason, tt.offset)
			}
			if tt.key != "" && strings.Contains(ke.Error(), tt.key) {
				t.Fatalf("error %q echoes the key", ke.Error())
			}
			// The store applies the same rule to every operation.
			s := open(t, Options{lim: lowered(func(l *limits) { l.keyBytes = cmp.Or(tt.max, MaxKeyBytes) })})
			if _, err := s.Set(tt.key, json.RawMessage(`1`), ""); !errors.As(err, &ke) {
				t.Fatalf("Set = %v, want *KeyError", err)
			}
			if _, _, _, err := s.Get(tt.key, ""); !errors.As(err, &ke) {
				t.Fatalf("Get = %v, want *KeyError", err)
			}
			if _, err := s.Unset(tt.key, ""); !errors.As(err, &ke) {
				t.Fatalf("Unset = %v, want *KeyError", err)
			}
		})
	}
}

func TestPrefixValidation(t *testing.T) {
	s := open(t, Options{lim: lowered(func(l *limits) { l.keyBytes = 8 })})
	var ke *KeyError
	if _, err := s.List("", ""); err != nil {
		t.Fatalf("List(\"\") = %v", err)
	}
	if _, err := s.List("a b", ""); !errors.As(err, &ke) || !ke.Prefix {
		t.Fatalf("List(bad prefix) = %v, want prefix *KeyError", err)
	}
	if _, err := s.Clear("123456789", ""); !errors.As(err, &ke) || ke.Reason != "too long" {
		t.Fatalf("Clear(long prefix) = %v, want too long", err)
	}
}

func TestScopes(t *testing.T) {
	s, _ := persistentStore(t, Options{})
	set := func(k, v string, sc Scope) {
		t.Helper()
		e, err := s.Set(k, json.RawMessage(v), sc)
		if err != nil {
			t.Fatalf("Set(%q, %q): %v", k, sc, err)
		}
		want := sc
		if want == "" {
			want = ScopeSession
		}
		if e.Scope != want || e.Key != k || e.Bytes != len(v) || !e.UpdatedAt.Equal(fixedNow) {
			t.Fatalf("Set returned %+v", e)
		}
	}
	set("both", `"from session"`, "")
	set("both", `"from persistent"`, ScopePersistent)
	set("only-p", `"p"`, ScopePersistent)
	set("only-s", `"s"`, ScopeSession)

	tests := []struct {
		key      string
		scope    Scope
		want     string
		wantFrom Scope
		found    bool
	}{
		{"both", "", `"from session"`, ScopeSession, true},
		{"both", ScopeAny, `"from session"`, ScopeSession, true},
		{"both", ScopeSession, `"from session"`, ScopeSession, true},
		{"both", ScopePersistent, `"from persistent"`, ScopePersistent, true},
		{"only-p", ScopeAny, `"p"`, ScopePersistent, true},
		{"only-p", ScopeSession, "", "", false},
		{"only-s", ScopePersistent, "", "", false},
		{"only-s", "", `"s"`, ScopeSession, true},
		{"missing", ScopeAny, "", "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.key, tt.scope), func(t *testing.T) {
			v, from, ok, err := s.Get(tt.key, tt.scope)
			if err != nil || ok != tt.found || string(v) != tt.want || from != tt.wantFrom {
				t.Fatalf("Get = %s, %q, %v, %v; want %s, %q, %v", v, from, ok, err, tt.want, tt.wantFrom, tt.found)
			}
		})
	}

	var se *ScopeError
	if _, err := s.Set("k", json.RawMessage(`1`), ScopeAny); !errors.As(err, &se) || !strings.Contains(err.Error(), "not \"any\"") {
		t.Fatalf("Set(any) = %v, want *ScopeError", err)
	}
	for name, call := range map[string]func() error{
		"get":   func() error { _, _, _, err := s.Get("k", "nope"); return err },
		"set":   func() error { _, err := s.Set("k", json.RawMessage(`1`), "nope"); return err },
		"list":  func() error { _, err := s.List("", "nope"); return err },
		"unset": func() error { _, err := s.Unset("k", "nope"); return err },
		"clear": func() error { _, err := s.Clear("", "nope"); return err },
		"dump":  func() error { _, err := s.Dump("nope"); return err },
	} {
		if err := call(); !errors.As(err, &se) || se.Op != name {
			t.Errorf("%s with an unknown scope = %v, want *ScopeError{Op: %q}", name, err, name)
		}
	}
}

func TestPersistentDisabled(t *testing.T) {
	s := open(t, Options{})
	if s.Persistent() || s.Path() != "" {
		t.Fatal("a store without Dir claims a persistent scope")
	}
	if _, err := s.Set("k", json.RawMessage(`1`), ScopePersistent); !errors.Is(err, ErrPersistentDisabled) {
		t.Fatalf("Set(persistent) = %v", err)
	}
	if _, _, _, err := s.Get("k", ScopePersistent); !errors.Is(err, ErrPersistentDisabled) {
		t.Fatalf("Get(persistent) = %v", err)
	}
	if _, err := s.Clear("", ScopePersistent); !errors.Is(err, ErrPersistentDisabled) {
		t.Fatalf("Clear(persistent) = %v", err)
	}
	// Reads with "any" and writes with "any" just use the session scope.
	if _, err := s.Set("k", json.RawMessage(`1`), ""); err != nil {
		t.Fatal(err)
	}
	if v, from := mustGet(t, s, "k", ScopeAny); v != "1" || from != ScopeSession {
		t.Fatalf("Get(any) = %s from %s", v, from)
	}
	d, err := s.Dump(ScopeAny)
	if err != nil || len(d) != 1 || string(d[ScopeSession]["k"]) != "1" {
		t.Fatalf("Dump = %v, %v", d, err)
	}
	if n, err := s.Unset("k", ScopeAny); n != 1 || err != nil {
		t.Fatalf("Unset(any) = %d, %v", n, err)
	}
}

func TestValues(t *testing.T) {
	s := open(t, Options{})
	tests := []struct {
		name, in, stored string
		wantErr          bool
	}{
		{"object compacted", "{ \"a\" : [1, 2,\n 3] }", `{"a":[1,2,3]}`, false},
		{"string", `"x"`, `"x"`, false},
		{"null", `null`, `null`, false},
		{"number kept as written", `1.50e3`, `1.50e3`, false},
		{"empty", ``, "", true},
		{"not JSON", `{a:1}`, "", true},
		{"two documents", `1 2`, "", true},
		{"truncated", `{"a":`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := s.Set("v", json.RawMessage(tt.in), "")
			if tt.wantErr {
				var ve *ValueError
				if !errors.As(err, &ve) {
					t.Fatalf("Set = %v, want *ValueError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := mustGet(t, s, "v", ""); got != tt.stored || e.Bytes != len(tt.stored) {
				t.Fatalf("stored %s (%d bytes), want %s", got, e.Bytes, tt.stored)
			}
		})
	}
	// Get returns a copy: changing it changes nothing stored.
	s.Set("c", json.RawMessage(`"abc"`), "")
	v, _, _, _ := s.Get("c", "")
	v[1] = 'X'
	if got, _ := mustGet(t, s, "c", ""); got != `"abc"` {
		t.Fatalf("stored value changed through Get's result: %s", got)
	}
	// And Set copies its input.
	in := []byte(`"def"`)
	s.Set("d", in, "")
	in[1] = 'X'
	if got, _ := mustGet(t, s, "d", ""); got != `"def"` {
		t.Fatalf("stored value changed through Set's argument: %s", got)
	}
}

func TestLimits(t *testing.T) {
	for _, sc := range []Scope{ScopeSession, ScopePersistent} {
		t.Run(string(sc), func(t *testing.T) {
			s, _ := persistentStore(t, Options{lim: limits{keyBytes: MaxKeyBytes, valueBytes: 10, entries: 3, scopeBytes: 20}})
			var le *LimitError
			check := func(name string, err error, limit string) {
				t.Helper()
				if limit == "" {
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					return
				}
				if !errors.As(err, &le) || le.Limit != limit || le.Scope != sc {
					t.Fatalf("%s = %v, want *LimitError %s in %s", name, err, limit, sc)
				}
			}
			_, err := s.Set("a", json.RawMessage(`"12345678"`), sc) // 10 bytes: at the limit
			check("value at MaxValueBytes", err, "")
			_, err = s.Set("b", json.RawMessage(`"123456789"`), sc)
			check("value over MaxValueBytes", err, "MaxValueBytes")
			_, err = s.Set("b", json.RawMessage(`[1,     2]`), sc) // compacts to 5 bytes
			check("whitespace does not count", err, "")
			_, err = s.Set("c", json.RawMessage(strings.Repeat(" ", 81)+"1"), sc)
			check("input over 8x MaxValueBytes", err, "MaxValueBytes")
			_, err = s.Set("c", json.RawMessage(`1234`), sc) // total 11+6+5 = 22 > 20
			check("MaxScopeBytes", err, "MaxScopeBytes")
			_, err = s.Set("c", json.RawMessage(`1`), sc) // 11+6+2 = 19
			check("third entry", err, "")
			_, err = s.Set("d", json.RawMessage(`1`), sc)
			check("fourth entry", err, "MaxEntries")
			_, err = s.Set("c", json.RawMessage(`2`), sc)
			check("replacing does not add an entry", err, "")
			if n, err := s.Unset("a", sc); n != 1 || err != nil {
				t.Fatalf("Unset = %d, %v", n, err)
			}
			_, err = s.Set("d", json.RawMessage(`1`), sc)
			check("room again after Unset", err, "")
			// The refused changes left nothing behind.
			ents, _ := s.List("", sc)
			if len(ents) != 3 || ents[0].Key != "b" || ents[1].Key != "c" || ents[2].Key != "d" {
				t.Fatalf("List = %+v", ents)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	redact := func(v json.RawMessage) json.RawMessage {
		return bytes.ReplaceAll(v, []byte("sk-PLANTEDSECRET"), []byte("[REDACTED]"))
	}
	s, dir := persistentStore(t, Options{Redact: redact})
	val := json.RawMessage(`{"note":"key is sk-PLANTEDSECRET ok"}`)
	for _, sc := range []Scope{ScopeSession, ScopePersistent} {
		e, err := s.Set("k", val, sc)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := mustGet(t, s, "k", sc)
		if got != `{"note":"key is [REDACTED] ok"}` || e.Bytes != len(got) {
			t.Fatalf("%s stored %s (%d bytes)", sc, got, e.Bytes)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("PLANTEDSECRET")) || !bytes.Contains(data, []byte("[REDACTED]")) {
		t.Fatalf("state file not redacted: %s", data)
	}
	d, _ := s.Dump("")
	for sc, m := range d {
		if bytes.Contains(m["k"], []byte("PLANTEDSECRET")) {
			t.Fatalf("Dump %s leaks the secret", sc)
		}
	}

	// A redactor that breaks JSON or grows a value past the limit is caught.
	bad := open(t, Options{Redact: func(json.RawMessage) json.RawMessage { return json.RawMessage(`{"broken"`) }})
	var ve *ValueError
	if _, err := bad.Set("k", json.RawMessage(`1`), ""); !errors.As(err, &ve) {
		t.Fatalf("Set through a broken redactor = %v, want *ValueError", err)
	}
	grow := open(t, Options{lim: lowered(func(l *limits) { l.valueBytes = 8 }), Redact: func(json.RawMessage) json.RawMessage { return json.RawMessage(`"[REDACTED]"`) }})
	var le *LimitError
	if _, err := grow.Set("k", json.RawMessage(`"pw"`), ""); !errors.As(err, &le) {
		t.Fatalf("Set growing past the limit through Redact = %v, want *LimitError", err)
	}
}

func TestListUnsetClearDump(t *testing.T) {
	s, _ := persistentStore(t, Options{})
	for _, kv := range []struct {
		k  string
		sc Scope
	}{
		{"run/1", ScopeSession}, {"run/2", ScopeSession}, {"run/2", ScopePersistent},
		{"run/3", ScopePersistent}, {"other", ScopeSession}, {"other", ScopePersistent},
	} {
		if _, err := s.Set(kv.k, json.RawMessage(`"`+kv.k+`"`), kv.sc); err != nil {
			t.Fatal(err)
		}
	}
	list := func(prefix string, sc Scope) string {
		t.Helper()
		ents, err := s.List(prefix, sc)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, e := range ents {
			fmt.Fprintf(&b, "%s@%s ", e.Key, e.Scope)
		}
		return strings.TrimSpace(b.String())
	}
	lists := []struct {
		prefix string
		scope  Scope
		want   string
	}{
		{"", "", "other@session other@persistent run/1@session run/2@session run/2@persistent run/3@persistent"},
		{"run/", ScopeAny, "run/1@session run/2@session run/2@persistent run/3@persistent"},
		{"run/", ScopeSession, "run/1@session run/2@session"},
		{"run/", ScopePersistent, "run/2@persistent run/3@persistent"},
		{"nothing", "", ""},
	}
	for _, tt := range lists {
		if got := list(tt.prefix, tt.scope); got != tt.want {
			t.Errorf("List(%q, %q) = %q, want %q", tt.prefix, tt.scope, got, tt.want)
		}
	}

	d, err := s.Dump("")
	if err != nil || len(d[ScopeSession]) != 3 || len(d[ScopePersistent]) != 3 || string(d[ScopePersistent]["run/3"]) != `"run/3"` {
		t.Fatalf("Dump = %v, %v", d, err)
	}
	if d, _ := s.Dump(ScopePersistent); len(d) != 1 || len(d[ScopePersistent]) != 3 {
		t.Fatalf("Dump(persistent) = %v", d)
	}

	steps := []struct {
		name  string
		do    func() (int, error)
		n     int
		after string
	}{
		{"unset defaults to session", func() (int, error) { return s.Unset("run/2", "") }, 1,
			"other@session other@persistent run/1@session run/2@persistent run/3@persistent"},
		{"unset of a missing key", func() (int, error) { return s.Unset("run/2", ScopeSession) }, 0,
			"other@session other@persistent run/1@session run/2@persistent run/3@persistent"},
		{"unset any removes both", func() (int, error) { return s.Unset("other", ScopeAny) }, 2,
			"run/1@session run/2@persistent run/3@persistent"},
		{"clear persistent by prefix", func() (int, error) { return s.Clear("run/2", ScopePersistent) }, 1,
			"run/1@session run/3@persistent"},
		{"clear defaults to session", func() (int, error) { return s.Clear("", "") }, 1,
			"run/3@persistent"},
		{"clear any", func() (int, error) { return s.Clear("", ScopeAny) }, 1, ""},
		{"clear of an empty store", func() (int, error) { return s.Clear("", ScopeAny) }, 0, ""},
	}
	for _, st := range steps {
		n, err := st.do()
		if err != nil || n != st.n {
			t.Fatalf("%s: removed %d, %v; want %d", st.name, n, err, st.n)
		}
		if got := list("", ""); got != st.after {
			t.Fatalf("%s: left %q, want %q", st.name, got, st.after)
		}
	}
}

func TestPersistenceAcrossOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "state")
	s1, _, err := Open(Options{Dir: dir, now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	s1.Set("keep", json.RawMessage(`{"n": 1}`), ScopePersistent)
	s1.Set("gone", json.RawMessage(`2`), ScopePersistent)
	s1.Set("session-only", json.RawMessage(`3`), ScopeSession)
	if n, err := s1.Unset("gone", ScopePersistent); n != 1 || err != nil {
		t.Fatalf("Unset = %d, %v", n, err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	s2 := open(t, Options{Dir: dir, now: func() time.Time { return fixedNow.Add(time.Hour) }})
	if v, from := mustGet(t, s2, "keep", ""); v != `{"n":1}` || from != ScopePersistent {
		t.Fatalf("reopened: %s from %s", v, from)
	}
	for _, k := range []string{"gone", "session-only"} {
		if _, _, ok, _ := s2.Get(k, ""); ok {
			t.Fatalf("%s survived the reopen", k)
		}
	}
	ents, _ := s2.List("", "")
	if len(ents) != 1 || !ents[0].UpdatedAt.Equal(fixedNow) {
		t.Fatalf("reopened entries %+v, want keep updated at %v", ents, fixedNow)
	}
}

func TestClosed(t *testing.T) {
	s, _ := persistentStore(t, Options{})
	s.Close()
	calls := map[string]func() error{
		"get":   func() error { _, _, _, err := s.Get("k", ""); return err },
		"set":   func() error { _, err := s.Set("k", json.RawMessage(`1`), ScopePersistent); return err },
		"list":  func() error { _, err := s.List("", ""); return err },
		"unset": func() error { _, err := s.Unset("k", ScopeAny); return err },
		"clear": func() error { _, err := s.Clear("", ScopeAny); return err },
		"dump":  func() error { _, err := s.Dump(""); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func TestConcurrent(t *testing.T) {
	s, dir := persistentStore(t, Options{})
	path := filepath.Join(dir, FileName)
	if _, err := s.Set("seed", json.RawMessage(`0`), ScopePersistent); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, 4*workers*rounds)
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				key := fmt.Sprintf("w%d/k%d", w, i%5)
				val := json.RawMessage(fmt.Sprintf(`{"w":%d,"i":%d,"pad":"%s"}`, w, i, strings.Repeat("x", 100)))
				sc := ScopeSession
				if i%3 == 0 {
					sc = ScopePersistent
				}
				if _, err := s.Set(key, val, sc); err != nil {
					errs <- err
				}
				if v, _, ok, err := s.Get(key, ScopeAny); err != nil || !ok || !json.Valid(v) {
					errs <- fmt.Errorf("get %s: ok %v, err %v, value %q", key, ok, err, v)
				}
				if _, err := s.List("w", ""); err != nil {
					errs <- err
				}
				if i%10 == 9 {
					if _, err := s.Clear(fmt.Sprintf("w%d/", w), ScopeAny); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	// A reader of the file never sees a torn write.
	stop := make(chan struct{})
	var reader sync.WaitGroup
	reader.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(path)
			if err != nil || !json.Valid(data) {
				errs <- fmt.Errorf("state file read while written: err %v, valid %v", err, json.Valid(data))
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	reader.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// What the file holds is exactly the persistent scope.
	d, _ := s.Dump(ScopePersistent)
	s2 := open(t, Options{Dir: dir})
	d2, _ := s2.Dump(ScopePersistent)
	if fmt.Sprint(d) != fmt.Sprint(d2) {
		t.Fatalf("file and memory differ:\nmemory %s\nfile   %s", d, d2)
	}
}
