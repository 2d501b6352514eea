package activity

// Editor watchers (aw-watcher-vscode and its kind) report which project,
// file and language the person works on. Their time is counted as
// ActivityWatch's web UI counts it (aw-webui src/queries.ts,
// editorActivityQuery): each editor bucket of the host flooded, the
// buckets' events put together (time two editors share counts twice) and
// summed by project, by language, and by file and language. Like the web
// UI, it is not cut to not-AFK time. Projects and files are shown by
// their last path element, or by as many of their last elements as tell
// them apart (shortNames). Their paths pass the privacy rules of titles;
// an editor whose window belongs to an excluded app counts as "excluded".

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/awbridge/awbridge/aw/transform"
)

// editorType is the bucket type of editor watchers.
const editorType = "app.editor.activity"

// noneKey shows events without the key grouped by.
const noneKey = "(none)"

// editorBuckets are the host's editor buckets as the web UI picks them
// (bucketsEditor): its app.editor.activity buckets, else those of host
// "unknown" (this machine only); by id.
func editorBuckets(m *serverMeta, host string) []string {
	pick := func(host string) []string {
		var ids []string
		for id, b := range m.Buckets {
			if b.Type == editorType && b.Hostname == host {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		return ids
	}
	if ids := pick(host); len(ids) > 0 || host != m.Selection.Host {
		return ids
	}
	return pick("unknown")
}

// isEditorGroup reports whether a grouping ranks editor time.
func isEditorGroup(g string) bool {
	return g == GroupByProject || g == GroupByLanguage || g == GroupByFile
}

// edView is how an editor event is shown: its paths and language,
// privacy applied ("" when the event has none).
type edView struct {
	project, file, language string
	excluded                bool
	bucket                  int // which of the unit's editor buckets
}

// addEditor floods each editor bucket's events (of the unit and its
// margins), cuts them to the unit and sums them into u.agg.
func (u *unitResult) addEditor(buckets [][]ev, pr *privacyRules) {
	type rawKey struct {
		project, file, language string
		excluded                bool
		bucket                  int
	}
	byKey := map[rawKey]uint32{}
	type edit struct {
		e ev
		v uint32
	}
	var edits []edit
	for b, evs := range buckets {
		fl := clipEvents(transform.Flood(evs, transform.DefaultPulsetime), u.span)
		excluded := u.editorExcluded(fl)
		for _, e := range fl {
			k := rawKey{excluded: excluded, bucket: b}
			k.project, _ = e.Data.Str("project")
			k.file, _ = e.Data.Str("file")
			k.language, _ = e.Data.Str("language")
			idx, ok := byKey[k]
			if !ok {
				v := edView{excluded: true, bucket: b}
				if !excluded {
					v = edView{project: pr.p.Title(k.project), file: pr.p.Title(k.file), language: pr.p.App(k.language), bucket: b}
				}
				idx = uint32(len(u.evs))
				u.evs = append(u.evs, v)
				byKey[k] = idx
			}
			edits = append(edits, edit{e, idx})
		}
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return cmp.Compare(a.e.Start, b.e.Start) })
	a := &u.agg
	for _, x := range edits {
		u.edits, u.eviews = append(u.edits, x.e), append(u.eviews, x.v)
		v, d := u.evs[x.v], x.e.Duration
		a.editor += d
		if v.excluded {
			k := gkey{a: KeyExcluded, flags: flagExcluded}
			a.projects[k], a.languages[k], a.files[k] = a.projects[k]+d, a.languages[k]+d, a.files[k]+d
			continue
		}
		a.projects[gkey{a: v.project}] += d
		a.languages[gkey{a: v.language}] += d
		a.files[gkey{a: v.file, b: v.language}] += d
	}
}

// editorExcluded reports whether the app an editor's events (flooded, by
// start) overlap longest within the unit's active time is excluded by
// the privacy settings (or a password manager's).
func (u *unitResult) editorExcluded(edits []ev) bool {
	overlap := map[uint32]int64{}
	for _, e := range edits {
		for i := firstReaching(u.events, e.Start, func(w ev) (int64, int64) { return w.Start, w.End() }); i < len(u.events) && u.events[i].Start < e.End(); i++ {
			if d := min(e.End(), u.events[i].End()) - max(e.Start, u.events[i].Start); d > 0 {
				overlap[u.views[i]] += d
			}
		}
	}
	apps := map[view]int64{}
	for vi, d := range overlap {
		v := u.vs[vi]
		v.title, v.withheld, v.category = "", false, ""
		apps[v] += d
	}
	return longest(apps, func(a, b view) int { return strings.Compare(a.app, b.app) }).excluded
}

// editorEntries shows a ranking of editor time: projects and files by
// shortNames over every key of the grouping (names are the period's, not
// the page's), files with their language.
func editorEntries(out []Entry, rs []ranked, group map[gkey]int64, groupBy string) {
	var names map[string]string
	if groupBy != GroupByLanguage {
		seen := map[string]bool{}
		for k := range group {
			seen[k.a] = seen[k.a] || k.flags == 0
		}
		var paths []string
		for p, ok := range seen {
			if ok {
				paths = append(paths, p)
			}
		}
		names = shortNames(paths)
	}
	for i, r := range rs {
		e := &out[i]
		if e.Excluded || e.AFK {
			continue
		}
		switch {
		case names != nil:
			e.Key = names[r.k.a]
		case e.Key == "":
			e.Key = noneKey
		}
		if groupBy == GroupByFile {
			e.Language = r.k.b
		}
	}
}

// splitPath is a path's elements, split at / and \.
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
}

// maxNameDepth bounds the last elements shortNames tries (attacker paths
// may share hundreds): a path still not told apart is shown whole.
const maxNameDepth = 8

// shortNames names each of paths (distinct) by its last element, or by
// as many of its last elements as no other path ends with
// ("old/billing-api" beside "src/billing-api"); a path no suffix tells
// apart is shown whole, "" as noneKey.
func shortNames(paths []string) map[string]string {
	els := make([][]string, len(paths))
	for i, p := range paths {
		els[i] = splitPath(p)
	}
	suffix := func(i, k int) string {
		e := els[i]
		return strings.Join(e[max(0, len(e)-k):], "/")
	}
	names := make(map[string]string, len(paths))
	left := make([]int, len(paths))
	for i := range left {
		left[i] = i
	}
	for k := 1; len(left) > 0; k++ {
		count := make(map[string]int, len(paths))
		for i := range paths {
			count[suffix(i, k)]++
		}
		next := left[:0]
		for _, i := range left {
			switch s := suffix(i, k); {
			case paths[i] == "":
				names[""] = noneKey
			case count[s] == 1:
				names[paths[i]] = s
			case k >= min(len(els[i]), maxNameDepth):
				names[paths[i]] = paths[i]
			default:
				next = append(next, i)
			}
		}
		left = next
	}
	return names
}

// needEditor fails a grouping by editor time where the host has no editor
// watcher, rather than answer that no time went to any project.
func (s *Service) needEditor(ctx context.Context, groupBy, host string) error {
	m, err := s.meta(ctx)
	if err != nil {
		return err
	}
	sels, err := selections(m, host)
	if err != nil {
		return err
	}
	for _, sel := range sels {
		if len(editorBuckets(m, sel.Host)) > 0 {
			return nil
		}
	}
	return specError("group_by", "%s needs an editor watcher (aw-watcher-vscode or another writing app.editor.activity), and ActivityWatch has none for host %s: "+
		"group_by title shows the editor's window titles, which usually name the project", groupBy, quote(cmp.Or(host, m.Selection.Host)))
}

// editorIndex is what a timeline needs to show the editor's project on
// the blocks of the editor's app.
type editorIndex struct {
	apps  map[string]bool   // each editor's app: the one its events overlap longest in the period
	names map[string]string // the period's projects as shortNames shows them
}

// indexEditors finds each editor's app and names the period's projects.
func (f *flat) indexEditors() {
	over := map[int]map[string]int64{}
	for _, it := range f.items {
		v := f.view(it)
		if v.excluded {
			continue
		}
		f.editsWithin(it.start, it.end, func(ev edView, d int64) {
			if over[ev.bucket] == nil {
				over[ev.bucket] = map[string]int64{}
			}
			over[ev.bucket][v.app] += d
		})
	}
	f.ed.apps = map[string]bool{}
	for _, apps := range over {
		f.ed.apps[longest(apps, strings.Compare)] = true
	}
	seen := map[string]bool{}
	var paths []string
	for _, u := range f.units {
		for _, v := range u.evs {
			if !v.excluded && !seen[v.project] {
				seen[v.project] = true
				paths = append(paths, v.project)
			}
		}
	}
	f.ed.names = shortNames(paths)
}

// project is the project an editor's block shows: of the editor's
// events within the block's time in its app, the project longest
// ("" for another app's block, or none).
func (f *flat) project(b block) string {
	if !f.ed.apps[b.v.app] || b.v.excluded {
		return ""
	}
	times := map[string]int64{}
	for k := b.lo; k < b.hi; k++ {
		if it := f.items[k]; sameFocus(f.view(it), b.v) {
			f.editsWithin(it.start, it.end, func(v edView, d int64) {
				if !v.excluded && v.project != "" {
					times[v.project] += d
				}
			})
		}
	}
	return f.ed.names[longest(times, strings.Compare)]
}

// editsWithin calls fn with each editor event overlapping [a, b) and the
// length of the overlap.
func (f *flat) editsWithin(a, b int64, fn func(edView, int64)) {
	i := firstReaching(f.edits, a, func(t item) (int64, int64) { return t.start, t.end })
	for ; i < len(f.edits) && f.edits[i].start < b; i++ {
		t := f.edits[i]
		if d := min(b, t.end) - max(a, t.start); d > 0 {
			u := f.units[t.u]
			fn(u.evs[u.eviews[t.i]], d)
		}
	}
}
