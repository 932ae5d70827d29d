package e2e

import (
	"bufio"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The OAuth tests run a real OpenID provider (oidc_provider.mjs: panva's
// oidc-provider, from npm) that issues JWT access tokens for the
// scrollback servers' resource, and real `scrollback mcp --http` servers
// that accept them.

// provider is a running oidc_provider.mjs.
type provider struct {
	issuer   string
	resource string
	port     int
	cmd      *exec.Cmd
}

// startProvider starts the OpenID provider on port (0: a free one) for
// resource, signing with a new RSA key of id kid.
func startProvider(t *testing.T, nodeBin string, port int, resource, kid string) *provider {
	t.Helper()
	if port == 0 {
		port = freePort(t)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwk := jose.JSONWebKey{Key: key, KeyID: kid, Algorithm: "RS256", Use: "sig"}
	b, err := json.Marshal(map[string]any{"keys": []jose.JSONWebKey{jwk}})
	if err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(keys, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nodeBin, "oidc_provider.mjs", fmt.Sprint(port), resource, keys)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard // its warnings about Node's version and the in-memory adapter
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &provider{resource: resource, port: port, cmd: cmd}
	t.Cleanup(p.stop)
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		p.issuer = strings.TrimPrefix(l, "issuer ")
	case <-time.After(30 * time.Second):
		t.Fatal("the OpenID provider did not start within 30 s")
	}
	return p
}

func (p *provider) stop() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// token gets user's access token for resource with the client
// credentials grant (each user is a client of the provider).
func (p *provider) token(t *testing.T, user, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}}
	switch user {
	case "alice":
		form.Set("scope", "scrollback:read scrollback:run")
	case "bob":
		form.Set("scope", "scrollback:read")
	}
	req, _ := http.NewRequest("POST", p.issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(user, user+"-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("no token for %s: %d %v %s", user, resp.StatusCode, err, tok.Error)
	}
	return tok.AccessToken
}

func bearerHeader(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

// TestOAuthTwoServersOnePostgres: two servers on one PostgreSQL accept
// the provider's tokens for their shared resource; discovery leads from
// a 401 to the provider; a user's copy made through one is read through
// the other, and never by another user; scopes decide who may run and
// read; a token for another resource is refused; a key rotation at the
// provider is picked up without a restart.
func TestOAuthTwoServersOnePostgres(t *testing.T) {
	bin, nodeBin := setup(t)
	base := os.Getenv("SCROLLBACK_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("SCROLLBACK_SKIP_POSTGRES") == "1" {
			t.Skip("SCROLLBACK_SKIP_POSTGRES=1: PostgreSQL tests skipped")
		}
		t.Fatal("SCROLLBACK_TEST_POSTGRES is not set: run `eval \"$(.ci/postgres.sh)\"` first (or set SCROLLBACK_SKIP_POSTGRES=1 to skip)")
	}
	// The resource is the load balancer's URL, the same for both servers.
	const resource = "https://scrollback.test/mcp"
	op := startProvider(t, nodeBin, 0, resource, "key-1")
	db := freshDatabase(t, base)
	dir := t.TempDir()
	args := []string{"--db", db, "--oauth-issuer", op.issuer, "--oauth-audience", resource, "--oauth-scopes", "scrollback:read,scrollback:run"}
	one := startServer(t, bin, dir, args...)
	two := startServer(t, bin, dir, args...)

	// Discovery: a request without a token is told where the metadata
	// is; the metadata names the provider.
	status, _, hdr := postInit(t, one.url, nil)
	www := hdr.Get("WWW-Authenticate")
	if status != http.StatusUnauthorized || !strings.HasPrefix(www, `Bearer resource_metadata="https://scrollback.test/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("no token: %d, WWW-Authenticate %q", status, www)
	}
	meta, err := oauthex.GetProtectedResourceMetadata(t.Context(), one.base+"/.well-known/oauth-protected-resource/mcp", resource, http.DefaultClient)
	if err != nil {
		t.Fatalf("protected resource metadata: %v", err)
	}
	if len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != op.issuer {
		t.Fatalf("metadata names %v, not the provider %s", meta.AuthorizationServers, op.issuer)
	}

	// Alice runs a command through server one and reads its copy through
	// server two, with another token, in the same session.
	a1 := connectHTTP(t, one.url, bearerHeader(op.token(t, "alice", resource)))
	res := callTool(t, a1, "run_command", map[string]any{"command": "seq 1 100000"})
	var run struct {
		OutputID string `json:"output_id"`
	}
	decodeStructured(t, res, &run)
	session, _ := res.Meta["scrollback/session"].(string)
	if run.OutputID == "" || session == "" {
		t.Fatalf("no copy: %s", textOf(res))
	}
	hdrs := bearerHeader(op.token(t, "alice", resource))
	hdrs["Scrollback-Session"] = session
	a2 := connectHTTP(t, two.url, hdrs)
	if res := callTool(t, a2, "read_tool_output", map[string]any{"id": run.OutputID, "limit": 6}); res.IsError || !strings.HasPrefix(textOf(res), "1\n2\n3\n") {
		t.Errorf("alice through server two: %q", textOf(res))
	}

	// Bob (read scope only) cannot read alice's copy, resume her session,
	// or run commands.
	bob := op.token(t, "bob", resource)
	b2 := connectHTTP(t, two.url, bearerHeader(bob))
	if res := callTool(t, b2, "read_tool_output", map[string]any{"id": run.OutputID}); !res.IsError || !strings.Contains(textOf(res), "no retained output with that id in this session") {
		t.Errorf("bob read alice's copy: %q", textOf(res))
	}
	if status, body, _ := postInit(t, two.url, map[string]string{"Authorization": "Bearer " + bob, "Scrollback-Session": session}); status != http.StatusNotFound {
		t.Errorf("bob resumed alice's session: %d %s", status, body)
	}
	status, body, hdr := postMessage(t, one.url, bearerHeader(bob), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"id"}}}`)
	if status != http.StatusForbidden || !strings.Contains(hdr.Get("WWW-Authenticate"), `error="insufficient_scope"`) || !strings.Contains(body, "scrollback:run") {
		t.Errorf("bob ran a command: %d %q %q", status, hdr.Get("WWW-Authenticate"), body)
	}
	// Carol has no scrollback scope: she may connect and list, not read.
	carol := op.token(t, "carol", resource)
	if status, _, _ := postInit(t, one.url, bearerHeader(carol)); status != http.StatusOK {
		t.Errorf("carol's initialize: %d", status)
	}
	if status, _, _ := postMessage(t, one.url, bearerHeader(carol), `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_tool_output","arguments":{"id":"o_x"}}}`); status != http.StatusForbidden {
		t.Errorf("carol read: %d, want 403", status)
	}

	// A token for another resource is refused.
	other := op.token(t, "alice", "https://other.test/mcp")
	status, body, hdr = postInit(t, one.url, bearerHeader(other))
	if status != http.StatusUnauthorized || !strings.Contains(hdr.Get("WWW-Authenticate"), `error="invalid_token"`) || !strings.Contains(body, "audience") {
		t.Errorf("wrong audience: %d %q %q", status, hdr.Get("WWW-Authenticate"), body)
	}

	// The provider rotates its key (restarted with a new one on the same
	// address): tokens of the new key work at once.
	op.stop()
	op2 := startProvider(t, nodeBin, op.port, resource, "key-2")
	if status, body, _ := postInit(t, one.url, bearerHeader(op2.token(t, "alice", resource))); status != http.StatusOK {
		t.Errorf("a token of the rotated key: %d %s", status, body)
	}
}

// TestOAuthRateLimit: over --rate-limit a user gets 429 with Retry-After
// while another user is served.
func TestOAuthRateLimit(t *testing.T) {
	bin, nodeBin := setup(t)
	const resource = "https://scrollback.test/mcp"
	op := startProvider(t, nodeBin, 0, resource, "key-1")
	s := startServer(t, bin, t.TempDir(), "--oauth-issuer", op.issuer, "--oauth-audience", resource, "--rate-limit", "1/m")
	alice, bob := bearerHeader(op.token(t, "alice", resource)), bearerHeader(op.token(t, "bob", resource))
	if status, body, _ := postInit(t, s.url, alice); status != http.StatusOK {
		t.Fatalf("alice's first request: %d %s", status, body)
	}
	status, body, hdr := postMessage(t, s.url, alice, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || !strings.Contains(body, `"id":9`) || !strings.Contains(body, "retry after") {
		t.Errorf("alice's burst: %d Retry-After %q %s", status, hdr.Get("Retry-After"), body)
	}
	if status, body, _ := postInit(t, s.url, bob); status != http.StatusOK {
		t.Errorf("bob, while alice is limited: %d %s", status, body)
	}
}

func postInit(t *testing.T, endpoint string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	return postMessage(t, endpoint, hdr, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
}

func postMessage(t *testing.T, endpoint string, hdr map[string]string, msg string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), resp.Header
}
