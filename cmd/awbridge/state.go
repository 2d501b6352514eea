package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awbridge/awbridge/toolbus/state"
)

// cmdState lists the persistent state (what store_as and the state tool
// kept with scope persistent). Session state lives in a running process
// and is read with the state tool.
func cmdState(_ context.Context, e *env, args []string) int {
	fset := newFlags(e, "state")
	asJSON := fset.Bool("json", false, "print the stored entries alone on stdout as JSON")
	prefix := fset.String("prefix", "", "only keys starting with this")
	l, log, code := prepare(e, fset, args)
	if l == nil {
		return code
	}
	st, warns, err := state.Open(state.Options{Dir: l.Config.Paths.StateDir})
	for _, w := range warns {
		log.Warn().Msg("state: " + w)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge state: "+oneLine(err.Error()))
		return exitUsage
	}
	defer st.Close()
	entries, err := st.List(*prefix, state.ScopePersistent)
	if err != nil {
		fmt.Fprintln(e.stderr, "awbridge state: "+oneLine(err.Error()))
		return exitUsage
	}
	if *asJSON {
		if entries == nil {
			entries = []state.Entry{}
		}
		out, _ := json.Marshal(map[string]any{"path": st.Path(), "entries": entries})
		fmt.Fprintln(e.stdout, string(out))
		return exitOK
	}
	fmt.Fprintf(e.stdout, "state file: %s\n", st.Path())
	if len(entries) == 0 {
		fmt.Fprintln(e.stdout, "no stored state")
		return exitOK
	}
	for _, en := range entries {
		fmt.Fprintf(e.stdout, "%-32s %8d bytes  %s\n", en.Key, en.Bytes, en.UpdatedAt.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return exitOK
}
