package transform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// ClassesOf returns the categories of ActivityWatch's settings: its
// "classes" when set (the web UI writes there the effective list of its
// category sets); else, when only "category_sets" is (with
// "active_set_ids"), the same effective list (EffectiveClasses); else
// DefaultClasses(). Errors are those of ParseClasses and EffectiveClasses,
// with no classes.
func ClassesOf(classes, sets, active []byte) (Classes, error) {
	if absent(classes) {
		eff, ok, err := EffectiveClasses(sets, active)
		if err != nil {
			return nil, err
		}
		if ok {
			classes = eff
		}
	}
	return ParseClasses(classes)
}

// absent reports whether a setting is unset: nil, blank or null.
func absent(setting []byte) bool {
	setting = bytes.TrimSpace(setting)
	return len(setting) == 0 || string(setting) == "null"
}

// EffectiveClasses is the list of categories the web UI derives from its
// category sets (aw-webui: loadCategories, then mergeCategorySets):
// category_sets is a JSON array of {"id", "categories": [...]} and
// active_set_ids the ids in use; with no usable id the first set is. The
// categories of the active sets are taken in the order of category_sets
// (as the web UI's code filters it, whatever the order of active_set_ids),
// a category whose name an earlier one has is left out. The parents the web
// UI then creates for categories without one have no rule and are not sent
// to its queries, so they are not added. ok is false when there are no
// sets (unset, null or []): then the classes setting or the defaults
// apply. The result is a JSON array for ParseClasses, which bounds it.
//
// category_sets beyond MaxClassesBytes is an error wrapping
// ErrClassesTooLarge; one that is not an array of sets, an active set
// whose categories are not an array, or a category without a name list,
// an error wrapping ErrClassesSetting.
func EffectiveClasses(sets, active []byte) (classes json.RawMessage, ok bool, err error) {
	if absent(sets) {
		return nil, false, nil
	}
	if n := len(bytes.TrimSpace(sets)); n > MaxClassesBytes {
		return nil, false, fmt.Errorf("%w: category_sets of %d bytes, more than %d", ErrClassesTooLarge, n, MaxClassesBytes)
	}
	var all []categorySet
	if err := json.Unmarshal(sets, &all); err != nil {
		return nil, false, fmt.Errorf("%w: category_sets is not a list of sets: %w", ErrClassesSetting, err)
	}
	if len(all) == 0 {
		return nil, false, nil
	}
	var ids []string
	if json.Unmarshal(active, &ids) != nil {
		ids = nil // not a list of ids: as if unset
	}
	in := make([]bool, len(all))
	some := false
	for i, s := range all {
		id, isStr := s.ID.(string)
		in[i] = isStr && slices.Contains(ids, id)
		some = some || in[i]
	}
	if !some {
		in[0] = true
	}
	seen := map[string]bool{}
	out := []json.RawMessage{}
	for i, s := range all {
		if !in[i] {
			continue
		}
		var cats []json.RawMessage
		if err := json.Unmarshal(s.Categories, &cats); err != nil {
			return nil, false, fmt.Errorf("%w: category set %d has no list of categories", ErrClassesSetting, i)
		}
		for j, c := range cats {
			var cat struct {
				Name []string `json:"name"`
			}
			if err := json.Unmarshal(c, &cat); err != nil || cat.Name == nil {
				return nil, false, fmt.Errorf("%w: category %d of set %d has no name list", ErrClassesSetting, j, i)
			}
			key, _ := json.Marshal(cat.Name)
			if !seen[string(key)] {
				seen[string(key)] = true
				out = append(out, c)
			}
		}
	}
	b, err := json.Marshal(out)
	return b, true, err
}

// categorySet is one entry of the category_sets setting.
type categorySet struct {
	ID         any             `json:"id"` // a string; a set without one is never in use but as the first
	Categories json.RawMessage `json:"categories"`
}
