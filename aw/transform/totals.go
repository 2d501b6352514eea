package transform

import (
	"strconv"
	"strings"
)

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
		v     [2]string
		flags uint8 // per key: present, JSON
		class int32
		rest  string // keys beyond the second, encoded
	}
	type dataKey struct {
		kv    *Field
		url   *URL
		class int32
	}
	byData := make(map[dataKey]int) // events sharing data share the group
	groups := make(map[groupKey]int)
	key := func(i int) int {
		f := evs[i].Data
		var dk dataKey
		if len(f.kv) > 0 {
			dk = dataKey{&f.kv[0], f.url, f.class}
			if g, ok := byData[dk]; ok {
				return g
			}
		}
		var k groupKey
		if byClass {
			k.class = f.class
		}
		var rest strings.Builder
		for n, name := range fieldKeys {
			x, ok := f.Get(name)
			if !ok {
				continue
			}
			if n < 2 {
				k.v[n] = x.Value
				k.flags |= 1 << (2 * n)
				if x.JSON {
					k.flags |= 2 << (2 * n)
				}
				continue
			}
			rest.WriteString(strconv.Itoa(n))
			if x.JSON {
				rest.WriteByte('j')
			}
			rest.WriteString(strconv.Itoa(len(x.Value)))
			rest.WriteByte(':')
			rest.WriteString(x.Value)
		}
		k.rest = rest.String()
		g, ok := groups[k]
		if !ok {
			g = len(groups)
			groups[k] = g
		}
		if dk.kv != nil {
			byData[dk] = g
		}
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
