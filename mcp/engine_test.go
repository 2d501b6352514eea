package mcp

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/awbridge/awbridge/config"
	"github.com/awbridge/awbridge/engine"
)

// The real engine behind a real stream: _meta in a direct method's params
// is no "unknown argument" (the engine's strict schemas refuse any other
// unknown member), for each direct method, with or without a traceparent.
func TestDirectMethodMetaReachesEngineStripped(t *testing.T) {
	c := config.Defaults()
	c.AW.URL = "http://127.0.0.1:1" // nothing listens: ActivityWatch is down
	c.Paths.ContextRoot = t.TempDir()
	e, err := engine.New(engine.Deps{Config: c, Logger: zerolog.Nop(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	conn := startConn(t, NewServer(e, Options{DirectMethods: engine.DirectMethods()}))
	const meta = `"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`
	for _, method := range engine.DirectMethods() {
		conn.send(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + meta + `}}`)
		if r := conn.recv(); r.Error != nil && (r.Error.Code == CodeInvalidParams || strings.Contains(r.Error.Message, "_meta")) {
			t.Errorf("%s: %s", method, r.Raw)
		}
		conn.send(`{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":{"_meta":{},"nope":1}}`)
		if r := conn.recv(); r.Error == nil || r.Error.Code != CodeInvalidParams || !strings.Contains(r.Error.Message, `unknown argument "nope"`) {
			t.Errorf("%s with an unknown argument beside _meta: %s", method, r.Raw)
		}
	}
	if rest, err := conn.closeAndWait(); err != nil || len(rest) != 0 {
		t.Fatalf("end: %q %v", rest, err)
	}
}
