package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/health"
	"github.com/awbridge/awbridge/internal/artifactstest"
	"github.com/awbridge/awbridge/internal/awfixture"
	"github.com/awbridge/awbridge/toolbus"
)

// downTransport fails every request at once: ActivityWatch is down, with no
// network I/O (which a synctest bubble cannot wait for).
type downTransport struct{}

func (downTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

// pruneEngine is an engine with the default artifact limits on root, no
// state file and ActivityWatch down.
func pruneEngine(t *testing.T, root string) *Engine {
	t.Helper()
	c := config.Defaults()
	c.Paths.ContextRoot = root
	c.Paths.StateDir = ""
	e, err := New(Deps{Config: c, Logger: zerolog.Nop(), Version: "test", Transport: downTransport{}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Every engine prunes the artifacts when it starts (the pass New starts)
// and serve's loop (Engine.Run) then every PruneEvery: a run older than
// artifacts.max_age planted while it runs is gone at the first check
// (every pruneCheckEvery) once the stamp of the last pass is PruneEvery
// old, not before; a run written now stays.
func TestRunPrunesArtifactsPeriodically(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		now := time.Now() // the bubble's clock
		artifactstest.PlantRun(t, root, "old-at-start", 4, now.Add(-8*24*time.Hour))
		artifactstest.PlantRun(t, root, "young", 4, now.Add(-time.Hour))

		e := pruneEngine(t, root)
		defer e.Close()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()

		time.Sleep(pruneStartDelay) // the bubble's clock: no real wait
		synctest.Wait()             // New's pass is done; Run waits for its tick
		if got := artifactstest.Runs(t, root); !slices.Equal(got, []string{"young"}) {
			t.Fatalf("runs after start %v, want the old one pruned", got)
		}

		artifactstest.PlantRun(t, root, "old-later", 4, time.Now().Add(-8*24*time.Hour))
		time.Sleep(PruneEvery - time.Second) // a check, the stamp not yet PruneEvery old
		synctest.Wait()
		if got := artifactstest.Runs(t, root); !slices.Equal(got, []string{"old-later", "young"}) {
			t.Fatalf("runs before the tick %v, want the new old run still there", got)
		}
		time.Sleep(pruneCheckEvery) // the next check
		synctest.Wait()
		if got := artifactstest.Runs(t, root); !slices.Equal(got, []string{"young"}) {
			t.Fatalf("runs after the tick %v, want the old run pruned", got)
		}

		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// The pass New starts leaves the process to its first answers: it begins
// pruneStartDelay later, or when Close comes first, which waits for it
// (a short-lived terminal command prunes as it exits).
func TestPrunePassBeginsAfterItsDelayOrAtClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		artifactstest.PlantRun(t, root, "old", 4, time.Now().Add(-8*24*time.Hour))
		e := pruneEngine(t, root)
		time.Sleep(pruneStartDelay - time.Millisecond)
		synctest.Wait()
		if got := artifactstest.Runs(t, root); !slices.Equal(got, []string{"old"}) {
			t.Fatalf("runs %v before the delay, want the pass not begun", got)
		}
		e.Close()
		if got := artifactstest.Runs(t, root); len(got) != 0 {
			t.Fatalf("runs %v after Close, want the pass done", got)
		}
	})
}

// preflight finds the check named name, failing the test without it.
func preflight(t *testing.T, checks []health.Check, name string) health.Check {
	t.Helper()
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in %+v", name, checks)
	return health.Check{}
}

// filesEngine is an engine over the recorded aw-server with root and
// stateDir as its folders, logging into a buffer.
func filesEngine(t *testing.T, root, stateDir string) (*Engine, *bytes.Buffer) {
	t.Helper()
	xs, err := awfixture.Load()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(awfixture.NewServer(xs))
	t.Cleanup(srv.Close)
	c := config.Defaults()
	c.AW.URL = srv.URL
	c.Paths.ContextRoot, c.Paths.StateDir = root, stateDir
	var log bytes.Buffer
	now := awfixture.T.Add(time.Second)
	e, err := New(Deps{Config: c, Logger: zerolog.New(&log), Version: "test", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, &log
}

// A context root or artifacts folder another user could change is refused
// with one plain health line saying what to do, health is degraded, and
// calls go on without artifacts: it is never used silently.
func TestArtifactRootOthersCanChangeIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	tests := []struct {
		name     string
		rootMode os.FileMode
		artMode  os.FileMode // 0: no artifacts folder
		chown    string      // "root" or "artifacts": owned by uid 65534 (as root only)
		refused  string      // "root" or "artifacts"
		why      string
	}{
		{name: "root 0777", rootMode: 0o777, refused: "root", why: "is writable by others (chmod 700 it)"},
		{name: "root 0770", rootMode: 0o770, refused: "root", why: "is writable by its group (chmod 700 it)"},
		{name: "artifacts 0777", rootMode: 0o700, artMode: 0o777, refused: "artifacts", why: "is writable by others (chmod 700 it)"},
		{name: "artifacts 0770", rootMode: 0o755, artMode: 0o770, refused: "artifacts", why: "is writable by its group (chmod 700 it)"},
		{name: "root of another user", rootMode: 0o755, chown: "root", refused: "root",
			why: "belongs to another user (uid 65534) (use a folder of your own, or chown it to yourself)"},
		{name: "artifacts of another user", rootMode: 0o700, artMode: 0o700, chown: "artifacts", refused: "artifacts",
			why: "belongs to another user (uid 65534) (use a folder of your own, or chown it to yourself)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.chown != "" && os.Getuid() != 0 {
				t.Skip("chown to another user needs root")
			}
			root := filepath.Join(t.TempDir(), "ctx")
			art := filepath.Join(root, "artifacts")
			if err := os.Mkdir(root, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.artMode != 0 {
				if err := os.Mkdir(art, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(art, tt.artMode); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(root, tt.rootMode); err != nil {
				t.Fatal(err)
			}
			refused := root
			if tt.refused == "artifacts" {
				refused = art
			}
			if tt.chown != "" {
				if err := os.Chown(refused, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			e, log := filesEngine(t, root, "")
			want := "refused: " + refused + " " + tt.why
			h := e.health.Report(t.Context())
			if c := preflight(t, h.Preflight, "artifact_root"); c.OK || c.Detail != want {
				t.Errorf("artifact_root check %+v, want failing with %q", c, want)
			}
			if h.PreflightOK || h.Status != "degraded" {
				t.Errorf("health %s, preflight_ok %v; want degraded", h.Status, h.PreflightOK)
			}
			out := e.Call(t.Context(), toolbus.Request{Name: "nowframe_build",
				Args: json.RawMessage(`{"trace_id":"t1","span_id":"s1"}`)})
			if out.Err != nil || !bytes.Contains(out.Body, []byte(`"artifact_uri_json":null`)) {
				t.Errorf("call with a refused root: %v %s", out.Err, out.Body)
			}
			if _, err := os.Lstat(filepath.Join(art, "runs")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("something was written below the refused root: %v", err)
			}
			if n := strings.Count(log.String(), `"level":"warn"`); n != 1 || !strings.Contains(log.String(), `"message":"artifacts are off: `+want+`"`) {
				t.Errorf("log, want one warning %q:\n%s", "artifacts are off: "+want, log)
			}
		})
	}
}

// A symbolic link planted at the state file's path is refused: its target
// is neither read nor chmodded, persistent state is off with one warning,
// and health says so in one line.
func TestStateFileLinkIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	stateDir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "notes.json")
	doc := []byte(`{"version":1,"entries":{"planted":{"value":"read through the link"}}}`)
	if err := os.WriteFile(target, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(stateDir, "state.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	e, log := filesEngine(t, "", stateDir)

	want := "refused: " + link + " is a symbolic link; persistent state is off (remove it and restart)"
	h := e.health.Report(t.Context())
	if c := preflight(t, h.Preflight, "state_file"); c.OK || c.Detail != want {
		t.Errorf("state_file check %+v, want failing with %q", c, want)
	}
	if h.Status != "degraded" {
		t.Errorf("health %s, want degraded", h.Status)
	}
	out := e.Call(t.Context(), toolbus.Request{Name: "state", Args: json.RawMessage(`{"action":"get","key":"planted"}`)})
	var te *toolbus.ToolError
	if !errors.As(out.Err, &te) || te.Code != toolbus.CodeNotFound || bytes.Contains(out.Body, []byte("read through the link")) {
		t.Errorf("get of the planted key: %v %s; want not found", out.Err, out.Body)
	}
	fi, err := os.Stat(target)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the link's target was chmodded: %v %v", fi, err)
	}
	if got, err := os.ReadFile(target); err != nil || !bytes.Equal(got, doc) {
		t.Errorf("the link's target changed: %q %v", got, err)
	}
	if n := strings.Count(log.String(), `"level":"warn"`); n != 1 || !strings.Contains(log.String(), "is a symbolic link") {
		t.Errorf("log, want one warning about the link:\n%s", log)
	}
}
