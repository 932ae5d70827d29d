package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

// downRT fails every request while down is set, as a dial to a server
// that is not listening does.
type downRT struct{ down *atomic.Bool }

func (d downRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if d.down.Load() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// An HTTP upstream that cannot be reached, or answers 503, is a tool
// error of kind unavailable, not a JSON-RPC error the client would take
// for the upstream's answer (the SDK's "rejected by transport"); once it
// is back, after a restart that forgot its sessions, the next call
// connects afresh and succeeds.
func TestURLUpstreamDownAndBack(t *testing.T) {
	var handler atomic.Pointer[http.Handler]
	fresh := func() {
		srv := testUpstream()
		var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
		handler.Store(&h)
	}
	fresh()
	var busy atomic.Bool
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if busy.Load() {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		(*handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close) // after the proxy's: its SSE stream holds a request open
	var down atomic.Bool
	_, _, cs := start(t, Upstream{URL: upstream.URL, HTTPClient: &http.Client{Transport: downRT{&down}}}, Options{}, nil)
	ctx := context.Background()
	echo := func(what string) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": what}})
	}
	if res, err := echo("one"); err != nil || text(res) != "one" {
		t.Fatalf("echo: %v %+v", err, res)
	}

	for _, c := range []struct {
		name string
		set  *atomic.Bool
	}{{"unreachable", &down}, {"503", &busy}} {
		c.set.Store(true)
		res, err := echo("two")
		c.set.Store(false)
		if err != nil {
			t.Errorf("%s: a protocol error: %v", c.name, err)
			continue
		}
		if !res.IsError || res.Meta[mcpserver.MetaErrorKind] != scrollback.KindUnavailable || !strings.Contains(text(res), "upstream") {
			t.Errorf("%s: want a tool error of kind unavailable, got %+v: %s", c.name, res.Meta, text(res))
		}
	}

	// Restarted: the old session is gone (404), the first call after the
	// outage connects again.
	down.Store(true)
	echo("lost")
	fresh()
	down.Store(false)
	if res, err := echo("three"); err != nil || res.IsError || text(res) != "three" {
		t.Errorf("the first call after the upstream came back: %v %s", err, text(res))
	}
	// Restarted between two calls: the call runs again on a new session.
	fresh()
	if res, err := echo("four"); err != nil || res.IsError || text(res) != "four" {
		t.Errorf("the first call after the upstream restarted: %v %s", err, text(res))
	}
}
