package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/present"
)

// connectAt connects a client to srv that asks for protocol version (""
// for the SDK's latest).
func connectAt(t testing.TB, srv *mcp.Server, version string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestResourceLinkByVersion: the resource_link content block came with
// protocol 2025-06-18; a client of an older version, whose content union
// has no such type, would reject the whole result (a strict client fails
// the call), so it gets only the text blocks, whose footer names the copy.
func TestResourceLinkByVersion(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	for _, tc := range []struct {
		version string
		link    bool
	}{
		{"2024-11-05", false},
		{"2025-03-26", false},
		{"2025-06-18", true},
		{"2025-11-25", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			sess, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
			if err != nil {
				t.Fatal(err)
			}
			cs := connectAt(t, NewServer(sess, Options{}), tc.version)
			if got := cs.InitializeResult().ProtocolVersion; got != tc.version {
				t.Fatalf("negotiated %s, want %s", got, tc.version)
			}
			res := call(t, cs, "run_command", map[string]any{"command": "seq 1 30000"})
			links := 0
			for _, c := range res.Content {
				if _, ok := c.(*mcp.ResourceLink); ok {
					links++
				}
			}
			if tc.link != (links == 1) || links > 1 {
				t.Errorf("%d resource_link blocks, want link=%v", links, tc.link)
			}
			if res.IsError || len(res.Content) == 0 {
				t.Fatalf("result: %+v", res)
			}
		})
	}
}

// TestListOutputResources: resources/list lists the session's retained
// copies (a client that attaches resources finds them there, a copy
// whose call was cancelled included), page by page, and only the
// session's; the server does not claim list-changed notifications it
// never sends.
func TestListOutputResources(t *testing.T) {
	defer func(n int) { CopiesPageSize = n }(CopiesPageSize)
	CopiesPageSize = 2
	ctx := context.Background()
	cs, _, _ := newClient(t)
	if caps := cs.InitializeResult().Capabilities.Resources; caps == nil || caps.ListChanged {
		t.Errorf("resources capability %+v: want resources without listChanged", caps)
	}
	if res, err := cs.ListResources(ctx, nil); err != nil || len(res.Resources) != 0 {
		t.Fatalf("before any copy: %v, %v", res, err)
	}
	want := map[string]int64{}
	for i := range 3 {
		res := call(t, cs, "run_command", map[string]any{"command": "seq 1 " + strconv.Itoa(30000+i)})
		var out scrollback.RunCommandResult
		decode(t, res, &out)
		want[OutputURI(out.OutputID)] = out.TotalBytes
	}
	got := map[string]int64{}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if r.MIMEType != "text/plain" || r.Size == 0 || r.Name == "" {
			t.Errorf("resource %+v", r)
		}
		got[r.URI] = r.Size
	}
	if !maps.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	first, err := cs.ListResources(ctx, nil)
	if err != nil || len(first.Resources) != 2 || first.NextCursor == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	if _, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "bogus"}); err == nil {
		t.Error("a bogus cursor was accepted")
	}

	// Another session lists none of them.
	other, _, _ := newClient(t)
	if res, err := other.ListResources(ctx, nil); err != nil || len(res.Resources) != 0 {
		t.Errorf("another session lists %v, %v", res, err)
	}
}

// TestCopiesCachePrivate: a copy's text and the list of a session's copies
// belong to one principal; under protocol 2026-07-28 a result marked
// cacheScope "public" may be cached and served by an intermediary to
// anyone, so both are "private".
func TestCopiesCachePrivate(t *testing.T) {
	ctx := context.Background()
	cs, _, _ := newClient(t)
	res := call(t, cs, "run_command", map[string]any{"command": "seq 1 30000"})
	var out scrollback.RunCommandResult
	decode(t, res, &out)
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: OutputURI(out.OutputID)})
	if err != nil {
		t.Fatal(err)
	}
	if read.CacheScope != "private" {
		t.Errorf("resources/read of a copy: cacheScope %q, want private", read.CacheScope)
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if list.CacheScope != "private" {
		t.Errorf("resources/list: cacheScope %q, want private", list.CacheScope)
	}
}

// TestProgress: a call that gives a progressToken gets progress
// notifications while it runs, each further than the last and saying how
// long it has run, so that a client that resets its request timeout on
// progress (the TypeScript SDK's resetTimeoutOnProgress) does not give up
// on a long command; a call without one gets none.
func TestProgress(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 50 * time.Millisecond
	eng, _ := newEngine(t, filepager.Options{})
	sess, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	srv := NewServer(sess, Options{})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		},
	}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	p := &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "sleep 0.5; echo done"}}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(context.Background(), p)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	mu.Lock()
	n := len(got)
	for i, g := range got {
		if g.ProgressToken != "tok" || !strings.Contains(g.Message, "run_command") {
			t.Errorf("notification %d: %+v", i, g)
		}
		if i > 0 && g.Progress <= got[i-1].Progress {
			t.Errorf("progress went from %v to %v", got[i-1].Progress, g.Progress)
		}
	}
	got = nil
	mu.Unlock()
	if n < 3 {
		t.Errorf("%d progress notifications during a 0.5 s command, want several", n)
	}

	call(t, cs, "run_command", map[string]any{"command": "sleep 0.3"})
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Errorf("a call without a progressToken got %d notifications", len(got))
	}
}

// TestNullArgumentMessage: an argument sent as null where the schema wants
// a value is a tool error that says null, not the validator's
// "<invalid reflect.Value>", and says to leave the argument out.
func TestNullArgumentMessage(t *testing.T) {
	cs, _, _ := newClient(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"read_tool_output", map[string]any{"id": "out_x", "offset": nil}},
		{"run_command", map[string]any{"command": "true", "timeout_ms": nil}},
		{"read_tool_output", map[string]any{"id": nil}},
	} {
		res := call(t, cs, tc.tool, tc.args)
		msg := text(res, 0)
		if !res.IsError || strings.Contains(msg, "reflect") || !strings.Contains(msg, "null") || !strings.Contains(msg, "leave") {
			t.Errorf("%s %v: %q", tc.tool, tc.args, msg)
		}
	}
}

// TestCallWithoutName: a tools/call without a tool name is a tool error
// that says the name is missing, not one that starts with ": ".
func TestCallWithoutName(t *testing.T) {
	cs, _, _ := newClient(t)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if msg := text(res, 0); !res.IsError || strings.HasPrefix(msg, ":") || !strings.Contains(msg, "run_command") || !strings.Contains(msg, "name") {
		t.Errorf("%q", msg)
	}
}

// TestHTTPListOutputResourcesSeparate: over HTTP, resources/list shows
// only the caller's copies: another MCP session's are not listed, nor,
// for a request of protocol 2026-07-28, another token's.
func TestHTTPListOutputResourcesSeparate(t *testing.T) {
	const alpha, beta = "alpha-token-0123456789", "beta-token-9876543210"
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{alpha, beta}}))
	t.Cleanup(ts.Close)
	ctx := context.Background()
	uris := func(cs *mcp.ClientSession) []string {
		t.Helper()
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var u []string
		for _, r := range res.Resources {
			u = append(u, r.URI)
		}
		return u
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		a, err := httpClientAt(t, ts.URL, map[string]string{"Authorization": "Bearer " + alpha}, version)
		if err != nil {
			t.Fatal(err)
		}
		a2, err := httpClientAt(t, ts.URL, map[string]string{"Authorization": "Bearer " + alpha}, version)
		if err != nil {
			t.Fatal(err)
		}
		b, err := httpClientAt(t, ts.URL, map[string]string{"Authorization": "Bearer " + beta}, version)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := runBig(t, a)
		if got := uris(a); !slices.Contains(got, OutputURI(id)) {
			t.Errorf("%s: the session's own list %v lacks %s", version, got, id)
		}
		if got := uris(b); slices.Contains(got, OutputURI(id)) {
			t.Errorf("%s: another token lists %s", version, id)
		}
		// Before 2026-07-28 each MCP session has its own scrollback
		// session; from it on, a token's requests share its default one.
		if got := uris(a2); slices.Contains(got, OutputURI(id)) != (version >= StatelessVersion) {
			t.Errorf("%s: the same token's other client lists %v", version, got)
		}
	}
}

// TestHTTPReadOutputResourceByPrincipal: resources/read of a copy's URI
// returns its text to the principal that owns it, from any of its
// sessions (the contract's "to the principal that owns it"), while
// read_tool_output stays scoped to the session; another token gets the
// not_found error, as for an id that never existed.
func TestHTTPReadOutputResourceByPrincipal(t *testing.T) {
	const alpha, beta = "alpha-token-0123456789", "beta-token-9876543210"
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{alpha, beta}}))
	t.Cleanup(ts.Close)
	ctx := context.Background()
	client := func(token string) *mcp.ClientSession {
		t.Helper()
		cs, err := httpClientAt(t, ts.URL, map[string]string{"Authorization": "Bearer " + token}, "2025-11-25")
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	a, b := client(alpha), client(beta)
	id, _ := runBig(t, a)
	const total = 588895 // seq 100000
	a2 := client(alpha)  // a new MCP session: a new scrollback session, nothing made in it yet
	for _, cs := range []*mcp.ClientSession{a2, a} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: OutputURI(id)})
		if err != nil {
			t.Fatalf("the owner's read of %s: %v", id, err)
		}
		if got := int64(len(res.Contents[0].Text)); got != total {
			t.Errorf("the owner read %d bytes of %s, want %d", got, id, total)
		}
	}
	// Once a2 has a session of its own, the copy is still its principal's.
	call(t, a2, "run_command", map[string]any{"command": "echo made"})
	if _, err := a2.ReadResource(ctx, &mcp.ReadResourceParams{URI: OutputURI(id)}); err != nil {
		t.Errorf("the owner's read from another session that holds copies: %v", err)
	}
	// read_tool_output is the session's, as the contract says.
	if res := call(t, a2, "read_tool_output", map[string]any{"id": id}); !res.IsError || res.Meta[MetaErrorKind] != "not_found" {
		t.Errorf("read_tool_output from another session: isError=%v kind=%v", res.IsError, res.Meta[MetaErrorKind])
	}
	_, err := b.ReadResource(ctx, &mcp.ReadResourceParams{URI: OutputURI(id)})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || !strings.Contains(string(werr.Data), "not_found") {
		t.Errorf("another token's read: %v, want the not_found error", err)
	}
	_, never := b.ReadResource(ctx, &mcp.ReadResourceParams{URI: OutputURI("out_aaaaaaaaaaaaaaaaaaaaaaaaaa")})
	if err == nil || never == nil || err.Error() != strings.ReplaceAll(never.Error(), "out_aaaaaaaaaaaaaaaaaaaaaaaaaa", id) {
		t.Errorf("another token's read differs from a never-made id's:\n%v\n%v", err, never)
	}
}

// TestHTTPRequestWithoutSession: a request other than initialize (or
// ping), sent without an Mcp-Session-Id by a client of a protocol with
// sessions, gets 400 and a JSON-RPC invalid request saying what to send,
// as the specification asks, not a 200 carrying error code 0 ("invalid
// during session initialization").
func TestHTTPRequestWithoutSession(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{}))
	t.Cleanup(ts.Close)
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, 400, `"id":5,"error":{"code":-32600,"message":"invalid request: no Mcp-Session-Id`},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"echo x"}}}`, 400, `"code":-32600`},
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, 200, `"id":7,"result":{}`},
	} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+Path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		status, body := do(t, req, nil)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want %d with %q", tc.body, status, body, tc.status, tc.want)
		}
	}
}

// TestReadOutputResourceFragment: resources/read of a copy's URI with
// something after the id (a #bytes range, which only the proxy's
// arguments take) is the not_found error that says what a copy's URI is,
// not the SDK's bare "Resource not found".
func TestReadOutputResourceFragment(t *testing.T) {
	cs, _, _ := newClient(t)
	var out scrollback.RunCommandResult
	decode(t, call(t, cs, "run_command", map[string]any{"command": "seq 1 30000"}), &out)
	// Characters the URI template's {id} does not match ($, !, a space)
	// went to the SDK, whose error has no kind.
	for _, uri := range []string{OutputURI(out.OutputID) + "#bytes=0-10", OutputURI(out.OutputID) + "?x=1", OutputURI(out.OutputID) + "/more",
		OutputURI(out.OutputID) + "$", OutputURI("a$b"), OutputURI(out.OutputID) + "!", OutputURI("a b"), OutputURI("")} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		var je *jsonrpc.Error
		if err == nil || !strings.Contains(err.Error(), "followed by its output_id, nothing else") ||
			!errors.As(err, &je) || !strings.Contains(string(je.Data), `"scrollback/error_kind":"not_found"`) {
			t.Errorf("%s: %v", uri, err)
		}
	}
}

// TestRunCodeLogsLink: console output over the preview budget is a
// retained copy, and like the return value's copy it gets a
// resource_link, after the text blocks.
func TestRunCodeLogsLink(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	sess, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectAt(t, NewServer(sess, Options{}), "2025-11-25")
	res := call(t, cs, "run_code", map[string]any{"code": "for (let i = 0; i < 3000; i++) console.log('line ' + i + ' of the console output');\nreturn 1"})
	var out scrollback.RunCodeResult
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	var uris []string
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			uris = append(uris, l.URI)
			if l.Size == nil || *l.Size <= 24<<10 {
				t.Errorf("link %s: size %v, want the console output's", l.URI, l.Size)
			}
		}
	}
	id := regexp.MustCompile(`out_[A-Za-z0-9]+`).FindString(out.Logs)
	if id == "" || len(uris) != 1 || uris[0] != OutputURI(id) {
		t.Errorf("links %v, want one to the console output's copy %q", uris, id)
	}
	// The copy is in structuredContent's retained too, labelled, and in
	// the text block listing the copies made during the run.
	if len(out.Retained) != 1 || out.Retained[0].OutputID != id || out.Retained[0].Holds != present.HoldsLogs || out.Retained[0].Call != 0 || out.Retained[0].Tool != "run_code" {
		t.Errorf("retained %+v; want the console output's copy %q, holds %q", out.Retained, id, present.HoldsLogs)
	}
	var listed bool
	for i := range res.Content {
		listed = listed || strings.Contains(text(res, i), id+": the script's console output (logs), ")
	}
	if !listed {
		t.Errorf("no text block lists %s as the console output", id)
	}
}
