package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestSimRefusesNonLoopback: the simulator answers anyone who reaches it,
// so like serve --http it listens on loopback only.
func TestSimRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0"} {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, version: "test", lookup: func(string) (string, bool) { return "", false }}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // were it to listen, it would stop at once
		code := cmdSim(ctx, e, []string{"--addr", addr})
		if code != exitUsage || !strings.Contains(errb.String(), "is not on loopback") || strings.Count(errb.String(), "\n") != 1 {
			t.Fatalf("sim --addr %s: exit %d\n%s%s", addr, code, out.String(), errb.String())
		}
	}
	_, stop, err := startSim(context.Background(), "127.0.0.1:0", false)
	if err != nil {
		t.Fatalf("loopback refused: %v", err)
	}
	stop()
	if _, _, err := startSim(context.Background(), "0.0.0.0:0", false); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("startSim on 0.0.0.0: %v", err)
	}
}

func TestNowframeAgainstTheSimulator(t *testing.T) {
	// The real binary's `sim` on a free port, then `nowframe --json` at it.
	url := startSimBinary(t)
	code, out, errs := runBin(t, baseEnv(t, url, "AWBRIDGE_SIDECAR_URL="+url), "nowframe", "--json", "--reason", "sim-test")
	if code != 0 {
		t.Fatalf("nowframe at the simulator: exit %d\n%s%s", code, out, errs)
	}
	var f struct {
		Reason string `json:"reason"`
		Omni   struct {
			OK bool `json:"ok"`
		} `json:"omni_probe"`
		Now struct {
			Stale  bool `json:"stale"`
			Window struct {
				App string `json:"app"`
			} `json:"window"`
			Selection struct {
				Host string `json:"host"`
			} `json:"selection"`
		} `json:"now"`
	}
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("nowframe --json stdout is not the frame alone: %v\n%s", err, out)
	}
	if f.Reason != "sim-test" || !f.Omni.OK || f.Now.Stale || f.Now.Window.App == "" || f.Now.Selection.Host != "awsim" {
		t.Fatalf("frame from the simulator: %s", out)
	}
}
