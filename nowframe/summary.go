package nowframe

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// summarize writes Now.Summary from the app name, the AFK state and
// staleness only, never a title or URL. An unreadable watcher is said to
// be unreadable, never silent.
func summarize(n *Now, pmApp, showTab, unavailable, refused bool) string {
	w, a, b := &n.Window, &n.AFK, &n.Browser
	winFresh := fresh(w.EventTiming)
	afkFresh := a.Status != StatusUnknown && fresh(a.EventTiming)
	winUnreadable, afkUnreadable := w.Reason == ReasonUnreadable, a.Reason == ReasonUnreadable
	switch {
	case n.NewestEvent == nil:
		switch {
		case unavailable && refused:
			return "Unknown: ActivityWatch refused awbridge's requests (see sources.activitywatch.error)"
		case unavailable:
			return "Unknown: ActivityWatch did not answer (see sources.activitywatch.error)"
		case winUnreadable || afkUnreadable:
			return "Unknown: " + unreadablePhrase(winUnreadable, afkUnreadable) + " (see sources.activitywatch.error)"
		case n.Selection.Window == "" && n.Selection.AFK == "":
			return "No activity data: no window or AFK bucket was found for this host"
		}
		return "No activity data: the selected buckets have no events"
	case n.Stale:
		s := fmt.Sprintf("No recent activity: the %s watcher's newest event ended %s ago",
			watcherName(n.NewestEvent.Source), humanDuration(n.NewestEvent.AgeSeconds))
		if winUnreadable || afkUnreadable {
			s += "; " + unreadablePhrase(winUnreadable, afkUnreadable)
		}
		return s
	case afkFresh && a.Status == StatusAFK:
		s := "Away since " + clock(a.Since, n.AsOf)
		if winFresh {
			s += "; " + appPhrase(w, b, pmApp, showTab) + " in focus"
		}
		return s
	case winFresh:
		s := "Active in " + appPhrase(w, b, pmApp, showTab)
		switch {
		case afkUnreadable:
			s += "; AFK status unknown: its events could not be read"
		case a.Status == StatusUnknown:
			s += "; AFK status unknown"
		case !afkFresh:
			s += "; AFK status stale"
		}
		return s
	case afkFresh:
		switch {
		case w.Available:
			return fmt.Sprintf("Present (not afk), but the window watcher's newest event ended %s ago",
				humanDuration(w.AgeSeconds))
		case winUnreadable:
			return "Present (not afk); " + unreadablePhrase(true, false)
		}
		return "Present (not afk); no window data"
	}
	// Only the web watcher has a fresh event.
	switch {
	case winUnreadable && afkUnreadable:
		return "Only the web watcher is active: " + unreadablePhrase(true, true)
	case winUnreadable:
		return "Only the web watcher is active: " + unreadablePhrase(true, false) + ", and the AFK watcher is silent"
	case afkUnreadable:
		return "Only the web watcher is active: the window watcher is silent, and " + unreadablePhrase(false, true)
	}
	return "Only the web watcher is active: the window and AFK watchers are silent"
}

// unreadablePhrase says which of the window and AFK watchers' events
// could not be read (at least one).
func unreadablePhrase(window, afk bool) string {
	switch {
	case window && afk:
		return "the window and AFK watchers' events could not be read"
	case window:
		return "the window watcher's events could not be read"
	}
	return "the AFK watcher's events could not be read"
}

func watcherName(source string) string {
	if source == "afk" {
		return "AFK"
	}
	return source
}

func appPhrase(w *Window, b *Browser, pmApp, showTab bool) string {
	app := w.App
	switch {
	case app == "":
		app = "an unnamed app"
	case !plainAppName(app):
		app = "an app (its name is in window.app)"
	}
	switch {
	case pmApp:
		return app + " (password manager, title withheld)"
	case !b.Focused:
		return app
	case b.ExcludedReason == ReasonPasswordManager:
		return app + " (password manager tab, withheld)"
	case b.Private:
		return app + " (private tab, withheld)"
	case !showTab && b.Reason == ReasonUnreadable:
		return app + " (its tab could not be read)"
	case !showTab:
		return app + " (no browser tab data)"
	}
	var extra string
	if b.EventTiming == nil {
		return app + " (browser tab shown)"
	}
	if b.Stale {
		extra += ", stale"
	}
	if b.Audible != nil && *b.Audible && !b.Stale {
		extra += ", playing audio"
	}
	return app + " (browser tab shown" + extra + ")"
}

// maxSummaryApp bounds an app name quoted in a summary, in bytes.
const maxSummaryApp = 40

// plainAppName reports whether an app name (a program chooses its own)
// may appear inside the summary: at most four words of letters, digits
// and . - _ +, so no sentence is built into it; others stay in window.app.
func plainAppName(app string) bool {
	if len(app) > maxSummaryApp || strings.Count(app, " ") > 3 {
		return false
	}
	for _, r := range app {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(" .-_+", r) {
			return false
		}
	}
	return true
}

// clock formats t: the time of day on as-of's UTC date, else with the date.
func clock(t, asOf time.Time) string {
	t = t.UTC()
	if y, m, d := t.Date(); y == asOf.Year() && m == asOf.Month() && d == asOf.Day() {
		return t.Format("15:04:05Z")
	}
	return t.Format("2006-01-02 15:04:05Z")
}

// humanDuration formats seconds as "45s", "10m", "2h5m", "3d4h".
func humanDuration(sec float64) string {
	s := int64(sec)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 86400:
		if m := s % 3600 / 60; m != 0 {
			return fmt.Sprintf("%dh%dm", s/3600, m)
		}
		return fmt.Sprintf("%dh", s/3600)
	default:
		if h := s % 86400 / 3600; h != 0 {
			return fmt.Sprintf("%dd%dh", s/86400, h)
		}
		return fmt.Sprintf("%dd", s/86400)
	}
}
