package mcp

import (
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestReviewRelayDropsABusyServiceOnAModernFirstCall: review of issue 16.
// The relay's first-reply bound (5 s from the first call sent) is meant
// for a service that accepts and never answers; but a 2026-07-28 client
// sends no initialize, so its first line can be a tools/call the service
// legitimately takes longer than 5 s to answer (activity_history over a
// year, history_timeout up to 10 min, a service whose activity calls wait
// their turn). The relay then closes a healthy service's connection,
// answers the call with the retryable "service gone" error, and runs the
// rest of the session in-process: the call fails and the session loses
// the shared warm engine for good. Fix: arm the bound only until the
// service answers anything, and probe liveness with a cheap request the
// relay sends itself (ping, swallowing its reply) instead of timing the
// client's first call.
func TestReviewRelayDropsABusyServiceOnAModernFirstCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := startRelayWithFallback()
		svc, svcEnd, inW, out, done := rt.svc, rt.svcEnd, rt.inW, &rt.out, rt.done
		defer svcEnd.Close()
		modern := `"_meta":{"` + MetaProtocolVersion + `":"` + ModernVersion + `","` + MetaClientCapabilities + `":{}}`
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+modern+`,"name":"ok"}}`+"\n")
		synctest.Wait()
		if len(svc.lines) != 1 {
			t.Fatalf("the service was sent %d lines", len(svc.lines))
		}
		<-svc.lines
		// The service is alive and answers after 8 s of work.
		time.Sleep(8 * time.Second)
		svcEnd.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false,"served_by":"service"}}` + "\n"))
		synctest.Wait()
		inW.Close()
		svcEnd.Close()
		<-done
		n, last := replyIDsOf(t, out.String())
		if n[`1`] != 1 || !strings.Contains(last[`1`], `"served_by":"service"`) {
			t.Errorf("a busy (not silent) service's answer was replaced: id 1 answered %d times, last %s", n[`1`], last[`1`])
		}
	})
}
