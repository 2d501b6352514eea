package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awbridge/awbridge/toolbus"
	"github.com/awbridge/awbridge/toolbus/state"
)

// cmdState lists stored state. With the service running it asks the
// service (session and persistent entries, shared by every assistant);
// otherwise it reads the persistent file.
func cmdState(ctx context.Context, e *env, args []string) int {
	fset := newFlags(e, "state")
	asJSON := fset.Bool("json", false, "print the stored entries alone on stdout as JSON")
	prefix := fset.String("prefix", "", "only keys starting with this")
	noRelay := fset.Bool("no-relay", false, "read the persistent file even when the service runs")
	l, log, code := prepare(e, fset, args)
	if l == nil {
		return code
	}
	var (
		entries []state.Entry
		where   string
		via     = servedByService
	)
	if conn := dialService(e, l.Config, *noRelay); conn != nil {
		c := newServiceCaller(conn, l.Config)
		defer c.Close()
		argsJSON, _ := json.Marshal(map[string]any{"action": "list", "prefix": *prefix, "scope": "any"})
		out := c.Call(ctx, toolbus.Request{Name: "state", Args: argsJSON})
		var env struct {
			Result struct {
				Entries []state.Entry `json:"entries"`
			} `json:"result"`
		}
		if out.Err != nil {
			return sayFailed(e, "state", out.Err)
		}
		if json.Unmarshal(out.Body, &env) != nil {
			fmt.Fprintln(e.stderr, "awbridge state: the service's listing was unreadable")
			return exitUsage
		}
		entries, where = env.Result.Entries, "the running service (session and persistent)"
	} else {
		st, warns, err := state.Open(state.Options{Dir: l.Config.Paths.StateDir})
		for _, w := range warns {
			log.Warn().Msg("state: " + w)
		}
		if err != nil {
			return fail(e, "state", err, exitUsage)
		}
		defer st.Close()
		if entries, err = st.List(*prefix, state.ScopePersistent); err != nil {
			return fail(e, "state", err, exitUsage)
		}
		where, via = st.Path(), servedByInProcess
	}
	if entries == nil {
		entries = []state.Entry{}
	}
	if *asJSON {
		out, _ := json.Marshal(map[string]any{"from": where, "entries": entries, "served_by": via})
		fmt.Fprintln(e.stdout, string(out))
		return exitOK
	}
	fmt.Fprintf(e.stdout, "state from %s\n", where)
	if len(entries) == 0 {
		fmt.Fprintln(e.stdout, "no stored state")
		return exitOK
	}
	for _, en := range entries {
		fmt.Fprintf(e.stdout, "%-32s %-10s %8d bytes  %s\n", en.Key, en.Scope, en.Bytes, en.UpdatedAt.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return exitOK
}
