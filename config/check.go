package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awbridge/awbridge/internal/text"
)

// SocketEnv names the variable that sets the service's socket (see
// [ResolveSocket]).
const SocketEnv = "AWBRIDGE_SOCKET"

// envPrefix starts every variable awbridge reads.
const envPrefix = "AWBRIDGE_"

// CheckTools checks that limits.rate_limits names only tools among tools
// (their canonical names): the tool bus refuses to start otherwise. The
// error, if any, is an *Error naming where the setting came from and the
// closest tool name.
func (l *Loaded) CheckTools(tools []string) error {
	s, ok := l.Get("limits.rate_limits")
	if !ok {
		return nil
	}
	for _, item := range s.Items {
		name, _, _ := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if slices.Contains(tools, name) {
			continue
		}
		msg := fmt.Sprintf("no tool is named %s", quoteShort(name))
		if like := similar(name, tools); len(like) > 0 {
			msg += " (did you mean " + strings.Join(like, " or ") + "?)"
		} else {
			msg += " (the tools are " + strings.Join(tools, ", ") + ")"
		}
		return &Error{Key: s.Key, Source: s.Source, Origin: s.Origin, Msg: msg}
	}
	return nil
}

// UnknownEnv returns one warning line for each name in names that starts
// with AWBRIDGE_ but is no variable awbridge reads (a typo is silently
// ignored otherwise), with the closest known name when one is close.
// extra are more variables the caller reads (AWBRIDGE_CPUPROFILE, say).
func UnknownEnv(names []string, extra ...string) []string {
	known := append([]string{ConfigEnv, SocketEnv}, extra...)
	for _, sp := range table() {
		if sp.env != "" {
			known = append(known, sp.env)
		}
	}
	var out []string
	for _, n := range names {
		if !strings.HasPrefix(n, envPrefix) || slices.Contains(known, n) {
			continue
		}
		shown := n
		if !text.Printable(n) || len(n) > 64 {
			shown = quoteShort(n)
		}
		line := shown + " is not a variable awbridge reads: it is ignored"
		if c := closest(n, known); c != "" {
			line = shown + " is not a variable awbridge reads (did you mean " + c + "?): it is ignored"
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

// similar lists the candidates a person may have meant by s: the closest
// by spelling, else those s begins (nowframe: nowframe_build,
// nowframe_history).
func similar(s string, candidates []string) []string {
	if c := closest(s, candidates); c != "" {
		return []string{c}
	}
	var out []string
	for _, c := range candidates {
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			out = append(out, c)
		}
	}
	return out
}
