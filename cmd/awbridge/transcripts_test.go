package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// volatile are keys whose values change run to run; transcripts show them
// as "<volatile>".
var volatileKeys = map[string]bool{
	"duration_ms": true, "trace_id": true, "span_id": true, "timestamp": true, "latency_ms": true,
	"checked_at": true, "age_seconds": true, "frame_version": true, "ended_at": true,
	"last_seen": true, "skew_seconds": true, "summary": true, "as_of": true,
	"activitywatch_url": true, // health's settings: the test server's port
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if volatileKeys[k] && val != nil {
				x[k] = "<volatile>"
				continue
			}
			if k == "text" {
				if s, ok := val.(string); ok && strings.HasPrefix(s, "{") {
					var inner any
					if json.Unmarshal([]byte(s), &inner) == nil {
						x[k] = normalize(inner)
						continue
					}
				}
			}
			x[k] = normalize(val)
		}
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
	}
	return v
}

func normalizeLine(t *testing.T, line string) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout line is not JSON: %v: %q", err, line)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(normalize(v))
	return strings.TrimSuffix(b.String(), "\n")
}

// TestTranscripts replays testdata/transcripts/*.txt through the real
// binary: "-> " lines are sent, "<- " lines are the expected replies (in
// the order of the requests; volatile values normalised).
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	srv, _ := recordedAW(t)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var input, header []string
			for _, l := range strings.Split(string(raw), "\n") {
				switch {
				case strings.HasPrefix(l, "-> "):
					input = append(input, strings.TrimPrefix(l, "-> "))
				case strings.HasPrefix(l, "#"):
					header = append(header, l)
				}
			}
			lines, _ := session(t, baseEnv(t, srv.URL), input)
			// Ids are echoed byte for byte (normalising below would hide it).
			sent := map[string]bool{"null": true}
			for _, in := range input {
				sent[replyID(in)] = true
			}
			for _, l := range lines {
				if id := replyID(l); id != "" && !sent[id] {
					t.Fatalf("reply id %s was never sent (ids must be echoed exactly): %s", id, l)
				}
			}
			// Order replies by the request they answer; the ones that name
			// no request (id null, a batch's array) come last, in the order
			// written (the reader writes them in input order), whenever a
			// concurrent call's reply was written.
			pos := map[string]int{}
			for i, in := range input {
				if id := replyID(in); id != "" && id != "null" {
					pos[id] = i
				}
			}
			key := func(l string) int {
				if p, ok := pos[replyID(l)]; ok {
					return p
				}
				return len(input)
			}
			sort.SliceStable(lines, func(i, j int) bool { return key(lines[i]) < key(lines[j]) })
			var got strings.Builder
			for _, h := range header {
				got.WriteString(h + "\n")
			}
			for _, in := range input {
				got.WriteString("-> " + in + "\n")
			}
			for _, l := range lines {
				got.WriteString("<- " + normalizeLine(t, l) + "\n")
			}
			checkGolden(t, f, got.String())
		})
	}
}
