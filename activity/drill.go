package activity

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/awbridge/awbridge/aw/transform"
	"github.com/awbridge/awbridge/nowframe"
)

// Bounds of the category argument and of the names its error shows.
const (
	maxCategoryArg   = 512
	categoriesShown  = 8
	categorySeparate = " > "
)

// categoryFilter checks the category argument (a name as summaries write
// it, "Work > Programming") against the categories of classes (nil: the
// defaults) and returns what keeps a window's category: that category and
// its subcategories. An unknown name is a *SpecError naming a few known
// ones.
func categoryFilter(name string, classes transform.Classes) (func(label string) bool, error) {
	if classes == nil {
		classes = transform.DefaultClasses()
	}
	known := map[string]bool{transform.Uncategorized: true}
	for _, c := range classes {
		for n := 1; n <= len(c.Name); n++ {
			known[nowframe.SanitizeTitle(transform.CategoryName(c.Name[:n]), 0)] = true
		}
	}
	if len(name) > maxCategoryArg || !known[name] {
		names := make([]string, 0, len(known))
		for k := range known {
			names = append(names, k)
		}
		// Top-level names first: the likeliest to be meant.
		slices.SortFunc(names, func(a, b string) int {
			return cmp.Or(cmp.Compare(strings.Count(a, categorySeparate), strings.Count(b, categorySeparate)), cmp.Compare(a, b))
		})
		for i, n := range names[:min(len(names), categoriesShown)] {
			names[i] = quote(n)
		}
		return nil, specError("category", "unknown category %s (some that exist: %s)", quote(name),
			strings.Join(names[:min(len(names), categoriesShown)], ", "))
	}
	return func(label string) bool {
		return label == name || strings.HasPrefix(label, name+categorySeparate)
	}, nil
}

// drill is the filter of the category argument ("": nil, everything
// kept), checked against the categories in ActivityWatch's settings.
func (s *Service) drill(ctx context.Context, category string) (func(label string) bool, error) {
	if category == "" {
		return nil, nil
	}
	m, err := s.meta(ctx)
	if err != nil {
		return nil, err
	}
	in, _ := s.inputsOf(m, nil, false) // the settings' categories alone
	return categoryFilter(category, in.opt.Classes)
}

// checkDrill checks the arguments a category drill cannot go with: it
// counts window time, so it ranks apps, titles or categories, without an
// AFK entry.
func checkDrill(q SummaryQuery) error {
	switch {
	case q.Category == "":
	case q.GroupBy != "" && q.GroupBy != GroupByApp && q.GroupBy != GroupByTitle && q.GroupBy != GroupByCategory:
		return specError("category", "goes with group_by app, title or category only")
	case q.IncludeAFK:
		return specError("category", "counts active time only: leave include_afk out")
	}
	return nil
}

// only is pr with only the window time whose category keep keeps: every
// total, ranking and stretch counts that time alone; tabs and editor
// time are left out, AFK time stays the period's.
func (pr *prepared) only(keep func(label string) bool) *prepared {
	if keep == nil {
		return pr
	}
	c := *pr
	c.units = make([]*unitResult, len(pr.units))
	for i, u := range pr.units {
		f := &unitResult{span: u.span, vs: u.vs, away: u.away}
		for j, e := range u.events {
			if v := u.vs[u.views[j]]; !v.excluded && keep(v.category) {
				f.events, f.views = append(f.events, e), append(f.views, u.views[j])
			}
		}
		f.aggregate()
		c.units[i] = f
	}
	c.notes = appendNote(c.notes, "only the category's time is counted; afk_s is the whole period's")
	return &c
}
