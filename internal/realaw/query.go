package realaw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
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
	q := []string{
		fmt.Sprintf(`events = flood(query_bucket(%s));`, str(b.Window)),
		fmt.Sprintf(`not_afk = flood(query_bucket(%s));`, str(b.AFK)),
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
			fmt.Sprintf(`events_%s = flood(query_bucket(%s));`, n, str(bucket)),
			fmt.Sprintf(`window_%s = filter_keyvals(events, "app", %s);`, n, apps),
			fmt.Sprintf(`window_%s_re = filter_keyvals_regex(events, "app", %s);`, n, str(br.pattern)),
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
		`events = categorize(events, `+string(classes)+`);`,
		`title_events = sort_by_duration(merge_events_by_keys(events, ["app", "title"]));`,
		`app_events = sort_by_duration(merge_events_by_keys(title_events, ["app"]));`,
		`cat_events = sort_by_duration(merge_events_by_keys(events, ["$category"]));`,
		`duration = sum_durations(events);`,
		`browser_events = split_url_events(browser_events);`,
		`browser_domains = sort_by_duration(merge_events_by_keys(browser_events, ["$domain"]));`,
		`browser_duration = sum_durations(browser_events);`,
		`not_afk_duration = sum_durations(not_afk);`,
		fmt.Sprintf(`afk_events = flood(query_bucket(%s));`, str(b.AFK)),
		`afk_events = filter_keyvals(afk_events, "status", ["afk"]);`,
		`afk_duration = sum_durations(afk_events);`,
		`RETURN = {"window": {"app_events": app_events, "title_events": title_events, "cat_events": cat_events, `+
			`"duration": duration, "not_afk_duration": not_afk_duration, "afk_duration": afk_duration}, `+
			`"browser": {"domains": browser_domains, "duration": browser_duration}};`)
}

// str is a string literal of the query language.
func str(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Marshal is JSON without HTML escapes (<, >, & as they are: the query
// language reads strings, not HTML).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}
