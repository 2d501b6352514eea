package awsim

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/awbridge/awbridge/aw/transform"
)

// The query functions of aw_query/functions.py: adapters from the query
// language's Python values to package transform, which holds aw_transform's
// logic. Data is changed in place wherever aw-core changes it (events in
// several lists share their data object).

// qfunc describes one query function: the q2_typecheck'ed parameter types
// ("list", "str", "int", "" for unchecked), how many arguments it takes,
// and its body.
type qfunc struct {
	types    []string
	min, max int
	call     func(env *qenv, args []any) (any, error)
}

// queryFunctions resolves a query function by name.
func queryFunction(name string) (qfunc, bool) {
	one := func(f func([]qEvent) (any, error)) qfunc {
		return qfunc{[]string{"list"}, 1, 1, func(_ *qenv, a []any) (any, error) {
			evs, err := eventList(a[0])
			if err != nil {
				return nil, err
			}
			return f(evs)
		}}
	}
	two := func(f func(a, b []qEvent) (any, error)) qfunc {
		return qfunc{[]string{"list", "list"}, 2, 2, func(_ *qenv, a []any) (any, error) {
			x, err := eventList(a[0])
			if err != nil {
				return nil, err
			}
			y, err := eventList(a[1])
			if err != nil {
				return nil, err
			}
			return f(x, y)
		}}
	}
	switch name {
	case "find_bucket":
		return qfunc{[]string{"str", ""}, 1, 2, qFindBucket}, true
	case "query_bucket":
		return qfunc{[]string{"str"}, 1, 1, qQueryBucket}, true
	case "query_bucket_eventcount":
		return qfunc{[]string{"str"}, 1, 1, qQueryBucketCount}, true
	case "filter_keyvals":
		return qfunc{[]string{"list", "str", "list"}, 3, 3, func(_ *qenv, a []any) (any, error) { return qFilterKeyvals(a, false) }}, true
	case "exclude_keyvals":
		return qfunc{[]string{"list", "str", "list"}, 3, 3, func(_ *qenv, a []any) (any, error) { return qFilterKeyvals(a, true) }}, true
	case "filter_keyvals_regex":
		return qfunc{[]string{"list", "str", "str"}, 3, 3, qFilterKeyvalsRegex}, true
	case "filter_period_intersect":
		return two(func(a, b []qEvent) (any, error) { return eventsAny(transform.FilterPeriodIntersect(a, b)), nil }), true
	case "period_union":
		return two(func(a, b []qEvent) (any, error) { return periodUnion(a, b), nil }), true
	case "union_no_overlap":
		return two(func(a, b []qEvent) (any, error) { return eventsAny(transform.UnionNoOverlap(a, b)), nil }), true
	case "limit_events":
		return qfunc{[]string{"list", "int"}, 2, 2, qLimitEvents}, true
	case "merge_events_by_keys":
		return qfunc{[]string{"list", "list"}, 2, 2, qMergeByKeys}, true
	case "chunk_events_by_key":
		return qfunc{[]string{"list", "str"}, 2, 2, qChunkByKey}, true
	case "sort_by_timestamp":
		return one(func(evs []qEvent) (any, error) { return eventsAny(transform.SortByTime(evs)), nil }), true
	case "sort_by_duration":
		return one(func(evs []qEvent) (any, error) { return eventsAny(transform.SortByDuration(evs)), nil }), true
	case "sum_durations":
		return one(func(evs []qEvent) (any, error) {
			sum := 0.0 // Python adds float seconds
			for _, e := range evs {
				sum += durSeconds(e.Duration)
			}
			d, err := durFromSeconds(sum)
			if err != nil {
				return nil, errQueryCrash
			}
			return qDuration(d), nil
		}), true
	case "concat":
		return qfunc{[]string{"list", "list"}, 2, 2, func(_ *qenv, a []any) (any, error) {
			x, y := a[0].([]any), a[1].([]any)
			out := make([]any, 0, len(x)+len(y))
			return append(append(out, x...), y...), nil
		}}, true
	case "flood":
		return one(func(evs []qEvent) (any, error) {
			return eventsAny(transform.Flood(evs, transform.DefaultPulsetime)), nil
		}), true
	case "split_url_events":
		return one(splitURLEvents), true
	case "simplify_window_titles":
		return qfunc{[]string{"list", "str"}, 2, 2, qSimplifyTitles}, true
	case "nop":
		return qfunc{nil, 0, 0, func(*qenv, []any) (any, error) { return big.NewInt(1), nil }}, true
	case "categorize":
		return qfunc{[]string{"list", "list"}, 2, 2, func(_ *qenv, a []any) (any, error) { return qClassify(a, true) }}, true
	case "tag":
		return qfunc{[]string{"list", "list"}, 2, 2, func(_ *qenv, a []any) (any, error) { return qClassify(a, false) }}, true
	}
	return qfunc{}, false
}

// eventList reads a list of events (anything else in it fails like an
// AttributeError: a 500).
func eventList(v any) ([]qEvent, error) {
	l, _ := v.([]any)
	if len(l) > maxQueryEvents {
		return nil, errQueryCrash
	}
	out := make([]qEvent, len(l))
	for i, x := range l {
		e, ok := x.(qEvent)
		if !ok {
			return nil, errQueryCrash
		}
		out[i] = e
	}
	return out, nil
}

func eventsAny(evs []qEvent) []any {
	out := make([]any, len(evs))
	for i, e := range evs {
		out[i] = e
	}
	return out
}

func pyTruthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case *big.Int:
		return t.Sign() != 0
	case float64:
		return t != 0
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case *object:
		return t.len() > 0
	case qDuration:
		return t != 0
	}
	return true
}

func qFindBucket(env *qenv, a []any) (any, error) {
	filter := a[0].(string)
	var host any
	if len(a) > 1 {
		host = a[1]
	}
	for _, b := range env.st.buckets {
		if strings.Contains(b.id, filter) {
			if !pyTruthy(host) || pyEqual(b.hostname, host) {
				return b.id, nil
			}
		}
	}
	return nil, functionErr(fmt.Sprintf("Unable to find bucket matching '%s' (hostname filter set to '%s')", filter, pyStrQ(host)))
}

// queryRange reads STARTTIME and ENDTIME back from the namespace.
func queryRange(env *qenv) (timeRange, bool) {
	sv, _ := env.ns.get("STARTTIME")
	ev, _ := env.ns.get("ENDTIME")
	ss, ok1 := sv.(string)
	es, ok2 := ev.(string)
	if !ok1 || !ok2 {
		return timeRange{}, false
	}
	st, err1 := parseISO(ss)
	et, err2 := parseISO(es)
	if err1 != nil || err2 != nil {
		return timeRange{}, false
	}
	return timeRange{hasStart: true, hasEnd: true, start: st.us, end: et.us}, true
}

func qQueryBucket(env *qenv, a []any) (any, error) {
	id := a[0].(string)
	b := env.st.bucket(id)
	if b == nil {
		return nil, functionErr("There's no bucket named '" + id + "'")
	}
	tr, ok := queryRange(env)
	if !ok {
		return nil, functionErr("Unable to parse starttime/endtime for query_bucket")
	}
	tr, err := roundRange(tr)
	if err != nil {
		return nil, errQueryCrash
	}
	evs, err := env.st.getEvents(b, -1, tr)
	if err != nil {
		return nil, errQueryCrash
	}
	out := make([]any, len(evs))
	for i, e := range evs {
		out[i] = qEvent{ID: e.id, Start: e.ts, Duration: e.dur, Data: pyData{clone(e.data)}}
	}
	return out, nil
}

func qQueryBucketCount(env *qenv, a []any) (any, error) {
	id := a[0].(string)
	b := env.st.bucket(id)
	if b == nil {
		return nil, functionErr("There's no bucket named '" + id + "'")
	}
	tr, ok := queryRange(env)
	if !ok {
		return nil, errQueryCrash
	}
	n, err := env.st.count(b, tr)
	if err != nil {
		return nil, errQueryCrash
	}
	return big.NewInt(int64(n)), nil
}

func qFilterKeyvals(a []any, exclude bool) (any, error) {
	evs, err := eventList(a[0])
	if err != nil {
		return nil, err
	}
	key, vals := a[1].(string), a[2].([]any)
	return eventsAny(transform.Filter(evs, func(d pyData) bool {
		match := false
		if o, ok := d.v.(*object); ok {
			if v, ok := o.get(key); ok {
				for _, x := range vals {
					if pyEqual(v, x) {
						match = true
						break
					}
				}
			}
		}
		return match != exclude
	})), nil
}

func qFilterKeyvalsRegex(_ *qenv, a []any) (any, error) {
	evs, err := eventList(a[0])
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(a[2].(string))
	if err != nil {
		return nil, errQueryCrash // re.error
	}
	key := a[1].(string)
	for _, e := range evs {
		if v, ok := e.Data.obj().get(key); ok {
			if _, isStr := v.(string); !isStr {
				return nil, errArity // TypeError in findall
			}
		}
	}
	return eventsAny(transform.FilterRegex(evs, key, re)), nil
}

func qLimitEvents(_ *qenv, a []any) (any, error) {
	l := a[0].([]any)
	n, _ := asNumber(a[1])
	c := n.(*big.Int)
	end := len(l)
	switch {
	case c.Sign() >= 0 && c.IsInt64() && c.Int64() < int64(len(l)):
		end = int(c.Int64())
	case c.Sign() < 0:
		if c.IsInt64() && -c.Int64() < int64(len(l)) {
			end = len(l) + int(c.Int64())
		} else {
			end = 0
		}
	}
	return append([]any(nil), l[:end]...), nil
}

// hashKey is a Python hash/equality key for a tuple element: 1, 1.0 and
// True collide; lists become tuples; dicts are unhashable (TypeError).
func hashKey(v any, sb *strings.Builder) error {
	if n, ok := asNumber(v); ok {
		switch t := n.(type) {
		case *big.Int:
			sb.WriteString("I" + t.String() + ";")
		case float64:
			if t == math.Trunc(t) && !math.IsInf(t, 0) {
				bf, _ := new(big.Float).SetFloat64(t).Int(nil)
				sb.WriteString("I" + bf.String() + ";")
			} else {
				sb.WriteString("F" + strconv.FormatFloat(t, 'g', -1, 64) + ";")
			}
		}
		return nil
	}
	switch t := v.(type) {
	case nil:
		sb.WriteString("N;")
	case string:
		sb.WriteString("S" + strconv.Itoa(len(t)) + ":" + t)
	case []any:
		sb.WriteString("T(")
		for _, x := range t {
			if err := hashKey(x, sb); err != nil {
				return err
			}
		}
		sb.WriteString(")")
	default:
		return errArity
	}
	return nil
}

func qMergeByKeys(_ *qenv, a []any) (any, error) {
	evs, err := eventList(a[0])
	if err != nil {
		return nil, err
	}
	keys := a[1].([]any)
	if len(keys) < 1 {
		return a[0], nil
	}
	groups := make([]string, len(evs))
	for i, e := range evs {
		d := e.Data.obj()
		var sb strings.Builder
		for _, k := range keys {
			ks, isStr := k.(string)
			if !isStr {
				if err := hashKey(k, &strings.Builder{}); err != nil {
					return nil, err
				}
				continue
			}
			if v, ok := d.get(ks); ok {
				if err := hashKey(v, &sb); err != nil {
					return nil, err
				}
			}
		}
		groups[i] = sb.String()
	}
	return eventsAny(transform.MergeByKey(evs, func(i int) string { return groups[i] }, func(first pyData) pyData {
		d, g := first.obj(), newObject()
		for _, k := range keys {
			if ks, ok := k.(string); ok {
				if v, ok := d.get(ks); ok {
					g.set(ks, v)
				}
			}
		}
		return pyData{g}
	})), nil
}

func qChunkByKey(_ *qenv, a []any) (any, error) {
	evs, err := eventList(a[0])
	if err != nil {
		return nil, err
	}
	key := a[1].(string)
	val := func(i int) (any, bool) { return evs[i].Data.obj().get(key) }
	chunks := transform.ChunkByKey(evs, func(i int) bool { _, ok := val(i); return ok },
		func(i, j int) bool { x, _ := val(i); y, _ := val(j); return pyEqual(x, y) }, transform.DefaultPulsetime)
	out := make([]any, len(chunks))
	for n, c := range chunks {
		v, _ := val(c.From)
		out[n] = qEvent{Start: c.Start, Duration: c.Duration, Data: pyData{obj(key, v, "subevents", eventsAny(evs[c.From:c.To]))}}
	}
	return out, nil
}

// periodUnion is period_union: the results' data is cleared, in place for
// the events taken over unchanged (other lists holding them see it).
func periodUnion(a, b []qEvent) []any {
	union, kept := transform.PeriodUnion(a, b)
	for k, i := range kept {
		union[k].Data = pyData{newObject()}
		if i < 0 {
			continue
		}
		in := b
		if i < len(a) {
			in = a
		} else {
			i -= len(a)
		}
		if o, ok := in[i].Data.v.(*object); ok {
			o.keys, o.vals = nil, map[string]any{}
			union[k].Data = pyData{o}
		}
	}
	return eventsAny(union)
}

func splitURLEvents(evs []qEvent) (any, error) {
	for _, e := range evs {
		d := e.Data.obj()
		v, ok := d.get("url")
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, errQueryCrash
		}
		p, err := transform.SplitURL(s)
		if err != nil {
			return nil, errQueryCrash // ValueError
		}
		d.set("$protocol", p.Protocol)
		d.set("$domain", p.Domain)
		d.set("$path", p.Path)
		d.set("$params", p.Params)
		d.set("$options", p.Options)
		d.set("$identifier", p.Identifier)
	}
	return eventsAny(evs), nil
}

func qSimplifyTitles(_ *qenv, a []any) (any, error) {
	evs, err := eventList(a[0])
	if err != nil {
		return nil, err
	}
	key := a[1].(string)
	out := make([]any, len(evs))
	for i, e := range evs {
		e.Data = e.Data.Clone()
		d := e.Data.obj()
		v, ok := d.get(key)
		if !ok {
			return nil, errQueryCrash
		}
		s, ok := v.(string)
		if !ok {
			return nil, errArity
		}
		d.set(key, transform.SimplifyTitle(s, key == "title" && d.has("app")))
		out[i] = e
	}
	return out, nil
}

// parseRule is aw_transform.classify.Rule(dict). A pattern Go cannot
// compile gives a rule that matches nothing.
func parseRule(v any) (transform.Rule, error) {
	o, ok := v.(*object)
	if !ok {
		return transform.Rule{}, errQueryCrash // .get on a non-dict
	}
	var keys []string
	if k, ok := o.get("select_keys"); ok && pyTruthy(k) {
		l, ok := k.([]any)
		if !ok {
			return transform.Rule{}, errQueryCrash
		}
		keys = []string{} // data.get of a non-string key is None
		for _, x := range l {
			if s, ok := x.(string); ok {
				keys = append(keys, s)
			}
		}
	}
	var regex string
	if rx, _ := o.get("regex"); pyTruthy(rx) {
		s, ok := rx.(string)
		if !ok {
			return transform.Rule{}, errArity
		}
		regex = s
	}
	ic, _ := o.get("ignore_case")
	r, _ := transform.NewRule(regex, pyTruthy(ic), keys)
	return r, nil
}

// pyLen is len() of a class value; ok is false where Python raises a
// TypeError.
func pyLen(v any) (int, bool) {
	switch t := v.(type) {
	case []any:
		return len(t), true
	case string:
		return len([]rune(t)), true
	case *object:
		return t.len(), true
	}
	return 0, false
}

// qClassify is categorize (category=true) or tag.
func qClassify(a []any, category bool) (any, error) {
	evs, err := eventList(a[0])
	if err != nil {
		return nil, err
	}
	var (
		values []any
		rules  []transform.Rule
	)
	for _, c := range a[1].([]any) {
		pair, ok := c.([]any)
		if !ok {
			switch c.(type) {
			case string, *object:
				return nil, errQueryCrash
			}
			return nil, errArity // not iterable
		}
		if len(pair) != 2 {
			return nil, errQueryCrash // ValueError: unpacking
		}
		r, err := parseRule(pair[1])
		if err != nil {
			return nil, err
		}
		values, rules = append(values, pair[0]), append(rules, r)
	}
	for _, e := range evs {
		d, ok := e.Data.v.(*object)
		if !ok {
			return nil, errQueryCrash
		}
		if !category {
			tags := []any{}
			for i, r := range rules {
				if r.Match(e.Data) {
					tags = append(tags, clone(values[i]))
				}
			}
			d.set("$tags", tags)
			continue
		}
		var lenErr error
		best := transform.PickDeepest(len(rules), func(i int) int {
			n, ok := pyLen(values[i])
			if !ok {
				lenErr = errArity
			}
			return n
		}, func(i int) bool { return rules[i].Match(e.Data) })
		if lenErr != nil {
			return nil, lenErr
		}
		cat := any([]any{transform.Uncategorized})
		if best >= 0 {
			cat = clone(values[best])
		}
		d.set("$category", cat)
	}
	return a[0], nil
}
