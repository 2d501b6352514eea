package awsim

import (
	"regexp"
	"sort"
	"strings"
)

// This file reproduces flask-restx's "did you mean" suffix on 404 errors
// raised inside API resources (Api._help_on_404): the request path is
// compared with every URL rule (its <...> parts stripped) using Python's
// difflib.get_close_matches(path, keys, n=3, cutoff=0.6).

// awRules are aw-server's URL rules in registration order: Flask's static
// route, the web UI blueprint, flask-restx's doc assets, then the API.
var awRules = []string{
	"/<path:filename>",
	"/",
	"/swaggerui/<path:filename>",
	"/api/",
	"/api/swagger.json",
	"/api/0/info",
	"/api/0/buckets/",
	"/api/0/buckets/<string:bucket_id>",
	"/api/0/buckets/<string:bucket_id>/events",
	"/api/0/buckets/<string:bucket_id>/events/count",
	"/api/0/buckets/<string:bucket_id>/events/<int:event_id>",
	"/api/0/buckets/<string:bucket_id>/heartbeat",
	"/api/0/query/",
	"/api/0/export",
	"/api/0/buckets/<string:bucket_id>/export",
	"/api/0/import",
	"/api/0/log",
	"/api/0/settings",
	"/api/0/settings/<string:key>",
}

var reRule = regexp.MustCompile(`<.*>`)

// ruleKeys maps a stripped rule to the last rule that strips to it, and
// lists the keys (order does not matter: ties sort by key).
var ruleKeys, ruleByKey = func() ([]string, map[string]string) {
	m := map[string]string{}
	var keys []string
	for _, r := range awRules {
		k := reRule.ReplaceAllString(r, "")
		if _, ok := m[k]; !ok {
			keys = append(keys, k)
		}
		m[k] = r
	}
	return keys, m
}()

// helpOn404 appends flask-restx's suggestion to a 404 message.
func helpOn404(msg, path string) string {
	matches := closeMatches(path, ruleKeys, 3, 0.6)
	if len(matches) == 0 {
		return msg
	}
	rules := make([]string, len(matches))
	for i, m := range matches {
		rules[i] = ruleByKey[m]
	}
	prefix := ""
	if msg != "" {
		prefix = strings.TrimRight(msg, ".") + ". "
	}
	return prefix + "You have requested this URI [" + path + "] but did you mean " + strings.Join(rules, " or ") + " ?"
}

// closeMatches is difflib.get_close_matches.
func closeMatches(word string, possibilities []string, n int, cutoff float64) []string {
	b := []rune(word)
	b2j := chainB(b)
	type scored struct {
		score float64
		s     string
	}
	var res []scored
	for _, x := range possibilities {
		a := []rune(x)
		// real_quick_ratio and quick_ratio are upper bounds of ratio, so
		// checking ratio alone selects the same candidates.
		if r := ratio(a, b, b2j); r >= cutoff {
			res = append(res, scored{r, x})
		}
	}
	sort.Slice(res, func(i, j int) bool {
		if res[i].score != res[j].score {
			return res[i].score > res[j].score
		}
		return res[i].s > res[j].s
	})
	var out []string
	for i := 0; i < len(res) && i < n; i++ {
		out = append(out, res[i].s)
	}
	return out
}

// chainB is SequenceMatcher.__chain_b without junk, with autojunk.
func chainB(b []rune) map[rune][]int {
	b2j := map[rune][]int{}
	for i, r := range b {
		b2j[r] = append(b2j[r], i)
	}
	if n := len(b); n >= 200 {
		ntest := n/100 + 1
		for r, idx := range b2j {
			if len(idx) > ntest {
				delete(b2j, r)
			}
		}
	}
	return b2j
}

// ratio is SequenceMatcher(None, a, b).ratio().
func ratio(a, b []rune, b2j map[rune][]int) float64 {
	if len(a)+len(b) == 0 {
		return 1
	}
	matches := 0
	type span struct{ alo, ahi, blo, bhi int }
	queue := []span{{0, len(a), 0, len(b)}}
	for len(queue) > 0 {
		q := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		i, j, k := longestMatch(a, b, b2j, q.alo, q.ahi, q.blo, q.bhi)
		if k == 0 {
			continue
		}
		matches += k
		if q.alo < i && q.blo < j {
			queue = append(queue, span{q.alo, i, q.blo, j})
		}
		if i+k < q.ahi && j+k < q.bhi {
			queue = append(queue, span{i + k, q.ahi, j + k, q.bhi})
		}
	}
	return 2 * float64(matches) / float64(len(a)+len(b))
}

// longestMatch is SequenceMatcher.find_longest_match (no junk; popular
// elements are absent from b2j and only extend a match at its ends).
func longestMatch(a, b []rune, b2j map[rune][]int, alo, ahi, blo, bhi int) (int, int, int) {
	besti, bestj, bestsize := alo, blo, 0
	j2len := map[int]int{}
	for i := alo; i < ahi; i++ {
		newj2len := map[int]int{}
		for _, j := range b2j[a[i]] {
			if j < blo {
				continue
			}
			if j >= bhi {
				break
			}
			k := j2len[j-1] + 1
			newj2len[j] = k
			if k > bestsize {
				besti, bestj, bestsize = i-k+1, j-k+1, k
			}
		}
		j2len = newj2len
	}
	for besti > alo && bestj > blo && a[besti-1] == b[bestj-1] {
		besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
	}
	for besti+bestsize < ahi && bestj+bestsize < bhi && a[besti+bestsize] == b[bestj+bestsize] {
		bestsize++
	}
	return besti, bestj, bestsize
}
