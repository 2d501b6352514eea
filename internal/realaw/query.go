package realaw

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/awbridge/awbridge/internal/jsonw"
)

// rule is a category's rule as the web UI sends it to categorize().
type rule struct {
	Type       string `json:"type"`
	Regex      string `json:"regex,omitempty"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
}

// DefaultCategories are ActivityWatch's default categories (aw-webui
// src/util/classes.ts, defaultCategories) as the web UI passes them to its
// queries when the classes setting is unset: [name, rule] pairs in their
// order, the "none" rules included (they match nothing), the Uncategorized
// entry (rule type null) left out. Written from the web UI, not taken from
// aw/transform's DefaultClasses: the tests check that list against this.
func DefaultCategories() [][2]any {
	re := func(regex string, ignoreCase bool) rule {
		return rule{Type: "regex", Regex: regex, IgnoreCase: ignoreCase}
	}
	none := rule{Type: "none"}
	return [][2]any{
		{[]string{"Work"}, re("Google Docs|libreoffice|ReText", false)},
		{[]string{"Work", "Programming"}, re("GitHub|Stack Overflow|BitBucket|Gitlab|vim|Spyder|kate|Ghidra|Scite", false)},
		{[]string{"Work", "Programming", "ActivityWatch"}, re("ActivityWatch|aw-", true)},
		{[]string{"Work", "Image"}, re("GIMP|Inkscape", false)},
		{[]string{"Work", "Video"}, re("Kdenlive", false)},
		{[]string{"Work", "Audio"}, re("Audacity", false)},
		{[]string{"Work", "3D"}, re("Blender", false)},
		{[]string{"Media"}, none},
		{[]string{"Media", "Games"}, re("Minecraft|RimWorld", false)},
		{[]string{"Media", "Video"}, re("YouTube|Plex|VLC", false)},
		{[]string{"Media", "Social Media"}, re("reddit|Facebook|Twitter|Instagram|devRant", true)},
		{[]string{"Media", "Music"}, re("Spotify|Deezer", true)},
		{[]string{"Comms"}, none},
		{[]string{"Comms", "IM"}, re("Messenger|Telegram|Signal|WhatsApp|Rambox|Slack|Riot|Element|Discord|Nheko|NeoChat|Mattermost", false)},
		{[]string{"Comms", "Email"}, re("Gmail|Thunderbird|mutt|alpine", false)},
	}
}

// browsers are the browsers the web UI knows (aw-webui src/queries.ts,
// browser_appnames and browser_appname_regex), in its order: a browser's
// tab events count while a window whose app has one of its names, or
// matches its pattern, has focus. aw/transform holds awbridge's own copy;
// this one is written from the web UI on purpose, so that a mistake there
// does not reach the oracle.
var browsers = []struct {
	name    string
	apps    []string
	pattern string
}{
	{"chrome", []string{"com.google.Chrome", "com.google.ChromeDev", "org.chromium.Chromium"}, `(?i)^(google[-_ ]?chrome|chrome|chromium)`},
	{"firefox", []string{"org.mozilla.firefox", "io.gitlab.librewolf-community", "net.waterfox.waterfox"}, `(?i)(firefox|librewolf|waterfox|nightly)`},
	{"opera", []string{"com.opera.Opera"}, `(?i)(opera)`},
	{"brave", []string{"com.brave.Browser"}, `(?i)(brave)`},
	{"edge", []string{"com.microsoft.Edge", "com.microsoft.EdgeDev"}, `(?i)^(microsoft[-_ ]?edge|msedge)`},
	{"arc", []string{}, `(?i)^arc(\.exe)?$`},
	{"vivaldi", []string{"com.vivaldi.Vivaldi"}, `(?i)(vivaldi)`},
	{"orion", []string{"Orion"}, `(?i)(orion)`},
	{"yandex", []string{"ru.yandex.Browser"}, `(?i)(yandex)`},
	{"zen", []string{"app.zen_browser.zen"}, `(?i)(zen)`},
	{"floorp", []string{"one.ablaze.floorp"}, `(?i)(floorp)`},
	{"helium", []string{"net.imput.helium"}, `(?i)(helium)`},
}

// DesktopQuery is the web UI's summary query (fullDesktopQuery) for one
// host with the Activity view's defaults, every statement ending in ";"
// (the Python server joins the lines without a separator), its lists
// uncut, plus the not-AFK and AFK totals.
func DesktopQuery(b Buckets, classes []byte) []string {
	q := canonicalQuery(b, classes)
	if b.AFK == "" {
		return append(q, summaryQuery(`afk_events = [];`)...)
	}
	return append(q, summaryQuery(
		fmt.Sprintf(`afk_events = flood(query_bucket(%s));`, Lit(b.AFK)),
		`afk_events = filter_keyvals(afk_events, "status", ["afk"]);`)...)
}

// MultiDeviceQuery is the web UI's multi-device query
// (canonicalMultideviceEvents: each host's canonical events, joined with
// union_no_overlap in the hosts' order, the first winning an overlap) with
// each host's browser buckets passed as the web UI's host_params allow,
// their tab events joined the same way; the totals are DesktopQuery's, the
// AFK time being the AFK watchers' "afk" time (joined likewise) outside the
// joined active time.
func MultiDeviceQuery(hosts []Buckets, classes []byte) []string {
	var q []string
	join := []string{`all_events = [];`, `all_not_afk = [];`, `all_browser = [];`, `all_afk = [];`}
	for i, b := range hosts {
		q = append(q, canonicalQuery(b, classes)...)
		q = append(q, fmt.Sprintf(`events_%d = events;`, i), fmt.Sprintf(`not_afk_%d = not_afk;`, i),
			fmt.Sprintf(`browser_%d = browser_events;`, i))
		q = append(q, afkQuery(i, b)...)
		for _, v := range []string{"events", "not_afk", "browser", "afk"} {
			join = append(join, fmt.Sprintf(`all_%s = union_no_overlap(all_%s, %s_%d);`, v, v, v, i))
		}
	}
	q = append(q, join...)
	q = append(q, `events = all_events;`, `not_afk = all_not_afk;`, `browser_events = all_browser;`)
	return append(q, summaryQuery(`afk_events = union_no_overlap(not_afk, all_afk);`,
		`afk_events = filter_keyvals(afk_events, "status", ["afk"]);`)...)
}

// CoveredQuery answers, for hosts in precedence order, the parts of each
// later host's canonical events (and active time, and tabs) that the
// earlier hosts' cover (filter_period_intersect with their period_union),
// in DesktopQuery's shape; its AFK time is the joined AFK watchers' "afk"
// time within the joined active time, and afk_union all of it. Each host's
// answer less these is the multi-device union without time counted twice,
// computed by the server's own functions (its union_no_overlap counts
// twice what one earlier event covers beyond a later host's first event).
// Period lists are computed apart (period_union clears its events' data).
func CoveredQuery(hosts []Buckets, classes []byte) []string {
	var q []string
	for i, b := range hosts {
		q = append(q, canonicalQuery(b, classes)...)
		q = append(q, fmt.Sprintf(`events_%d = events;`, i), fmt.Sprintf(`not_afk_%d = not_afk;`, i),
			fmt.Sprintf(`browser_%d = browser_events;`, i))
		q = append(q, canonicalQuery(b, classes)...)
		q = append(q, fmt.Sprintf(`pe_%d = events;`, i), fmt.Sprintf(`pn_%d = not_afk;`, i),
			fmt.Sprintf(`pb_%d = browser_events;`, i))
		q = append(q, afkQuery(i, b)...)
	}
	q = append(q, `cov_events = [];`, `cov_not_afk = [];`, `cov_browser = [];`,
		`p_events = pe_0;`, `p_not_afk = pn_0;`, `p_browser = pb_0;`, `p_afk = afk_0;`)
	for i := 1; i < len(hosts); i++ {
		for _, v := range [][2]string{{"events", "pe"}, {"not_afk", "pn"}, {"browser", "pb"}} {
			q = append(q, fmt.Sprintf(`c = filter_period_intersect(%s_%d, p_%s);`, v[0], i, v[0]),
				fmt.Sprintf(`cov_%s = concat(cov_%s, c);`, v[0], v[0]),
				fmt.Sprintf(`p_%s = period_union(p_%s, %s_%d);`, v[0], v[0], v[1], i))
		}
		q = append(q, fmt.Sprintf(`p_afk = period_union(p_afk, afk_%d);`, i))
	}
	q = append(q, `events = sort_by_timestamp(cov_events);`, `not_afk = cov_not_afk;`,
		`browser_events = sort_by_timestamp(cov_browser);`, `afk_union = sum_durations(p_afk);`)
	q = append(q, summaryQuery(`afk_events = filter_period_intersect(p_afk, p_not_afk);`)...)
	last := len(q) - 1
	q[last] = strings.Replace(q[last], `"afk_duration": afk_duration}`, `"afk_duration": afk_duration, "afk_union": afk_union}`, 1)
	return q
}

// afkQuery sets afk_<i> to host b's flooded "afk" events (none without
// an AFK bucket).
func afkQuery(i int, b Buckets) []string {
	if b.AFK == "" {
		return []string{fmt.Sprintf(`afk_%d = [];`, i)}
	}
	return []string{fmt.Sprintf(`afk_%d = flood(query_bucket(%s));`, i, Lit(b.AFK)),
		fmt.Sprintf(`afk_%d = filter_keyvals(afk_%d, "status", ["afk"]);`, i, i)}
}

// canonicalQuery is the web UI's canonicalEvents with the Activity view's
// defaults for one host: events (categorized), not_afk and browser_events.
// A host without an AFK bucket (the Android app's) is the web UI's
// Android view: its flooded window events all count, and are its active
// time.
func canonicalQuery(b Buckets, classes []byte) []string {
	if b.AFK == "" {
		return []string{
			fmt.Sprintf(`events = flood(query_bucket(%s));`, Lit(b.Window)),
			`not_afk = events;`,
			`browser_events = [];`,
			`events = categorize(events, ` + string(classes) + `);`,
		}
	}
	q := []string{
		fmt.Sprintf(`events = flood(query_bucket(%s));`, Lit(b.Window)),
		fmt.Sprintf(`not_afk = flood(query_bucket(%s));`, Lit(b.AFK)),
		`not_afk = filter_keyvals(not_afk, "status", ["not-afk"]);`,
		`browser_events = [];`,
	}
	for _, br := range browsers {
		bucket := ""
		for _, id := range b.Web { // the first bucket whose id holds the browser's name
			if strings.Contains(id, br.name) {
				bucket = id
				break
			}
		}
		if bucket == "" {
			continue
		}
		n := br.name
		apps, _ := Marshal(br.apps)
		q = append(q,
			fmt.Sprintf(`events_%s = flood(query_bucket(%s));`, n, Lit(bucket)),
			fmt.Sprintf(`window_%s = filter_keyvals(events, "app", %s);`, n, apps),
			fmt.Sprintf(`window_%s_re = filter_keyvals_regex(events, "app", %s);`, n, Lit(br.pattern)),
			fmt.Sprintf(`window_%s = sort_by_timestamp(concat(window_%s, window_%s_re));`, n, n, n),
			fmt.Sprintf(`events_%s = filter_period_intersect(events_%s, window_%s);`, n, n, n),
			fmt.Sprintf(`events_%s = split_url_events(events_%s);`, n, n),
			fmt.Sprintf(`browser_events = concat(browser_events, events_%s);`, n),
			`browser_events = sort_by_timestamp(browser_events);`)
	}
	return append(q,
		`audible_events = filter_keyvals(browser_events, "audible", [true]);`,
		`not_afk = period_union(not_afk, audible_events);`,
		`events = filter_period_intersect(events, not_afk);`,
		`events = categorize(events, `+string(classes)+`);`)
}

// summaryQuery is fullDesktopQuery's totals of events, not_afk and
// browser_events, with the AFK time afk computes into afk_events.
func summaryQuery(afk ...string) []string {
	q := []string{
		`title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));`,
		`app_events = sort_by_duration(merge_events_by_keys(title_events, ["app"]));`,
		`cat_events = sort_by_duration(merge_events_by_keys(events, ["$category"]));`,
		`duration = sum_durations(events);`,
		`browser_events = split_url_events(browser_events);`,
		`browser_domains = sort_by_duration(merge_events_by_keys(browser_events, ["$domain"]));`,
		`browser_duration = sum_durations(browser_events);`,
		`not_afk_duration = sum_durations(not_afk);`,
	}
	q = append(q, afk...)
	return append(q,
		`afk_duration = sum_durations(afk_events);`,
		`RETURN = {"window": {"app_events": app_events, "title_events": title_events, "cat_events": cat_events, `+
			`"duration": duration, "not_afk_duration": not_afk_duration, "afk_duration": afk_duration}, `+
			`"browser": {"domains": browser_domains, "duration": browser_duration}};`)
}

// Lit is a string literal of the query language.
func Lit(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Marshal is JSON without HTML escapes (<, >, & as they are: the query
// language reads strings, not HTML).
func Marshal(v any) ([]byte, error) { return jsonw.Marshal(v) }
