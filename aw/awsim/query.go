package awsim

import (
	"errors"
	"fmt"
	"iter"
	"math/big"
	"net/http"
	"strings"
	"unicode"

	"github.com/awbridge/awbridge/aw/transform"
)

// This file is POST /api/0/query/: flask-restx's payload validation, then
// a port of aw-core's query2 language (aw_query/query2.py): its parser,
// quirks included (statements are split on every ";", a function call
// swallows the character after its ")"), and its interpreter.

// queryError is a QueryException: a 400 {"type", "message"}.
type queryError struct{ kind, msg string }

func (e *queryError) Error() string { return e.kind + ": " + e.msg }

func parseErr(msg string) error     { return &queryError{"QueryParseException", msg} }
func interpretErr(msg string) error { return &queryError{"QueryInterpretException", msg} }
func functionErr(msg string) error  { return &queryError{"QueryFunctionException", msg} }

// errQueryCrash is any other exception inside the query engine (IndexError,
// KeyError, ...): a 500.
var errQueryCrash = errors.New("query engine failure")

// queryPayloadErrors validates the Query model (Draft 4, keys in the order
// flask-restx generates them: required, properties, type).
func queryPayloadErrors(v any) *object {
	errs := newObject()
	o, ok := v.(*object)
	if !ok {
		errs.set("", pyRepr(v)+" is not of type 'object'")
		return errs
	}
	for _, k := range []string{"query", "timeperiods"} {
		if !o.has(k) {
			errs.set(k, "'"+k+"' is a required property")
		}
	}
	for _, k := range []string{"timeperiods", "query"} {
		val, ok := o.get(k)
		if !ok {
			continue
		}
		list, isList := val.([]any)
		if !isList {
			errs.set(k, pyRepr(val)+" is not of type 'array'")
			continue
		}
		for i, it := range list {
			if _, isStr := it.(string); !isStr {
				errs.set(fmt.Sprintf("%s.%d", k, i), pyRepr(it)+" is not of type 'string'")
			}
		}
	}
	return errs
}

func (s *Server) query(r *http.Request, q queryArgs) reply {
	body, bad := getJSON(r)
	if bad != nil {
		return *bad
	}
	if errs := queryPayloadErrors(body); errs.len() > 0 {
		return validationFailed(errs)
	}
	o := body.(*object)
	name, _ := q.get("name")
	var sb strings.Builder
	for _, l := range o.vals["query"].([]any) {
		sb.WriteString(l.(string))
	}
	text := sb.String()
	s.mu.Lock()
	defer s.mu.Unlock()
	results := []any{}
	for _, p := range o.vals["timeperiods"].([]any) {
		parts := strings.Split(p.(string), "/")
		if len(parts) < 2 {
			return internalError() // IndexError
		}
		start, err := parseISO(parts[0])
		if err != nil {
			return internalError()
		}
		end, err := parseISO(parts[1])
		if err != nil {
			return internalError()
		}
		res, err := runQuery(s.st, name, text, start, end)
		var qe *queryError
		if errors.As(err, &qe) {
			return restx(http.StatusBadRequest, obj("type", qe.kind, "message", qe.msg))
		}
		if err != nil {
			return internalError()
		}
		results = append(results, res)
	}
	out, err := toJSON(results)
	if err != nil {
		return internalError()
	}
	return jsonify(http.StatusOK, out)
}

// qEvent is an aw-core Event inside the query engine. Lists hold copies of
// it; its data object is shared between the copies and changed in place
// where aw-core changes it. ID 0 is None.
type qEvent = transform.Event[pyData]

// pyData is an event's data: a JSON value, usually *object.
type pyData struct{ v any }

// Equal is Python's ==.
func (d pyData) Equal(o pyData) bool { return pyEqual(d.v, o.v) }

// Clone is copy.deepcopy.
func (d pyData) Clone() pyData { return pyData{clone(d.v)} }

// obj is the data as a dict (non-dict data reads as a fresh empty one).
func (d pyData) obj() *object {
	if o, ok := d.v.(*object); ok {
		return o
	}
	return newObject()
}

// Str is the value under key when it is a string.
func (d pyData) Str(key string) (string, bool) {
	v, _ := d.obj().get(key)
	s, ok := v.(string)
	return s, ok
}

// Strings yields the string values in order.
func (d pyData) Strings() iter.Seq[string] {
	return func(yield func(string) bool) {
		o := d.obj()
		for _, k := range o.keys {
			if s, ok := o.vals[k].(string); ok && !yield(s) {
				return
			}
		}
	}
}

// qDuration is a datetime.timedelta value (sum_durations).
type qDuration int64

// toJSON converts a query result for jsonify (datetime as isoformat,
// timedelta as seconds).
func toJSON(v any) (any, error) {
	switch t := v.(type) {
	case qEvent:
		data, err := toJSON(t.Data.v)
		if err != nil {
			return nil, err
		}
		return (&event{id: t.ID, ts: t.Start, dur: t.Duration, data: data}).json(true), nil
	case qDuration:
		return durSeconds(int64(t)), nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			y, err := toJSON(x)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	case *object:
		out := newObject()
		for _, k := range t.keys {
			y, err := toJSON(t.vals[k])
			if err != nil {
				return nil, err
			}
			out.set(k, y)
		}
		return out, nil
	}
	return v, nil
}

// --- parser (QToken classes) ---

type tokKind int

const (
	tNone tokKind = iota
	tString
	tInteger
	tFunction
	tDict
	tList
	tVariable
)

func isAlpha(r rune) bool { return unicode.IsLetter(r) }
func isDigit(r rune) bool { return unicode.IsDigit(r) }

func pyStripRunes(s []rune) []rune {
	i, j := 0, len(s)
	for i < j && pyIsSpace(s[i]) {
		i++
	}
	for j > i && pyIsSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func indexRune(s []rune, r rune) int {
	for i, c := range s {
		if c == r {
			return i
		}
	}
	return -1
}

// checkString is QString.check. It panics-free reports IndexError as
// errQueryCrash.
func checkString(s []rune) ([]rune, []rune, error) {
	if len(s) == 0 {
		return nil, nil, errQueryCrash // string[0]
	}
	q := s[0]
	if q != '"' && q != '\'' {
		return nil, s, nil
	}
	tok := []rune{q}
	var prev rune = -1
	for _, c := range s[1:] {
		tok = append(tok, c)
		if c == q && prev != '\\' {
			break
		}
		prev = c
	}
	if tok[len(tok)-1] != q || len(tok) < 2 {
		return nil, nil, parseErr("Failed to parse string")
	}
	return tok, s[len(tok):], nil
}

func checkInteger(s []rune) ([]rune, []rune) {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return s[:n], s[n:]
}

func checkFunction(s []rune) ([]rune, []rune) {
	i := 0
	found := false
	for _, c := range s {
		if isAlpha(c) || c == '_' {
			i++
		} else if i != 0 && isDigit(c) {
			i++
		} else if c == '(' {
			i++
			found = true
			break
		} else {
			break
		}
	}
	if !found {
		return nil, s
	}
	consume := 1
	single, double := false, false
	var prev rune = -1
	for _, c := range s[i:] {
		i++
		switch {
		case c == '\'' && prev != '\\' && !double:
			single = !single
		case c == '"' && prev != '\\' && !single:
			double = !double
		case single || double:
		case c == '(':
			consume++
		case c == ')':
			consume--
		}
		if consume == 0 {
			break
		}
		prev = c
	}
	if consume != 0 {
		return nil, s
	}
	return s[:i], sliceFrom(s, i+1)
}

func sliceFrom(s []rune, i int) []rune {
	if i >= len(s) {
		return nil
	}
	return s[i:]
}

// checkBracket is QDict.check / QList.check (an unclosed bracket yields the
// whole string).
func checkBracket(s []rune, open, close rune) ([]rune, []rune) {
	if s[0] != open {
		return nil, s
	}
	i := 1
	consume := 1
	single, double := false, false
	var prev rune = -1
	for _, c := range s[1:] {
		i++
		switch {
		case c == '\'' && prev != '\\' && !double:
			single = !single
		case c == '"' && prev != '\\' && !single:
			double = !double
		case single || double:
		case c == close:
			consume--
		case c == open:
			consume++
		}
		if consume == 0 {
			break
		}
		prev = c
	}
	return s[:i], sliceFrom(s, i+1)
}

func checkVariable(s []rune) ([]rune, []rune) {
	n := 0
	for i, c := range s {
		if isAlpha(c) || c == '_' || (i != 0 && isDigit(c)) {
			n++
			continue
		}
		break
	}
	return s[:n], s[n:]
}

// parseToken is _parse_token: the first token type whose check matches.
func parseToken(s []rune) (tokKind, []rune, []rune, error) {
	if len(s) == 0 {
		return tNone, nil, nil, nil
	}
	s = pyStripRunes(s)
	tok, rest, err := checkString(s)
	if err != nil {
		return 0, nil, nil, err
	}
	if len(tok) > 0 {
		return tString, tok, rest, nil
	}
	if tok, rest := checkInteger(s); len(tok) > 0 {
		return tInteger, tok, rest, nil
	}
	if tok, rest := checkFunction(s); len(tok) > 0 {
		return tFunction, tok, rest, nil
	}
	if tok, rest := checkBracket(s, '{', '}'); len(tok) > 0 {
		return tDict, tok, rest, nil
	}
	if tok, rest := checkBracket(s, '[', ']'); len(tok) > 0 {
		return tList, tok, rest, nil
	}
	if tok, rest := checkVariable(s); len(tok) > 0 {
		return tVariable, tok, rest, nil
	}
	return 0, nil, nil, parseErr("Syntax error: " + string(s))
}

// qnode is a parsed expression.
type qnode interface {
	eval(env *qenv) (any, error)
}

type qString struct{ v string }
type qInteger struct{ v *big.Int }
type qVariable struct {
	name string
	val  any
	has  bool
}
type qFunction struct {
	name string
	args []qnode
}
type qDict struct {
	keys []string
	vals map[string]qnode
}
type qList struct{ items []qnode }

// parseNode is <type>.parse(token).
func parseNode(kind tokKind, tok []rune, env *qenv) (qnode, error) {
	env.depth++
	defer func() { env.depth-- }()
	if env.depth > maxParseDepth {
		return nil, errQueryCrash
	}
	switch kind {
	case tString:
		q := string(tok[0])
		v := strings.ReplaceAll(string(tok), "\\"+q, q)
		r := []rune(v)
		if len(r) < 2 {
			return &qString{""}, nil
		}
		return &qString{string(r[1 : len(r)-1])}, nil
	case tInteger:
		n := new(big.Int)
		for _, c := range tok {
			n.Mul(n, big.NewInt(10))
			n.Add(n, big.NewInt(int64(digitValue(c))))
		}
		return &qInteger{n}, nil
	case tVariable:
		name := string(tok)
		v, ok := env.ns.get(name)
		return &qVariable{name, v, ok}, nil
	case tFunction:
		start := indexRune(tok, '(')
		if start < 0 {
			start = len(tok)
		}
		name := string(tok[:start])
		var args []qnode
		var argsStr []rune
		if start+1 <= len(tok)-1 {
			argsStr = tok[start+1 : len(tok)-1]
		}
		for len(argsStr) > 0 {
			k, t, rest, err := parseToken(argsStr)
			if err != nil {
				return nil, err
			}
			argsStr = rest
			if comma := indexRune(argsStr, ','); comma >= 0 {
				argsStr = argsStr[comma+1:]
			}
			if k == tNone {
				return nil, errQueryCrash // None.parse
			}
			a, err := parseNode(k, t, env)
			if err != nil {
				return nil, err
			}
			args = append(args, a)
		}
		return &qFunction{name, args}, nil
	case tDict:
		entries := tok[1:max(1, len(tok)-1)]
		d := &qDict{vals: map[string]qnode{}}
		for len(entries) > 0 {
			entries = pyStripRunes(entries)
			if len(d.keys) > 0 {
				if len(entries) == 0 {
					return nil, errQueryCrash
				}
				if entries[0] == ',' {
					entries = entries[1:]
				}
			}
			kk, kt, rest, err := parseToken(entries)
			if err != nil {
				return nil, err
			}
			if kk != tString {
				return nil, parseErr("Key in dict is not a str")
			}
			key, _ := parseNode(tString, kt, env)
			entries = pyStripRunes(rest)
			if len(entries) == 0 {
				return nil, errQueryCrash
			}
			if entries[0] != ':' {
				return nil, parseErr("Key in dict is not followed by a :")
			}
			entries = entries[1:]
			vk, vt, rest, err := parseToken(entries)
			if err != nil {
				return nil, err
			}
			if vk == tNone {
				return nil, parseErr("Dict expected a value, got nothing")
			}
			val, err := parseNode(vk, vt, env)
			if err != nil {
				return nil, err
			}
			k := key.(*qString).v
			if _, dup := d.vals[k]; !dup {
				d.keys = append(d.keys, k)
			}
			d.vals[k] = val
			entries = rest
		}
		return d, nil
	case tList:
		entries := tok[1:max(1, len(tok)-1)]
		l := &qList{}
		for len(entries) > 0 {
			entries = pyStripRunes(entries)
			if len(l.items) > 0 {
				if len(entries) == 0 {
					return nil, errQueryCrash
				}
				if entries[0] == ',' {
					entries = entries[1:]
				}
			}
			vk, vt, rest, err := parseToken(entries)
			if err != nil {
				return nil, err
			}
			if vk == tNone {
				return nil, parseErr("List expected a value, got nothing")
			}
			val, err := parseNode(vk, vt, env)
			if err != nil {
				return nil, err
			}
			l.items = append(l.items, val)
			entries = rest
		}
		return l, nil
	}
	return nil, errQueryCrash
}

// digitValue is int() of one Unicode decimal digit (digits come in runs of
// ten).
func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	z := r
	for isDigit(z - 1) {
		z--
	}
	return int(r-z) % 10
}

// parseStatement is query2.parse(line).
func parseStatement(line []rune, env *qenv) (string, qnode, error) {
	sep := indexRune(line, '=')
	var varStr, valStr []rune
	if sep < 0 {
		// line.find returns -1: line[:-1] and line[0:]
		if len(line) > 0 {
			varStr = line[:len(line)-1]
		}
		valStr = line
	} else {
		varStr, valStr = line[:sep], line[sep+1:]
	}
	if len(valStr) == 0 {
		return "", nil, parseErr("Nothing to assign")
	}
	vk, vt, rest, err := parseToken(varStr)
	if err != nil {
		return "", nil, err
	}
	if len(pyStripRunes(rest)) > 0 {
		return "", nil, parseErr("Invalid syntax for assignment variable")
	}
	if vk != tVariable {
		return "", nil, parseErr("Cannot assign to a non-variable")
	}
	k, t, rest, err := parseToken(valStr)
	if err != nil {
		return "", nil, err
	}
	if len(rest) > 0 {
		return "", nil, parseErr("Invalid syntax for value to assign")
	}
	if k == tNone {
		return "", nil, errQueryCrash
	}
	val, err := parseNode(k, t, env)
	if err != nil {
		return "", nil, err
	}
	return string(vt), val, nil
}

// qenv is one query run: its namespace and the datastore.
type qenv struct {
	ns    *object
	st    *store
	depth int // parser nesting
}

// maxParseDepth stands for CPython's recursion limit: the parser uses about
// three frames per nesting level, so deeper queries fail with a
// RecursionError (a 500) there too.
const maxParseDepth = 300

// maxQueryEvents bounds intermediate results (a simulator guard).
const maxQueryEvents = 1_000_000

// runQuery is query2.query for one timeperiod.
func runQuery(st *store, name, text string, start, end pyTime) (any, error) {
	env := &qenv{ns: obj("True", true, "False", false, "true", true, "false", false), st: st}
	env.ns.set("NAME", name)
	env.ns.set("STARTTIME", isoformatOffset(start.us, start.offMin))
	env.ns.set("ENDTIME", isoformatOffset(end.us, end.offMin))
	for _, stmt := range strings.Split(text, ";") {
		line := pyStripRunes([]rune(stmt))
		if len(line) == 0 {
			continue
		}
		name, val, err := parseStatement(line, env)
		if err != nil {
			return nil, err
		}
		v, err := val.eval(env)
		if err != nil {
			return nil, err
		}
		env.ns.set(name, v)
	}
	ret, ok := env.ns.get("RETURN")
	if !ok {
		return nil, parseErr("Query doesn't assign the RETURN variable, nothing to respond")
	}
	return ret, nil
}

func (n *qString) eval(*qenv) (any, error)  { return n.v, nil }
func (n *qInteger) eval(*qenv) (any, error) { return new(big.Int).Set(n.v), nil }

func (n *qVariable) eval(env *qenv) (any, error) {
	if _, ok := env.ns.get(n.name); !ok {
		return nil, interpretErr(fmt.Sprintf("Tried to reference variable '%s' which is not defined", n.name))
	}
	env.ns.set(n.name, n.val)
	return n.val, nil
}

func (n *qDict) eval(env *qenv) (any, error) {
	o := newObject()
	for _, k := range n.keys {
		v, err := n.vals[k].eval(env)
		if err != nil {
			return nil, err
		}
		o.set(k, v)
	}
	return o, nil
}

func (n *qList) eval(env *qenv) (any, error) {
	out := make([]any, 0, len(n.items))
	for _, it := range n.items {
		v, err := it.eval(env)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// errArity is a TypeError inside a query function call.
var errArity = errors.New("TypeError")

func (n *qFunction) eval(env *qenv) (any, error) {
	fn, ok := queryFunction(n.name)
	if !ok {
		return nil, interpretErr(fmt.Sprintf("Tried to call function '%s' which doesn't exist", n.name))
	}
	args := make([]any, 0, len(n.args))
	for _, a := range n.args {
		v, err := a.eval(env)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	// q2_typecheck: each required list/str/int parameter, in order; a
	// missing one is an IndexError (500), a wrong type a QueryFunctionException.
	for i, t := range fn.types {
		if t == "" || i >= fn.min {
			continue
		}
		if i >= len(args) {
			return nil, errQueryCrash
		}
		if !pyIsInstance(args[i], t) {
			return nil, functionErr(fmt.Sprintf("Variable '%s' passed to function call is of invalid type. Expected <class '%s'> but was %s",
				pyStrQ(args[i]), t, pyClass(args[i])))
		}
	}
	if len(args) < fn.min || len(args) > fn.max {
		return nil, interpretErr(fmt.Sprintf("Tried to call function %s with invalid amount of arguments", n.name))
	}
	res, err := fn.call(env, args)
	if errors.Is(err, errArity) {
		return nil, interpretErr(fmt.Sprintf("Tried to call function %s with invalid amount of arguments", n.name))
	}
	return res, err
}

func pyIsInstance(v any, t string) bool {
	switch t {
	case "list":
		_, ok := v.([]any)
		return ok
	case "str":
		_, ok := v.(string)
		return ok
	case "int":
		switch v.(type) {
		case *big.Int, bool:
			return true
		}
	}
	return false
}

func pyClass(v any) string {
	switch v.(type) {
	case nil:
		return "<class 'NoneType'>"
	case bool:
		return "<class 'bool'>"
	case *big.Int:
		return "<class 'int'>"
	case float64:
		return "<class 'float'>"
	case string:
		return "<class 'str'>"
	case []any:
		return "<class 'list'>"
	case *object:
		return "<class 'dict'>"
	case qEvent:
		return "<class 'aw_core.models.Event'>"
	case qDuration:
		return "<class 'datetime.timedelta'>"
	}
	return "<class 'object'>"
}

// pyStrQ is str() of a query value (events and timedeltas approximately as
// Python prints them).
func pyStrQ(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case qEvent:
		return pyRepr(obj("id", idOrNil(t.ID), "timestamp", isoformat(t.Start), "duration", durSeconds(t.Duration), "data", t.Data.v))
	case qDuration:
		return fmt.Sprintf("%v", durSeconds(int64(t)))
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			if s, ok := x.(string); ok {
				parts[i] = pyRepr(s)
			} else {
				parts[i] = pyStrQ(x)
			}
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return pyRepr(v)
}

func idOrNil(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
