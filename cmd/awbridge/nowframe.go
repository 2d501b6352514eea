package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/nowframe"
	"github.com/awbridge/awbridge/toolbus"
)

func cmdNowframe(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "nowframe")
	reason := fs.String("reason", "cli", "the frame's reason")
	asJSON := fs.Bool("json", false, "print the frame alone on stdout")
	noRelay := fs.Bool("no-relay", false, "build the frame in this process even when the service runs")
	l, log, code := prepare(e, fs, args)
	if l == nil {
		return code
	}
	c, via := openCaller(e, "nowframe", l, log, engine.Deps{}, *noRelay)
	if c == nil {
		return exitUsage
	}
	defer c.Close()
	params, _ := json.Marshal(map[string]string{"reason": *reason})
	out := c.Call(ctx, toolbus.Request{Direct: true, Name: "nowframe.build", Args: params})
	if out.Err != nil {
		return sayFailed(e, "nowframe", out.Err)
	}
	if *asJSON {
		fmt.Fprintln(e.stdout, string(withServedBy(out.Body, via)))
	} else {
		printFrame(e.stdout, out.Body, time.Local)
	}
	// Exit 1 when ActivityWatch did not answer: the frame is best-effort,
	// but a script should notice.
	var f frameView
	if json.Unmarshal(out.Body, &f) == nil && !f.Sources.ActivityWatch.OK {
		return exitDegraded
	}
	return exitOK
}

// frameView is what the terminal shows of a frame.
type frameView struct {
	Now     nowframe.Now     `json:"now"`
	Sources nowframe.Sources `json:"sources"`
}

// printFrame writes what the person is doing now in local times (loc),
// and the browser tab on a second line when the frame shows one. For
// example:
//
//	Code: main.go - awbridge (since 10:42, 3 min) - not away
//	Code: main.go - awbridge (at 19:17 for 21 s, seen 2 h 16 min ago) - not away then - nothing new lately: ...
func printFrame(w io.Writer, body []byte, loc *time.Location) {
	var v frameView
	if err := json.Unmarshal(body, &v); err != nil {
		fmt.Fprintln(w, "the frame was unreadable")
		return
	}
	if aw := v.Sources.ActivityWatch; !aw.OK {
		if what, ok := awAnsweredBut[aw.Code]; ok {
			fmt.Fprintf(w, "ActivityWatch %s: run 'awbridge health' for what to do\n", what)
			return
		}
		why := "no reason given"
		if aw.Error != nil {
			why = failureCause(*aw.Error)
		}
		fmt.Fprintf(w, "ActivityWatch did not answer (%s): run 'awbridge health' for what to do\n", why)
		return
	}
	n := v.Now
	fmt.Fprintln(w, frameLine(n, loc))
	if b := n.Browser; b.Focused && !b.Excluded && (b.URL != "" || b.Title != "") {
		tab := b.URL
		switch {
		case tab == "":
			tab = b.Title
		case b.Title != "":
			tab = b.Title + " - " + b.URL
		}
		fmt.Fprintf(w, "  tab: %s\n", clipLine(oneLine(tab), 200))
	}
}

// frameLine is the first line printFrame writes.
func frameLine(n nowframe.Now, loc *time.Location) string {
	var b strings.Builder
	win := n.Window
	winSeen := "" // how long ago the window was seen, when stale
	switch {
	case !win.Available:
		b.WriteString("No focused window known (" + strings.ReplaceAll(cmp.Or(win.Reason, "no event"), "_", " ") + ")")
	default:
		b.WriteString(cmp.Or(oneLine(win.App), "An unnamed app"))
		switch {
		case win.Excluded:
			b.WriteString(": [title withheld: " + strings.ReplaceAll(cmp.Or(win.ExcludedReason, "privacy"), "_", " ") + "]")
		case win.Title != "":
			b.WriteString(": " + clipLine(oneLine(win.Title), 160))
		}
		switch t := win.EventTiming; {
		case t == nil || t.Since.IsZero():
		case t.Stale:
			// The event ended long ago: how long it lasted and when it was
			// seen, not a span running to now.
			winSeen = seenAgo(t)
			fmt.Fprintf(&b, " (at %s for %s, %s)", t.Since.In(loc).Format("15:04"), span(t.LastSeen.Sub(t.Since)), winSeen)
		default:
			fmt.Fprintf(&b, " (since %s, %s)", t.Since.In(loc).Format("15:04"), span(n.AsOf.Sub(t.Since)))
		}
	}
	t := n.AFK.EventTiming
	switch n.AFK.Status {
	case "not-afk":
		b.WriteString(" - not away")
	case "afk":
		b.WriteString(" - away")
		if t != nil && !t.Since.IsZero() {
			b.WriteString(" since " + t.Since.In(loc).Format("15:04"))
		}
	default:
		b.WriteString(" - away or not: unknown")
		t = nil
	}
	switch {
	case t == nil || !t.Stale:
	case seenAgo(t) == winSeen:
		b.WriteString(" then")
	default:
		b.WriteString(" (" + seenAgo(t) + ")")
	}
	if n.Stale {
		b.WriteString(" - nothing new lately: the watchers stopped or the machine slept")
		if e := n.NewestEvent; e != nil && !e.EndedAt.IsZero() {
			b.WriteString(" (last seen " + e.EndedAt.In(loc).Format("15:04") + ")")
		}
	}
	return b.String()
}

// seenAgo says how long ago a source's newest event ended.
func seenAgo(t *nowframe.EventTiming) string {
	d := time.Duration(t.AgeSeconds * float64(time.Second))
	if d < 24*time.Hour {
		return "seen " + span(d) + " ago"
	}
	return fmt.Sprintf("seen %d d %d h ago", int(d.Hours())/24, int(d.Hours())%24)
}

// span is a duration as a person says it: "40 s", "3 min", "2 h 5 min".
func span(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

// withServedBy adds "served_by" to a JSON object.
func withServedBy(obj []byte, via string) []byte {
	if len(obj) < 2 || obj[len(obj)-1] != '}' {
		return obj
	}
	out := append([]byte{}, obj[:len(obj)-1]...)
	if len(obj) > 2 {
		out = append(out, ',')
	}
	return append(out, `"served_by":"`+via+`"}`...)
}
