package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
)

// rpcAnswer is one JSON-RPC answer, as a raw request gets it.
type rpcAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	status    int
	sessionID string // the Mcp-Session-Id response header
}

// rawStateless POSTs one request of protocol 2026-07-28, without
// initialize and without an MCP session: its version and capabilities in
// _meta and the headers the protocol asks for.
func rawStateless(t *testing.T, url, method string, params map[string]any, hdr map[string]string) rpcAnswer {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "0"},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url+Path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	switch method {
	case "tools/call", "prompts/get":
		req.Header.Set("Mcp-Name", params["name"].(string))
	case "resources/read":
		req.Header.Set("Mcp-Name", params["uri"].(string))
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := rpcAnswer{status: resp.StatusCode, sessionID: resp.Header.Get("Mcp-Session-Id")}
	// The answer is one JSON body, or an event stream whose last message
	// is the answer.
	var last string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			last = d
		} else if strings.HasPrefix(line, "{") {
			last = line
		}
	}
	if err := json.Unmarshal([]byte(last), &a); err != nil {
		t.Fatalf("%s: status %d, answer %q: %v", method, resp.StatusCode, last, err)
	}
	return a
}

// toolResult decodes a tools/call answer.
func (a rpcAnswer) toolResult(t *testing.T) *mcp.CallToolResult {
	t.Helper()
	if a.Error != nil {
		t.Fatalf("protocol error %d: %s", a.Error.Code, a.Error.Message)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(a.Result, &res); err != nil {
		t.Fatalf("result %s: %v", a.Result, err)
	}
	return &res
}

// TestStatelessRequests: protocol 2026-07-28 over HTTP, each request on
// its own (no initialize, no MCP session): a copy made by one request is
// read, searched and fetched as a resource by later ones, all in the
// token's default session; another token gets "no such id", as for an id
// that never existed, and the Scrollback-Session header names a session
// of the caller's own.
func TestStatelessRequests(t *testing.T) {
	const alpha, beta = "alpha-token-0123456789", "beta-token-9876543210"
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{alpha, beta}}))
	t.Cleanup(ts.Close)
	ctx := context.Background()
	asAlpha := map[string]string{"Authorization": "Bearer " + alpha}
	asBeta := map[string]string{"Authorization": "Bearer " + beta}

	a := rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "run_command", "arguments": map[string]any{"command": "seq 100000"}}, asAlpha)
	if a.sessionID != "" {
		t.Errorf("a stateless request got an MCP session: %q", a.sessionID)
	}
	res := a.toolResult(t)
	var rc scrollback.RunCommandResult
	decode(t, res, &rc)
	if rc.OutputID == "" {
		t.Fatalf("no copy: %+v", rc)
	}
	def, err := eng.DefaultSession(ctx, TokenOwner(alpha))
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta[MetaSession] != def.ID() {
		t.Errorf("the call acted on %v, not alpha's default session %s", res.Meta[MetaSession], def.ID())
	}
	// The text block first, the resource link last.
	if _, ok := res.Content[0].(*mcp.TextContent); !ok {
		t.Errorf("first block is %T, want the text", res.Content[0])
	}
	link, ok := res.Content[len(res.Content)-1].(*mcp.ResourceLink)
	if !ok || link.URI != OutputURI(rc.OutputID) || link.Size == nil || *link.Size != rc.TotalBytes || link.MIMEType != "text/plain" || link.Name == "" {
		t.Errorf("last block %#v, want a resource_link to %s of %d bytes", res.Content[len(res.Content)-1], OutputURI(rc.OutputID), rc.TotalBytes)
	}

	page := rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "read_tool_output", "arguments": map[string]any{"id": rc.OutputID, "limit": 6}}, asAlpha).toolResult(t)
	if page.IsError || text(page, 0) != "1\n2\n3\n" {
		t.Errorf("read_tool_output in a later request: %q", text(page, 0))
	}
	grep := rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "grep_tool_output", "arguments": map[string]any{"id": rc.OutputID, "pattern": "^77777$"}}, asAlpha).toolResult(t)
	if grep.IsError || !strings.Contains(text(grep, 0), "77777:") {
		t.Errorf("grep_tool_output in a later request: %q", text(grep, 0))
	}
	read := rawStateless(t, ts.URL, "resources/read", map[string]any{"uri": OutputURI(rc.OutputID)}, asAlpha)
	var rr mcp.ReadResourceResult
	if read.Error != nil || json.Unmarshal(read.Result, &rr) != nil || len(rr.Contents) != 1 ||
		int64(len(rr.Contents[0].Text)) != rc.TotalBytes || !strings.HasPrefix(rr.Contents[0].Text, "1\n2\n") || !strings.HasSuffix(rr.Contents[0].Text, "\n100000\n") {
		t.Errorf("resources/read: %+v %s", read.Error, cut(string(read.Result)))
	}
	tl := rawStateless(t, ts.URL, "resources/templates/list", nil, asAlpha)
	if tl.Error != nil || !strings.Contains(string(tl.Result), `"uriTemplate":"scrollback://output/{id}"`) {
		t.Errorf("resources/templates/list: %+v %s", tl.Error, tl.Result)
	}

	// Beta: the same "no such id" as an id that never existed.
	never := "out_" + strings.Repeat("q", 26)
	for _, id := range []string{rc.OutputID, never} {
		r := rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "read_tool_output", "arguments": map[string]any{"id": id}}, asBeta).toolResult(t)
		msg := strings.ReplaceAll(text(r, 0), id, "ID")
		if !r.IsError || r.Meta[MetaErrorKind] != "not_found" || !strings.Contains(msg, "no retained output with that id in this session") {
			t.Errorf("beta reading %s: %v %q %v", id, r.IsError, msg, r.Meta)
		}
		e := rawStateless(t, ts.URL, "resources/read", map[string]any{"uri": OutputURI(id)}, asBeta)
		if e.Error == nil || e.Error.Code != -32602 || !strings.Contains(string(e.Error.Data), `"scrollback/error_kind":"not_found"`) {
			t.Errorf("beta fetching %s: %+v", id, e)
		}
	}
	if r := rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "read_tool_output", "arguments": map[string]any{"id": rc.OutputID}}, asBeta).toolResult(t); strings.Contains(text(r, 0), "100000") {
		t.Error("beta read alpha's copy")
	}

	// The header names a session: alpha's own is used, beta's is not found.
	other, err := eng.NewSession(ctx, TokenOwner(alpha))
	if err != nil {
		t.Fatal(err)
	}
	r := rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "run_command", "arguments": map[string]any{"command": "echo hi"}},
		map[string]string{"Authorization": "Bearer " + alpha, SessionHeader: other.ID()}).toolResult(t)
	if r.IsError || r.Meta[MetaSession] != other.ID() {
		t.Errorf("alpha naming its session: %q %v", text(r, 0), r.Meta)
	}
	r = rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "read_tool_output", "arguments": map[string]any{"id": rc.OutputID}},
		map[string]string{"Authorization": "Bearer " + beta, SessionHeader: def.ID()}).toolResult(t)
	if !r.IsError || r.Meta[MetaErrorKind] != "not_found" || !strings.Contains(text(r, 0), "no session") {
		t.Errorf("beta naming alpha's session: %q %v", text(r, 0), r.Meta)
	}
	if ss, _ := eng.Store().ListSessions(ctx, TokenOwner(beta)); len(ss) != 1 {
		t.Errorf("beta has %d sessions, want its default one", len(ss))
	}
}

func cut(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// TestStatelessGoClient: the Go SDK's client speaks 2026-07-28 to the
// HTTP server (it discovers it), and two clients of one token, one after
// the other, share the token's default session: the second reads the
// first's copy. A client asking for 2025-11-25 still gets an MCP session
// of its own.
func TestStatelessGoClient(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{"tok-0123456789"}}))
	t.Cleanup(ts.Close)
	hdr := map[string]string{"Authorization": "Bearer tok-0123456789"}
	first, err := httpClientAt(t, ts.URL, hdr, "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	if v := first.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	id, sess := runBig(t, first)
	first.Close()
	second, err := httpClientAt(t, ts.URL, hdr, "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, second, "read_tool_output", map[string]any{"id": id, "limit": 2})
	if res.IsError || text(res, 0) != "1\n" || res.Meta[MetaSession] != sess {
		t.Errorf("second client: %v %q %v", res.IsError, text(res, 0), res.Meta)
	}
	rr, err := second.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: OutputURI(id)})
	if err != nil || len(rr.Contents) != 1 || !strings.HasSuffix(rr.Contents[0].Text, "\n100000\n") {
		t.Errorf("resources/read: %v", err)
	}
	legacy := mustHTTPClient(t, ts.URL, hdr)
	if v := legacy.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("legacy client negotiated %q", v)
	}
	if res := call(t, legacy, "read_tool_output", map[string]any{"id": id}); !res.IsError {
		t.Error("an MCP session of its own read the default session's copy")
	}
}

// TestStdio2026: over stdio (here an in-memory pipe) the server speaks
// 2026-07-28 too, with the same session throughout.
func TestStdio2026(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	sess, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, NewServer(sess, Options{}))
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q", v)
	}
	id, s := runBig(t, cs)
	if s != sess.ID() {
		t.Errorf("session %s, want %s", s, sess.ID())
	}
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: OutputURI(id)})
	if err != nil || rr.Meta[MetaComplete] != true {
		t.Errorf("resources/read: %v %v", err, rr)
	}
	tpl, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != OutputURITemplate {
		t.Errorf("templates: %v %+v", err, tpl)
	}
}

// TestNamedTokenPrincipal: a named token's principal is its name, so that
// its default session outlives a rotation of the secret; a bare token's
// is its hash, which no other token shares.
func TestNamedTokenPrincipal(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	set := NewTokenSet([]Token{{Name: "alice", Secret: "alice-old-0123456789"}, {Name: unnamed("bare-0123456789"), Secret: "bare-0123456789"}})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{TokenSet: set}))
	t.Cleanup(ts.Close)
	run := func(tok string) string {
		res := rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "run_command", "arguments": map[string]any{"command": "echo hi"}},
			map[string]string{"Authorization": "Bearer " + tok}).toolResult(t)
		s, _ := res.Meta[MetaSession].(string)
		return s
	}
	before := run("alice-old-0123456789")
	set.Replace([]Token{{Name: "alice", Secret: "alice-new-9876543210"}, {Name: unnamed("bare-0123456789"), Secret: "bare-0123456789"}})
	if after := run("alice-new-9876543210"); after != before || before == "" {
		t.Errorf("alice's default session %q became %q with her new secret", before, after)
	}
	if _, err := eng.Session(context.Background(), NamedOwner("alice"), before); err != nil {
		t.Errorf("alice's session is not owned by her name: %v", err)
	}
	bare := run("bare-0123456789")
	if _, err := eng.Session(context.Background(), TokenOwner("bare-0123456789"), bare); err != nil || bare == before {
		t.Errorf("the bare token's session %q is not owned by its hash: %v", bare, err)
	}
}

// TestRequestServersKept: the server of a principal's requests without an
// MCP session is made once and kept; past the bound, the one unused
// longest is dropped and its binding is done.
func TestRequestServersKept(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	c := &requestServers{live: &Live{}}
	made := 0
	mk := func(owner string) func() *httpSession {
		return func() *httpSession {
			made++
			b := DefaultBinding(eng, owner)
			b.perRequest, b.done = true, make(chan struct{})
			return &httpSession{b: b, owner: owner}
		}
	}
	first := c.get("alice\x00", mk("alice"))
	if again := c.get("alice\x00", mk("alice")); again != first || made != 1 {
		t.Fatalf("a second request made another server (%d made)", made)
	}
	for i := range maxRequestServers {
		c.get(fmt.Sprintf("p%d\x00", i), mk(fmt.Sprintf("p%d", i)))
	}
	select {
	case <-first.b.Done():
	default:
		t.Error("the server unused longest was kept past the bound")
	}
	if n := len(c.m); n != maxRequestServers {
		t.Errorf("%d servers kept, want %d", n, maxRequestServers)
	}
}

// TestStatelessMissingVersionHeader: a request whose _meta names protocol
// 2026-07-28 but that lacks the MCP-Protocol-Version header gets 400 that
// names the header and the version, not a refusal of a version it did not
// send; nothing runs.
func TestStatelessMissingVersionHeader(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{}))
	t.Cleanup(ts.Close)
	a := rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "run_command", "arguments": map[string]any{"command": "echo ran"}},
		map[string]string{"Mcp-Protocol-Version": ""})
	if a.status != http.StatusBadRequest || a.Error == nil || a.Error.Code != mcp.CodeHeaderMismatch ||
		!strings.Contains(a.Error.Message, "MCP-Protocol-Version: 2026-07-28") || strings.Contains(a.Error.Message, "2025-03-26") {
		t.Fatalf("status %d, answer %+v %s: want 400, code %d naming the missing header", a.status, a.Error, a.Result, mcp.CodeHeaderMismatch)
	}
	// With the header, the same request runs.
	if res := rawStateless(t, ts.URL, "tools/call", map[string]any{"name": "run_command", "arguments": map[string]any{"command": "echo ran"}}, nil).toolResult(t); res.IsError {
		t.Fatalf("with the header: %s", text(res, 0))
	}
}

// TestStatelessNamedSessionDeleted: a request naming, in its
// Scrollback-Session header, a session of the caller's that has been
// deleted gets the not_found error and runs nothing, as on a server that
// never saw the session; the server kept from the earlier requests naming
// it does not move them to a new session of its own making. Without the
// header, the principal's default session is still the one every server
// finds.
func TestStatelessNamedSessionDeleted(t *testing.T) {
	const tok = "tok-0123456789"
	eng, _ := newEngine(t, filepager.Options{})
	ctx := context.Background()
	owner := TokenOwner(tok)
	hdr := map[string]string{"Authorization": "Bearer " + tok}
	var servers []string
	for range 2 {
		ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{tok}}))
		t.Cleanup(ts.Close)
		servers = append(servers, ts.URL)
	}
	named, err := eng.NewSession(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	withHeader := map[string]string{"Authorization": "Bearer " + tok, SessionHeader: named.ID()}
	run := func(url string, h map[string]string, command string) *mcp.CallToolResult {
		t.Helper()
		return rawStateless(t, url, "tools/call", map[string]any{"name": "run_command", "arguments": map[string]any{"command": command}}, h).toolResult(t)
	}
	if res := run(servers[0], withHeader, "echo before"); res.IsError || res.Meta[MetaSession] != named.ID() {
		t.Fatalf("naming the session: %q %v", text(res, 0), res.Meta)
	}
	def, _ := run(servers[0], hdr, "echo default").Meta[MetaSession].(string)
	if err := eng.DeleteSession(ctx, owner, named.ID()); err != nil {
		t.Fatal(err)
	}
	// Output to retain: a save into the deleted session would move it.
	for i, url := range servers {
		res := run(url, withHeader, "seq 50000")
		if !res.IsError || res.Meta[MetaErrorKind] != scrollback.KindNotFound || !strings.Contains(text(res, 0), "no session") {
			t.Errorf("server %d, naming the deleted session: isError %v, %q, _meta %v; want the not_found error", i, res.IsError, cut(text(res, 0)), res.Meta)
		}
	}
	ss, err := eng.Store().ListSessions(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || ss[0].ID != def {
		var ids []string
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
		t.Errorf("the owner's sessions are %v, want only the default %s", ids, def)
	}
	for i, url := range servers {
		if s := run(url, hdr, "echo default").Meta[MetaSession]; s != def {
			t.Errorf("server %d: default session %v, want %s", i, s, def)
		}
	}
}
