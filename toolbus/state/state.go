package state

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/awbridge/awbridge/internal/atomicfile"
)

// MaxKeyBytes bounds a key (and a List/Clear prefix).
const MaxKeyBytes = 256

// limits bound a Store; tests lower them.
type limits struct {
	// keyBytes bounds a key (and a List/Clear prefix).
	keyBytes int
	// valueBytes bounds one value, compacted, before and after Redact; an
	// input more than 8 times larger is refused before it is compacted.
	valueBytes int
	// entries bounds the number of entries of each scope.
	entries int
	// scopeBytes bounds the sum of key and value bytes of each scope, and
	// so the memory a scope holds and the size of the state file.
	scopeBytes int
}

var defaultLimits = limits{keyBytes: MaxKeyBytes, valueBytes: 1 << 20, entries: 10_000, scopeBytes: 64 << 20}

// FileName is the name of the persistent scope's file inside Options.Dir.
const FileName = "state.json"

// Options configures a Store. The zero value is a session-only store.
type Options struct {
	// Dir is the state dir; the persistent scope lives in Dir/state.json.
	// "" disables the persistent scope (ErrPersistentDisabled). Dir is
	// created 0700 when missing.
	Dir string

	// Redact is applied to every value, already compacted, before it is
	// stored (and so before it reaches the state file). It must return
	// valid JSON, either its argument or a new slice it does not keep.
	// nil stores values as given.
	Redact func(json.RawMessage) json.RawMessage

	// Tests set these: the clock of UpdatedAt and of the name of a
	// corrupted file kept aside (default time.Now), the file system
	// (failures injected; default the OS) and the limits (default
	// defaultLimits).
	now func() time.Time
	fs  atomicfile.FS
	lim limits
}

// Entry describes one stored value.
type Entry struct {
	Key       string    `json:"key"`
	Scope     Scope     `json:"scope"`
	Bytes     int       `json:"bytes"` // length of the stored (compacted, redacted) value
	UpdatedAt time.Time `json:"updated_at"`
}

type entry struct {
	value   []byte
	updated time.Time
	ts      string // updated, as written to the file (persistent only)
}

type scopeMap struct {
	m     map[string]*entry
	bytes int // sum of len(key)+len(value)
}

func (sm *scopeMap) put(k string, e *entry) {
	if old := sm.m[k]; old != nil {
		sm.bytes -= len(k) + len(old.value)
	}
	sm.m[k] = e
	sm.bytes += len(k) + len(e.value)
}

func (sm *scopeMap) del(k string) bool {
	old := sm.m[k]
	if old == nil {
		return false
	}
	sm.bytes -= len(k) + len(old.value)
	delete(sm.m, k)
	return true
}

// Store holds the session and persistent scopes. It is safe for concurrent
// use; create it with Open and share one per process.
type Store struct {
	o    Options
	dir  string // "" when the persistent scope is disabled
	path string

	// mu guards both maps for readers. Session changes hold it for
	// writing. Persistent changes hold wmu, then the lock (the lock file,
	// shared with other processes) across reading and replacing the
	// file, and take mu for writing only to install a view read from
	// the file or a change that is already durable, so the holder of wmu
	// may read pers without mu. Order: wmu, lock, mu.
	mu   sync.RWMutex
	sess scopeMap
	pers scopeMap

	wmu    sync.Mutex
	disk   atomic.Pointer[diskStamp] // the file version pers matches; written under the lock
	closed atomic.Bool
}

// Open returns a Store. With a Dir it creates the folder if needed
// (tightening its permissions when it is ours) and loads state.json: a file
// that is not a valid state document is renamed to
// state.json.corrupt-<UTC timestamp> and the persistent scope starts empty.
// Conditions the caller should log come back as warnings (they name paths,
// never keys or values). A dir or file that cannot be created or read is a
// *StorageError.
func Open(o Options) (*Store, []string, error) {
	if o.lim == (limits{}) {
		o.lim = defaultLimits
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.fs == nil {
		o.fs = atomicfile.OS{}
	}
	s := &Store{o: o, sess: scopeMap{m: make(map[string]*entry)}, pers: scopeMap{m: make(map[string]*entry)}}
	if o.Dir == "" {
		return s, nil, nil
	}
	s.dir = filepath.Clean(o.Dir)
	s.path = filepath.Join(s.dir, FileName)
	warnings, err := s.load()
	if err != nil {
		return nil, warnings, err
	}
	return s, warnings, nil
}

// Persistent reports whether the persistent scope is enabled.
func (s *Store) Persistent() bool { return s.dir != "" }

// Path returns the state file's path, "" when the persistent scope is
// disabled.
func (s *Store) Path() string { return s.path }

func (s *Store) checkKey(k string) error { return checkKey(k, s.o.lim.keyBytes, false) }

// scope resolves the scope of op: "" means def; set needs one scope.
func (s *Store) scope(op string, sc, def Scope) (Scope, error) {
	switch sc = cmp.Or(sc, def); {
	case sc == ScopePersistent && !s.Persistent():
		return "", ErrPersistentDisabled
	case sc == ScopeSession, sc == ScopePersistent, sc == ScopeAny && op != "set":
		return sc, nil
	}
	return "", scopeErr(op, sc)
}

// Get returns a copy of the value under key. ScopeAny (or "") looks in the
// session scope first, then the persistent one, which reflects every
// change other processes made to the state file (see refresh); from says
// where it was found. A missing key is ok=false with a nil error.
func (s *Store) Get(key string, scope Scope) (value json.RawMessage, from Scope, ok bool, err error) {
	if s.closed.Load() {
		return nil, "", false, ErrClosed
	}
	if scope, err = s.scope("get", scope, ScopeAny); err != nil {
		return nil, "", false, err
	}
	if err := s.checkKey(key); err != nil {
		return nil, "", false, err
	}
	if scope != ScopePersistent {
		s.mu.RLock()
		e := s.sess.m[key]
		var v []byte
		if e != nil {
			v = bytes.Clone(e.value)
		}
		s.mu.RUnlock()
		if e != nil {
			return v, ScopeSession, true, nil
		}
	}
	if scope != ScopeSession && s.Persistent() {
		s.refresh()
		s.mu.RLock()
		defer s.mu.RUnlock()
		if e := s.pers.m[key]; e != nil {
			return bytes.Clone(e.value), ScopePersistent, true, nil
		}
	}
	return nil, "", false, nil
}

// prepare validates and compacts value, bounds it and applies Redact.
func (s *Store) prepare(value json.RawMessage) ([]byte, error) {
	max := s.o.lim.valueBytes
	if len(value) == 0 {
		return nil, &ValueError{Reason: "empty", Offset: -1}
	}
	if len(value) > 8*max {
		return nil, &LimitError{Limit: "MaxValueBytes", Max: max, Got: len(value)}
	}
	var buf bytes.Buffer
	buf.Grow(len(value))
	if err := json.Compact(&buf, value); err != nil {
		off := int64(-1)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		return nil, &ValueError{Reason: "not valid JSON", Offset: off}
	}
	v := buf.Bytes()
	if len(v) > max {
		return nil, &LimitError{Limit: "MaxValueBytes", Max: max, Got: len(v)}
	}
	if s.o.Redact != nil {
		v = s.o.Redact(v)
		if !json.Valid(v) {
			return nil, &ValueError{Reason: "redactor returned invalid JSON", Offset: -1}
		}
		if len(v) > max {
			return nil, &LimitError{Limit: "MaxValueBytes", Max: max, Got: len(v)}
		}
	}
	return v, nil
}

// fits checks that putting a value of n bytes under k keeps the scope within
// its limits. A change that does not grow the scope is always allowed, so a
// scope loaded over its limits can still be shrunk.
func (s *Store) fits(sm *scopeMap, sc Scope, k string, n int) error {
	old := sm.m[k]
	count, total := len(sm.m), sm.bytes+len(k)+n
	if old == nil {
		count++
	} else {
		total -= len(k) + len(old.value)
	}
	if old == nil && count > s.o.lim.entries {
		return &LimitError{Limit: "MaxEntries", Scope: sc, Max: s.o.lim.entries, Got: count}
	}
	if total > s.o.lim.scopeBytes && total > sm.bytes {
		return &LimitError{Limit: "MaxScopeBytes", Scope: sc, Max: s.o.lim.scopeBytes, Got: total}
	}
	return nil
}

// Set stores value (one JSON document) under key, replacing any value of
// that scope. scope is ScopeSession (also for "") or ScopePersistent; a
// persistent Set holds the state dir's lock while it re-reads the file
// (keeping what other processes wrote) and replaces it, and returns only
// once the state file holding it is durable.
// Errors: *KeyError, *ValueError, *LimitError, *ScopeError,
// ErrPersistentDisabled, *StorageError (then nothing changed), ErrClosed.
func (s *Store) Set(key string, value json.RawMessage, scope Scope) (Entry, error) {
	if s.closed.Load() {
		return Entry{}, ErrClosed
	}
	scope, err := s.scope("set", scope, ScopeSession)
	if err != nil {
		return Entry{}, err
	}
	if err := s.checkKey(key); err != nil {
		return Entry{}, err
	}
	v, err := s.prepare(value)
	if err != nil {
		if le, ok := err.(*LimitError); ok {
			le.Scope = scope
		}
		return Entry{}, err
	}
	e := &entry{value: v, updated: s.o.now()}
	out := Entry{Key: key, Scope: scope, Bytes: len(v), UpdatedAt: e.updated}

	if scope == ScopeSession {
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.fits(&s.sess, scope, key, len(v)); err != nil {
			return Entry{}, err
		}
		s.sess.put(key, e)
		return out, nil
	}

	e.ts = e.updated.UTC().Format(time.RFC3339Nano)
	err = s.change(func() error {
		if err := s.fits(&s.pers, scope, key, len(v)); err != nil {
			return err
		}
		return s.commit(nil, key, e)
	})
	if err != nil {
		return Entry{}, err
	}
	return out, nil
}

// List returns the entries whose key starts with prefix ("" for all),
// sorted by key and, for one key in both scopes with ScopeAny (or ""), the
// session entry first. Values are not included; use Get or Dump.
func (s *Store) List(prefix string, scope Scope) ([]Entry, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	scope, err := s.scope("list", scope, ScopeAny)
	if err != nil {
		return nil, err
	}
	if err := checkKey(prefix, s.o.lim.keyBytes, true); err != nil {
		return nil, err
	}
	if scope != ScopeSession && s.Persistent() {
		s.refresh()
	}
	s.mu.RLock()
	var out []Entry
	add := func(sm *scopeMap, sc Scope) {
		for k, e := range sm.m {
			if strings.HasPrefix(k, prefix) {
				out = append(out, Entry{Key: k, Scope: sc, Bytes: len(e.value), UpdatedAt: e.updated})
			}
		}
	}
	if scope != ScopePersistent {
		add(&s.sess, ScopeSession)
	}
	if scope != ScopeSession {
		add(&s.pers, ScopePersistent)
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Scope == ScopeSession && out[j].Scope != ScopeSession
	})
	return out, nil
}

// Unset removes key from scope: ScopeSession (also for ""),
// ScopePersistent, or ScopeAny for both. It returns how many entries it
// removed (0 when there was none). With ScopeAny the persistent entry is
// removed first; if that fails, nothing changed.
func (s *Store) Unset(key string, scope Scope) (removed int, err error) {
	if err := s.checkKey(key); err != nil {
		return 0, err
	}
	return s.remove("unset", scope, func(k string) bool { return k == key })
}

// Clear removes every entry whose key starts with prefix ("" for all) from
// scope, with the scope rules of Unset, and returns how many it removed.
func (s *Store) Clear(prefix string, scope Scope) (removed int, err error) {
	if err := checkKey(prefix, s.o.lim.keyBytes, true); err != nil {
		return 0, err
	}
	return s.remove("clear", scope, func(k string) bool { return strings.HasPrefix(k, prefix) })
}

func (s *Store) remove(op string, scope Scope, match func(string) bool) (int, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	scope, err := s.scope(op, scope, ScopeSession)
	if err != nil {
		return 0, err
	}
	n := 0
	if scope != ScopeSession && s.Persistent() {
		err := s.change(func() error {
			gone := 0
			for k := range s.pers.m {
				if match(k) {
					gone++
				}
			}
			if gone == 0 {
				return nil
			}
			n += gone
			return s.commit(match, "", nil)
		})
		if err != nil {
			return 0, err
		}
	}
	if scope != ScopePersistent {
		s.mu.Lock()
		for k := range s.sess.m {
			if match(k) && s.sess.del(k) {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n, nil
}

// Dump returns copies of every value of scope (ScopeAny or "" for both),
// keyed by scope then key. A scope that is enabled is present even when
// empty.
func (s *Store) Dump(scope Scope) (map[Scope]map[string]json.RawMessage, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	scope, err := s.scope("dump", scope, ScopeAny)
	if err != nil {
		return nil, err
	}
	if scope != ScopeSession && s.Persistent() {
		s.refresh()
	}
	out := make(map[Scope]map[string]json.RawMessage, 2)
	s.mu.RLock()
	defer s.mu.RUnlock()
	copyOf := func(sm *scopeMap) map[string]json.RawMessage {
		m := make(map[string]json.RawMessage, len(sm.m))
		for k, e := range sm.m {
			m[k] = bytes.Clone(e.value)
		}
		return m
	}
	if scope != ScopePersistent {
		out[ScopeSession] = copyOf(&s.sess)
	}
	if scope != ScopeSession && s.Persistent() {
		out[ScopePersistent] = copyOf(&s.pers)
	}
	return out, nil
}

// Close waits for a persistent change in progress, then makes every later
// call return ErrClosed. Persistent changes are already durable when they
// return, so there is nothing left to flush; session values are dropped.
// Close is idempotent.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	s.sess = scopeMap{m: map[string]*entry{}}
	s.mu.Unlock()
	return nil
}
