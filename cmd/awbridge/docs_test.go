package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docsPath is the contract document whose examples TestDocsExamples replays.
const docsPath = "../../docs/tool-bus.md"

// docBlock is one ```jsonl example exchange of the contract document.
type docBlock struct {
	line      int      // line of the opening fence (1-based)
	env       []string // KEY=VALUE from <!-- env: ... --> comments before the fence
	pipelined bool     // <!-- pipelined -->: send every request at once
	requests  []docLine
	replies   []docLine
}

// docLine is a "-> " or "<- " line of a block.
type docLine struct {
	line int
	text string
}

// parseDocBlocks returns the ```jsonl blocks of a markdown document. Inside
// a block only "-> " lines, "<- " lines and blank lines are allowed; the
// HTML comments `<!-- env: K=V K2=V2 -->` on the lines right before the
// fence (blank lines between are allowed) add to the block's environment,
// and `<!-- pipelined -->` there makes the client send every request at
// once instead of waiting for each reply.
func parseDocBlocks(doc string) ([]docBlock, error) {
	lines := strings.Split(doc, "\n")
	var (
		blocks  []docBlock
		cur     *docBlock
		pending []string // env of the comments seen since the last text line
		piped   bool     // a pipelined comment seen since the last text line
		inOther bool     // inside a fenced block of another language
	)
	for i, l := range lines {
		n := i + 1
		trimmed := strings.TrimSpace(l)
		switch {
		case cur != nil:
			switch {
			case trimmed == "```":
				if len(cur.requests) == 0 {
					return nil, fmt.Errorf("line %d: jsonl block without a request", cur.line)
				}
				blocks = append(blocks, *cur)
				cur = nil
			case strings.HasPrefix(l, "-> "):
				cur.requests = append(cur.requests, docLine{n, strings.TrimPrefix(l, "-> ")})
			case strings.HasPrefix(l, "<- "):
				cur.replies = append(cur.replies, docLine{n, strings.TrimPrefix(l, "<- ")})
			case trimmed == "":
			default:
				return nil, fmt.Errorf("line %d: a jsonl block holds only \"-> \" and \"<- \" lines, got %q", n, clipLine(l, 80))
			}
		case inOther:
			if strings.HasPrefix(trimmed, "```") {
				inOther = false
			}
		case trimmed == "```jsonl":
			cur = &docBlock{line: n, env: pending, pipelined: piped}
			pending, piped = nil, false
		case strings.HasPrefix(trimmed, "```"):
			inOther, pending, piped = true, nil, false
		case trimmed == "<!-- pipelined -->":
			piped = true
		case strings.HasPrefix(trimmed, "<!-- env:"):
			if !strings.HasSuffix(trimmed, "-->") {
				return nil, fmt.Errorf("line %d: an env comment must end on its line with -->", n)
			}
			body := strings.TrimSuffix(strings.TrimPrefix(trimmed, "<!-- env:"), "-->")
			for _, kv := range strings.Fields(body) {
				if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
					return nil, fmt.Errorf("line %d: env entry %q is not KEY=VALUE", n, kv)
				}
				pending = append(pending, kv)
			}
		case trimmed == "":
		default:
			pending, piped = nil, false
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: jsonl block is never closed", cur.line)
	}
	return blocks, nil
}

// decodeJSON decodes one JSON value, numbers as json.Number.
func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// The placeholders an expected reply may use where the actual value varies
// from run to run, or to say that a key is left out.
const (
	markAbsent = "<absent>" // the key must not be in the reply
	markAny    = "<any>"    // the key must be there, with any value
	markNumber = "<number>" // any number
	markString = "<string>" // any string
)

// subset reports where want is not a subset of got ("" when it is): every
// key of a wanted object must be in the actual object with a matching
// value, a wanted array's elements must match the actual array's first
// elements one by one (an empty wanted array matches only an empty one),
// and scalars must be equal (numbers by value), except for the
// placeholders above. A wanted object under the key "text" is matched
// against the actual string decoded as JSON (the envelope's text content).
func subset(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %s", path, brief(got))
		}
		for k, wv := range w {
			gv, ok := g[k]
			if wv == markAbsent {
				if ok {
					return fmt.Sprintf("%s.%s: want it left out, got %s", path, k, brief(gv))
				}
				continue
			}
			if !ok {
				return fmt.Sprintf("%s.%s: missing in the reply", path, k)
			}
			if s, isStr := gv.(string); isStr && k == "text" {
				if _, wantObj := wv.(map[string]any); wantObj {
					inner, err := decodeJSON(s)
					if err != nil {
						return fmt.Sprintf("%s.%s: not JSON: %v", path, k, err)
					}
					gv = inner
				}
			}
			if msg := subset(path+"."+k, wv, gv); msg != "" {
				return msg
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s: want an array, got %s", path, brief(got))
		}
		if len(w) > len(g) || (len(w) == 0 && len(g) > 0) {
			return fmt.Sprintf("%s: want %s, got %d elements", path, brief(w), len(g))
		}
		for i := range w {
			if msg := subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); msg != "" {
				return msg
			}
		}
		return ""
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: want %s, got %s", path, w, brief(got))
		}
		wf, err1 := w.Float64()
		gf, err2 := g.Float64()
		if err1 != nil || err2 != nil || wf != gf {
			return fmt.Sprintf("%s: want %s, got %s", path, w, g)
		}
		return ""
	case string:
		var ok bool
		switch w {
		case markAny:
			return ""
		case markNumber:
			_, ok = got.(json.Number)
		case markString:
			_, ok = got.(string)
		case markAbsent:
			return fmt.Sprintf("%s: %s is only allowed as the value of a key", path, markAbsent)
		default:
			ok = got == want
		}
		if !ok {
			return fmt.Sprintf("%s: want %s, got %s", path, brief(want), brief(got))
		}
		return ""
	default: // bool, nil
		if want != got {
			return fmt.Sprintf("%s: want %s, got %s", path, brief(want), brief(got))
		}
		return ""
	}
}

func brief(v any) string {
	b, _ := json.Marshal(v)
	return clipLine(string(b), 80)
}

// requestID returns the raw id of a request line that expects a reply, and
// whether it does: a batch (an array) expects one reply line, with id "".
func requestID(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "[") {
		return "", true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(t), &m) != nil {
		return "", true // a line that is not JSON still gets a -32700 reply
	}
	id, ok := m["id"]
	if !ok {
		return "", false // a notification
	}
	return string(id), true
}

// TestDocsExamples replays every ```jsonl example of docs/tool-bus.md
// against the binary, one stdio session per block, so the contract
// document cannot drift from what awbridge does. Each "<- " line must be a
// subset (see subset) of the reply with the same id; every reply must be
// shown, and a request without id must get none.
func TestDocsExamples(t *testing.T) { replayDocExamples(t, docsPath, 10) }

// replayDocExamples replays the ```jsonl blocks of the markdown document at
// path (see TestDocsExamples); a document with fewer than minBlocks blocks
// means the parser or the document is broken.
func replayDocExamples(t *testing.T, path string, minBlocks int) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseDocBlocks(string(raw))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(blocks) < minBlocks {
		t.Fatalf("%s has %d example blocks; the parser or the document is broken", path, len(blocks))
	}
	srv, _ := recordedAW(t)
	for _, b := range blocks {
		t.Run(fmt.Sprintf("line_%d", b.line), func(t *testing.T) {
			env, root, stateDir := faultEnv(t, srv.URL)
			for _, kv := range b.env {
				if strings.Contains(kv, "<sim>") { // the simulator: any period's events
					kv = strings.ReplaceAll(kv, "<sim>", simulatedAW(t).URL)
				}
				env = append(env, kv) // exec keeps the last value of a key
			}
			// Wait for each reply before the next request (examples that
			// build on an earlier call, like store_as then state get, are
			// deterministic), unless the block is pipelined.
			p := start(t, env)
			var got []string
			for _, r := range b.requests {
				p.send(r.text)
				if _, wants := requestID(r.text); wants && !b.pipelined {
					got = append(got, p.next())
				}
			}
			stderr := p.close()
			got = append(got, p.unread...) // anything else: a reply nobody should have got
			checkModes(t, path, b.line, filepath.Join(root, "artifacts"), stateDir)
			t.Logf("%s:%d: replies:\n%s", path, b.line, strings.Join(got, "\n"))
			byID := map[string]string{}
			for _, l := range got {
				id := replyID(l)
				if _, dup := byID[id]; dup {
					t.Fatalf("%s:%d: two replies with id %s:\n%s", path, b.line, id, strings.Join(got, "\n"))
				}
				byID[id] = l
				checkEnvelopeText(t, path, b.line, l)
			}
			if len(got) != len(b.replies) {
				t.Errorf("%s:%d: the block shows %d replies, the binary sent %d:\n%s\nstderr:\n%s",
					path, b.line, len(b.replies), len(got), strings.Join(got, "\n"), stderr)
			}
			for _, want := range b.replies {
				w, err := decodeJSON(want.text)
				if err != nil {
					t.Fatalf("%s:%d: the expected reply is not JSON: %v", path, want.line, err)
				}
				id := "null"
				if _, batch := w.([]any); batch {
					id = ""
				}
				if m, ok := w.(map[string]any); ok {
					if v, ok := m["id"]; ok {
						id = brief(v)
					}
				}
				actual, ok := byID[id]
				if !ok {
					t.Errorf("%s:%d (block at line %d): no reply with id %s; replies:\n%s", path, want.line, b.line, id, strings.Join(got, "\n"))
					continue
				}
				g, err := decodeJSON(actual)
				if err != nil {
					t.Errorf("%s:%d: reply is not JSON: %v: %s", path, want.line, err, actual)
					continue
				}
				if msg := subset("$", w, g); msg != "" {
					t.Errorf("%s:%d (block at line %d): the binary does not do what the document shows: %s\nactual reply:\n%s",
						path, want.line, b.line, msg, actual)
				}
			}
		})
	}
}

// checkModes checks the document's claim that artifacts and the state file
// are 0600 in 0700 folders.
func checkModes(t *testing.T, doc string, line int, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			}
			if info.Mode().Perm() != want {
				t.Errorf("%s:%d: %s has mode %v, want %v", doc, line, path, info.Mode().Perm(), want)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s:%d: walking %s: %v", doc, line, dir, err)
		}
	}
}

// checkEnvelopeText checks the document's claim that a tools/call result
// carries the envelope twice: as the text content (a JSON string) and as
// structuredContent, equal.
func checkEnvelopeText(t *testing.T, doc string, line int, reply string) {
	t.Helper()
	var r struct {
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(reply), &r) != nil || len(r.Result.Structured) == 0 {
		return
	}
	if len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text" {
		t.Errorf("%s:%d: a tool result without exactly one text content: %s", doc, line, reply)
		return
	}
	if text := canonical(r.Result.Content[0].Text); text == "" || text != canonical(string(r.Result.Structured)) {
		t.Errorf("%s:%d: text content and structuredContent differ: %s", doc, line, reply)
	}
}

// canonical is the JSON text s with sorted keys, "" when s is not JSON.
func canonical(s string) string {
	v, err := decodeJSON(s)
	if err != nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDocsSubset checks the matcher itself: a test that cannot fail is a
// defect, and so is a matcher that accepts anything.
func TestDocsSubset(t *testing.T) {
	got := `{"id":1,"result":{"a":1,"b":[1,2,3],"c":{"d":"x","e":null},"z":[],"text":"{\"k\":true,\"n\":2}"}}`
	cases := []struct {
		want string
		ok   bool
	}{
		{`{"id":1}`, true},
		{`{"id":1.0,"result":{"a":1}}`, true},
		{`{"result":{"b":[1,2]}}`, true},
		{`{"result":{"c":{"e":null}}}`, true},
		{`{"result":{"text":{"k":true}}}`, true},
		{`{"result":{"text":{"k":false}}}`, false},
		{`{"id":2}`, false},
		{`{"result":{"a":"1"}}`, false},
		{`{"result":{"b":[2]}}`, false},
		{`{"result":{"b":[1,2,3,4]}}`, false},
		{`{"result":{"c":{"f":null}}}`, false},
		{`{"result":{"c":{"d":null}}}`, false},
		{`{"result":{"b":{}}}`, false},
		{`{"result":{"z":[]}}`, true},
		{`{"result":{"b":[]}}`, false},
		{`{"result":{"f":"<absent>","c":{"f":"<absent>"}}}`, true},
		{`{"result":{"a":"<absent>"}}`, false},
		{`{"result":{"c":{"e":"<absent>"}}}`, false},
		{`{"result":{"a":"<number>","c":{"d":"<string>","e":"<any>"}}}`, true},
		{`{"result":{"a":"<string>"}}`, false},
		{`{"result":{"c":{"d":"<number>"}}}`, false},
		{`{"result":{"f":"<any>"}}`, false},
		{`{"result":{"b":["<absent>"]}}`, false},
	}
	g, err := decodeJSON(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		w, err := decodeJSON(c.want)
		if err != nil {
			t.Fatal(err)
		}
		if msg := subset("$", w, g); (msg == "") != c.ok {
			t.Errorf("subset(%s) = %q, want ok=%v", c.want, msg, c.ok)
		}
	}
}

func TestParseDocBlocks(t *testing.T) {
	doc := "# t\n\n<!-- env: A=1 B=x=y -->\n<!-- pipelined -->\n```jsonl\n-> {\"id\":1}\n\n<- {\"id\":1}\n```\n\ntext\n```json\n-> no\n```\n```jsonl\n-> {}\n```\n"
	blocks, err := parseDocBlocks(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].line != 5 || strings.Join(blocks[0].env, " ") != "A=1 B=x=y" || !blocks[0].pipelined ||
		len(blocks[0].requests) != 1 || blocks[0].replies[0].line != 8 || len(blocks[1].env) != 0 || blocks[1].pipelined {
		t.Fatalf("blocks = %+v", blocks)
	}
	for _, bad := range []string{"```jsonl\n-> {}\n", "```jsonl\n<- {}\n```\n", "```jsonl\n-> {}\nstray\n```\n", "<!-- env: NOEQ -->\n```jsonl\n-> {}\n```\n"} {
		if _, err := parseDocBlocks(bad); err == nil {
			t.Errorf("parseDocBlocks(%q) accepted it", bad)
		}
	}
}
