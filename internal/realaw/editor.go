package realaw

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/awbridge/awbridge/activity"
)

// EditorQuery is the web UI's editor query (aw-webui src/queries.ts,
// editorActivityQuery) over the editor buckets, its lists uncut: each
// bucket flooded, the events concatenated (time two editors share counts
// twice, and AFK time counts), merged by file and language, by language
// and by project.
func EditorQuery(buckets []string) []string {
	q := []string{`events = [];`}
	for _, b := range buckets {
		q = append(q, fmt.Sprintf(`events = concat(events, flood(query_bucket(%s)));`, Lit(b)))
	}
	return append(q,
		`files = sort_by_duration(merge_events_by_keys(events, ["file", "language"]));`,
		`languages = sort_by_duration(merge_events_by_keys(events, ["language"]));`,
		`projects = sort_by_duration(merge_events_by_keys(events, ["project"]));`,
		`duration = sum_durations(events);`,
		`RETURN = {"files": files, "languages": languages, "projects": projects, "duration": duration};`)
}

// EditorAnswer is the editor query's answer for one period, in seconds.
type EditorAnswer struct {
	Duration  float64      `json:"duration"`
	Projects  []EditorTime `json:"projects"`
	Languages []EditorTime `json:"languages"`
	Files     []EditorTime `json:"files"`
}

// EditorTime is the time of one project, language, or file and language.
type EditorTime struct {
	Project  string  `json:"project,omitempty"`
	File     string  `json:"file,omitempty"`
	Language string  `json:"language,omitempty"`
	Duration float64 `json:"duration"`
}

// DecodeEditor reads the server's answer to EditorQuery for one period.
func DecodeEditor(raw []byte) (*EditorAnswer, error) {
	type event struct {
		Duration float64    `json:"duration"`
		Data     EditorTime `json:"data"`
	}
	var res []struct {
		Files, Languages, Projects []event
		Duration                   float64
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	if len(res) != 1 {
		return nil, fmt.Errorf("%d answers for one period", len(res))
	}
	a := &EditorAnswer{Duration: res[0].Duration}
	for _, l := range []struct {
		into *[]EditorTime
		from []event
	}{{&a.Projects, res[0].Projects}, {&a.Languages, res[0].Languages}, {&a.Files, res[0].Files}} {
		for _, e := range l.from {
			e.Data.Duration = e.Duration
			*l.into = append(*l.into, e.Data)
		}
	}
	return a, nil
}

// shownAs is how the web UI's readers tell paths apart: a path's last
// element, or as many of its last elements as no other path ends with.
// Written here from that rule, not taken from package activity.
func shownAs(paths []string) map[string]string {
	out := map[string]string{}
	for _, p := range paths {
		el := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
		for k := 1; k <= len(el); k++ {
			name := strings.Join(el[len(el)-k:], "/")
			shared := false
			for _, o := range paths {
				if o != p && (strings.HasSuffix(o, "/"+name) || o == name) {
					shared = true
				}
			}
			if !shared || k == len(el) {
				out[p] = name
				break
			}
		}
	}
	return out
}

// editorTotals are the recorded seconds of a grouping (activity's project,
// language or file) by the key activity_summary shows: projects and files
// by shownAs, files with their language after a NUL.
func (a *EditorAnswer) editorTotals(group string) map[string]float64 {
	m := map[string]float64{}
	var list []EditorTime
	var paths []string
	switch group {
	case activity.GroupByProject:
		list = a.Projects
		for _, e := range list {
			paths = append(paths, e.Project)
		}
	case activity.GroupByFile:
		list = a.Files
		for _, e := range list {
			paths = append(paths, e.File)
		}
	default:
		for _, e := range a.Languages {
			m[e.Language] += e.Duration
		}
		return m
	}
	names := shownAs(paths)
	for i, e := range list {
		k := names[paths[i]]
		if group == activity.GroupByFile {
			k += "\x00" + e.Language
		}
		m[k] += e.Duration
	}
	return m
}

// CheckEditor compares an activity_summary grouped by project, language
// or file with the recorded editor answer: the editor time, each entry
// and the time beyond the limit, to within tol seconds.
func CheckEditor(s *activity.Summary, a Answer, group string, tol float64) Diff {
	var d Diff
	if a.Editor == nil {
		return Diff{Problems: []string{"no editor answer recorded"}}
	}
	if diff := s.EditorS - a.Editor.Duration; math.Abs(diff) > tol {
		d.Problems = append(d.Problems, fmt.Sprintf("editor_s %.1f, the real aw-server %.3f s (off by %.3f s)", s.EditorS, a.Editor.Duration, diff))
	}
	r := CheckRanking(keyed(s.Top, group), s.OtherS, a.Editor.editorTotals(group), 0, activity.MaxSummaryLimit, tol)
	d.Problems = append(d.Problems, r.Problems...)
	d.Max = r.Max
	return d
}

// ProjectNames are the recorded projects as activity shows them.
func (a *EditorAnswer) ProjectNames() map[string]bool {
	m := map[string]bool{}
	for k := range a.editorTotals(activity.GroupByProject) {
		m[k] = true
	}
	return m
}
