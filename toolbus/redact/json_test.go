package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

func encode(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return string(b)
}

// canon re-encodes a JSON document with sorted keys.
func canon(t testing.TB, raw []byte) string { return encode(t, decode(t, string(raw))) }

func TestJSONRedacts(t *testing.T) {
	r := New(Options{})
	tests := []struct {
		name     string
		in, want string
		redacted []string
	}{
		{"clean", `{"app":"Code","title":"rest.go - aw-bridge","tab_count":3}`, `{"app":"Code","tab_count":3,"title":"rest.go - aw-bridge"}`, nil},
		{"top-level keys", `{"token":"abc","password":123,"secret":{"a":[1,2]},"apiKey":null,"ok":true}`,
			`{"apiKey":null,"ok":true,"password":"[REDACTED]","secret":"[REDACTED]","token":"[REDACTED]"}`,
			[]string{"result.password", "result.secret", "result.token"}},
		// A sensitive key's true, false or null carries no secret (a
		// number may: a numeric password or PIN).
		{"sensitive keys keep true, false and null", `{"token":true,"has_secret":false,"api_key":null,"pin_password":1234,"tokens":[true]}`,
			`{"api_key":null,"has_secret":false,"pin_password":"[REDACTED]","token":true,"tokens":"[REDACTED]"}`,
			[]string{"result.pin_password", "result.tokens"}},
		{"deep and in arrays", `{"rows":[{"headers":{"authorization":"Basic x","accept":"*/*"}},{"headers":{}},{"headers":{"Authorization":"y"}}]}`,
			`{"rows":[{"headers":{"accept":"*/*","authorization":"[REDACTED]"}},{"headers":{}},{"headers":{"Authorization":"[REDACTED]"}}]}`,
			[]string{"result.rows[0].headers.authorization", "result.rows[2].headers.Authorization"}},
		{"inline secret in a value", `{"events":[{"data":{"title":"login password=hunter2 - Chrome"}}]}`,
			`{"events":[{"data":{"title":"login password=[REDACTED] - Chrome"}}]}`,
			[]string{"result.events[0].data.title"}},
		{"odd keys are quoted", `{"x.y":{"private-key":"k"},"a b":["` + ghpKey + `"]}`,
			`{"a b":["ghp_…[REDACTED]"],"x.y":{"private-key":"[REDACTED]"}}`,
			[]string{`result["a b"][0]`, `result["x.y"]["private-key"]`}},
		{"a key holding a secret", `{"` + awsKey + `":1}`, `{"AKIA…[REDACTED]":1}`, []string{`result["AKIA…[REDACTED]"]`}},
		{"already redacted", `{"token":"[REDACTED]"}`, `{"token":"[REDACTED]"}`, nil},
		{"top-level string", `"Bearer abcdef123456"`, `"Bearer [REDACTED]"`, []string{"result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jout, jrep, err := r.JSON("result", []byte(tt.in), nil) // paths in document order
			if err != nil {
				t.Fatal(err)
			}
			if got := canon(t, jout); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if got := slices.Sorted(slices.Values(jrep.Redacted)); !slices.Equal(got, tt.redacted) || jrep.RedactedTotal != len(tt.redacted) {
				t.Errorf("redacted %q (total %d), want %q", got, jrep.RedactedTotal, tt.redacted)
			}
			if tt.redacted == nil && (&jout[0] != &[]byte(tt.in)[0] && string(jout) != tt.in) {
				t.Errorf("JSON changed a clean document: %s", jout)
			}
		})
	}
}

func TestJSONRoots(t *testing.T) {
	r := New(Options{})
	_, rep, _ := r.JSON("", []byte(`{"a":{"token":1},"b":[{"secret":2}]}`), nil)
	if want := []string{"a.token", "b[0].secret"}; !slices.Equal(rep.Redacted, want) {
		t.Errorf("paths %q, want %q", rep.Redacted, want)
	}
	_, rep, _ = r.JSON("", []byte(`"password=x"`), nil)
	if want := []string{""}; !slices.Equal(rep.Redacted, want) {
		t.Errorf("root path %q, want %q", rep.Redacted, want)
	}
}

// TestBounding plants a secret inside a 1 MiB string: the bounded object
// and what spill receives are both redacted, and the sha256 is that of
// the redacted full text.
func TestBounding(t *testing.T) {
	r := New(Options{})
	// Multi-byte runes so that preview and tail cuts must respect UTF-8.
	filler := strings.Repeat("día ☃ ", 1<<20/len("día ☃ ")/2)
	big := filler + " token=" + skKey + " " + ghpKey + " " + filler
	var spilled []string
	spill := func(path, full string) string {
		spilled = append(spilled, path, full)
		return "artifact://runs/t/tool_calls/s/spill-1.txt"
	}
	raw, _ := json.Marshal(map[string]any{"log": big, "n": 1})
	out, rep, err := r.JSON("result", raw, spill)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(out) || len(out) > 4096 {
		t.Fatalf("output %d bytes, valid %v", len(out), json.Valid(out))
	}
	obj := decode(t, string(out)).(map[string]any)["log"].(map[string]any)
	if !slices.Equal(rep.Bounded, []string{"result.log"}) || !slices.Equal(rep.Redacted, []string{"result.log"}) {
		t.Errorf("report %+v", rep)
	}
	if len(spilled) != 2 || spilled[0] != "result.log" {
		t.Fatalf("spill calls %d", len(spilled)/2)
	}
	full := spilled[1]
	for _, secret := range []string{skKey, ghpKey} {
		if strings.Contains(full, secret) {
			t.Errorf("spill received the secret %.10s…", secret)
		}
	}
	if !strings.Contains(full, "token=[REDACTED] ghp_…[REDACTED]") {
		t.Error("spill did not receive the masked text")
	}
	sum := sha256.Sum256([]byte(full))
	if obj["sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 %v is not that of the redacted text", obj["sha256"])
	}
	if obj["truncated"] != true || obj["bytes"] != json.Number(itoa(len(full))) || obj["artifact"] != "artifact://runs/t/tool_calls/s/spill-1.txt" {
		t.Errorf("summary %v %v %v", obj["truncated"], obj["bytes"], obj["artifact"])
	}
	p, tl := obj["preview"].(string), obj["tail"].(string)
	if len(p) > previewBytes || len(p) < previewBytes-3 || !strings.HasPrefix(full, p) || !utf8.ValidString(p) {
		t.Errorf("preview %d bytes", len(p))
	}
	if len(tl) > tailBytes || len(tl) < tailBytes-3 || !strings.HasSuffix(full, tl) || !utf8.ValidString(tl) {
		t.Errorf("tail %d bytes", len(tl))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestBoundingWithoutSpill(t *testing.T) {
	r := New(Options{MaxString: 10})
	out, rep, err := r.JSON("", []byte(`["short","0123456789abc"]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `["short",{"truncated":true,"bytes":13,"sha256":"` + sha("0123456789abc") + `","preview":"01234","tail":"bc","artifact":null}]`
	if string(out) != want || !slices.Equal(rep.Bounded, []string{"[1]"}) {
		t.Errorf("got %s %+v", out, rep)
	}
	// A spill that wrote nothing also gives a null artifact.
	if out, _, _ := r.JSON("", []byte(`"0123456789abc"`), func(string, string) string { return "" }); !strings.Contains(string(out), `"preview":"01234"`) || !strings.HasSuffix(string(out), `"artifact":null}`) {
		t.Errorf("got %s", out)
	}
	// Exactly MaxString is not bounded.
	if out, rep, _ := r.JSON("", []byte(`"0123456789"`), nil); string(out) != `"0123456789"` || rep.Changed() {
		t.Errorf("got %s", out)
	}
}

func sha(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

func TestLimits(t *testing.T) {
	r := New(Options{})
	nest := func(n int) string { return strings.Repeat("[", n) + "1" + strings.Repeat("]", n) }
	items := func(n int) string { return "[1" + strings.Repeat(",1", n-1) + "]" }
	deepAt := strings.Repeat("[0]", MaxDepth-1)
	tests := []struct {
		name, in, limit, path string
	}{
		{"depth", `{"a":` + nest(MaxDepth) + `}`, "depth", "a" + deepAt},
		{"depth in a redacted value", `{"token":` + nest(MaxDepth) + `}`, "depth", "token" + deepAt},
		{"items", items(MaxItems), "items", "[99999]"},
		{"items in a redacted value", `{"a":1,"secret":` + items(MaxItems) + `}`, "items", "secret[99997]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := r.JSON("", []byte(tt.in), nil)
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *LimitError", err)
			}
			if le.Limit != tt.limit || le.Path != tt.path {
				t.Errorf("%+v, want %s at %s", le, tt.limit, tt.path)
			}
		})
	}
	// At the limits exactly: fine.
	if _, _, err := r.JSON("", []byte(nest(MaxDepth)), nil); err != nil {
		t.Errorf("at the depth limit: %v", err)
	}
	if _, _, err := r.JSON("", []byte(items(MaxItems-1)), nil); err != nil {
		t.Errorf("at the items limit: %v", err)
	}
	// The depth limit stops a deeply nested document before the stack
	// does.
	var le *LimitError
	if _, _, err := r.JSON("", []byte(nest(100000)), nil); !errors.As(err, &le) || le.Max != MaxDepth {
		t.Errorf("deep: %v", err)
	}
}

func TestMaxPaths(t *testing.T) {
	r := New(Options{})
	_, rep, err := r.JSON("", []byte("["+strings.Repeat(`{"token":1},`, maxPaths)+`{"token":2}]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Redacted) != maxPaths || rep.RedactedTotal != maxPaths+1 {
		t.Errorf("%+v", rep)
	}
}

func TestPathKeysAreBoundedAndMasked(t *testing.T) {
	r := New(Options{})
	long := strings.Repeat("averyveryverylongkey", 4)
	_, rep, err := r.JSON("r", []byte(`{"`+long+`":{"token":1},"`+strings.Repeat("é\u00e9", 20)+`":{"secret":2}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`r["` + long[:61] + `…"].token`, `r["` + strings.Repeat("é", 30) + `…"].secret`}
	if !slices.Equal(rep.Redacted, want) {
		t.Errorf("paths %q, want %q", rep.Redacted, want)
	}
}

func TestJSON(t *testing.T) {
	r := New(Options{})
	tests := []struct{ name, in, want string }{
		{"order and bytes are kept", "{\"z\":1, \"token\" : {\"a\":[1,2]} ,\n \"a\":\"\\u00e9\\n\",\"n\":-1.5e+3}", "{\"z\":1, \"token\" : \"[REDACTED]\" ,\n \"a\":\"\\u00e9\\n\",\"n\":-1.5e+3}"},
		{"masked string is re-encoded", `{"t":"a <b> password=x \u0026"}`, `{"t":"a <b> password=[REDACTED] &"}`},
		{"escaped secret is found", `{"t":"\u0073k-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF"}`, `{"t":"sk-…[REDACTED]"}`},
		{"escaped key is found", `{"pass\u0077ord":"x"}`, `{"pass\u0077ord":"[REDACTED]"}`},
		{"invalid UTF-8 is replaced", "[\"a\xffb\"]", "[\"a\uFFFDb\"]"},
		{"whitespace around", " \n[ ] \t", " \n[ ] \t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := r.JSON("", []byte(tt.in), nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("got  %s\nwant %s", out, tt.want)
			}
		})
	}
}

func TestJSONCleanReturnsInput(t *testing.T) {
	r := New(Options{})
	raw := loadClean(t)
	out, rep, err := r.JSON("result", raw, nil)
	if err != nil || rep.Changed() || &out[0] != &raw[0] || len(out) != len(raw) {
		t.Fatalf("err %v, report %+v, same %v", err, rep, &out[0] == &raw[0])
	}
	allocs := testing.AllocsPerRun(20, func() { r.JSON("result", raw, nil) })
	if allocs != 0 {
		t.Errorf("JSON of a clean document allocates %v times", allocs)
	}
}

func TestJSONSyntaxErrors(t *testing.T) {
	r := New(Options{})
	for _, in := range []string{
		``, ` `, `{`, `[1,]`, `{"a" 1}`, `{"a":1,}`, `{a:1}`, `"abc`, `"a` + "\x01" + `"`, `"\x"`, `"\u12g4"`,
		`01`, `1.`, `-`, `1e`, `tru`, `nul`, `[1 2]`, `{} {}`, `{"a":1}x`, `[`, `"\`,
	} {
		out, rep, err := r.JSON("", []byte(in), nil)
		var se *SyntaxError
		if !errors.As(err, &se) || out != nil || rep.Changed() {
			t.Errorf("JSON(%q) = %q, %v", in, out, err)
		}
		if json.Valid([]byte(in)) {
			t.Errorf("%q is valid JSON after all", in)
		}
	}
}

func TestGolden(t *testing.T) {
	r := New(Options{MaxString: 80})
	in, err := readFile("testdata/dirty.json")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	spill := func(path, full string) string {
		b.WriteString("spill " + path + " " + sha(full) + "\n")
		return "artifact://spill/" + path
	}
	out, rep, err := r.JSON("result", in, spill)
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("== JSON\n")
	b.Write(out)
	b.WriteString("\n== report\n")
	for _, p := range rep.Redacted {
		b.WriteString("redacted " + p + "\n")
	}
	for _, p := range rep.Bounded {
		b.WriteString("bounded " + p + "\n")
	}
	golden(t, "testdata/dirty.golden", b.Bytes())
	if !json.Valid(out) {
		t.Error("output is not valid JSON")
	}
}

// TestConcurrentUse runs every entry point from several goroutines; run
// with -race it shows the Redactor keeps no mutable state.
func TestConcurrentUse(t *testing.T) {
	r := New(Options{MaxString: 64})
	raw, err := readFile("testdata/dirty.json")
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := r.JSON("", raw, nil)
	done := make(chan string)
	for range 4 {
		go func() {
			for range 20 {
				out, _, err := r.JSON("", raw, nil)
				if err != nil || !bytes.Equal(out, want) {
					done <- "JSON differs"
					return
				}
				if s, _ := r.Text("password=x " + ghpKey); s != "password=[REDACTED] ghp_…[REDACTED]" {
					done <- "Text differs: " + s
					return
				}
			}
			done <- ""
		}()
	}
	for range 4 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}
