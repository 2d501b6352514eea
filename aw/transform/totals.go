package transform

import "strings"

// CategoryKey is the merge key that stands for an event's category
// (Fields.Class) in Totals, as $category does in ActivityWatch's queries.
const CategoryKey = "$category"

// Totals is sort_by_duration(merge_events_by_keys(evs, keys)) for Fields,
// the web UI's top apps (keys "app"), titles ("app", "title"), categories
// (CategoryKey) and domains ("$domain"): one event per distinct
// combination of the keys' values, starting when its first event starts,
// lasting the sum of their durations, with those values as data (and the
// category, for CategoryKey); longest first, first seen first on a tie.
// Events lacking some keys group by the keys they have, as in aw-core.
func Totals(evs []Event[Fields], keys ...string) []Event[Fields] {
	if len(keys) == 0 {
		return SortByDuration(evs) // aw-core merges nothing without keys
	}
	var fieldKeys []string
	byClass := false
	for _, k := range keys {
		if k == CategoryKey {
			byClass = true
		} else {
			fieldKeys = append(fieldKeys, k)
		}
	}
	type groupKey struct {
		v     [2]Field
		has   [2]bool
		class int32
		rest  string // keys beyond the second, encoded
	}
	key := func(i int) groupKey {
		f := evs[i].Data
		var g groupKey
		if byClass {
			g.class = f.class
		}
		var rest strings.Builder
		for n, k := range fieldKeys {
			x, ok := f.Get(k)
			if n < 2 {
				g.v[n], g.has[n] = x, ok
				continue
			}
			if ok {
				rest.WriteString(k)
				rest.WriteByte(0)
				if x.JSON {
					rest.WriteByte(1)
				}
				rest.WriteString(x.Value)
				rest.WriteByte(0)
			}
		}
		g.rest = rest.String()
		return g
	}
	merged := MergeByKey(evs, key, func(first Fields) Fields {
		g := first.Only(fieldKeys...)
		if byClass {
			g.class = first.class
		}
		return g
	})
	return SortByDuration(merged)
}
