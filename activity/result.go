package activity

import "time"

// The results of the activity tools, as Go values with their JSON names.
// They are plain values. Every string that came from ActivityWatch (app
// names, titles, domains, category names) has had the privacy rules and
// the untrusted-text rules applied before it is put in one, exactly as
// for frames. Durations are seconds to 0.1 s; shares are fractions of the
// active time, 0 to 1, to 0.001.

// Group-by keys of a Summary's top entries.
const (
	GroupByApp      = "app"      // the default
	GroupByTitle    = "title"    // app and window title
	GroupByDomain   = "domain"   // browser tabs' domains
	GroupByCategory = "category" // ActivityWatch's categories
)

// Roles of the buckets read.
const (
	RoleWindow = "window" // aw-watcher-window: currentwindow
	RoleAFK    = "afk"    // aw-watcher-afk: afkstatus
	RoleWeb    = "web"    // aw-watcher-web: web.tab.current
)

// Summary is the result of activity_summary: where the time of a period
// went.
type Summary struct {
	// Period is the period as resolved: start, end, time zone, day start.
	Period Period `json:"period"`
	// GroupBy is what Top is grouped by: "app", "title", "domain" or
	// "category".
	GroupBy string `json:"group_by"`
	// ActiveS is the time the person was at the computer: window time
	// within not-AFK time (ActivityWatch's canonical desktop query).
	ActiveS float64 `json:"active_s"`
	// AFKS is the time ActivityWatch's AFK watcher reported the person
	// away, within the period.
	AFKS float64 `json:"afk_s"`
	// Top are the largest entries of GroupBy, largest first, at most the
	// call's limit. With include_afk, AFK time is one more entry (key
	// "afk") and shares are of active plus AFK time.
	Top []Entry `json:"top"`
	// OtherS is the time of the entries beyond the limit.
	OtherS float64 `json:"other_s,omitempty"`
	// TopDomains are the browser domains with the most time, counted only
	// while a browser window had focus (AFK or not, as ActivityWatch
	// counts them), largest first, at most the limit. Left out when Top
	// already ranks domains.
	TopDomains []Entry `json:"top_domains,omitempty"`
	// TopURLs are the browser pages (scheme, host and path: no query)
	// with the most time, with group_by title only.
	TopURLs []Entry `json:"top_urls,omitempty"`
	// Categories are ActivityWatch's categories (its classes setting,
	// else its default categories) by time, largest first, at most the
	// limit; time matching no rule is "Uncategorized". Left out when Top
	// already ranks categories.
	Categories []Entry `json:"categories,omitempty"`
	// Switches counts changes of the focused app or title within active
	// time.
	Switches int `json:"switches"`
	// LongestFocus is the longest unbroken stretch in one app, or nil
	// when there was no activity.
	LongestFocus *Focus `json:"longest_focus"`
	// FirstActivity and LastActivity are the start of the first and the
	// end of the last active moment in the period, nil when none.
	FirstActivity *time.Time `json:"first_activity"`
	LastActivity  *time.Time `json:"last_activity"`
	// Source is whose buckets were read.
	Source Source `json:"source"`
	// Freshness says how current the data is and names stale watchers.
	Freshness Freshness `json:"freshness"`
	// Notes say what the numbers cannot show (a watcher missing or stale,
	// a bucket unreadable, the period cut). Fixed text, never data.
	Notes []string `json:"notes,omitempty"`
}

// Entry is one line of a ranking.
type Entry struct {
	// Key is the app, title, domain, URL or category ("Work >
	// Programming", the web UI's separator), per the ranking; "excluded",
	// "withheld" or "afk" for the entries marked so.
	Key string `json:"key"`
	// App is the app of a title (group_by title).
	App string `json:"app,omitempty"`
	// DurationS is its time in seconds.
	DurationS float64 `json:"duration_s"`
	// Share is DurationS over the summary's active time (0 to 1).
	Share float64 `json:"share"`
	// Excluded marks the one entry holding the time of every app the
	// privacy settings exclude; its Key is "excluded" and nothing else of
	// those apps is shown. Password managers count as excluded apps.
	Excluded bool `json:"excluded,omitempty"`
	// Withheld marks the entry holding an app's titles that are not shown
	// (private browser windows, windows showing a private tab or a
	// password vault); its Key is "withheld".
	Withheld bool `json:"withheld,omitempty"`
	// AFK marks the AFK entry of include_afk; its Key is "afk".
	AFK bool `json:"afk,omitempty"`
}

// Focus is one unbroken stretch in one app.
type Focus struct {
	// App is the app ("excluded" for an excluded app or password
	// manager).
	App string `json:"app"`
	// Title is the title the stretch spent most time on ("" when the app
	// is excluded or its titles are withheld).
	Title     string    `json:"title,omitempty"`
	Start     time.Time `json:"start"`
	DurationS float64   `json:"duration_s"`
	Excluded  bool      `json:"excluded,omitempty"`
}

// Timeline is the result of activity_timeline: the ordered focus blocks
// of a period ("what was I doing between 2 and 4?").
type Timeline struct {
	Period Period `json:"period"`
	// Blocks are oldest first, within the period, without gap or
	// overlap. A stretch of activity shorter than the call's min_block_s
	// is folded into the activity it touches, never into a gap: the app
	// blocks hold exactly the period's active time, the AFK gaps its AFK
	// time, the no-data gaps the rest, whatever min_block_s. Gaps are not
	// folded, and activity between two gaps stays a block however short.
	Blocks []Block `json:"blocks"`
	// NextCursor, when set, is passed as cursor to get the blocks after
	// the last one shown (the call's limit was reached).
	NextCursor string    `json:"next_cursor,omitempty"`
	Source     Source    `json:"source"`
	Freshness  Freshness `json:"freshness"`
	Notes      []string  `json:"notes,omitempty"`
}

// Gap kinds of a Block.
const (
	GapAFK    = "afk"     // the AFK watcher reported the person away
	GapNoData = "no_data" // no watcher reported anything (computer off or asleep)
)

// Block is one stretch of a timeline: focus in one app, or a gap.
type Block struct {
	// App and Title are the focused window's ("" in a gap). App is the
	// app of the block's longest stretch; Title and Domain are the title
	// and browser tab domain shown together longest in that app (never
	// one page's title with another's domain).
	App   string `json:"app,omitempty"`
	Title string `json:"title,omitempty"`
	// Domain is the browser tab's domain while a browser had focus.
	Domain string    `json:"domain,omitempty"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	// DurationS is End - Start in seconds.
	DurationS float64 `json:"duration_s"`
	// Gap is "afk" or "no_data" for a gap block, "" for focus.
	Gap string `json:"gap,omitempty"`
	// Folded counts the shorter blocks folded into this one.
	Folded int `json:"folded,omitempty"`
	// Excluded marks a block in an app the privacy settings exclude (or a
	// password manager): App is "excluded" and Title empty.
	Excluded bool `json:"excluded,omitempty"`
	// Withheld marks a block whose titles are withheld (a private browser
	// window, a private tab or a password vault): Title is empty.
	Withheld bool `json:"withheld,omitempty"`
}

// History is the result of nowframe_history read from ActivityWatch's
// stored events: the recent switches, oldest first.
type History struct {
	Period Period `json:"period"`
	// Count is len(Switches).
	Count int `json:"count"`
	// Switches are the newest switches of the period, at most the call's
	// limit, oldest first. The first is what was going on when the period
	// (or the page) starts.
	Switches []Switch `json:"switches"`
	// Omitted counts the older switches of the period beyond the limit.
	Omitted   int       `json:"omitted,omitempty"`
	Source    Source    `json:"source"`
	Freshness Freshness `json:"freshness"`
	Notes     []string  `json:"notes,omitempty"`
}

// Switch is one change of what the person was doing.
type Switch struct {
	// At is when the change happened.
	At time.Time `json:"at"`
	// What names what changed: "app", "title", "tab", "afk" (the person
	// left or came back), "no_data" (no watcher reported anything:
	// computer off or asleep).
	What []string `json:"what"`
	// App and Title are the focused window after the change ("excluded"
	// and "" for an excluded app or password manager).
	App   string `json:"app,omitempty"`
	Title string `json:"title,omitempty"`
	// Withheld marks a title withheld (a private browser window, a
	// private tab or a password vault).
	Withheld bool `json:"withheld,omitempty"`
	// Tab is the browser tab after the change, while a browser had focus;
	// nil otherwise, and for a private tab.
	Tab *Tab `json:"tab,omitempty"`
	// AFK is "afk" or "not-afk" when the change was the person leaving or
	// coming back; "no_data" for a stretch without data.
	AFK string `json:"afk,omitempty"`
	// DurationS is how long it lasted, until the next switch or now.
	DurationS float64 `json:"duration_s"`
}

// Tab is a browser tab as a switch shows it: its domain and title (never
// a private tab's, nor an excluded browser's).
type Tab struct {
	Domain string `json:"domain"`
	Title  string `json:"title,omitempty"`
}

// Source says whose ActivityWatch buckets a result was read from.
type Source struct {
	// Host is whose buckets were read ("" when none).
	Host string `json:"host"`
	// HostSource is where Host came from: "config", "aw_hostname",
	// "latest_bucket" or "none" (as frames say).
	HostSource string `json:"host_source"`
	// Buckets are the buckets read, window and AFK first.
	Buckets []BucketRead `json:"buckets"`
	// Note says why another host was used or what is missing. Fixed text:
	// hostnames and bucket ids appear only in the fields above.
	Note string `json:"note,omitempty"`
}

// BucketRead is one bucket read for a period, with how fresh it is.
type BucketRead struct {
	// ID is the bucket's id.
	ID string `json:"id"`
	// Role is "window", "afk" or "web".
	Role string `json:"role"`
	// Events counts the events read within the period (after clipping).
	Events int `json:"events"`
	// NewestEnd is when the bucket's newest event ended, whenever that was
	// (ActivityWatch's last_updated); nil when the server did not say.
	NewestEnd *time.Time `json:"newest_end,omitempty"`
	// AgeS is now - NewestEnd in seconds (>= 0, to 0.1 s); nil with
	// NewestEnd.
	AgeS *float64 `json:"age_s,omitempty"`
	// Stale is true when AgeS exceeds the watcher's threshold (the
	// frame's: window 15 s, AFK 200 s, web 75 s): the watcher stopped or
	// the machine slept, so the period may lack its latest part. A
	// browser that is closed also goes stale.
	Stale bool `json:"stale"`
	// Unreadable is true when the bucket's events could not be read; the
	// result lacks them (only a web bucket can be: without window or AFK
	// events there is no result).
	Unreadable bool `json:"unreadable,omitempty"`
}

// Freshness says how current a result's data is.
type Freshness struct {
	// AsOf is when the data was read.
	AsOf time.Time `json:"as_of"`
	// StaleWatchers are the ids of the buckets read whose newest event is
	// stale (see BucketRead.Stale).
	StaleWatchers []string `json:"stale_watchers,omitempty"`
}
