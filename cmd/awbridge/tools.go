package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/awbridge/awbridge/engine"
)

func cmdTools(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "tools")
	noRelay := fs.Bool("no-relay", false, "list from this process even when the service runs")
	asJSON := fs.Bool("json", false, "print the tools/list result alone on stdout")
	l, log, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	c, _ := openCaller(e, "tools", l, log, engine.Deps{}, *noRelay)
	if c == nil {
		return exitUsage
	}
	defer c.Close()
	list, err := c.ToolsList(ctx)
	if err != nil {
		return fail(e, "tools", err, exitUsage)
	}
	if *asJSON {
		fmt.Fprintln(e.stdout, string(list))
		return exitOK
	}
	printTools(e.stdout, list)
	return exitOK
}

// toolsNameMax is the widest name column of `awbridge tools`: a longer
// name stands alone on its line, its title on the next.
const toolsNameMax = 28

// printTools writes the tools/list result as a table for 80 columns: the
// names in one column as wide as the longest (up to toolsNameMax), the
// titles beside them, wrapped under their column when long.
func printTools(w io.Writer, list []byte) {
	var v struct {
		Tools []named `json:"tools"`
	}
	_ = json.Unmarshal(list, &v)
	printNamed(w, v.Tools)
}

// named is a row of printNamed: a tool's or a prompt's name and title.
type named struct{ Name, Title string }

// printNamed writes rows as printTools describes.
func printNamed(w io.Writer, rows []named) {
	nameW := 0
	for _, t := range rows {
		nameW = max(nameW, min(width(textOf(t.Name)), toolsNameMax))
	}
	indent := strings.Repeat(" ", nameW+1)
	for _, t := range rows {
		name, title := textOf(t.Name), wrapWidth(textOf(t.Title), summaryWidth-nameW-1, "")
		if width(name) > nameW {
			fmt.Fprintln(w, fitWidth(name, summaryWidth))
			name = ""
		}
		if len(title) == 0 {
			if name != "" {
				fmt.Fprintln(w, name)
			}
			continue
		}
		for i, l := range title {
			if i == 0 && name != "" {
				fmt.Fprintln(w, padWidth(name, nameW)+" "+l)
				continue
			}
			fmt.Fprintln(w, indent+l)
		}
	}
}
