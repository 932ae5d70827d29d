package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
