package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

// headerRT adds headers to a client's requests.
type headerRT map[string]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func httpClient(t *testing.T, url string, h headerRT) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: h}, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestURLUpstreamAndHTTPServing puts the proxy between an HTTP client and
// an HTTP upstream: headers reach the upstream, large results are
// previewed, a session is resumed by header, tokens are enforced.
func TestURLUpstreamAndHTTPServing(t *testing.T) {
	var sawAuth atomic.Bool
	upSrv := testUpstream()
	upH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upSrv }, nil)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer up-secret" {
			sawAuth.Store(true)
		} else {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		upH.ServeHTTP(w, r)
	}))
	defer upstream.Close()

	eng := newEngine(t)
	p, err := New(eng, Upstream{URL: upstream.URL, Header: http.Header{"Authorization": {"Bearer up-secret"}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !sawAuth.Load() {
		t.Error("the upstream never saw the configured header")
	}
	front := httptest.NewServer(p.HTTPHandler(mcpserver.HTTPOptions{Tokens: []string{"front-secret"}}))
	defer front.Close()

	if _, err := mcp.NewClient(&mcp.Implementation{Name: "x"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: front.URL + mcpserver.Path, MaxRetries: -1}, nil); err == nil {
		t.Error("a client without a token connected")
	}
	auth := headerRT{"Authorization": "Bearer front-secret"}
	cs := httpClient(t, front.URL+mcpserver.Path, auth)
	res := call(t, cs, "big", map[string]any{"n": 200_000})
	id, total, _ := meta(t, res)
	if total != 200_000 {
		t.Errorf("totalBytes %d", total)
	}
	if got, _ := readAll(t, cs, id); got != bigText(200_000) {
		t.Error("the pages do not concatenate to the result")
	}
	sid, _ := res.Meta[MetaSession].(string)
	if res := call(t, cs, "echo", map[string]any{"text": "hi"}); text(res) != "hi" {
		t.Errorf("echo over HTTP: %q", text(res))
	}

	// Another MCP session resumes the scrollback session by header.
	auth2 := headerRT{"Authorization": "Bearer front-secret", mcpserver.SessionHeader: sid}
	cs2 := httpClient(t, front.URL+mcpserver.Path, auth2)
	if got, _ := readAll(t, cs2, id); got != bigText(200_000) {
		t.Error("a resumed session cannot read the copy")
	}
	// A third, fresh session cannot see it.
	cs3 := httpClient(t, front.URL+mcpserver.Path, auth)
	res = call(t, cs3, "read_tool_output", map[string]any{"id": id})
	if !res.IsError || !strings.Contains(text(res), "no retained output") {
		t.Errorf("another session read the copy: %q", text(res))
	}
	if s, err := eng.Session(context.Background(), mcpserver.TokenOwner("front-secret"), sid); err != nil || s.ID() != sid {
		t.Errorf("the session is not owned by the token: %v", err)
	}
	_ = scrollback.LocalOwner
}
