package engine_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
	"github.com/awbridge/awbridge/mcp"
)

// Session state is one store per process, shared by every connection.
func TestStateSharedAcrossConnections(t *testing.T) {
	e, err := engine.New(engine.Deps{Config: config.Defaults(), Logger: zerolog.Nop(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv := mcp.NewServer(e, mcp.Options{DirectMethods: engine.DirectMethods()})
	run := func(lines ...string) []string {
		var out bytes.Buffer
		if err := srv.Serve(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(out.String()), "\n")
	}
	run(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"state","arguments":{"action":"set","key":"k","value":{"n":1},"scope":"session"}}}`)
	got := run(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp_state","arguments":{"action":"get","key":"k"}}}`)
	if len(got) != 1 || !strings.Contains(got[0], `\"value\":{\"n\":1}`) {
		t.Fatalf("second connection read %v", got)
	}
}
