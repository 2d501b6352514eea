package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// userDocs lists the README and docs/*.md but docs/tool-bus.md (whose
// examples TestDocsExamples replays): the documents whose examples
// TestReadmeExamples replays.
func userDocs(t *testing.T) []string {
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = slices.DeleteFunc(docs, func(p string) bool { return p == docsPath })
	return append([]string{"../../README.md"}, docs...)
}

// consoleBlock is one ```console example: commands and what they print.
type consoleBlock struct {
	line int
	env  []string // KEY=VALUE from <!-- env: ... --> comments before the fence
	cmds []consoleCmd
}

// consoleCmd is one "$ awbridge ..." line and the lines shown after it.
type consoleCmd struct {
	line int
	args []string
	want []string // patterns: "…" matches any text
	exit int      // from a final "[exit N]" line; 0 when absent
}

var exitLine = regexp.MustCompile(`^\[exit (\d+)\]$`)

// parseConsoleBlocks returns the ```console blocks of a markdown document,
// and the files it names. Every command line starts with "$ awbridge"; an
// <!-- env: K=V --> comment right before the fence adds to the environment
// of every command of the block (the value "<aw>" is the recorded
// ActivityWatch's URL, "<down>" an address where nothing answers;
// K=<unset> removes K). A <!-- file: NAME --> comment right before a fenced
// block of another language names that block's text: it is written as NAME
// into the home folder every console example runs in (shown as /home/you),
// so a configuration the README shows is one the binary reads.
func parseConsoleBlocks(doc string) ([]consoleBlock, map[string]string, error) {
	var (
		blocks  []consoleBlock
		files   = map[string]string{}
		cur     *consoleBlock
		pending []string
		name    string // of the next fenced block's file
		file    *strings.Builder
		fileFor string
	)
	for i, l := range strings.Split(doc, "\n") {
		n := i + 1
		trimmed := strings.TrimSpace(l)
		switch {
		case file != nil:
			if trimmed == "```" {
				files[fileFor] = file.String()
				file = nil
				continue
			}
			file.WriteString(l + "\n")
		case strings.HasPrefix(trimmed, "```") && trimmed != "```console" && cur == nil:
			if name != "" {
				file, fileFor, name = &strings.Builder{}, name, ""
			} else {
				// Skip a block that is not an example: find its end.
				file, fileFor = &strings.Builder{}, ""
			}
			pending = nil
		case strings.HasPrefix(trimmed, "<!-- file:") && strings.HasSuffix(trimmed, "-->") && cur == nil:
			name = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(trimmed, "<!-- file:"), "-->"))
		case cur != nil:
			switch {
			case trimmed == "```":
				blocks = append(blocks, *cur)
				cur = nil
			case strings.HasPrefix(l, "$ "):
				args := strings.Fields(strings.TrimPrefix(l, "$ "))
				if len(args) == 0 || args[0] != "awbridge" {
					return nil, nil, fmt.Errorf("line %d: a console example runs awbridge, got %q", n, l)
				}
				cur.cmds = append(cur.cmds, consoleCmd{line: n, args: args[1:]})
			case len(cur.cmds) == 0:
				return nil, nil, fmt.Errorf("line %d: output before the first command", n)
			default:
				c := &cur.cmds[len(cur.cmds)-1]
				if m := exitLine.FindStringSubmatch(trimmed); m != nil {
					fmt.Sscan(m[1], &c.exit)
					continue
				}
				c.want = append(c.want, l)
			}
		case trimmed == "```console":
			cur = &consoleBlock{line: n, env: pending}
			pending = nil
		case strings.HasPrefix(trimmed, "<!-- env:") && strings.HasSuffix(trimmed, "-->"):
			pending = append(pending, strings.Fields(strings.TrimSuffix(strings.TrimPrefix(trimmed, "<!-- env:"), "-->"))...)
		case trimmed == "":
		default:
			pending, name = nil, ""
		}
	}
	if cur != nil || file != nil {
		return nil, nil, fmt.Errorf("a fenced block is never closed")
	}
	delete(files, "")
	return blocks, files, nil
}

// linePattern turns an expected output line into an anchored regexp: the
// text is literal but for "…", which matches any text.
func linePattern(want string) *regexp.Regexp {
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// matchOutput reports where the printed lines differ from the wanted
// patterns ("" when every line matches, in order, and none is left over).
func matchOutput(want, got []string) string {
	for i, w := range want {
		if i >= len(got) {
			return fmt.Sprintf("line %d: want %q, the output ended", i+1, w)
		}
		if !linePattern(w).MatchString(got[i]) {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, w, got[i])
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("line %d: not shown in the document: %q", len(want)+1, got[len(want)])
	}
	return ""
}

// TestReadmeExamples replays the examples of the README and of docs/
// against the binary: their ```jsonl exchanges (as docs/tool-bus.md's are)
// and their ```console commands, so what they show is what awbridge prints
// today. An example moved between documents is still replayed; the
// minimums catch a parser or a document that lost its examples.
func TestReadmeExamples(t *testing.T) {
	minimum := map[string]struct{ console, jsonl int }{
		"../../README.md":        {console: 2},
		"../../docs/protocol.md": {jsonl: 4},
		"../../docs/activity.md": {jsonl: 1},
		"../../docs/terminal.md": {console: 1},
		"../../docs/settings.md": {console: 1},
	}
	for _, path := range userDocs(t) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		jsonl, err := parseDocBlocks(string(raw))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		blocks, files, err := parseConsoleBlocks(string(raw))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		name := filepath.Base(path) // short: the home folders of the examples hold a socket
		want := minimum[path]
		if len(blocks) < want.console || len(jsonl) < want.jsonl {
			t.Fatalf("%s has %d console and %d jsonl examples, want at least %d and %d; the parser or the document is broken",
				name, len(blocks), len(jsonl), want.console, want.jsonl)
		}
		if len(jsonl) > 0 {
			t.Run(name, func(t *testing.T) { replayDocExamples(t, path, want.jsonl) })
		}
		if len(blocks) > 0 {
			t.Run(name, func(t *testing.T) { replayConsole(t, path, blocks, files) })
		}
	}
}

// replayConsole runs a document's console examples, each block from a
// fresh home folder holding the document's named files.
func replayConsole(t *testing.T, path string, blocks []consoleBlock, files map[string]string) {
	srv, _ := recordedAW(t)
	for _, b := range blocks {
		t.Run(fmt.Sprintf("console_%d", b.line), func(t *testing.T) {
			// As a person runs them: from their home folder (shown as
			// /home/you), with no log level set, so the commands' own
			// default applies.
			var env []string
			for _, kv := range baseEnv(t, srv.URL, "AWBRIDGE_RELAY=0", "TZ=UTC") {
				if !strings.HasPrefix(kv, "AWBRIDGE_LOG_LEVEL=") {
					env = append(env, kv)
				}
			}
			dir := ""
			for _, kv := range env {
				if h, ok := strings.CutPrefix(kv, "HOME="); ok {
					dir = h
				}
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, kv := range b.env {
				if k, ok := strings.CutSuffix(kv, "=<unset>"); ok {
					env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
					continue
				}
				kv = strings.ReplaceAll(kv, "<aw>", srv.URL)
				kv = strings.ReplaceAll(kv, "<down>", "http://127.0.0.1:9")
				env = append(env, kv)
			}
			for _, c := range b.cmds {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				cmd := exec.CommandContext(ctx, binPath, c.args...)
				cmd.Env, cmd.Dir = env, dir
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				err := cmd.Run()
				cancel()
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatalf("%s:%d: %v", path, c.line, err)
				}
				printed := strings.ReplaceAll(strings.TrimRight(out.String()+errb.String(), "\n"), dir, "/home/you")
				var got []string
				if printed != "" {
					got = strings.Split(printed, "\n")
				}
				if msg := matchOutput(c.want, got); msg != "" || code != c.exit {
					t.Errorf("%s:%d: `awbridge %s` does not print what the document shows (exit %d, want %d): %s\nprinted:\n%s",
						path, c.line, strings.Join(c.args, " "), code, c.exit, msg, printed)
				}
			}
		})
	}
}

// TestReadmeMatcher checks the console matcher itself: it must fail on a
// changed word, a missing line and an extra line.
func TestReadmeMatcher(t *testing.T) {
	cases := []struct {
		want, got []string
		ok        bool
	}{
		{[]string{"a … c"}, []string{"a b b c"}, true},
		{[]string{"a … c"}, []string{"a b b d"}, false},
		{[]string{"x (1.2)"}, []string{"x (1.2)"}, true},
		{[]string{"x (1.2)"}, []string{"x (112)"}, false},
		{[]string{"a", "b"}, []string{"a"}, false},
		{[]string{"a"}, []string{"a", "b"}, false},
		{nil, nil, true},
	}
	for _, c := range cases {
		if msg := matchOutput(c.want, c.got); (msg == "") != c.ok {
			t.Errorf("matchOutput(%q, %q) = %q, want ok=%v", c.want, c.got, msg, c.ok)
		}
	}
	blocks, files, err := parseConsoleBlocks("<!-- file: c.toml -->\n```toml\na = 1\n```\n```sh\n$ x\n```\n<!-- env: A=1 -->\n```console\n$ awbridge health\nok …\n[exit 1]\n$ awbridge version\n```\n")
	if err != nil || len(blocks) != 1 || len(blocks[0].cmds) != 2 || blocks[0].cmds[0].exit != 1 ||
		strings.Join(blocks[0].cmds[0].args, " ") != "health" || len(blocks[0].cmds[0].want) != 1 || blocks[0].env[0] != "A=1" ||
		len(files) != 1 || files["c.toml"] != "a = 1\n" {
		t.Fatalf("parseConsoleBlocks = %+v, %q, %v", blocks, files, err)
	}
	if _, _, err := parseConsoleBlocks("```console\n$ rm -rf /\n```\n"); err == nil {
		t.Error("a command other than awbridge was accepted")
	}
}

// TestReadmeLinks checks every relative link of the README and of docs/:
// the file it names exists and so does the heading its #anchor names.
func TestReadmeLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCode := regexp.MustCompile("`[^`]*`")
	for _, path := range append(userDocs(t), docsPath) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for n, l := range outsideFences(string(raw)) {
			for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(l, ""), -1) {
				target, anchor, _ := strings.Cut(m[1], "#")
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file := path
				if target != "" {
					file = filepath.Join(filepath.Dir(path), target)
				}
				doc, err := os.ReadFile(file)
				if err != nil {
					t.Errorf("%s:%d: the link %s names no file: %v", path, n+1, m[1], err)
					continue
				}
				if anchor != "" && !slices.Contains(headingAnchors(string(doc)), anchor) {
					t.Errorf("%s:%d: the link %s names no heading of %s", path, n+1, m[1], file)
				}
			}
		}
	}
}

// outsideFences returns a markdown document's lines with those of fenced
// blocks blanked.
func outsideFences(doc string) []string {
	lines := strings.Split(doc, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives a document's headings:
// lower case, punctuation dropped but for '-' and '_', spaces as '-'.
func headingAnchors(doc string) []string {
	var out []string
	for _, l := range outsideFences(doc) {
		h, ok := strings.CutPrefix(l, "#")
		if !ok {
			continue
		}
		h = strings.TrimSpace(strings.TrimLeft(h, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// TestReadmeVSCodeInstall decodes the README's one-click link for VS Code
// (a vscode:mcp/install link behind GitHub's redirect) and its
// `code --add-mcp` line: both add awbridge run as `awbridge stdio`.
func TestReadmeVSCodeInstall(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"awbridge","type":"stdio","command":"awbridge","args":["stdio"]}`
	m := regexp.MustCompile(`\(https://insiders\.vscode\.dev/redirect\?url=([^)\s]+)\)`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("the README has no VS Code install link")
	}
	link, err := url.QueryUnescape(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	config, ok := strings.CutPrefix(link, "vscode:mcp/install?")
	if config, err = url.PathUnescape(config); !ok || err != nil || config != want {
		t.Errorf("the VS Code link opens %q, installing %q (%v); want %s", link, config, err, want)
	}
	if !bytes.Contains(raw, []byte("code --add-mcp '"+want+"'")) {
		t.Errorf("the README has no `code --add-mcp '%s'`", want)
	}
}
