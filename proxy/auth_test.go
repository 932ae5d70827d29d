package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestURLUpstreamUnauthorized: an upstream URL that answers 401 or 403
// (it wants a token, or another one) is said so, with how to give one,
// rather than a bare "Unauthorized" and a hint to check that the server
// starts.
func TestURLUpstreamUnauthorized(t *testing.T) {
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://example.invalid/.well-known/oauth-protected-resource"`)
				w.WriteHeader(code)
			}))
			defer srv.Close()
			p, err := New(newEngine(t), Upstream{URL: srv.URL + "/mcp", Header: http.Header{"Authorization": {"Bearer wrong"}}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			err = p.Start(context.Background())
			if err == nil {
				t.Fatal("Start succeeded against a server that refuses every request")
			}
			for _, want := range []string{http.StatusText(code), "Authorization: Bearer", "OAuth"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
		})
	}
}

// TestURLUpstreamUnauthorizedLater: a URL upstream that starts refusing
// the proxy's token during the session (it expired, or was revoked) makes
// each call the unavailable error saying so, with how to send another.
func TestURLUpstreamUnauthorizedLater(t *testing.T) {
	var refuse atomic.Bool
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testUpstream() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	_, _, cs := start(t, Upstream{URL: srv.URL}, Options{}, nil)
	if res := call(t, cs, "echo", map[string]any{"text": "hi"}); res.IsError {
		t.Fatalf("echo: %s", text(res))
	}
	refuse.Store(true)
	res := call(t, cs, "echo", map[string]any{"text": "hi"})
	if !res.IsError {
		t.Fatalf("echo succeeded against a server that refuses the token: %s", text(res))
	}
	for _, want := range []string{"401", "Authorization: Bearer"} {
		if !strings.Contains(text(res), want) {
			t.Errorf("the error does not say %q: %s", want, text(res))
		}
	}
}
