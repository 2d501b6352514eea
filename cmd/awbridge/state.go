package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// cmdState lists the persistent state file's keys. (The session store and
// the state tool arrive with the tool bus; this reads what is on disk.)
func cmdState(_ context.Context, e *env, args []string) int {
	fset := newFlags(e, "state")
	asJSON := fset.Bool("json", false, "print the stored entries alone on stdout as JSON")
	l, _, code := prepare(e, fset, args)
	if l == nil {
		return code
	}
	path := filepath.Join(l.Config.Paths.StateDir, "state.json")
	entries := map[string]json.RawMessage{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		fmt.Fprintf(e.stderr, "awbridge state: reading %s: %v\n", path, err)
		return exitUsage
	default:
		if err := json.Unmarshal(b, &entries); err != nil {
			fmt.Fprintf(e.stderr, "awbridge state: %s is not a JSON object: %v\n", path, err)
			return exitUsage
		}
	}
	if *asJSON {
		out, _ := json.Marshal(map[string]any{"path": path, "entries": entries})
		fmt.Fprintln(e.stdout, string(out))
		return exitOK
	}
	fmt.Fprintf(e.stdout, "state file: %s\n", path)
	if len(entries) == 0 {
		fmt.Fprintln(e.stdout, "no stored state")
		return exitOK
	}
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(e.stdout, "%s\t%d bytes\n", k, len(entries[k]))
	}
	return exitOK
}
