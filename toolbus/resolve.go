package toolbus

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/awbridge/awbridge/internal/text"
)

// resolve is the first stage: the tool by name or alias.
func (b *Bus) resolve(name string) (*entry, *ToolError) {
	if e, ok := b.byName[name]; ok {
		return e, nil
	}
	te := &ToolError{Kind: ContractError, Code: CodeUnknownTool,
		Message: fmt.Sprintf("unknown tool %q", strings.ToValidUTF8(text.Cut(name, 64), "?")),
		Hint:    "call tools/list or the help tool for the available tools"}
	te.DidYouMean = b.suggestTools(name)
	if len(te.DidYouMean) > 0 {
		te.Message += "; did you mean " + strings.Join(te.DidYouMean, " or ") + "?"
	}
	return nil, te
}

// suggestTools returns the canonical names of the tools whose name or an
// alias is close to name.
func (b *Bus) suggestTools(name string) []string {
	names := make([]string, 0, len(b.byName))
	for n := range b.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	out := []string{}
	for _, n := range suggest(name, names) {
		if c := b.byName[n].tool.Name; !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// suggest returns up to three names close to name (edit distance).
func suggest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	n := strings.ToLower(name)
	for _, c := range names {
		lc := strings.ToLower(c)
		d := text.Distance(text.Head(n, 128), lc)
		if strings.Contains(lc, n) || strings.Contains(n, lc) {
			d = min(d, 1)
		}
		if d <= max(2, len(c)/3) {
			cs = append(cs, cand{c, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	out := []string{}
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

func (b *Bus) resolveStage(r *run) bool {
	e, te := b.resolve(r.req.Name)
	if te != nil {
		return r.fail(StageResolve, te)
	}
	r.e = e
	return true
}
