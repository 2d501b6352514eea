package state

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awbridge/awbridge/internal/owner"
)

// helperEnv switches the test binary into a helper process that opens the
// store in AWBRIDGE_STATE_HELPER_DIR and runs the action the variable
// names (see TestStateHelperProcess).
const helperEnv = "AWBRIDGE_STATE_HELPER"

// TestStateHelperProcess is not a test: it is the other process of the
// tests below, the test binary run again with helperEnv set.
//
//	set:    print "ready", wait for a line on stdin, then set N keys
//	        PREFIX<i> (value i) from W goroutines, printing "confirmed
//	        <key>" once each Set returned nil
//	setone: set PREFIX to "from another process" and exit
func TestStateHelperProcess(t *testing.T) {
	action := os.Getenv(helperEnv)
	if action == "" {
		t.Skip("helper process for the multi-process tests")
	}
	s, _, err := Open(Options{Dir: os.Getenv(helperEnv + "_DIR")})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	prefix := os.Getenv(helperEnv + "_PREFIX")
	switch action {
	case "setone":
		if _, err := s.Set(prefix, json.RawMessage(`"from another process"`), ScopePersistent); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
	case "set":
		n, _ := strconv.Atoi(os.Getenv(helperEnv + "_N"))
		w, _ := strconv.Atoi(os.Getenv(helperEnv + "_W"))
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
		var (
			mu sync.Mutex
			wg sync.WaitGroup
		)
		for g := range w {
			wg.Go(func() {
				for i := g; i < n; i += w {
					key := fmt.Sprintf("%s%d", prefix, i)
					_, err := s.Set(key, json.RawMessage(strconv.Itoa(i)), ScopePersistent)
					mu.Lock()
					if err != nil {
						fmt.Println("error", err)
					} else {
						fmt.Println("confirmed", key)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	s.Close()
	os.Exit(0)
}

// helper starts the test binary as a helper process.
func helper(ctx context.Context, t *testing.T, dir, action, prefix string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStateHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+action, helperEnv+"_DIR="+dir, helperEnv+"_PREFIX="+prefix)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stderr = os.Stderr
	return cmd
}

// Three processes share one state dir (three `awbridge stdio` without a
// service) and each sets 60 persistent keys from four goroutines at once:
// every write a process saw confirmed is in the file afterwards, with its
// value, and a store opened afterwards reads them all.
func TestProcessesWritingAtOnceLoseNothing(t *testing.T) {
	const procs, keys, workers = 3, 60, 4
	dir := stateDir(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Scanner
	}
	ps := make([]proc, procs)
	for p := range ps {
		cmd := helper(ctx, t, dir, "set", fmt.Sprintf("p%d/", p), fmt.Sprintf("%s_N=%d", helperEnv, keys), fmt.Sprintf("%s_W=%d", helperEnv, workers))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ps[p] = proc{cmd, stdin, bufio.NewScanner(stdout)}
	}
	// Every process has opened the store (and loaded the empty file)
	// before any writes: the start that lost writes.
	for p, pr := range ps {
		if !pr.out.Scan() || pr.out.Text() != "ready" {
			t.Fatalf("process %d did not start: %q %v", p, pr.out.Text(), pr.out.Err())
		}
	}
	for _, pr := range ps {
		io.WriteString(pr.stdin, "go\n")
	}
	confirmed := map[string]string{}
	for p, pr := range ps {
		for pr.out.Scan() {
			line := pr.out.Text()
			switch {
			case strings.HasPrefix(line, "confirmed "):
				key := strings.TrimPrefix(line, "confirmed ")
				i := key[strings.IndexByte(key, '/')+1:]
				confirmed[key] = i
			case strings.HasPrefix(line, "error "):
				t.Errorf("process %d: %s", p, line)
			}
		}
		if err := pr.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", p, err)
		}
	}
	if len(confirmed) != procs*keys {
		t.Errorf("%d writes confirmed, want %d", len(confirmed), procs*keys)
	}
	file := dumpFile(t, dir)
	lost := 0
	for k, v := range confirmed {
		if file[k] != v {
			lost++
		}
	}
	if lost > 0 || len(file) != len(confirmed) {
		t.Fatalf("state.json holds %d entries; %d of the %d confirmed writes are lost", len(file), lost, len(confirmed))
	}
	if owner.Checked {
		for p, want := range map[string]fs.FileMode{dir: 0o700, filepath.Join(dir, FileName): 0o600, filepath.Join(dir, lockName): 0o600} {
			if m := mode(t, p); m != want {
				t.Errorf("%s mode %04o, want %04o", p, m, want)
			}
		}
	}
	s := open(t, Options{Dir: dir})
	if got := dumpStore(t, s); !sameEntries(got, confirmed) {
		t.Fatalf("a store opened afterwards reads %d entries, want the %d confirmed", len(got), len(confirmed))
	}
}

// A store opened before another process writes reads that write at once:
// Get, List and Dump see it, and the next write of this store keeps it.
func TestOtherProcessWriteVisible(t *testing.T) {
	s, dir := persistentStore(t, Options{})
	if _, err := s.Set("mine", json.RawMessage(`1`), ScopePersistent); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, _ := s.Get("theirs", ScopeAny); ok {
		t.Fatal("theirs exists before the other process ran")
	}
	if out, err := helper(t.Context(), t, dir, "setone", "theirs").Output(); err != nil {
		t.Fatalf("other process: %v %s", err, out)
	}
	for _, sc := range []Scope{ScopeAny, ScopePersistent} {
		if v, from := mustGet(t, s, "theirs", sc); v != `"from another process"` || from != ScopePersistent {
			t.Errorf("Get(theirs, %q) = %s from %s", sc, v, from)
		}
	}
	if ents, err := s.List("", ScopePersistent); err != nil || len(ents) != 2 {
		t.Errorf("List = %v, %v; want mine and theirs", ents, err)
	}
	if got := dumpStore(t, s); !sameEntries(got, map[string]string{"mine": "1", "theirs": `"from another process"`}) {
		t.Errorf("Dump = %v", got)
	}
	if _, err := s.Set("mine", json.RawMessage(`2`), ScopePersistent); err != nil {
		t.Fatal(err)
	}
	if got := dumpFile(t, dir); !sameEntries(got, map[string]string{"mine": "2", "theirs": `"from another process"`}) {
		t.Errorf("after this store's next write the file holds %v", got)
	}
	if _, err := s.Unset("theirs", ScopePersistent); err != nil {
		t.Fatal(err)
	}
	if got := dumpFile(t, dir); !sameEntries(got, map[string]string{"mine": "2"}) {
		t.Errorf("after unsetting theirs the file holds %v", got)
	}
}
