package awsim

import (
	_ "embed"
	"errors"
	"math"
	"math/big"
	"net/http"
	"strconv"
)

// swaggerJSON is the OpenAPI description flask-restx generated for the
// recorded aw-server (GET /api/swagger.json), served verbatim.
//
//go:embed swagger.json
var swaggerJSON []byte

const docHTML = `<!DOCTYPE html>
<html>
<head>
    <title>API</title>
</head>
<body>
<h1>API</h1>
<p>This is awsim, a simulated ActivityWatch server. The API description is at <a href="/api/swagger.json">/api/swagger.json</a>.</p>
</body>
</html>
`

// handle runs the matched rule's handler.
func (s *Server) handle(r *http.Request, m match) reply {
	q := parseQueryArgs(r.URL.RawQuery)
	switch m.r {
	case rDoc:
		return reply{status: http.StatusOK, ctype: ctHTML, body: []byte(docHTML)}
	case rSwagger:
		return reply{status: http.StatusOK, ctype: ctJSON, body: swaggerJSON}
	case rInfo:
		return restx(http.StatusOK, s.info())
	case rBuckets:
		return s.getBuckets()
	case rBucket:
		switch r.Method {
		case http.MethodPost:
			return s.createBucket(r, m.args[0])
		case http.MethodPut:
			return s.updateBucket(r, m.args[0])
		case http.MethodDelete:
			return s.deleteBucket(r, q, m.args[0])
		}
		return s.getBucket(r, m.args[0])
	case rEvents:
		if r.Method == http.MethodPost {
			return s.postEvents(r, m.args[0])
		}
		return s.getEvents(r, q, m.args[0])
	case rEventCount:
		return s.getEventCount(r, q, m.args[0])
	case rEvent:
		return s.event(r, m.args[0], m.args[1])
	case rHeartbeat:
		return s.postHeartbeat(r, q, m.args[0])
	case rBucketExport:
		return s.exportBucket(r, m.args[0])
	case rExport:
		return s.exportAll()
	case rImport:
		return s.importAll(r)
	case rQuery:
		return s.query(r, q)
	case rLog:
		// get_log() returns (payload, 200) and the resource wraps that tuple
		// again: the real server answers [[...lines], 200]. A simulator has
		// no log file.
		return restx(http.StatusOK, []any{[]any{}, int64(200)})
	case rSettings, rSetting:
		key := ""
		if m.r == rSetting {
			key = m.args[0]
		}
		return s.setting(r, key)
	case rProbe:
		return s.probe()
	}
	return notFoundHTML() // the web UI and static files are not simulated
}

func (s *Server) info() *object {
	return obj("hostname", s.opts.Hostname, "version", Version, "testing", false, "device_id", s.deviceID)
}

// noSuchBucket is ServerAPI's NotFound, with flask-restx's suggestion.
func noSuchBucket(r *http.Request, id string) reply {
	return message(http.StatusNotFound, helpOn404("There's no bucket named "+id, r.URL.Path))
}

func (s *Server) getBuckets() reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := newObject()
	for _, b := range s.st.buckets {
		md := b.metadata()
		if e := b.newest(); e != nil {
			end, err := addUS(e.ts, e.dur)
			if err != nil {
				return internalError()
			}
			md.set("last_updated", isoformat(end))
		}
		out.set(b.id, md)
	}
	return restx(http.StatusOK, out)
}

func (s *Server) getBucket(r *http.Request, id string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.st.bucket(id)
	if b == nil {
		return noSuchBucket(r, id)
	}
	return restx(http.StatusOK, b.metadata())
}

// charField is what peewee stores for a CharField: str(value); None is a
// NOT NULL violation.
func charField(v any) (string, bool) {
	if v == nil {
		return "", false
	}
	return pyStr(v), true
}

func (s *Server) createBucket(r *http.Request, id string) reply {
	body, bad := getJSON(r)
	if bad != nil {
		return *bad
	}
	o, ok := body.(*object)
	if !ok {
		return internalError() // data["type"] on a non-dict
	}
	vals := make([]string, 3)
	for i, k := range []string{"type", "client", "hostname"} {
		v, ok := o.get(k)
		if !ok {
			return internalError() // KeyError
		}
		vals[i], ok = charField(v)
		if !ok {
			return internalError() // IntegrityError
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.bucket(id) != nil {
		return reply{status: http.StatusNotModified}
	}
	b := &bucket{id: id, created: s.nowUS(), typ: vals[0], client: vals[1], hostname: vals[2], data: newObject()}
	if b.hostname == "!local" {
		b.hostname = s.opts.Hostname
		b.data = obj("device_id", s.deviceID)
	}
	s.st.createBucket(b)
	return restx(http.StatusOK, newObject())
}

func (s *Server) updateBucket(r *http.Request, id string) reply {
	body, bad := getJSON(r)
	if bad != nil {
		return *bad
	}
	o, ok := body.(*object)
	if !ok {
		return internalError()
	}
	var vals [4]any
	for i, k := range []string{"type", "client", "hostname", "data"} {
		v, ok := o.get(k)
		if !ok {
			return internalError()
		}
		vals[i] = v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.st.bucket(id)
	if b == nil {
		return noSuchBucket(r, id)
	}
	if vals[0] != nil {
		b.typ = pyStr(vals[0])
	}
	if vals[1] != nil {
		b.client = pyStr(vals[1])
	}
	if vals[2] != nil {
		b.hostname = pyStr(vals[2])
	}
	if vals[3] != nil {
		b.data = clone(vals[3])
	}
	return restx(http.StatusOK, newObject())
}

func (s *Server) deleteBucket(r *http.Request, q queryArgs, id string) reply {
	if f, ok := q.get("force"); !ok || f != "1" {
		return message(http.StatusUnauthorized, "Deleting buckets is only permitted if aw-server is running in testing mode or if ?force=1")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.bucket(id) == nil {
		return noSuchBucket(r, id)
	}
	s.st.deleteBucket(id)
	return restx(http.StatusOK, newObject())
}

// rangeArgs parses start and end as the events endpoints do
// (iso8601.parse_date; any failure is a 500).
func rangeArgs(q queryArgs) (timeRange, error) {
	var tr timeRange
	if v, ok := q.get("start"); ok {
		t, err := parseISO(v)
		if err != nil {
			return tr, err
		}
		tr.hasStart, tr.start = true, t.us
	}
	if v, ok := q.get("end"); ok {
		t, err := parseISO(v)
		if err != nil {
			return tr, err
		}
		tr.hasEnd, tr.end = true, t.us
	}
	return tr, nil
}

func eventsJSON(evs []*event) []any {
	out := make([]any, len(evs))
	for i, e := range evs {
		out[i] = e.json(true)
	}
	return out
}

func (s *Server) getEvents(r *http.Request, q queryArgs, id string) reply {
	limit := int64(-1)
	if v, ok := q.get("limit"); ok {
		n, err := pyInt(v)
		if err != nil {
			return internalError()
		}
		limit = n
	}
	tr, err := rangeArgs(q)
	if err != nil {
		return internalError()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.st.bucket(id)
	if b == nil {
		return noSuchBucket(r, id)
	}
	tr, err = roundRange(tr)
	if err != nil {
		return internalError()
	}
	evs, err := s.st.getEvents(b, limit, tr)
	if err != nil {
		return internalError()
	}
	return restx(http.StatusOK, eventsJSON(evs))
}

func (s *Server) getEventCount(r *http.Request, q queryArgs, id string) reply {
	tr, err := rangeArgs(q)
	if err != nil {
		return internalError()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.st.bucket(id)
	if b == nil {
		return noSuchBucket(r, id)
	}
	n, err := s.st.count(b, tr)
	if err != nil {
		return internalError()
	}
	return restx(http.StatusOK, int64(n))
}

func (s *Server) event(r *http.Request, id, eventID string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.st.bucket(id)
	if b == nil {
		return noSuchBucket(r, id)
	}
	n, err := strconv.ParseInt(eventID, 10, 64)
	if err != nil {
		return internalError() // SQLite: "Python int too large to convert"
	}
	if r.Method == http.MethodDelete {
		return restx(http.StatusOK, obj("success", int64(s.st.deleteEvent(b, n))))
	}
	e := s.st.eventByID(b, n)
	if e == nil {
		return restx(http.StatusNotFound, nil)
	}
	return restx(http.StatusOK, e.json(true))
}

// newEvent is aw-core's Event(**fields): only id, timestamp, duration and
// data are accepted; a missing timestamp is now. Any failure is a 500.
type newEvent struct {
	id    any // nil, or the given id (only an int can match a row)
	ts    int64
	dur   int64
	data  any
	hasID bool
}

var errEvent = errors.New("invalid event")

func (s *Server) parseEvent(v any) (newEvent, error) {
	o, ok := v.(*object)
	if !ok {
		return newEvent{}, errEvent
	}
	ne := newEvent{ts: truncMS(s.nowUS())}
	for _, k := range o.keys {
		val := o.vals[k]
		switch k {
		case "id":
			ne.id, ne.hasID = val, val != nil
		case "timestamp":
			if val == nil {
				continue
			}
			str, ok := val.(string)
			if !ok {
				return newEvent{}, errEvent
			}
			t, err := parseISO(str)
			if err != nil {
				return newEvent{}, err
			}
			ne.ts = truncMS(t.us)
		case "duration":
			d, err := durFromJSON(val)
			if err != nil {
				return newEvent{}, err
			}
			ne.dur = d
		case "data":
			ne.data = val
		default:
			return newEvent{}, errEvent // unexpected keyword argument
		}
	}
	if _, err := addUS(ne.ts, ne.dur); err != nil {
		return newEvent{}, err
	}
	return ne, nil
}

func (s *Server) postEvents(r *http.Request, id string) reply {
	body, bad := getJSON(r)
	if bad != nil {
		return *bad
	}
	var items []any
	switch t := body.(type) {
	case *object:
		items = []any{t}
	case []any:
		items = t
	default:
		return message(http.StatusBadRequest, "")
	}
	evs := make([]newEvent, len(items))
	for i, it := range items {
		ne, err := s.parseEvent(it)
		if err != nil {
			return internalError()
		}
		evs[i] = ne
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.st.bucket(id)
	if b == nil {
		return noSuchBucket(r, id)
	}
	if err := s.insertEvents(b, evs); err != nil {
		return internalError()
	}
	return restx(http.StatusOK, nil)
}

// insertEvents is aw-core's insert_many: events with an id update that
// row (peewee's save()), the others are inserted in order.
func (s *Server) insertEvents(b *bucket, evs []newEvent) error {
	for _, ne := range evs {
		if !ne.hasID {
			continue
		}
		if id, ok := rowID(ne.id); ok {
			s.st.update(b, id, ne.ts, ne.dur, clone(ne.data))
		}
	}
	for _, ne := range evs {
		if ne.hasID {
			continue
		}
		if _, err := s.st.insert(b, ne.ts, ne.dur, clone(ne.data)); err != nil {
			return err
		}
	}
	return nil
}

// heartbeatErrors validates a heartbeat against aw-core's event schema
// (flask-restx, Draft 4): type, then required, then properties.
func heartbeatErrors(v any) *object {
	errs := newObject()
	o, ok := v.(*object)
	if !ok {
		errs.set("", pyRepr(v)+" is not of type 'object'")
		return errs
	}
	if !o.has("timestamp") {
		errs.set("timestamp", "'timestamp' is a required property")
	}
	if t, ok := o.get("timestamp"); ok {
		if _, isStr := t.(string); !isStr {
			errs.set("timestamp", pyRepr(t)+" is not of type 'string'")
		}
	}
	if d, ok := o.get("duration"); ok && !isPyNumber(d) {
		errs.set("duration", pyRepr(d)+" is not of type 'number'")
	}
	if d, ok := o.get("data"); ok {
		if _, isObj := d.(*object); !isObj {
			errs.set("data", pyRepr(d)+" is not of type 'object'")
		}
	}
	return errs
}

func validationFailed(errs *object) reply {
	return restx(http.StatusBadRequest, obj("errors", errs, "message", "Input payload validation failed"))
}

func (s *Server) postHeartbeat(r *http.Request, q queryArgs, id string) reply {
	body, bad := getJSON(r)
	if bad != nil {
		return *bad
	}
	if errs := heartbeatErrors(body); errs.len() > 0 {
		return validationFailed(errs)
	}
	hb, err := s.parseEvent(body)
	if err != nil {
		return internalError()
	}
	pt, ok := q.get("pulsetime")
	if !ok {
		return message(http.StatusBadRequest, "Missing required parameter pulsetime")
	}
	pulsetime, err := pyFloat(pt)
	if err != nil {
		return internalError()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.st.bucket(id)
	if b == nil {
		return noSuchBucket(r, id)
	}
	e, err := s.st.heartbeat(b, hb.ts, hb.dur, clone(hb.data), pulsetime)
	if err != nil {
		return internalError()
	}
	return restx(http.StatusOK, e.json(true))
}

// export is export_bucket: metadata plus all events without ids.
func exportBucket(b *bucket) *object {
	md := b.metadata()
	evs := make([]any, 0, len(b.events))
	for i := len(b.events) - 1; i >= 0; i-- {
		evs = append(evs, b.events[i].json(false))
	}
	md.set("events", evs)
	return md
}

// exportReply is make_response(json.dumps(payload)): a text/html
// attachment without a trailing newline.
func exportReply(payload any, filename string) reply {
	return reply{status: http.StatusOK, ctype: ctHTML, body: appendJSON(nil, payload, styleRestx),
		header: [][2]string{{"Content-Disposition", "attachment; filename=" + filename}}}
}

func (s *Server) exportBucket(r *http.Request, id string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.st.bucket(id)
	if b == nil {
		return noSuchBucket(r, id)
	}
	return exportReply(obj("buckets", obj(b.id, exportBucket(b))), "aw-bucket-export_"+b.id+".json")
}

func (s *Server) exportAll() reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := newObject()
	for _, b := range s.st.buckets {
		all.set(b.id, exportBucket(b))
	}
	return exportReply(obj("buckets", all), "aw-buckets-export.json")
}

// importAll is POST /api/0/import with a JSON body {"buckets": {...}}
// (a multipart upload, as the web UI sends, is not simulated). An existing
// bucket or a malformed entry is a 500, as in aw-server.
func (s *Server) importAll(r *http.Request) reply {
	body, bad := getJSON(r)
	if bad != nil {
		return *bad
	}
	o, ok := body.(*object)
	if !ok {
		return internalError()
	}
	bv, _ := o.get("buckets")
	buckets, ok := bv.(*object)
	if !ok {
		return internalError()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range buckets.keys {
		bo, ok := buckets.vals[k].(*object)
		if !ok {
			return internalError()
		}
		var f [5]string
		for i, name := range []string{"id", "type", "client", "hostname", "created"} {
			v, ok := bo.get(name)
			if !ok {
				return internalError()
			}
			if f[i], ok = charField(v); !ok {
				return internalError()
			}
		}
		created, err := parseISO(f[4])
		if err != nil || s.st.bucket(f[0]) != nil {
			return internalError()
		}
		evv, _ := bo.get("events")
		items, ok := evv.([]any)
		if !ok {
			return internalError()
		}
		evs := make([]newEvent, 0, len(items))
		for _, it := range items {
			if io, ok := it.(*object); ok && io.has("id") {
				c := clone(io).(*object)
				delete(c.vals, "id")
				c.keys = removeKey(c.keys, "id")
				it = c
			}
			ne, err := s.parseEvent(it)
			if err != nil {
				return internalError()
			}
			evs = append(evs, ne)
		}
		b := &bucket{id: f[0], created: created.us, typ: f[1], client: f[2], hostname: f[3], data: newObject()}
		s.st.createBucket(b)
		if err := s.insertEvents(b, evs); err != nil {
			return internalError()
		}
	}
	return restx(http.StatusOK, nil)
}

// rowID is the row an event's id names in SQLite, where 1, 1.0 and true
// are all 1; anything else matches no row.
func rowID(v any) (int64, bool) {
	n, ok := asNumber(v)
	if !ok {
		return 0, false
	}
	switch t := n.(type) {
	case *big.Int:
		return t.Int64(), t.IsInt64()
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<62 {
			return int64(t), true
		}
	}
	return 0, false
}

func removeKey(keys []string, k string) []string {
	out := keys[:0:0]
	for _, x := range keys {
		if x != k {
			out = append(out, x)
		}
	}
	return out
}

// setting is /api/0/settings[/<key>]: GET answers with jsonify, POST
// stores any JSON value and echoes it.
func (s *Server) setting(r *http.Request, key string) reply {
	if r.Method == http.MethodPost {
		if key == "" {
			return message(http.StatusBadRequest, "Missing required parameter key")
		}
		v, bad := getJSON(r)
		if bad != nil {
			return *bad
		}
		s.mu.Lock()
		s.settings.set(key, clone(v))
		s.mu.Unlock()
		return restx(http.StatusOK, v)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == "" {
		return jsonify(http.StatusOK, clone(s.settings))
	}
	v, _ := s.settings.get(key)
	return jsonify(http.StatusOK, clone(v))
}
