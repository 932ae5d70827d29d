package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/scrollback-dev/scrollback/filepager"
)

// testIssuer is an OpenID discovery document and a JWKS served over HTTP,
// with a signing key the test can rotate. The end-to-end tests run a real
// OpenID provider (e2e/oauth_test.go); these check the verifier's every
// refusal without one.
type testIssuer struct {
	srv *httptest.Server

	mu   sync.Mutex
	key  *rsa.PrivateKey
	kid  string
	keys []jose.JSONWebKey // published
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	iss := &testIssuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                iss.srv.URL,
			"jwks_uri":                              iss.srv.URL + "/jwks",
			"authorization_endpoint":                iss.srv.URL + "/auth",
			"token_endpoint":                        iss.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.mu.Lock()
		defer iss.mu.Unlock()
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: iss.keys})
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	iss.rotate(t, false)
	return iss
}

// rotate makes a new signing key and publishes it, keeping the old one
// published when keepOld.
func (iss *testIssuer) rotate(t testing.TB, keepOld bool) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.key = key
	iss.kid = "k" + time.Now().Format("150405.000000000")
	pub := jose.JSONWebKey{Key: &key.PublicKey, KeyID: iss.kid, Algorithm: "RS256", Use: "sig"}
	if keepOld {
		iss.keys = append(iss.keys, pub)
	} else {
		iss.keys = []jose.JSONWebKey{pub}
	}
}

// token signs claims with the issuer's current key (or key, when given).
func (iss *testIssuer) token(t testing.TB, claims map[string]any, key *rsa.PrivateKey) string {
	t.Helper()
	iss.mu.Lock()
	kid := iss.kid
	if key == nil {
		key = iss.key
	}
	iss.mu.Unlock()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// claims are a good access token's claims for audience, for user sub.
func (iss *testIssuer) claims(audience, sub string, scopes ...string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": iss.srv.URL, "sub": sub, "aud": audience,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"scope": strings.Join(scopes, " "), "preferred_username": sub + "-name",
	}
}

// oauthServer serves the MCP handler with OAuth for iss and returns its
// URL (also the audience) and the engine's store owner check.
func oauthServer(t *testing.T, iss *testIssuer, scopes string, tokens ...Token) (url string) {
	t.Helper()
	eng, _ := newEngine(t, filepager.Options{})
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	read, run, err := ParseScopes(scopes)
	if err != nil {
		t.Fatal(err)
	}
	oa, err := NewOAuth(context.Background(), OAuthOptions{Issuer: iss.srv.URL, Audience: ts.URL + Path, ReadScope: read, RunScope: run})
	if err != nil {
		t.Fatal(err)
	}
	opts := HTTPOptions{OAuth: oa}
	if len(tokens) > 0 {
		opts.TokenSet = NewTokenSet(tokens)
	}
	h = NewHTTPHandler(eng, opts)
	return ts.URL
}

// TestOAuthRefusals: every way a token can be wrong gets 401 with the
// challenge naming the metadata, and says what was wrong; a good token
// calls tools.
func TestOAuthRefusals(t *testing.T) {
	iss := newTestIssuer(t)
	url := oauthServer(t, iss, "")
	aud := url + Path
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	with := func(change func(c map[string]any)) string {
		c := iss.claims(aud, "alice")
		change(c)
		return iss.token(t, c, nil)
	}
	wantMeta := `Bearer resource_metadata="` + url + `/.well-known/oauth-protected-resource/mcp"`
	for _, tc := range []struct {
		name, token, want string
	}{
		{"missing", "", "requires"},
		{"not a JWT", "not-a-jwt", "not a signed JWT"},
		{"expired", with(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() }), "expired"},
		{"not yet valid", with(func(c map[string]any) { c["nbf"] = time.Now().Add(time.Hour).Unix() }), "not valid before"},
		{"wrong issuer", with(func(c map[string]any) { c["iss"] = "https://evil.example.com" }), "issuer"},
		{"wrong audience", with(func(c map[string]any) { c["aud"] = "https://other.example.com/mcp" }), "audience"},
		{"wrong signature", iss.token(t, iss.claims(aud, "alice"), other), "signature"},
		{"no subject", with(func(c map[string]any) { delete(c, "sub") }), "subject"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.token != "" {
				hdr["Authorization"] = "Bearer " + tc.token
			}
			status, body, h := postHeaders(t, url+Path, hdr)
			if status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401: %s", status, body)
			}
			if !strings.Contains(body, tc.want) {
				t.Errorf("body %q does not say %q", body, tc.want)
			}
			www := h.Get("WWW-Authenticate")
			if !strings.HasPrefix(www, wantMeta) {
				t.Errorf("WWW-Authenticate %q, want it to start with %q", www, wantMeta)
			}
			if tc.token != "" && !strings.Contains(www, `error="invalid_token"`) {
				t.Errorf("WWW-Authenticate %q names no invalid_token", www)
			}
		})
	}

	cs := mustHTTPClient(t, url, map[string]string{"Authorization": "Bearer " + iss.token(t, iss.claims(aud, "alice"), nil)})
	if res := call(t, cs, "run_command", map[string]any{"command": "echo hi"}); res.IsError {
		t.Fatalf("a good token's call failed: %s", text(res, 0))
	}
}

// TestOAuthUsersOwnTheirSessions: two users of one issuer cannot read each
// other's copies or resume each other's sessions; a static token beside
// OAuth is a principal of its own.
func TestOAuthUsersOwnTheirSessions(t *testing.T) {
	iss := newTestIssuer(t)
	url := oauthServer(t, iss, "", Token{Name: "ci", Secret: "static-secret"})
	aud := url + Path
	alice := map[string]string{"Authorization": "Bearer " + iss.token(t, iss.claims(aud, "alice"), nil)}
	bob := map[string]string{"Authorization": "Bearer " + iss.token(t, iss.claims(aud, "bob"), nil)}
	ci := map[string]string{"Authorization": "Bearer static-secret"}

	id, session := runBig(t, mustHTTPClient(t, url, alice))
	for name, hdr := range map[string]map[string]string{"bob": bob, "static token": ci} {
		res := call(t, mustHTTPClient(t, url, hdr), "read_tool_output", map[string]any{"id": id})
		if !res.IsError || !strings.Contains(text(res, 0), "no retained output with that id in this session") {
			t.Errorf("%s read alice's copy: %q", name, text(res, 0))
		}
		h := map[string]string{SessionHeader: session}
		for k, v := range hdr {
			h[k] = v
		}
		if status, body, _ := postHeaders(t, url+Path, h); status != http.StatusNotFound {
			t.Errorf("%s resumed alice's session: %d %s", name, status, body)
		}
	}
	// Alice, with a new token, resumes her session and reads her copy.
	again := map[string]string{"Authorization": "Bearer " + iss.token(t, iss.claims(aud, "alice"), nil), SessionHeader: session}
	if res := call(t, mustHTTPClient(t, url, again), "read_tool_output", map[string]any{"id": id, "limit": 2}); res.IsError || text(res, 0) != "1\n" {
		t.Errorf("alice could not read her own copy with a new token: %q", text(res, 0))
	}
}

// TestOAuthKeyRotation: a token signed with a key the issuer published
// after the server started is accepted (the key set is fetched again for
// an unknown key id), and once the old key is withdrawn its tokens fail.
func TestOAuthKeyRotation(t *testing.T) {
	iss := newTestIssuer(t)
	url := oauthServer(t, iss, "")
	aud := url + Path
	first := iss.token(t, iss.claims(aud, "alice"), nil)
	if status, body, _ := postHeaders(t, url+Path, map[string]string{"Authorization": "Bearer " + first}); status != http.StatusOK {
		t.Fatalf("first key: %d %s", status, body)
	}
	iss.rotate(t, false)
	second := iss.token(t, iss.claims(aud, "alice"), nil)
	if status, body, _ := postHeaders(t, url+Path, map[string]string{"Authorization": "Bearer " + second}); status != http.StatusOK {
		t.Fatalf("rotated key: %d %s", status, body)
	}
	if status, _, _ := postHeaders(t, url+Path, map[string]string{"Authorization": "Bearer " + first}); status != http.StatusUnauthorized {
		t.Errorf("a token of the withdrawn key: %d, want 401", status)
	}
}

// TestOAuthScopes: with scopes asked for, a token without the run scope
// cannot run commands (403 insufficient_scope naming the scope) but reads
// with the read scope; listing tools needs no scope; a static token may
// do everything.
func TestOAuthScopes(t *testing.T) {
	iss := newTestIssuer(t)
	url := oauthServer(t, iss, "scrollback:read,scrollback:run", Token{Name: "ci", Secret: "static-secret"})
	aud := url + Path
	runner := map[string]string{"Authorization": "Bearer " + iss.token(t, iss.claims(aud, "alice", ScopeRead, ScopeRun), nil)}
	id, session := runBig(t, mustHTTPClient(t, url, runner))

	reader := map[string]string{"Authorization": "Bearer " + iss.token(t, iss.claims(aud, "alice", ScopeRead), nil), SessionHeader: session}
	cs := mustHTTPClient(t, url, reader)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("tools/list with the read scope only: %v", err)
	}
	if res := call(t, cs, "read_tool_output", map[string]any{"id": id, "limit": 2}); res.IsError {
		t.Errorf("read with the read scope: %s", text(res, 0))
	}
	status, body, h := postMessage(t, url+Path, reader, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"id"}}}`)
	if status != http.StatusForbidden || !strings.Contains(body, ScopeRun) {
		t.Errorf("run_command without the run scope: %d %q", status, body)
	}
	if www := h.Get("WWW-Authenticate"); !strings.Contains(www, `error="insufficient_scope"`) || !strings.Contains(www, `scope="scrollback:run"`) || !strings.Contains(www, "resource_metadata=") {
		t.Errorf("WWW-Authenticate %q", www)
	}
	none := map[string]string{"Authorization": "Bearer " + iss.token(t, iss.claims(aud, "alice"), nil), SessionHeader: session}
	if status, body, _ := postMessage(t, url+Path, none, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_tool_output","arguments":{"id":"`+id+`"}}}`); status != http.StatusForbidden || !strings.Contains(body, ScopeRead) {
		t.Errorf("read without the read scope: %d %q", status, body)
	}
	// The list of copies names them and the commands that made them.
	if status, body, _ := postMessage(t, url+Path, none, `{"jsonrpc":"2.0","id":9,"method":"resources/list","params":{}}`); status != http.StatusForbidden || !strings.Contains(body, ScopeRead) {
		t.Errorf("resources/list without the read scope: %d %q", status, body)
	}
	static := mustHTTPClient(t, url, map[string]string{"Authorization": "Bearer static-secret"})
	if res := call(t, static, "run_command", map[string]any{"command": "echo hi"}); res.IsError {
		t.Errorf("a static token was refused under scopes: %s", text(res, 0))
	}
}

// TestProtectedResourceMetadata: RFC 9728's document at the bare and the
// path-suffixed well-known paths, readable without a token from any
// origin.
func TestProtectedResourceMetadata(t *testing.T) {
	iss := newTestIssuer(t)
	url := oauthServer(t, iss, "scrollback:read,run=api://scrollback/run")
	for _, p := range []string{metadataPrefix, metadataPrefix + Path} {
		req, _ := http.NewRequest("GET", url+p, nil)
		req.Header.Set("Origin", "https://inspector.example.com")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var m oauthex.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v", p, resp.StatusCode, err)
		}
		if m.Resource != url+Path || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != iss.srv.URL ||
			strings.Join(m.ScopesSupported, " ") != "scrollback:read api://scrollback/run" {
			t.Errorf("%s: %+v", p, m)
		}
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: no CORS for any origin", p)
		}
	}
}

func TestParseScopes(t *testing.T) {
	for _, tc := range []struct {
		in, read, run, err string
	}{
		{"", "", "", ""},
		{"scrollback:read", "scrollback:read", "", ""},
		{"scrollback:read, scrollback:run", "scrollback:read", "scrollback:run", ""},
		{"read=api://x/Read run=api://x/Run", "api://x/Read", "api://x/Run", ""},
		{"admin", "", "", "not a scope this server knows"},
		{"write=x", "", "", "read or run"},
		{"read=", "", "", "names no scope"},
	} {
		read, run, err := ParseScopes(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseScopes(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || read != tc.read || run != tc.run {
			t.Errorf("ParseScopes(%q) = %q, %q, %v", tc.in, read, run, err)
		}
	}
}

func TestNewOAuthRefusesBadIssuers(t *testing.T) {
	for _, tc := range []struct {
		issuer string
		want   error // what CheckIssuer's error wraps
	}{
		{"", ErrIssuerNotURL},
		{"issuer.example.com", ErrIssuerNotURL},
		{"ftp://x", ErrIssuerNotURL},
		{"http://issuer.example.com", ErrIssuerNotHTTPS},
	} {
		if _, err := NewOAuth(context.Background(), OAuthOptions{Issuer: tc.issuer, Audience: "https://x/mcp"}); err == nil {
			t.Errorf("NewOAuth accepted issuer %q", tc.issuer)
		}
		if err := CheckIssuer(tc.issuer); !errors.Is(err, tc.want) || !errors.Is(err, ErrOAuthConfig) {
			t.Errorf("CheckIssuer(%q) = %v, want it to wrap %v", tc.issuer, err, tc.want)
		}
	}
	for _, issuer := range []string{"https://issuer.example.com/realms/team", "http://127.0.0.1:1", "http://localhost:8080/"} {
		if err := CheckIssuer(issuer); err != nil {
			t.Errorf("CheckIssuer(%q) = %v", issuer, err)
		}
	}
	// An issuer that cannot be reached fails at start, naming it.
	_, err := NewOAuth(context.Background(), OAuthOptions{Issuer: "http://127.0.0.1:1", Audience: "https://x/mcp"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("unreachable issuer: %v", err)
	}
}

// postHeaders posts an initialize and returns the status, body and
// headers of the answer.
func postHeaders(t *testing.T, url string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	return postMessage(t, url, hdr, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
}

func postMessage(t *testing.T, url string, hdr map[string]string, msg string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(msg))
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
	var b strings.Builder
	buf := make([]byte, 64<<10)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	return resp.StatusCode, b.String(), resp.Header
}

// TestVerifiedTokens: a verified token is remembered until its expiry plus
// the leeway; a refusal, or a token naming a key id no remembered token
// names (go-oidc may then have fetched the keys again and withdrawn some),
// forgets every token; an outcome of a verification that began before the
// cache was emptied is not kept; the cache is bounded.
func TestVerifiedTokens(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	info := func(user string) *auth.TokenInfo {
		return &auth.TokenInfo{UserID: user, Expiration: now.Add(time.Minute)}
	}
	var c verifiedTokens
	if _, ok := c.get("a", now); ok {
		t.Fatal("an empty cache has a token")
	}
	c.put("a", "k1", c.generation(), info("alice"), 30*time.Second)
	if got, ok := c.get("a", now.Add(90*time.Second-time.Nanosecond)); !ok || got.UserID != "alice" {
		t.Errorf("within expiry plus leeway: %v %v", got, ok)
	}
	if _, ok := c.get("a", now.Add(90*time.Second)); ok {
		t.Error("past expiry plus leeway: still remembered")
	}
	c.put("b", "k1", c.generation(), info("bob"), 0)
	if _, ok := c.get("a", now); !ok {
		t.Error("a second token of the same key emptied the cache")
	}

	// A token of another key: the others are forgotten, it is kept.
	c.put("c", "k2", c.generation(), info("carol"), 0)
	if _, ok := c.get("a", now); ok {
		t.Error("a token of a new key left the others")
	}
	if _, ok := c.get("c", now); !ok {
		t.Error("the token of the new key was not kept")
	}

	// A refusal forgets every token.
	c.put("d", "k2", c.generation(), nil, 0)
	if _, ok := c.get("c", now); ok {
		t.Error("a refusal left the others")
	}
	if _, ok := c.get("d", now); ok {
		t.Error("a refused token is remembered")
	}

	// A verification that began before the cache was emptied is not kept.
	c.put("e", "k2", c.generation(), info("erin"), 0)
	gen := c.generation()
	c.put("f", "k3", c.generation(), info("frank"), 0) // empties
	c.put("g", "k3", gen, info("grace"), 0)
	if _, ok := c.get("g", now); ok {
		t.Error("an outcome from before the cache was emptied was kept")
	}
	if _, ok := c.get("f", now); !ok {
		t.Error("f was not kept")
	}

	// Bounded.
	for i := range maxVerifiedTokens {
		c.put(fmt.Sprint("t", i), "k3", c.generation(), info("many"), 0)
	}
	if n := len(c.entries); n > maxVerifiedTokens {
		t.Errorf("%d tokens remembered, bound %d", n, maxVerifiedTokens)
	}
}

// TestOAuthVerifyConcurrent: many requests verifying the same tokens at
// once (run with -race).
func TestOAuthVerifyConcurrent(t *testing.T) {
	iss := newTestIssuer(t)
	const aud = "http://127.0.0.1:7777/mcp"
	oa, err := NewOAuth(context.Background(), OAuthOptions{Issuer: iss.srv.URL, Audience: aud})
	if err != nil {
		t.Fatal(err)
	}
	tokens := []string{iss.token(t, iss.claims(aud, "alice"), nil), iss.token(t, iss.claims(aud, "bob"), nil)}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				info, err := oa.Verify(context.Background(), tokens[(i+j)%2])
				if err != nil || TokenName(info) == "" || info.Extra[oauthKey] != true {
					t.Errorf("verify: %v %+v", err, info)
					return
				}
			}
		})
	}
	wg.Wait()
}
