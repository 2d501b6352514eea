package config

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/awbridge/awbridge/internal/text"
)

// Source says which layer a setting's value came from.
type Source string

// The layers, lowest first.
const (
	SourceDefault Source = "default"
	SourceFile    Source = "file"
	SourceEnv     Source = "env"
	SourceFlag    Source = "flag"
)

// ConfigEnv names the file to read when --config is not given; set but
// empty, it means no file at all.
const ConfigEnv = "AWBRIDGE_CONFIG"

// maxFileBytes bounds the config file read.
const maxFileBytes = 1 << 20

// Setting is one resolved setting and where its value came from.
type Setting struct {
	Key    string // "activitywatch.url"
	Value  string // canonical text ("2s", "8MiB"); "********" for a set secret
	Source Source
	Origin string // file path, variable name or "--flag"; "" for a default
	Doc    string // one line
	Kind   string // string, host, secret, url, duration, int, bytes, path, level
	Env    string // the variable above the file; "" for none
	Flag   string // "--aw-url"; "" for none
	Secret bool
	// List says the setting is a list (a TOML array in the file; comma- or
	// newline-separated text in the environment); Items are its items.
	List  bool
	Items []string
}

// Loaded is the effective configuration with its provenance. It is not
// modified after Load returns: safe for concurrent reads.
type Loaded struct {
	Config Config
	// File is the config file read (an absolute path), "" if none.
	// LookedFor is File, or the default path when no file exists there, or
	// "" when there was nowhere to look (AWBRIDGE_CONFIG or --config set
	// to "", or no home folder). FileSource says which chose it.
	File       string
	LookedFor  string
	FileSource Source
	Settings   []Setting // every setting in table order
}

// Get returns the setting with the given key.
func (l *Loaded) Get(key string) (Setting, bool) {
	i := slices.IndexFunc(l.Settings, func(s Setting) bool { return s.Key == key })
	if i < 0 {
		return Setting{}, false
	}
	return l.Settings[i], true
}

// Error is a bad value, an unknown key or an unreadable config file; main
// exits with status 2 on it. Error() is one line:
//
//	config: activitywatch.timeout from AWBRIDGE_AW_TIMEOUT: "soon" is not a duration (e.g. 2s)
type Error struct {
	Key    string // setting or unknown key; "" when the file itself is the problem
	Source Source // layer the bad value came from
	Origin string // file path, variable or "--flag"
	Line   int    // line in the file; 0 when unknown
	Msg    string // what is wrong and what is expected; never a secret's value
	Err    error  // underlying cause, if any (e.g. fs.ErrNotExist)
}

func (e *Error) Error() string {
	where := cmp.Or(e.Origin, string(e.Source))
	if where != "" && e.Line > 0 {
		where += fmt.Sprintf(":%d", e.Line)
	}
	if e.Key != "" && where != "" {
		where = e.Key + " from " + where
	} else if e.Key != "" {
		where = e.Key
	}
	if where != "" {
		where += ": "
	}
	return text.Line("config: " + where + e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Flags holds the values of the flags Bind registered. Like a FlagSet, it
// is not safe for concurrent use; Load reads it after fs.Parse.
type Flags struct {
	config flagValue
	values []flagValue // parallel to table(); unused where a spec has no flag
}

// flagValue is a flag.Value that records whether it was set; the text is
// checked by Load so that flag errors read like every other config error.
type flagValue struct {
	s   string
	set bool
}

func (v *flagValue) String() string {
	if v == nil {
		return ""
	}
	return v.s
}

func (v *flagValue) Set(s string) error {
	v.s, v.set = s, true
	return nil
}

// Bind registers --config and every setting's flag on fs (a subcommand's
// FlagSet, so --config follows the subcommand's name). Secrets get no flag.
// Like fs.Var, it panics if a name is already registered.
func Bind(fs *flag.FlagSet) *Flags {
	specs := table()
	f := &Flags{values: make([]flagValue, len(specs))}
	fs.Var(&f.config, "config", "settings `file`; empty: none (env "+ConfigEnv+
		", default "+ConfigPathDoc("")+")")
	defaults := Defaults()
	for i := range specs {
		sp := &specs[i]
		if sp.flag == "" {
			continue
		}
		usage := fmt.Sprintf("%s (`%s`, env %s", sp.doc, sp.kind, sp.env)
		if def := cmp.Or(sp.defDoc, sp.format(&defaults)); def != "" {
			usage += ", default " + def
		}
		fs.Var(&f.values[i], sp.flag, usage+")")
	}
	return f
}

// Load resolves every setting: defaults < config file < environment <
// flags (f may be nil; else call Load after fs.Parse). Every value given
// in the file, in an AWBRIDGE_ variable or in a flag is checked, even one
// a higher layer overrides. The error, if any, is an *Error.
func Load(env Env, f *Flags) (*Loaded, error) {
	specs := table()
	l := &Loaded{Config: Defaults()}
	l.Config.Paths.StateDir = DefaultStateDir(env)
	file, err := readFile(env, f, specs, l)
	if err != nil {
		return nil, err
	}
	if file != nil {
		l.File = file.path
	}
	l.Settings = make([]Setting, 0, len(specs))
	for i := range specs {
		sp := &specs[i]
		var fv *flagValue
		if f != nil && sp.flag != "" {
			fv = &f.values[i]
		}
		src, origin, err := resolve(sp, env, file, fv, &l.Config)
		if err != nil {
			return nil, err
		}
		st := Setting{
			Key: sp.key, Value: sp.display(&l.Config), Source: src, Origin: origin,
			Doc: sp.doc, Kind: sp.kind.String(), Env: sp.env, Secret: sp.secret(),
			List: sp.sep != "",
		}
		if st.List {
			st.Items = splitList(st.Value, sp.sep)
		}
		if sp.flag != "" {
			st.Flag = "--" + sp.flag
		}
		l.Settings = append(l.Settings, st)
	}
	return l, nil
}

// resolve sets sp's field in c from the highest layer that has it and
// returns that layer.
func resolve(sp *spec, env Env, file *fileLayer, fv *flagValue, c *Config) (Source, string, error) {
	var (
		val    any
		src    = SourceDefault
		origin string
	)
	// take checks text from layer s/o and, if good, makes it the winner.
	// Relative paths in the file are taken against the file's folder.
	take := func(text string, s Source, o string) *Error {
		penv := env
		if s == SourceFile {
			penv.Dir = file.dir(env.goos())
		}
		v, problem := sp.parse(text, penv)
		if problem != "" {
			return &Error{Key: sp.key, Source: s, Origin: o, Msg: problem}
		}
		val, src, origin = v, s, o
		return nil
	}
	if file != nil {
		if raw, ok := file.value(sp); ok {
			text, problem := sp.tomlText(raw)
			err := &Error{Key: sp.key, Source: SourceFile, Origin: file.path, Msg: problem}
			if problem == "" {
				err = take(text, SourceFile, file.path)
			}
			if err != nil {
				err.Line = file.line(toml.Key{sp.section(), sp.name()})
				return "", "", err
			}
		}
	}
	if sp.env != "" {
		if text, ok := env.lookup(sp.env); ok {
			if err := take(text, SourceEnv, sp.env); err != nil {
				return "", "", err
			}
		}
	}
	if fv != nil && fv.set {
		if err := take(fv.s, SourceFlag, "--"+sp.flag); err != nil {
			return "", "", err
		}
	}
	if src == SourceDefault {
		// Foreign variables below the file: an empty one counts as unset,
		// and one is checked only when it wins.
		for _, name := range sp.lowEnv {
			if text, ok := env.lookup(name); ok && text != "" {
				if err := take(text, SourceEnv, name); err != nil {
					return "", "", err
				}
				break
			}
		}
	}
	if src == SourceDefault {
		text := sp.format(c)
		if _, problem := sp.parse(text, env); problem != "" {
			return "", "", &Error{Key: sp.key, Source: SourceDefault, Msg: noDefault(sp, text, problem)}
		}
		return src, "", nil
	}
	sp.set(c, val)
	return src, origin, nil
}

// noDefault explains a default that does not work here (state_dir without
// a home folder) and where to set the value instead.
func noDefault(sp *spec, text, problem string) string {
	msg := "the default " + problem
	if text == "" {
		msg = "has no default here (the home folder is unknown)"
	}
	where := []string{"the config file"}
	if sp.env != "" {
		where = append(where, sp.env)
	}
	if sp.flag != "" {
		where = append(where, "--"+sp.flag)
	}
	last := len(where) - 1
	return msg + "; set it in " + strings.Join(where[:last], ", ") + " or " + where[last]
}

// fileLayer is a decoded config file.
type fileLayer struct {
	path   string
	md     toml.MetaData
	top    map[string]toml.Primitive
	tables map[string]map[string]any // known tables present in the file
}

// dir is the folder holding the file (an absolute path on goos).
func (fl *fileLayer) dir(goos string) string {
	seps := "/"
	if goos == "windows" {
		seps = `/\`
	}
	i := strings.LastIndexAny(fl.path, seps)
	switch {
	case i < 0:
		return ""
	case i == 0 || (i == 2 && fl.path[1] == ':'):
		return fl.path[:i+1] // the root
	}
	return fl.path[:i]
}

// value returns sp's raw TOML value if the file sets it.
func (fl *fileLayer) value(sp *spec) (any, bool) {
	v, ok := fl.tables[sp.section()][sp.name()]
	return v, ok
}

// line finds the line where key is defined: toml reports positions only in
// its errors, so the key's value is decoded into a type that always fails.
// It returns 0 when the key has no position (implicit tables, arrays).
func (fl *fileLayer) line(key toml.Key) int {
	if len(key) == 0 {
		return 0
	}
	prim, ok := fl.top[key[0]]
	if !ok {
		return 0
	}
	for _, part := range key[1:] {
		var m map[string]toml.Primitive
		if err := fl.md.PrimitiveDecode(prim, &m); err != nil {
			return 0
		}
		if prim, ok = m[part]; !ok {
			return 0
		}
	}
	var pe toml.ParseError
	if errors.As(fl.md.PrimitiveDecode(prim, &lineProbe{}), &pe) {
		return pe.Position.Line
	}
	return 0
}

// lineProbe fails every decode so toml reports the key's position.
type lineProbe struct{}

func (*lineProbe) UnmarshalTOML(any) error { return errors.New("probe") }

// readFile picks the config file (--config, else AWBRIDGE_CONFIG, else the
// default path), makes its path absolute, reads it and checks its keys,
// and says in l where it looked. It returns a nil layer when there is no
// file to read.
func readFile(env Env, f *Flags, specs []spec, l *Loaded) (*fileLayer, error) {
	var (
		path     string
		src      = SourceDefault
		origin   string
		explicit bool
	)
	if v, ok := env.lookup(ConfigEnv); ok {
		path, src, origin, explicit = v, SourceEnv, ConfigEnv, true
	}
	if f != nil && f.config.set {
		path, src, origin, explicit = f.config.s, SourceFlag, "--config", true
	}
	if !explicit {
		path = DefaultConfigPath(env)
	}
	l.FileSource = src
	if path == "" {
		return nil, nil
	}
	if explicit {
		abs, problem := env.absolute(path)
		if problem != "" {
			return nil, &Error{Source: src, Origin: origin, Msg: "config file " + quoteShort(path) + " " + problem}
		}
		path = abs
	}
	data, err := readLimited(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			l.LookedFor = path
			return nil, nil
		}
		e := &Error{Source: src, Origin: origin, Err: err}
		if !explicit {
			e.Origin = path
		}
		var pe *fs.PathError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			e.Msg = fmt.Sprintf("config file %s does not exist", quoteShort(path))
		case errors.As(err, &pe):
			e.Msg = fmt.Sprintf("cannot read config file %s: %v", quoteShort(path), pe.Err)
		default:
			e.Msg = fmt.Sprintf("cannot read config file %s: %v", quoteShort(path), err)
		}
		return nil, e
	}
	l.LookedFor = path
	return decodeFile(path, data, specs)
}

func readLimited(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %s", formatBytes(maxFileBytes))}
	}
	return data, nil
}

// decodeFile parses data and rejects unknown keys, and tables that are not
// tables. Keys are matched exactly (toml would match struct fields
// case-insensitively, so the file is decoded into maps and md.Keys() is
// checked against the table rather than relying on Undecoded()).
func decodeFile(path string, data []byte, specs []spec) (*fileLayer, error) {
	fl := &fileLayer{path: path, tables: map[string]map[string]any{}}
	md, err := toml.Decode(string(data), &fl.top)
	if err != nil {
		e := &Error{Source: SourceFile, Origin: path, Err: err}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			e.Line, e.Msg = pe.Position.Line, "invalid TOML: "+strings.TrimSuffix(pe.Message, ".")
			// toml quotes the text it choked on: never a secret's.
			for i := range specs {
				if sp := &specs[i]; sp.secret() && pe.LastKey == sp.key {
					e.Key, e.Msg = sp.key, "invalid TOML in the value (not shown; expected a quoted string)"
				}
			}
		} else {
			e.Msg = "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")
		}
		return nil, e
	}
	fl.md = md
	secs := sections(specs)
	for _, k := range md.Keys() {
		var msg string
		var bad toml.Key
		switch {
		case !slices.Contains(secs, k[0]):
			bad = k[:1]
			msg = unknownTop(k[0], md.Type(k...), len(k) > 1, secs, specs)
		case len(k) == 1:
			// A known table; its type is checked below.
		case !slices.ContainsFunc(specs, func(sp spec) bool { return sp.key == k[0]+"."+k[1] }):
			bad = k[:2]
			msg = unknownKey(k[0], k[1], specs)
		}
		if bad != nil {
			return nil, &Error{Key: shortKey(bad), Source: SourceFile, Origin: path, Line: fl.line(k), Msg: msg}
		}
	}
	for _, sec := range secs {
		prim, ok := fl.top[sec]
		if !ok {
			continue
		}
		var v any
		if err := md.PrimitiveDecode(prim, &v); err != nil {
			return nil, &Error{Key: sec, Source: SourceFile, Origin: path, Line: fl.line(toml.Key{sec}),
				Msg: "cannot decode: " + strings.TrimPrefix(err.Error(), "toml: "), Err: err}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &Error{Key: sec, Source: SourceFile, Origin: path, Line: fl.line(toml.Key{sec}),
				Msg: "expected a table ([" + sec + "]), found " + tomlType(v)}
		}
		fl.tables[sec] = m
	}
	return fl, nil
}

// unknownTop describes an unknown key at the top level of the file.
func unknownTop(name, typ string, hasChildren bool, secs []string, specs []spec) string {
	if s := closest(name, secs); s != "" {
		return "unknown table (did you mean [" + s + "]?)"
	}
	if !hasChildren && typ != "Hash" && typ != "ArrayHash" {
		var same []string
		for i := range specs {
			if specs[i].name() == name {
				same = append(same, specs[i].key)
			}
		}
		if len(same) > 0 {
			return "unknown key (did you mean " + strings.Join(same, " or ") + "?)"
		}
		return "unknown key (settings go in the tables " + strings.Join(secs, ", ") + ")"
	}
	return "unknown table (expected one of " + strings.Join(secs, ", ") + ")"
}

// unknownKey describes an unknown key in a known table.
func unknownKey(sec, name string, specs []spec) string {
	var names []string
	for i := range specs {
		if specs[i].section() == sec {
			names = append(names, specs[i].name())
		}
	}
	if s := closest(name, names); s != "" {
		return "unknown key (did you mean " + sec + "." + s + "?)"
	}
	return "unknown key (expected one of " + strings.Join(names, ", ") + ")"
}

// closest returns the candidate within edit distance 2 of s (or equal but
// for case), "" when none is.
func closest(s string, candidates []string) string {
	best, bestD := "", 3
	if len(s) > 64 {
		return ""
	}
	for _, c := range candidates {
		if strings.EqualFold(s, c) {
			return c
		}
		if d := text.Distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// shortKey renders a TOML key for a message, bounded.
func shortKey(k toml.Key) string {
	s := k.String()
	if len(s) > 80 {
		return quoteShort(s)
	}
	return s
}
