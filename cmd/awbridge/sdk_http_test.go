package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkService is a running `awbridge serve` on a Unix socket and a loopback
// HTTP port behind its bearer token.
type sdkService struct {
	env   []string // a stdio started with it relays to this service
	sock  string
	url   string // the MCP endpoint, http://127.0.0.1:PORT/mcp
	token string
}

// startSDKService runs serve against the ActivityWatch at awURL with HTTP
// on and the token created in its state folder.
func startSDKService(t *testing.T, awURL string) sdkService {
	t.Helper()
	addr := closedAddr(t)
	env, _, stateDir := faultEnv(t, awURL, "AWBRIDGE_HTTP="+addr)
	sock := filepath.Join(shortDir(t), "awbridge.sock")
	env = append(env, "AWBRIDGE_SOCKET="+sock)
	startServe(t, env, sock)
	token, err := os.ReadFile(filepath.Join(stateDir, httpTokenFile))
	if err != nil {
		t.Fatalf("the token file: %v", err)
	}
	return sdkService{env: env, sock: sock, url: "http://" + addr + "/mcp", token: strings.TrimSpace(string(token))}
}

// connect is the official SDK's Streamable HTTP client on the service,
// with the bearer token (none when token is ""); sessions counts the
// replies that opened or carried a legacy session (Mcp-Session-Id).
func (s sdkService) connect(ctx context.Context, client *sdk.Client, token, pin string) (cs *sdk.ClientSession, sessions *atomic.Int64, err error) {
	rt := &sessionCounter{token: token, sessions: &atomic.Int64{}}
	cs, err = client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: pin})
	return cs, rt.sessions, err
}

// sessionCounter adds the bearer token and counts the replies with an
// Mcp-Session-Id header.
type sessionCounter struct {
	token    string
	sessions *atomic.Int64
}

func (c *sessionCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
		c.sessions.Add(1)
	}
	return resp, err
}

// TestOfficialSDKOverHTTP is a new user's client on the real `awbridge
// serve` over Streamable HTTP with the bearer token: in 2026-07-28 (the
// SDK's default: no session) and every legacy version it speaks, it lists
// and calls every tool, reads every resource and lists the templates.
// Without the token, or with a wrong one, every era is refused with 401.
func TestOfficialSDKOverHTTP(t *testing.T) {
	srv := simulatedAW(t)
	svc := startSDKService(t, srv.URL)
	for _, era := range sdkEras {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), sdkCeiling)
			defer cancel()
			client := sdk.NewClient(&sdk.Implementation{Name: "sdk-http", Version: "0"}, nil)
			cs, sessions, err := svc.connect(ctx, client, svc.token, era.pin)
			if err != nil {
				t.Fatalf("connect with the token: %v", err)
			}
			sdkExercise(t, ctx, cs, era.want)
			if err := cs.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			// 2026-07-28 needs no session; a legacy client has one.
			if n := sessions.Load(); (n == 0) != (era.pin == "") {
				t.Fatalf("%d replies carried Mcp-Session-Id in %s", n, era.want)
			}
			for _, tok := range []string{"", "0123456789abcdef0123456789abcdef"} {
				if cs, _, err := svc.connect(ctx, client, tok, era.pin); err == nil {
					cs.Close()
					t.Fatalf("connected with token %q", tok)
				}
			}
		})
	}

	// What the SDK sends first in each era, without the token: 401.
	modern := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}}}`
	modernCall := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"help","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	legacy := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	for _, tc := range []struct {
		name, body, method, mcpName, version string
	}{
		{"modern discover", modern, "server/discover", "", "2026-07-28"},
		{"modern tools/call", modernCall, "tools/call", "help", "2026-07-28"},
		{"legacy initialize", legacy, "", "", ""},
	} {
		for _, tok := range []string{"", "wrong-token-0123456789"} {
			code, body := svc.post(t, tc.body, tok, map[string]string{"Mcp-Method": tc.method, "Mcp-Name": tc.mcpName, "MCP-Protocol-Version": tc.version})
			if code != http.StatusUnauthorized {
				t.Errorf("%s with token %q: %d %s, want 401", tc.name, tok, code, clipLine(body, 200))
			}
			if strings.Contains(body, "overview") || strings.Contains(body, "serverInfo") {
				t.Errorf("%s with token %q answered: %s", tc.name, tok, clipLine(body, 200))
			}
		}
		// The same request with the token is served.
		if code, body := svc.post(t, tc.body, svc.token, map[string]string{"Mcp-Method": tc.method, "Mcp-Name": tc.mcpName, "MCP-Protocol-Version": tc.version}); code != http.StatusOK {
			t.Errorf("%s with the token: %d %s", tc.name, code, clipLine(body, 300))
		}
	}
}

// post sends one JSON-RPC body to the service's MCP endpoint with the
// token (none when ""), the headers that are not empty, and returns the
// status and body.
func (s sdkService) post(t *testing.T, body, token string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOfficialSDKThroughTheRelay is the assistant's usual config, `awbridge
// stdio`, while the service runs: the stdio relays to it, and the official
// SDK, modern and legacy, lists and calls every tool and reads every
// resource through it. What the session stored is then in the service.
func TestOfficialSDKThroughTheRelay(t *testing.T) {
	srv := simulatedAW(t)
	svc := startSDKService(t, srv.URL)
	for _, era := range sdkEras {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), sdkCeiling)
			defer cancel()
			cmd := exec.Command(binPath, "stdio")
			cmd.Env = svc.env
			client := sdk.NewClient(&sdk.Implementation{Name: "sdk-relay", Version: "0"}, nil)
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: era.pin})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			key := "relay-" + strings.ReplaceAll(era.want, "-", "")
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "state", Arguments: map[string]any{"action": "set", "key": key, "value": 7}})
			if err != nil || res.IsError {
				t.Fatalf("state set: %v %+v", err, res)
			}
			// The value is in the service: the calls went through the relay.
			got := socketCall(t, svc.sock, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"state","arguments":{"action":"get","key":"`+key+`"}}}`)
			if !strings.Contains(got[0], `\"value\":7`) {
				t.Fatalf("the service does not hold what the session stored: %s", clipLine(got[0], 300))
			}
			sdkExercise(t, ctx, cs, era.want)
		})
	}
}
