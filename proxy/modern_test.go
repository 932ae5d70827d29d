package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/mcpserver"
)

const modern = "2026-07-28"

// versionedUpstream is an upstream that speaks only the given protocol
// versions. Its tools: served (the version its request was served at and
// the request's _meta), big (n bytes of numbered lines), confirm (asks
// its client to confirm, as a multi round-trip result; the SDK asks a
// client of an older version during the call instead) and digest (the
// length and SHA-256 of its argument text).
func versionedUpstream(versions ...string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "versioned", Version: "v1"}, &mcp.ServerOptions{SupportedProtocolVersions: versions})
	mcp.AddTool(srv, &mcp.Tool{Name: "served"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		b, _ := json.Marshal(map[string]any{"version": req.Session.InitializeParams().ProtocolVersion, "meta": req.Params.Meta})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "big"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		N int `json:"n"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bigText(in.N)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "confirm"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if r, ok := req.Params.InputResponses["ok"].(*mcp.ElicitResult); ok {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "confirmed: " + r.Action + " " + req.Params.RequestState}}}, nil, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Message: "Sure?", RequestedSchema: map[string]any{"type": "object"}}},
			RequestState:  "state-1",
		}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "digest"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: digest(in.Text)}}}, nil, nil
	})
	return srv
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%d %s", len(s), hex.EncodeToString(sum[:]))
}

// elicitingClient accepts every elicitation.
func elicitingClient() *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
	}}
}

// TestVersionsBothSides: a client of 2026-07-28 or of 2025-11-25, over
// stdio or HTTP, in front of an upstream that speaks only 2026-07-28 or
// only 2025-11-25: each side speaks its own version; previews, copies,
// resources and the client's _meta work across them; a question of the
// upstream (elicitation) reaches the client, except from an upstream of
// 2025-11-25 to a client of 2026-07-28, which may not be asked during a
// call: that is a clear error.
func TestVersionsBothSides(t *testing.T) {
	for _, upV := range []string{modern, legacy} {
		for _, clientV := range []string{modern, legacy} {
			for _, overHTTP := range []bool{false, true} {
				name := fmt.Sprintf("upstream %s, client %s, http %v", upV, clientV, overHTTP)
				t.Run(name, func(t *testing.T) {
					up := Upstream{Dial: dialServer(versionedUpstream(upV))}
					var cs *mcp.ClientSession
					if overHTTP {
						_, url := serveHTTP(t, up, Options{})
						cs = connectHTTPAt(t, url, elicitingClient(), clientV)
					} else {
						_, _, cs = startAt(t, up, Options{}, elicitingClient(), clientV)
					}
					testVersions(t, cs, upV, clientV)
				})
			}
		}
	}
}

func testVersions(t *testing.T, cs *mcp.ClientSession, upV, clientV string) {
	ctx := context.Background()
	if v := cs.InitializeResult().ProtocolVersion; v != clientV {
		t.Fatalf("client negotiated %s, want %s", v, clientV)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "served", Arguments: map[string]any{}, Meta: mcp.Meta{"acme/trace": "t-1"}})
	if err != nil || res.IsError {
		t.Fatalf("served: %v %s", err, text(res))
	}
	var served struct {
		Version string
		Meta    map[string]any
	}
	if err := json.Unmarshal([]byte(text(res)), &served); err != nil {
		t.Fatal(err)
	}
	if served.Version != upV {
		t.Errorf("the upstream served the call at %s, want %s", served.Version, upV)
	}
	if served.Meta["acme/trace"] != "t-1" {
		t.Errorf("the client's _meta did not reach the upstream: %v", served.Meta)
	}
	if info, _ := res.Meta[mcp.MetaKeyServerInfo].(map[string]any); info != nil && info["name"] != "scrollback-proxy" {
		t.Errorf("the result names the upstream, not the proxy: %v", res.Meta)
	}

	big := call(t, cs, "big", map[string]any{"n": 100_000})
	id, total, _ := meta(t, big)
	if got, complete := readAll(t, cs, id); got != bigText(100_000) || !complete {
		t.Errorf("the pages do not rebuild the result")
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.OutputURI(id)})
	if err != nil || len(rr.Contents) != 1 || int64(len(rr.Contents[0].Text)) != total {
		t.Errorf("resources/read of the copy: %v", err)
	}

	conf, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{}})
	switch {
	case upV == legacy && clientV == modern:
		if err == nil && !conf.IsError {
			t.Errorf("an upstream of %s asked a client of %s during a call: %q", upV, clientV, text(conf))
		} else {
			t.Logf("an upstream of %s asking a client of %s: %v %s", upV, clientV, err, textOf(conf))
		}
	case err != nil || conf.IsError || !strings.HasPrefix(text(conf), "confirmed: accept"):
		t.Errorf("confirm: %v %q", err, text(conf))
	}
}

// refUpstream is versionedUpstream with a tool "nested" that digests each
// items[i].body of its arguments, and counts the calls of digest tools.
func refUpstream(calls *int) *mcp.Server {
	srv := versionedUpstream(modern, legacy)
	srv.AddTool(&mcp.Tool{Name: "nested", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		*calls++
		var in struct {
			Items []struct {
				Body string `json:"body"`
			} `json:"items"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		var out []string
		for _, it := range in.Items {
			out = append(out, digest(it.Body))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(out, ",")}}}, nil
	})
	return srv
}

// TestReferences: a string argument that is exactly a reference to a
// retained copy reaches the upstream as the copy's text (or a byte range
// of it), at any depth; a reference to another session's copy, an
// incomplete copy, an offset inside a character or more than MaxRefBytes
// is a tool error of its kind, and the upstream is not called.
func TestReferences(t *testing.T) {
	calls := 0
	p, url := serveHTTP(t, Upstream{Dial: dialServer(refUpstream(&calls))}, Options{MaxRefBytes: 200_000})
	_ = p
	a := connectHTTP(t, url, nil)
	b := connectHTTP(t, url, nil)
	id, _, _ := meta(t, call(t, a, "big", map[string]any{"n": 150_000}))
	whole := bigText(150_000)
	ref := mcpserver.OutputURI(id)

	nested := func(cs *mcp.ClientSession, bodies ...string) *mcp.CallToolResult {
		var items []any
		for _, b := range bodies {
			items = append(items, map[string]any{"body": b})
		}
		return call(t, cs, "nested", map[string]any{"items": items, "other": "kept <&>"})
	}
	res := nested(a, ref, ref+"#bytes=0-100", "plain text", ref+"#bytes=149990-")
	want := strings.Join([]string{digest(whole), digest(whole[:100]), digest("plain text"), digest(whole[149990:])}, ",")
	if res.IsError || text(res) != want {
		t.Errorf("nested references: %q, want %q", text(res), want)
	}
	if calls != 1 {
		t.Fatalf("upstream calls: %d", calls)
	}

	for _, c := range []struct {
		name, arg, kind, msg string
		cs                   *mcp.ClientSession
	}{
		{"another session's copy", ref, "not_found", "no retained output with that id in this session", b},
		{"an id that never was", mcpserver.OutputURI("out_" + strings.Repeat("z", 26)), "not_found", "no retained output with that id in this session", a},
		{"an offset inside é", ref + "#bytes=0-14", "offset", "nearest valid offsets are 13 (before) and 15 (after)", a},
		{"over MaxRefBytes together", ref, "argument", "--max-ref-bytes", a},
		{"a malformed fragment", ref + "#bytes=x", "argument", "#bytes=A-B", a},
	} {
		args := []string{c.arg}
		if c.name == "over MaxRefBytes together" {
			args = []string{ref, ref} // 300,000 bytes in all, over 200,000
		}
		res := nested(c.cs, args...)
		if !res.IsError || res.Meta[mcpserver.MetaErrorKind] != c.kind || !strings.Contains(text(res), c.msg) {
			t.Errorf("%s: %v %v %q, want a %s error saying %q", c.name, res.IsError, res.Meta[mcpserver.MetaErrorKind], text(res), c.kind, c.msg)
		}
	}
	if calls != 1 {
		t.Errorf("the upstream was called %d times for refused references, want never", calls-1)
	}
}

// TestReferenceIncomplete: a reference to a copy that lacks part of what
// its tool produced is refused unless it ends in #allow-incomplete.
func TestReferenceIncomplete(t *testing.T) {
	calls := 0
	_, _, cs := startAt(t, Upstream{Dial: dialServer(refUpstream(&calls))}, Options{}, nil, modern)
	id, total, complete := meta(t, call(t, cs, "big", map[string]any{"n": 9 << 20}))
	if complete {
		t.Fatal("a 9 MiB result made a complete copy")
	}
	res := call(t, cs, "digest", map[string]any{"text": mcpserver.OutputURI(id)})
	if !res.IsError || res.Meta[mcpserver.MetaErrorKind] != "argument" || !strings.Contains(text(res), "#allow-incomplete") {
		t.Errorf("an incomplete copy: %q %v", text(res), res.Meta)
	}
	res = call(t, cs, "digest", map[string]any{"text": mcpserver.OutputURI(id) + "#allow-incomplete"})
	if res.IsError || !strings.HasPrefix(text(res), fmt.Sprintf("%d ", total)) {
		t.Errorf("#allow-incomplete: %q, want the copy's %d bytes", text(res), total)
	}
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return text(res)
}

// TestStatelessSessionHeaderNotOwned: a request of 2026-07-28 whose
// Scrollback-Session header names a session the caller does not own (or
// none that exists) gets the not_found tool error before the upstream is
// called, as scrollback mcp's tools give it: the upstream does not run a
// call whose result has no session to be kept in.
func TestStatelessSessionHeaderNotOwned(t *testing.T) {
	calls := 0
	up := refUpstream(&calls)
	up.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		calls++
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://r", Text: "r"}}}, nil
	})
	up.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		calls++
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "p"}}}}, nil
	})
	_, url := serveHTTP(t, Upstream{Dial: dialServer(up)}, Options{})
	bad := "s_" + strings.Repeat("a", 26)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headerRT{mcpserver.SessionHeader: bad}}},
		&mcp.ClientSessionOptions{ProtocolVersion: modern})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"nested", map[string]any{"items": []any{map[string]any{"body": "x"}}}},
		{"run_code", map[string]any{"code": `return await tools.nested({items: [{body: "x"}]})`}},
	} {
		res := call(t, cs, c.tool, c.args)
		if !res.IsError || res.Meta[mcpserver.MetaErrorKind] != "not_found" || !strings.Contains(text(res), bad) {
			t.Errorf("%s with an unknown Scrollback-Session: %v %v %q, want the not_found error naming it", c.tool, res.IsError, res.Meta[mcpserver.MetaErrorKind], text(res))
		}
	}
	ctx := context.Background()
	_, rerr := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://r"})
	_, perr := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"})
	_, lerr := cs.ListResources(ctx, nil)
	for what, err := range map[string]error{"resources/read": rerr, "prompts/get": perr, "resources/list": lerr} {
		var je *jsonrpc.Error
		if !errors.As(err, &je) || !strings.Contains(je.Message, bad) || !strings.Contains(string(je.Data), `"scrollback/error_kind":"not_found"`) {
			t.Errorf("%s with an unknown Scrollback-Session: %v, want the not_found error naming it", what, err)
		}
	}
	if calls != 0 {
		t.Errorf("the upstream was called %d times for a session the caller does not own", calls)
	}
}

// TestStatelessStoreDownStillCalls: when the caller's default session
// cannot be opened because the store is down, an upstream tool still runs
// and its result is returned (a copy would say recovery unavailable): only
// a session the caller does not own refuses the call.
func TestStatelessStoreDownStillCalls(t *testing.T) {
	calls := 0
	p, url := serveHTTP(t, Upstream{Dial: dialServer(refUpstream(&calls))}, Options{})
	cs := connectHTTPAt(t, url, nil, modern)
	p.eng.Store().Close()
	res := call(t, cs, "nested", map[string]any{"items": []any{map[string]any{"body": "x"}}})
	if res.IsError || calls != 1 || text(res) != digest("x") {
		t.Errorf("with the store down: %v %q, %d upstream calls; want the upstream's result", res.IsError, text(res), calls)
	}
}
