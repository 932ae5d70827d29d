package mcpserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
)

// headers adds fixed headers to every request.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// httpClient connects an MCP client to url with the given headers, at
// protocol 2025-11-25: an MCP session (see statelessClient for 2026-07-28).
func httpClient(t *testing.T, url string, hdr map[string]string) (*mcp.ClientSession, error) {
	return httpClientAt(t, url, hdr, "2025-11-25")
}

// httpClientAt connects an MCP client to url with the given headers,
// asking for protocol version.
func httpClientAt(t *testing.T, url string, hdr map[string]string, version string) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{
		Endpoint:   url + Path,
		HTTPClient: &http.Client{Transport: headers{hdr, http.DefaultTransport}},
		MaxRetries: -1,
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func mustHTTPClient(t *testing.T, url string, hdr map[string]string) *mcp.ClientSession {
	t.Helper()
	cs, err := httpClient(t, url, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// runBig runs a command whose output is retained and returns its id and
// the session it was made in.
func runBig(t *testing.T, cs *mcp.ClientSession) (id, session string) {
	t.Helper()
	res := call(t, cs, "run_command", map[string]any{"command": "seq 100000"})
	var rc scrollback.RunCommandResult
	decode(t, res, &rc)
	s, _ := res.Meta[MetaSession].(string)
	if rc.OutputID == "" || s == "" {
		t.Fatalf("no copy or no session: %+v %v", rc.OutputID, res.Meta)
	}
	return rc.OutputID, s
}

// TestHTTPSessions: without a token, each MCP session gets its own
// scrollback session, owned by the local owner; the Scrollback-Session
// header resumes one; an unknown one is refused with 404.
func TestHTTPSessions(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{}))
	t.Cleanup(ts.Close)

	a, b := mustHTTPClient(t, ts.URL, nil), mustHTTPClient(t, ts.URL, nil)
	idA, sessA := runBig(t, a)
	_, sessB := runBig(t, b)
	if sessA == sessB {
		t.Fatal("two MCP sessions share one scrollback session")
	}
	if _, err := eng.Session(context.Background(), scrollback.LocalOwner, sessA); err != nil {
		t.Errorf("session not owned by the local owner: %v", err)
	}
	if res := call(t, b, "read_tool_output", map[string]any{"id": idA}); !res.IsError ||
		!strings.Contains(text(res, 0), "no retained output with that id in this session") {
		t.Errorf("client B read client A's copy: %q", text(res, 0))
	}

	// A reconnect resumes A's session and reads its copy.
	c := mustHTTPClient(t, ts.URL, map[string]string{SessionHeader: sessA})
	res := call(t, c, "read_tool_output", map[string]any{"id": idA, "limit": 2})
	if res.IsError || text(res, 0) != "1\n" || res.Meta[MetaSession] != sessA {
		t.Errorf("resumed session: error=%v text=%q meta=%v", res.IsError, text(res, 0), res.Meta)
	}

	// A client that never calls a tool leaves no session behind.
	before, _ := eng.Store().ListSessions(context.Background(), scrollback.LocalOwner)
	d := mustHTTPClient(t, ts.URL, nil)
	if _, err := d.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	after, _ := eng.Store().ListSessions(context.Background(), scrollback.LocalOwner)
	if len(after) != len(before) {
		t.Errorf("listing tools made a session: %d -> %d", len(before), len(after))
	}

	status, body := post(t, ts.URL+Path, map[string]string{SessionHeader: "s_" + strings.Repeat("a", 26)})
	if status != http.StatusNotFound || !strings.Contains(body, "no session") {
		t.Errorf("unknown session: %d %q", status, body)
	}
	if _, err := httpClient(t, ts.URL, map[string]string{SessionHeader: "../../etc/passwd' OR 1=1"}); err == nil {
		t.Error("a client connected with a bogus session id")
	}
	if status, _ := get(t, ts.URL+"/other", nil); status != http.StatusNotFound {
		t.Errorf("GET /other: %d", status)
	}
}

// initialize is the body of an initialize request.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

func post(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return do(t, req, hdr)
}

func get(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	return do(t, req, hdr)
}

func do(t *testing.T, req *http.Request, hdr map[string]string) (int, string) {
	t.Helper()
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("401 without a Bearer challenge")
	}
	return resp.StatusCode, string(body)
}

// postInSession posts one raw JSON-RPC message within an MCP session, as a
// client that has initialized it would, and returns the answer's status,
// Content-Type and body.
func postInSession(t *testing.T, url, session, body string) (status int, contentType, answer string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(data)
}

// TestHTTPTokens: with tokens, requests without a valid one get 401 and
// touch nothing; sessions belong to the token that made them; another
// token's session reads like a missing one, and another token's MCP
// session cannot be used.
func TestHTTPTokens(t *testing.T) {
	const alpha, beta = "alpha-token-0123456789", "beta-token-9876543210"
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{alpha, beta}}))
	t.Cleanup(ts.Close)
	ctx := context.Background()

	for _, tc := range []struct {
		name string
		hdr  map[string]string
	}{
		{"no token", nil},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}},
		{"token prefix", map[string]string{"Authorization": "Bearer " + alpha[:10]}},
		{"wrong scheme", map[string]string{"Authorization": "Basic " + alpha}},
		{"token with a session header", map[string]string{"Authorization": "Bearer x", SessionHeader: "s_" + strings.Repeat("a", 26)}},
	} {
		if status, body := post(t, ts.URL+Path, tc.hdr); status != http.StatusUnauthorized {
			t.Errorf("%s: POST got %d %q, want 401", tc.name, status, body)
		}
		if status, _ := get(t, ts.URL+"/", tc.hdr); status != http.StatusUnauthorized {
			t.Errorf("%s: GET / got %d, want 401", tc.name, status)
		}
	}
	if _, err := httpClient(t, ts.URL, map[string]string{"Authorization": "Bearer wrong"}); err == nil {
		t.Error("an MCP client connected with a wrong token")
	}
	for _, owner := range []string{scrollback.LocalOwner, TokenOwner(alpha), TokenOwner(beta), "nope"} {
		if ss, _ := eng.Store().ListSessions(ctx, owner); len(ss) != 0 {
			t.Errorf("refused requests made sessions for %s", owner)
		}
	}

	a := mustHTTPClient(t, ts.URL, map[string]string{"Authorization": "Bearer " + alpha})
	idA, sessA := runBig(t, a)
	if _, err := eng.Session(ctx, TokenOwner(alpha), sessA); err != nil {
		t.Errorf("session not owned by alpha's hash: %v", err)
	}
	if ss, _ := eng.Store().ListSessions(ctx, scrollback.LocalOwner); len(ss) != 0 {
		t.Error("a token's session went to the local owner")
	}
	if strings.Contains(TokenOwner(alpha), alpha) {
		t.Error("the owner holds the token")
	}

	// Beta names alpha's session: the same 404 as a session that never was.
	missing := "s_" + strings.Repeat("b", 26)
	st1, body1 := post(t, ts.URL+Path, map[string]string{"Authorization": "Bearer " + beta, SessionHeader: sessA})
	st2, body2 := post(t, ts.URL+Path, map[string]string{"Authorization": "Bearer " + beta, SessionHeader: missing})
	if st1 != http.StatusNotFound || st1 != st2 || strings.ReplaceAll(body1, sessA, "ID") != strings.ReplaceAll(body2, missing, "ID") {
		t.Errorf("another token's session: %d %q; a missing one: %d %q", st1, body1, st2, body2)
	}
	// Alpha resumes its own.
	a2 := mustHTTPClient(t, ts.URL, map[string]string{"Authorization": "Bearer " + alpha, SessionHeader: sessA})
	if res := call(t, a2, "read_tool_output", map[string]any{"id": idA, "limit": 2}); text(res, 0) != "1\n" {
		t.Errorf("alpha resuming: %q", text(res, 0))
	}

	// Beta uses alpha's MCP session id: refused as one that never was,
	// whatever the method, so that its existence is not revealed.
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		answer := func(sid string) (int, string) {
			req, _ := http.NewRequest(method, ts.URL+Path, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_tool_output","arguments":{"id":"`+idA+`"}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			return do(t, req, map[string]string{"Authorization": "Bearer " + beta, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
		}
		st1, body1 := answer(a.ID())
		st2, body2 := answer(strings.Repeat("X", len(a.ID())))
		if st1 != http.StatusNotFound || st1 != st2 || body1 != body2 {
			t.Errorf("%s: beta in alpha's MCP session: %d %q; in one that never was: %d %q", method, st1, body1, st2, body2)
		}
	}
	// Alpha is still served.
	if res := call(t, a, "run_command", map[string]any{"command": "echo ok"}); res.IsError {
		t.Errorf("alpha after the refusals: %q", text(res, 0))
	}
}

// TestHTTPLargeRequest: a request over MaxRequestBytes gets 413; a 10 MiB
// argument under it gets a tool error; both leave the server serving.
func TestHTTPLargeRequest(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	const limit = 16 << 20
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{MaxRequestBytes: limit}))
	t.Cleanup(ts.Close)
	cs := mustHTTPClient(t, ts.URL, nil)
	res := call(t, cs, "read_tool_output", map[string]any{"id": strings.Repeat("é", 5<<20)})
	if !res.IsError || !strings.Contains(text(res, 0), "no retained output") || len(text(res, 0)) > 4096 {
		t.Errorf("10 MiB id: error=%v %.200q (%d bytes)", res.IsError, text(res, 0), len(text(res, 0)))
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+Path, io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"`), strings.NewReader(strings.Repeat("x", limit)), strings.NewReader(`"}}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if status, _ := do(t, req, nil); status != http.StatusRequestEntityTooLarge {
		t.Errorf("17 MiB request: %d, want 413", status)
	}
	if res := call(t, cs, "run_command", map[string]any{"command": "echo ok"}); res.IsError {
		t.Errorf("after: %q", text(res, 0))
	}
}

func TestListen(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		addr   string
		tokens bool
		ok     bool
	}{
		{"127.0.0.1:0", false, true},
		{"localhost:0", false, true},
		{"[::1]:0", false, true},
		{"127.0.0.2:0", false, true},
		{":0", false, false},
		{"0.0.0.0:0", false, false},
		{"[::]:0", false, false},
		{"192.0.2.1:0", false, false},
		{"0.0.0.0:0", true, true},
		{"127.0.0.1", false, false}, // no port
		{"127.0.0.1:99999", true, false},
		{"127.0.0.1:-1", true, false},
		{"nonsense", true, false},
		{"", true, false},
	} {
		ln, err := Listen(ctx, tc.addr, tc.tokens)
		if ln != nil {
			ln.Close()
		}
		if tc.tokens && !tc.ok && !errors.Is(err, ErrBadAddress) {
			t.Errorf("Listen(%q): %v, want ErrBadAddress", tc.addr, err)
		}
		if cerr := CheckAddress(ctx, tc.addr, tc.tokens); (cerr == nil) != tc.ok {
			t.Errorf("CheckAddress(%q, tokens=%v) = %v, want ok=%v", tc.addr, tc.tokens, cerr, tc.ok)
		}
		if tc.addr == "[::1]:0" && err != nil && !errors.Is(err, ErrNeedToken) {
			continue // no IPv6 on this machine
		}
		if (err == nil) != tc.ok {
			t.Errorf("Listen(%q, tokens=%v) = %v, want ok=%v", tc.addr, tc.tokens, err, tc.ok)
		}
		if !tc.ok && err != nil && strings.Contains(tc.addr, ":0") && !errors.Is(err, ErrNeedToken) {
			t.Errorf("Listen(%q): %v, want ErrNeedToken", tc.addr, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "mcpserver: ") {
			t.Errorf("error %q lacks the package prefix", err)
		}
	}
	ln, err := Listen(ctx, "127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if a := ln.Addr().(*net.TCPAddr); a.Port == 0 {
		t.Error("port 0 was not resolved to a port")
	}
}

func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		want          string // name=secret, comma-separated
		err           string
	}{
		{"one", "secret-1\n", unnamed("secret-1") + "=secret-1", ""},
		{"no newline", "secret-1", unnamed("secret-1") + "=secret-1", ""},
		{"several", "# clients\n\n  a-token  \nb-token\r\n", unnamed("a-token") + "=a-token," + unnamed("b-token") + "=b-token", ""},
		{"named", "alice: tok-a\nbob:\ttok-b\n", "alice=tok-a,bob=tok-b", ""},
		{"named and bare", "alice: tok-a\ntok:with:colons\n", "alice=tok-a," + unnamed("tok:with:colons") + "=tok:with:colons", ""},
		{"empty", "", "", "no token"},
		{"comments only", "# nothing\n\n", "", "no token"},
		{"space inside", "two words\n", "", "may not contain spaces"},
		{"space in named token", "alice: two words\n", "", "may not contain spaces"},
		{"name without token", "alice: \n", "", "no token after"},
		{"two-word name", "alice smith: tok\n", "", "a name is one word"},
		{"name twice", "alice: a\nalice: b\n", "", `the name "alice" is on lines 1 and 2`},
		{"token twice", "alice: same\nbob: same\n", "", "lines 1 and 2 hold the same token"},
	} {
		p := filepath.Join(dir, tc.name)
		os.WriteFile(p, []byte(tc.content), 0o600)
		got, err := ReadTokenFile(p)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "mcpserver: ") {
				t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
			}
			continue
		}
		var pairs []string
		for _, tok := range got {
			pairs = append(pairs, tok.Name+"="+tok.Secret)
		}
		if err != nil || strings.Join(pairs, ",") != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := ReadTokenFile(filepath.Join(dir, "missing")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestTokenOwner(t *testing.T) {
	a, b := TokenOwner("alpha"), TokenOwner("beta")
	if a == b || a != TokenOwner("alpha") || !strings.HasPrefix(a, "token:") || len(a) != len("token:")+32 {
		t.Errorf("TokenOwner: %q %q", a, b)
	}
}

// TestHTTPJSONResponse: with JSONResponse each call is answered with one
// application/json body, which the SDK's client reads as it reads an event
// stream; without it, with an event stream.
func TestHTTPJSONResponse(t *testing.T) {
	for _, tc := range []struct {
		json bool
		want string
	}{
		{false, "text/event-stream"},
		{true, "application/json"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			eng, _ := newEngine(t, filepager.Options{})
			ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{JSONResponse: tc.json}))
			t.Cleanup(ts.Close)

			cs := mustHTTPClient(t, ts.URL, nil)
			id, _ := runBig(t, cs)
			res := call(t, cs, "read_tool_output", map[string]any{"id": id, "limit": 4})
			if res.IsError || text(res, 0) != "1\n2\n" {
				t.Errorf("read_tool_output: error=%v text=%q", res.IsError, text(res, 0))
			}

			// The same call in plain HTTP, to see the answer's type.
			s, err := newRawSession(ts.URL+Path, http.DefaultClient)
			if err != nil {
				t.Fatal(err)
			}
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_tool_output","arguments":{"id":"o_nope"}}}`
			status, ct, data := postInSession(t, ts.URL+Path, s.id, body)
			if status != http.StatusOK || !strings.HasPrefix(ct, tc.want) ||
				!strings.Contains(data, `"id":7`) || !strings.Contains(data, "no retained output with that id") {
				t.Errorf("tools/call: %d %q %q", status, ct, data)
			}
		})
	}
}

// TestHTTPSlowBody: a request body must arrive within bodyReadTimeout. A
// client without a token that sends its body a byte at a time no longer
// holds the connection (the server read the body's rest before it
// answered, without end); a call whose body has arrived runs past the
// timeout unharmed.
func TestHTTPSlowBody(t *testing.T) {
	defer func(d time.Duration) { bodyReadTimeout = d }(bodyReadTimeout)
	bodyReadTimeout = 300 * time.Millisecond
	const token = "slow-token-0123456789"
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{token}}))
	t.Cleanup(ts.Close)

	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+strings.TrimPrefix(ts.URL, "http://")+
		"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":")
	// The test gives up long after the timeout; the server answers (401)
	// or closes the connection well before.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := conn.Read(make([]byte, 512)); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a body that never arrives holds the connection: %v", err)
	}

	// A call that outlives the timeout, its body long read, is not cut.
	cs := mustHTTPClient(t, ts.URL, map[string]string{"Authorization": "Bearer " + token})
	res := call(t, cs, "run_command", map[string]any{"command": "sleep 1; echo slept"})
	if res.IsError || !strings.Contains(text(res, 0), "slept") {
		t.Fatalf("a call longer than the body's timeout: %s", text(res, 0))
	}
}

// TestHTTPTokenChallenge: a 401 says, as RFC 6750 wants, whether a token
// was missing (no error code) or refused (error="invalid_token"), so a
// client knows to get another rather than to send one; on the MCP address
// and on the metrics address alike.
func TestHTTPTokenChallenge(t *testing.T) {
	const token = "challenge-token-0123456789"
	eng, _ := newEngine(t, filepager.Options{})
	tokens := NewTokenSet([]Token{{Name: "alice", Secret: token}})
	mcpSrv := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{TokenSet: tokens, Observer: NewObserver(nil)}))
	t.Cleanup(mcpSrv.Close)
	opsSrv := httptest.NewServer(OpsHandler(OpsOptions{TokenSet: tokens, Observer: NewObserver(nil), Ready: func(context.Context) error { return nil }}))
	t.Cleanup(opsSrv.Close)
	for _, url := range []string{mcpSrv.URL + Path, mcpSrv.URL + "/metrics", opsSrv.URL + "/metrics"} {
		for _, tc := range []struct {
			auth, want string
		}{
			{"", `Bearer realm="scrollback"`},
			{"Bearer wrong", `Bearer realm="scrollback", error="invalid_token"`},
		} {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || got != tc.want {
				t.Errorf("GET %s with %q: %d, WWW-Authenticate %q; want 401, %q", url, tc.auth, resp.StatusCode, got, tc.want)
			}
		}
	}
}
