package activity

import "time"

// The results of the activity tools, plain values with their JSON names.
// Every string from ActivityWatch has had the frames' privacy and
// untrusted-text rules applied. Durations are seconds to 0.1 s; shares
// are fractions of the active time to 0.001.

// Group-by keys of a Summary's top entries.
const (
	GroupByApp      = "app"      // the default
	GroupByTitle    = "title"    // app and window title
	GroupByDomain   = "domain"   // browser tabs' domains
	GroupByCategory = "category" // ActivityWatch's categories
	GroupByProject  = "project"  // editor watchers' projects (editor.go)
	GroupByLanguage = "language" // their languages
	GroupByFile     = "file"     // their files, with the language
)

// Roles of the buckets read.
const (
	RoleWindow = "window" // aw-watcher-window: currentwindow
	RoleAFK    = "afk"    // aw-watcher-afk: afkstatus
	RoleWeb    = "web"    // aw-watcher-web: web.tab.current
	RoleEditor = "editor" // aw-watcher-vscode and its kind: app.editor.activity
)

// Summary is the result of activity_summary: where the time of a period
// went.
type Summary struct {
	Period  Period `json:"period"`
	GroupBy string `json:"group_by"`
	// ActiveS is window time within not-AFK time (ActivityWatch's
	// canonical desktop query); AFKS the time the AFK watcher reported.
	ActiveS float64 `json:"active_s"`
	AFKS    float64 `json:"afk_s"`
	// EditorS is the editor watchers' time, grouped by project, language
	// or file (their Top's whole; see editor.go).
	EditorS float64 `json:"editor_s,omitempty"`
	// Top are the largest entries of GroupBy, at most the limit. With
	// include_afk, AFK time is one more entry (key "afk") and shares are
	// of active plus AFK time. OtherS is the time beyond the limit.
	Top    []Entry `json:"top"`
	OtherS float64 `json:"other_s"`
	// TopDomains count tab time while a browser window had focus, as
	// ActivityWatch does; left out when Top ranks domains. TopURLs
	// (scheme, host and path) come with group_by title only.
	TopDomains []Entry `json:"top_domains,omitempty"`
	TopURLs    []Entry `json:"top_urls,omitempty"`
	// Categories are ActivityWatch's (its classes setting, else its
	// defaults); left out when Top ranks categories.
	Categories []Entry `json:"categories,omitempty"`
	// Switches counts changes of the focused app or title.
	Switches int `json:"switches"`
	// LongestFocus is the longest unbroken stretch in one app.
	LongestFocus  *Focus     `json:"longest_focus"`
	FirstActivity *time.Time `json:"first_activity"`
	LastActivity  *time.Time `json:"last_activity"`
	Source        Source     `json:"source"`
	Freshness     Freshness  `json:"freshness"`
	// Notes say what the numbers cannot show. Fixed text, never data.
	Notes []string `json:"notes,omitempty"`
	// Previous is the period compared with (compare.go).
	Previous *Previous `json:"previous,omitempty"`
	// Days, with split "day", are the period's days (split.go).
	Days   []Day    `json:"days,omitempty"`
	ranked []ranked // Top's keys
}

// Entry is one line of a ranking.
type Entry struct {
	// Key is the app, title, domain, URL or category ("Work >
	// Programming"); "excluded", "withheld" or "afk" for the entries
	// marked so. App is a title's app.
	Key       string  `json:"key"`
	App       string  `json:"app,omitempty"`
	Language  string  `json:"language,omitempty"` // a file's
	DurationS float64 `json:"duration_s"`
	Share     float64 `json:"share"`
	// Excluded marks the one entry holding the time of every excluded app
	// and password manager; Withheld an app's titles not shown (private
	// windows, private tabs, password vaults).
	Excluded bool `json:"excluded,omitempty"`
	Withheld bool `json:"withheld,omitempty"`
	AFK      bool `json:"afk,omitempty"`
	// PreviousS is the key's time in the Previous period (top entries).
	PreviousS *float64 `json:"previous_s,omitempty"`
}

// Focus is one unbroken stretch in one app.
type Focus struct {
	App string `json:"app"`
	// Title is the title the stretch spent most time on.
	Title     string    `json:"title,omitempty"`
	Start     time.Time `json:"start"`
	DurationS float64   `json:"duration_s"`
	Excluded  bool      `json:"excluded,omitempty"`
}

// Timeline is the result of activity_timeline: the ordered focus blocks
// of a period ("what was I doing between 2 and 4?").
type Timeline struct {
	Period Period `json:"period"`
	// Blocks cover the period oldest first; see fold for min_block_s.
	Blocks []Block `json:"blocks"`
	// NextCursor, when set, is the cursor of the next page.
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
	// App is the app of the block's longest stretch; Title and Domain
	// the title and tab domain shown together longest in that app.
	App    string `json:"app,omitempty"`
	Title  string `json:"title,omitempty"`
	Domain string `json:"domain,omitempty"`
	// Project is the editor's project, on the editor's app's blocks.
	Project   string    `json:"project,omitempty"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	DurationS float64   `json:"duration_s"`
	Gap       string    `json:"gap,omitempty"`
	// Folded counts the shorter blocks folded into this one.
	Folded   int  `json:"folded,omitempty"`
	Excluded bool `json:"excluded,omitempty"`
	Withheld bool `json:"withheld,omitempty"`
}

// History is the result of nowframe_history read from ActivityWatch's
// stored events: the recent switches, oldest first.
type History struct {
	Period Period `json:"period"`
	Count  int    `json:"count"`
	// Switches are the newest of the period, at most the limit, oldest
	// first; Omitted counts the older ones.
	Switches  []Switch  `json:"switches"`
	Omitted   int       `json:"omitted,omitempty"`
	Source    Source    `json:"source"`
	Freshness Freshness `json:"freshness"`
	Notes     []string  `json:"notes,omitempty"`
}

// Switch is one change of what the person was doing.
type Switch struct {
	At time.Time `json:"at"`
	// What names what changed: "app", "title", "tab", "afk", "no_data".
	What     []string `json:"what"`
	App      string   `json:"app,omitempty"`
	Title    string   `json:"title,omitempty"`
	Withheld bool     `json:"withheld,omitempty"`
	// Tab is the browser tab while a browser had focus (never a private
	// tab).
	Tab *Tab `json:"tab,omitempty"`
	// AFK is "afk", "not-afk" or "no_data" when the person left, came
	// back, or no watcher reported anything.
	AFK string `json:"afk,omitempty"`
	// DurationS lasts until the next switch or now.
	DurationS float64 `json:"duration_s"`
}

// Tab is a browser tab as a switch shows it.
type Tab struct {
	Domain string `json:"domain"`
	Title  string `json:"title,omitempty"`
}

// Source says whose ActivityWatch buckets a result was read from.
type Source struct {
	// Host is whose buckets were read; HostSource where it came from, as
	// frames say.
	Host       string `json:"host"`
	HostSource string `json:"host_source"`
	// Hosts are the hosts with data in the period (see hostsWithData),
	// this machine first.
	Hosts []string `json:"hosts,omitempty"`
	// Buckets are the buckets read, window and AFK first.
	Buckets []BucketRead `json:"buckets"`
	// Note says why another host was used or what is missing (fixed text).
	Note string `json:"note,omitempty"`
}

// BucketRead is one bucket read for a period, with how fresh it is.
type BucketRead struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	// Events counts the events read within the period.
	Events int `json:"events"`
	// NewestEnd is when the bucket's newest event ended; AgeS is now -
	// NewestEnd in seconds. Stale when AgeS exceeds the frame's threshold
	// for the watcher and the period reaches now (one that ended before
	// has nothing left to wait for).
	NewestEnd *time.Time `json:"newest_end,omitempty"`
	AgeS      *float64   `json:"age_s,omitempty"`
	Stale     bool       `json:"stale"`
	// Unreadable marks a web bucket whose events could not be read.
	Unreadable bool `json:"unreadable,omitempty"`
}

// Freshness says how current a result's data is.
type Freshness struct {
	AsOf time.Time `json:"as_of,omitzero"` // zero in compact answers
	// StaleWatchers are the ids of the stale buckets read.
	StaleWatchers []string `json:"stale_watchers,omitempty"`
}
