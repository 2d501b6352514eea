package realaw

import (
	"encoding/json"
	"fmt"
	"slices"
)

// WebUIClasses is what the web UI passes to categorize() given its
// settings (GET /api/0/settings): written from aw-webui's loadCategories,
// computeEffectiveClasses, mergeCategorySets and classes_for_query, not
// taken from aw/transform, so that a mistake there does not reach the
// oracle. Stored category sets are what it uses (their ids in
// active_set_ids, else the first set; the active ones in the order of
// category_sets, the first category of a name kept); without them, the
// classes setting or the defaults as one set. Categories whose rule type
// is null (the parents it creates, its Uncategorized) are not sent.
func WebUIClasses(settings []byte) ([]byte, error) {
	var s struct {
		Classes []json.RawMessage `json:"classes"`
		Sets    []struct {
			ID         string            `json:"id"`
			Categories []json.RawMessage `json:"categories"`
		} `json:"category_sets"`
		Active []string `json:"active_set_ids"`
	}
	if err := json.Unmarshal(settings, &s); err != nil {
		return nil, fmt.Errorf("realaw: settings: %w", err)
	}
	if len(s.Sets) == 0 {
		if s.Classes == nil {
			return Marshal(DefaultCategories())
		}
		s.Sets = append(s.Sets, struct {
			ID         string            `json:"id"`
			Categories []json.RawMessage `json:"categories"`
		}{"default", s.Classes})
		s.Active = []string{"default"}
	}
	var active []string
	for _, id := range s.Active {
		for _, set := range s.Sets {
			if set.ID == id {
				active = append(active, id)
				break
			}
		}
	}
	if len(active) == 0 {
		active = []string{s.Sets[0].ID}
	}
	seen := map[string]bool{}
	out := [][2]json.RawMessage{}
	for _, set := range s.Sets {
		if !slices.Contains(active, set.ID) {
			continue
		}
		for _, raw := range set.Categories {
			var c struct {
				Name json.RawMessage            `json:"name"`
				Rule map[string]json.RawMessage `json:"rule"`
			}
			if err := json.Unmarshal(raw, &c); err != nil {
				return nil, fmt.Errorf("realaw: category %s: %w", raw, err)
			}
			var name []string
			if err := json.Unmarshal(c.Name, &name); err != nil {
				return nil, fmt.Errorf("realaw: category %s: %w", raw, err)
			}
			key, _ := Marshal(name)
			if seen[string(key)] {
				continue
			}
			seen[string(key)] = true
			if t, ok := c.Rule["type"]; ok && string(t) == "null" {
				continue
			}
			rule, err := Marshal(c.Rule)
			if err != nil {
				return nil, err
			}
			out = append(out, [2]json.RawMessage{key, rule})
		}
	}
	return Marshal(out)
}
