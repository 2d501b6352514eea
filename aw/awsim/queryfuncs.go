package awsim

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The query functions of aw_query/functions.py and the aw_transform
// functions behind them. Events are shared and mutated in place wherever
// the Python code does so.

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
	one := func(f func([]*qEvent) (any, error)) qfunc {
		return qfunc{[]string{"list"}, 1, 1, func(_ *qenv, a []any) (any, error) {
			evs, err := eventList(a[0])
			if err != nil {
				return nil, err
			}
			return f(evs)
		}}
	}
	two := func(f func(a, b []*qEvent) (any, error)) qfunc {
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
		return two(func(a, b []*qEvent) (any, error) { return filterPeriodIntersect(a, b), nil }), true
	case "period_union":
		return two(func(a, b []*qEvent) (any, error) { return periodUnion(a, b), nil }), true
	case "union_no_overlap":
		return two(func(a, b []*qEvent) (any, error) { return unionNoOverlap(a, b), nil }), true
	case "limit_events":
		return qfunc{[]string{"list", "int"}, 2, 2, qLimitEvents}, true
	case "merge_events_by_keys":
		return qfunc{[]string{"list", "list"}, 2, 2, qMergeByKeys}, true
	case "chunk_events_by_key":
		return qfunc{[]string{"list", "str"}, 2, 2, qChunkByKey}, true
	case "sort_by_timestamp":
		return one(func(evs []*qEvent) (any, error) { return eventsAny(sortByTS(evs)), nil }), true
	case "sort_by_duration":
		return one(func(evs []*qEvent) (any, error) {
			out := append([]*qEvent(nil), evs...)
			sort.SliceStable(out, func(i, j int) bool { return out[i].dur > out[j].dur })
			return eventsAny(out), nil
		}), true
	case "sum_durations":
		return one(func(evs []*qEvent) (any, error) {
			sum := 0.0
			for _, e := range evs {
				sum += durSeconds(e.dur)
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
		return one(func(evs []*qEvent) (any, error) { return eventsAny(flood(evs, 5*usPerSecond)), nil }), true
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
func eventList(v any) ([]*qEvent, error) {
	l, _ := v.([]any)
	if len(l) > maxQueryEvents {
		return nil, errQueryCrash
	}
	out := make([]*qEvent, len(l))
	for i, x := range l {
		e, ok := x.(*qEvent)
		if !ok {
			return nil, errQueryCrash
		}
		out[i] = e
	}
	return out, nil
}

func eventsAny(evs []*qEvent) []any {
	out := make([]any, len(evs))
	for i, e := range evs {
		out[i] = e
	}
	return out
}

func sortByTS(evs []*qEvent) []*qEvent {
	out := append([]*qEvent(nil), evs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ts < out[j].ts })
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
		out[i] = &qEvent{id: e.id, ts: e.ts, dur: e.dur, data: clone(e.data)}
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
	out := []any{}
	for _, e := range evs {
		match := false
		if d, ok := e.data.(*object); ok {
			if v, ok := d.get(key); ok {
				for _, x := range vals {
					if pyEqual(v, x) {
						match = true
						break
					}
				}
			}
		}
		if match != exclude {
			out = append(out, e)
		}
	}
	return out, nil
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
	out := []any{}
	for _, e := range evs {
		v, ok := e.dataObj().get(key)
		if !ok {
			return nil, errQueryCrash // KeyError
		}
		s, ok := v.(string)
		if !ok {
			return nil, errArity // TypeError
		}
		if re.MatchString(s) {
			out = append(out, e)
		}
	}
	return out, nil
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
	var order []string
	groups := map[string]*qEvent{}
	for _, e := range evs {
		d := e.dataObj()
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
		ck := sb.String()
		if g, ok := groups[ck]; ok {
			g.dur += e.dur
			continue
		}
		g := &qEvent{ts: e.ts, dur: e.dur, data: newObject()}
		for _, k := range keys {
			if ks, ok := k.(string); ok {
				if v, ok := d.get(ks); ok {
					g.data.(*object).set(ks, v)
				}
			}
		}
		groups[ck] = g
		order = append(order, ck)
	}
	out := make([]any, len(order))
	for i, k := range order {
		out[i] = groups[k]
	}
	return out, nil
}

func qChunkByKey(_ *qenv, a []any) (any, error) {
	evs, err := eventList(a[0])
	if err != nil {
		return nil, err
	}
	key := a[1].(string)
	var chunks []*qEvent
	for _, e := range evs {
		v, ok := e.dataObj().get(key)
		if !ok {
			break
		}
		diff := int64(999999999) * usPerSecond
		if len(chunks) > 0 {
			last := evs[len(evs)-1] // sic: aw-core compares with the last input event
			diff = e.ts - last.end()
		}
		if len(chunks) > 0 {
			c := chunks[len(chunks)-1]
			cv, _ := c.data.(*object).get(key)
			if pyEqual(cv, v) && diff < 5*usPerSecond {
				c.dur += e.dur
				sub, _ := c.data.(*object).get("subevents")
				c.data.(*object).set("subevents", append(sub.([]any), e))
				continue
			}
		}
		chunks = append(chunks, &qEvent{ts: e.ts, dur: e.dur, data: obj(key, v, "subevents", []any{e})})
	}
	return eventsAny(chunks), nil
}

// timeslot intersection (the timeslot package): nil when disjoint.
func intersection(s1, e1, s2, e2 int64) (int64, int64, bool) {
	switch {
	case s1 <= s2 && e2 <= e1:
		return s2, e2, true
	case s2 <= s1 && e1 <= e2:
		return s1, e1, true
	case s1 <= s2 && s2 < e1:
		return s2, e1, true
	case s1 < e2 && e2 <= e1:
		return s1, e2, true
	}
	return 0, 0, false
}

// replacePeriod is _replace_event_period: a deep copy with a new period
// (the timestamp setter truncates to ms).
func replacePeriod(e *qEvent, start, end int64) *qEvent {
	c := e.deepcopy()
	c.ts = truncMS(start)
	c.dur = end - start
	return c
}

func filterPeriodIntersect(events, filters []*qEvent) []any {
	a, b := sortByTS(events), sortByTS(filters)
	out := []any{}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		e, f := a[i], b[j]
		if s, en, ok := intersection(e.ts, e.end(), f.ts, f.end()); ok {
			out = append(out, replacePeriod(e, s, en))
			if e.end() <= f.end() {
				i++
			} else {
				j++
			}
			continue
		}
		switch {
		case e.end() <= f.ts:
			i++
		case f.end() <= e.ts:
			j++
		default:
			i++
			j++
		}
	}
	return out
}

func periodUnion(events1, events2 []*qEvent) []any {
	all := sortByTS(append(append([]*qEvent(nil), events1...), events2...))
	var merged []*qEvent
	if len(all) > 0 {
		merged = append(merged, all[0])
		all = all[1:]
	}
	for _, e := range all {
		last := merged[len(merged)-1]
		if e.end() < last.ts || last.end() < e.ts { // a gap
			merged = append(merged, e)
			continue
		}
		merged[len(merged)-1] = replacePeriod(last, min(e.ts, last.ts), max(e.end(), last.end()))
	}
	for _, e := range merged {
		e.data = newObject() // sic: also clears events taken over unchanged
	}
	return eventsAny(merged)
}

func splitEvent(e *qEvent, at int64) (*qEvent, *qEvent) {
	if e.ts < at && at < e.end() {
		e1, e2 := e.deepcopy(), e.deepcopy()
		e1.dur = at - e.ts
		e2.ts = truncMS(at)
		e2.dur = e.end() - at
		return e1, e2
	}
	return e, nil
}

func unionNoOverlap(events1, events2 []*qEvent) []any {
	a := make([]*qEvent, len(events1))
	for i, e := range events1 {
		a[i] = e.deepcopy()
	}
	b := make([]*qEvent, len(events2))
	for i, e := range events2 {
		b[i] = e.deepcopy()
	}
	var out []*qEvent
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		e1, e2 := a[i], b[j]
		if _, _, ok := intersection(e1.ts, e1.end(), e2.ts, e2.end()); ok {
			if e1.ts <= e2.ts {
				out = append(out, e1)
				i++
				if _, next := splitEvent(e2, e1.end()); next != nil {
					b[j] = next
				} else {
					j++
				}
			} else {
				first, second := splitEvent(e2, e1.ts)
				out = append(out, first)
				j++
				if second != nil {
					b = append(b[:j], append([]*qEvent{second}, b[j:]...)...)
				}
			}
			continue
		}
		if e1.ts <= e2.ts {
			out = append(out, e1)
			i++
		} else {
			out = append(out, e2)
			j++
		}
	}
	out = append(out, a[i:]...)
	out = append(out, b[j:]...)
	return eventsAny(out)
}

// flood is aw_transform.flood: fill gaps up to pulsetime from the longer
// neighbour, merge same-data overlaps, then normalise overlaps away.
func flood(events []*qEvent, pulsetime int64) []*qEvent {
	evs := make([]*qEvent, len(events))
	for i, e := range events {
		evs[i] = e.deepcopy()
	}
	evs = sortByTS(evs)
	const trim = 100 * usPerMilli
	for i := 0; i+1 < len(evs); i++ {
		e1, e2 := evs[i], evs[i+1]
		gap := e2.ts - e1.end()
		switch {
		case gap == 0:
		case gap < 0 && pyEqual(e1.data, e2.data):
			start, end := min(e1.ts, e2.ts), max(e1.end(), e2.end())
			e1.ts, e1.dur = truncMS(start), end-start
			e2.ts, e2.dur = truncMS(end), 0
		case gap <= -trim:
		case gap <= pulsetime:
			e2end := e2.end()
			if e1.dur >= e2.dur {
				if pyEqual(e1.data, e2.data) {
					e1.dur = e2end - e1.ts
					e2.ts = truncMS(e2end)
					e2.dur = 0
				} else {
					e1.dur = e2.ts - e1.ts
				}
			} else {
				if pyEqual(e1.data, e2.data) {
					e2.ts = e1.ts
					e2.dur = e2end - e2.ts
					e1.dur = 0
				} else {
					e2.ts = truncMS(e1.end())
					e2.dur = e2end - e2.ts
				}
			}
		}
	}
	var norm []*qEvent
	for _, ev := range evs {
		if ev.dur <= 0 {
			continue
		}
		broke := false
		for len(norm) > 0 && norm[len(norm)-1].end() > ev.ts {
			prev := norm[len(norm)-1]
			if pyEqual(prev.data, ev.data) {
				prev.dur = max(prev.end(), ev.end()) - prev.ts
				broke = true
				break
			}
			prev.dur = ev.ts - prev.ts
			if prev.dur <= 0 {
				norm = norm[:len(norm)-1]
				continue
			}
			norm = append(norm, ev)
			broke = true
			break
		}
		if !broke {
			norm = append(norm, ev)
		}
	}
	return norm
}

// urlParts is urllib.parse.urlparse (Python 3.11).
func urlParts(u string) (scheme, netloc, path, params, query, fragment string, err error) {
	u = strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(u)
	if i := strings.IndexByte(u, ':'); i > 0 && (u[0] >= 'a' && u[0] <= 'z' || u[0] >= 'A' && u[0] <= 'Z') {
		ok := true
		for _, c := range u[:i] {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
				ok = false
				break
			}
		}
		if ok {
			scheme, u = strings.ToLower(u[:i]), u[i+1:]
		}
	}
	if strings.HasPrefix(u, "//") {
		rest := u[2:]
		end := len(rest)
		if k := strings.IndexAny(rest, "/?#"); k >= 0 {
			end = k
		}
		netloc, u = rest[:end], rest[end:]
		if strings.Contains(netloc, "[") != strings.Contains(netloc, "]") {
			return "", "", "", "", "", "", errQueryCrash // Invalid IPv6 URL
		}
	}
	if k := strings.IndexByte(u, '#'); k >= 0 {
		u, fragment = u[:k], u[k+1:]
	}
	if k := strings.IndexByte(u, '?'); k >= 0 {
		u, query = u[:k], u[k+1:]
	}
	path = u
	switch scheme {
	case "", "ftp", "hdl", "prospero", "http", "imap", "https", "shttp", "rtsp", "rtspu", "sip", "sips", "mms", "sftp", "tel":
		if strings.Contains(path, ";") {
			i := strings.IndexByte(path, ';')
			if slash := strings.LastIndexByte(path, '/'); slash >= 0 {
				i = strings.IndexByte(path[slash:], ';')
				if i >= 0 {
					i += slash
				}
			}
			if i >= 0 {
				path, params = path[:i], path[i+1:]
			}
		}
	}
	return scheme, netloc, path, params, query, fragment, nil
}

func splitURLEvents(evs []*qEvent) (any, error) {
	for _, e := range evs {
		d := e.dataObj()
		v, ok := d.get("url")
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, errQueryCrash
		}
		scheme, netloc, path, params, query, fragment, err := urlParts(s)
		if err != nil {
			return nil, err
		}
		domain := strings.TrimPrefix(netloc, "www.")
		d.set("$protocol", scheme)
		d.set("$domain", domain)
		d.set("$path", path)
		d.set("$params", params)
		d.set("$options", query)
		d.set("$identifier", fragment)
	}
	return eventsAny(evs), nil
}

var (
	reLeadingDot  = regexp.MustCompile(`^(●|\*)\s*`)
	reParensPrefx = regexp.MustCompile(`^\([0-9]+\)\s*`)
	reFPS         = regexp.MustCompile(`FPS:\s+[0-9\.]+`)
)

func qSimplifyTitles(_ *qenv, a []any) (any, error) {
	evs, err := eventList(a[0])
	if err != nil {
		return nil, err
	}
	key := a[1].(string)
	out := make([]any, len(evs))
	for i, e := range evs {
		c := e.deepcopy()
		d := c.dataObj()
		v, ok := d.get(key)
		if !ok {
			return nil, errQueryCrash
		}
		s, ok := v.(string)
		if !ok {
			return nil, errArity
		}
		s = reParensPrefx.ReplaceAllString(s, "")
		if key == "title" && d.has("app") {
			s = reFPS.ReplaceAllString(s, "FPS: ...")
			s = reLeadingDot.ReplaceAllString(s, "")
		}
		d.set(key, s)
		out[i] = c
	}
	return out, nil
}

// classRule is aw_transform.classify.Rule.
type classRule struct {
	re       *regexp.Regexp // nil: matches nothing
	keys     []any
	priority *int64
}

func (r classRule) match(data *object) bool {
	if r.re == nil {
		return false
	}
	var vals []any
	if len(r.keys) > 0 {
		for _, k := range r.keys {
			ks, _ := k.(string)
			v, _ := data.get(ks)
			vals = append(vals, v)
		}
	} else {
		for _, k := range data.keys {
			vals = append(vals, data.vals[k])
		}
	}
	for _, v := range vals {
		if s, ok := v.(string); ok && r.re.MatchString(s) {
			return true
		}
	}
	return false
}

func parseRule(v any) (classRule, error) {
	o, ok := v.(*object)
	if !ok {
		return classRule{}, errQueryCrash // .get on a non-dict
	}
	var r classRule
	if k, ok := o.get("select_keys"); ok && pyTruthy(k) {
		l, ok := k.([]any)
		if !ok {
			return classRule{}, errQueryCrash
		}
		r.keys = l
	}
	for _, name := range []string{"priority", "weight"} {
		if p, ok := o.get(name); ok {
			n, isInt := p.(*big.Int)
			if !isInt || !n.IsInt64() {
				return classRule{}, errQueryCrash // ValueError
			}
			x := n.Int64()
			r.priority = &x
			break
		}
	}
	rx, _ := o.get("regex")
	if !pyTruthy(rx) {
		return r, nil
	}
	s, ok := rx.(string)
	if !ok {
		return classRule{}, errArity
	}
	ic, _ := o.get("ignore_case")
	if pyTruthy(ic) {
		s = "(?i)" + s
	}
	if re, err := regexp.Compile(s); err == nil {
		r.re = re // an invalid pattern disables the rule
	}
	return r, nil
}

// qClassify is categorize (first=true) or tag.
func qClassify(a []any, category bool) (any, error) {
	evs, err := eventList(a[0])
	if err != nil {
		return nil, err
	}
	type class struct {
		cls  any
		rule classRule
	}
	var classes []class
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
		classes = append(classes, class{pair[0], r})
	}
	for _, e := range evs {
		d, ok := e.data.(*object)
		if !ok {
			return nil, errQueryCrash
		}
		if !category {
			tags := []any{}
			for _, c := range classes {
				if c.rule.match(d) {
					tags = append(tags, clone(c.cls))
				}
			}
			d.set("$tags", tags)
			continue
		}
		var best any = []any{"Uncategorized"}
		var rank *int64
		for _, c := range classes {
			if !pyTruthy(c.cls) || !c.rule.match(d) {
				continue
			}
			var rk int64
			if c.rule.priority != nil {
				rk = *c.rule.priority
			} else {
				switch t := c.cls.(type) {
				case []any:
					rk = int64(len(t)) * 10
				case string:
					rk = int64(len([]rune(t))) * 10
				default:
					return nil, errArity
				}
			}
			if rank == nil || rk >= *rank {
				best, rank = c.cls, &rk
			}
		}
		switch t := best.(type) {
		case []any:
			d.set("$category", clone(t))
		case string:
			chars := []any{}
			for _, r := range t {
				chars = append(chars, string(r))
			}
			d.set("$category", chars)
		default:
			return nil, errArity
		}
	}
	return a[0], nil
}
