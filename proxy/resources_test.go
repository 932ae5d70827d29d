package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/mcpserver"
)

// pagedUpstream is an MCP server listing n resources, two to a page, and
// a tool whose result is n bytes.
func pagedUpstream(n int) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "paged", Version: "v1"}, &mcp.ServerOptions{PageSize: 2})
	for i := range n {
		srv.AddResource(&mcp.Resource{URI: fmt.Sprintf("test://p/%d", i), Name: fmt.Sprint("p", i)}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "page resource"}}}, nil
		})
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "Return n bytes of lines."}, func(_ context.Context, _ *mcp.CallToolRequest, in sizeArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bigText(in.N)}}}, nil, nil
	})
	return srv
}

// The proxy's resources/list holds the upstream's resources, every page
// of them, and the session's retained copies, as scrollback mcp lists
// them, paged with a cursor of their own; the list and the copies' text
// are cacheScope private, since the copies are the principal's.
func TestResourcesListHoldsCopies(t *testing.T) {
	defer func(n int) { mcpserver.CopiesPageSize = n }(mcpserver.CopiesPageSize)
	mcpserver.CopiesPageSize = 2
	_, _, cs := start(t, Upstream{Dial: dialServer(pagedUpstream(5))}, Options{Budget: 1000}, nil)
	ctx := context.Background()

	var ids []string
	for range 3 {
		id, _, _ := meta(t, call(t, cs, "big", map[string]any{"n": 5000}))
		if id == "" {
			t.Fatal("no copy retained")
		}
		ids = append(ids, id)
	}
	var got []string
	pages := 0
	cursor := ""
	for {
		lr, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("resources/list (cursor %q): %v", cursor, err)
		}
		pages++
		if lr.CacheScope != "private" {
			t.Errorf("resources/list page %d: cacheScope %q, want private", pages, lr.CacheScope)
		}
		for _, r := range lr.Resources {
			got = append(got, r.URI)
		}
		if cursor = lr.NextCursor; cursor == "" || pages > 10 {
			break
		}
	}
	want := []string{"test://p/0", "test://p/1", "test://p/2", "test://p/3", "test://p/4"}
	for _, id := range ids {
		want = append(want, mcpserver.OutputURIPrefix+id)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("resources/list over %d pages:\n got %v\nwant %v", pages, got, want)
	}
	if pages < 2 {
		t.Errorf("the copies came in %d page(s), want them paged", pages)
	}
	if _, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "copies:x"}); err == nil {
		t.Error("a bad copies cursor was taken")
	}

	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.OutputURIPrefix + ids[0]})
	if err != nil {
		t.Fatal(err)
	}
	if rr.CacheScope != "private" {
		t.Errorf("resources/read of a copy: cacheScope %q, want private", rr.CacheScope)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != bigText(5000) {
		t.Errorf("resources/read of a copy: %d contents", len(rr.Contents))
	}
}

// A resource of the upstream read whole keeps the upstream's cacheScope;
// one previewed over the budget names the principal's copy, and is
// private.
func TestPreviewedReadIsPrivate(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "v1"}, nil)
	up.AddResource(&mcp.Resource{URI: "test://small", Name: "small"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "small"}}}, nil
	})
	up.AddResource(&mcp.Resource{URI: "test://large", Name: "large"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: bigText(5000)}}}, nil
	})
	_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{Budget: 1000}, nil)
	ctx := context.Background()
	small, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://small"})
	if err != nil || small.CacheScope != "public" {
		t.Errorf("small resource: %v, cacheScope %q, want the upstream's public", err, small.CacheScope)
	}
	large, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://large"})
	if err != nil {
		t.Fatal(err)
	}
	if large.Meta[MetaOutputID] == nil {
		t.Fatalf("large resource not previewed: %+v", large.Meta)
	}
	if large.CacheScope != "private" {
		t.Errorf("previewed resource: cacheScope %q, want private", large.CacheScope)
	}
}

// A call of an unknown tool names every tool the proxy offers, its own
// four included.
func TestUnknownToolNamesEveryTool(t *testing.T) {
	_, _, cs := inProcess(t, Options{})
	res := call(t, cs, "no_such_tool", map[string]any{})
	if !res.IsError {
		t.Fatalf("an unknown tool's call succeeded: %s", text(res))
	}
	for _, name := range []string{"echo", "big", "read_tool_output", "grep_tool_output", "query_tool_output", "run_code"} {
		if !strings.Contains(text(res), name) {
			t.Errorf("the error does not name %s: %s", name, text(res))
		}
	}
}

// rawUpstream is an upstream that answers each method with the JSON
// result in answers, as a server of an older SDK would (one that knows
// nothing of cacheScope, say), and "method not found" to the rest.
func rawUpstream(answers map[string]string) func(context.Context) (io.ReadWriteCloser, error) {
	return func(context.Context) (io.ReadWriteCloser, error) {
		a, b := net.Pipe()
		go func() {
			defer b.Close()
			sc := bufio.NewScanner(b)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var msg struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
					continue
				}
				line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
				if res, ok := answers[msg.Method]; ok {
					line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, res)
				}
				if _, err := b.Write([]byte(line + "\n")); err != nil {
					return
				}
			}
		}()
		return a, nil
	}
}

// An upstream's resources/read result without cacheScope (any server
// before protocol 2026-07-28) reaches the client with the protocol's
// default, public, not the empty string, which is no cacheScope at all.
func TestReadWithoutCacheScope(t *testing.T) {
	up := rawUpstream(map[string]string{
		"initialize":     `{"protocolVersion":"2025-06-18","capabilities":{"resources":{}},"serverInfo":{"name":"old","version":"1"}}`,
		"resources/list": `{"resources":[{"uri":"test://old","name":"old"}]}`,
		"resources/read": `{"contents":[{"uri":"test://old","text":"old text"}]}`,
	})
	_, _, cs := start(t, Upstream{Dial: up}, Options{}, nil)
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "test://old"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "old text" {
		t.Errorf("contents %+v", rr.Contents)
	}
	if rr.CacheScope != "public" {
		t.Errorf("cacheScope %q, want public (the default of a result that says none)", rr.CacheScope)
	}
}

// TestResourcesListForeignCursor: a resources/list cursor the proxy never
// gave (made up, or an upstream's own from a direct connection) gets the
// upstream's own answer, as directly: the proxy answered -32602 of its
// own, where the everything-server (a TypeScript SDK server) ignores a
// cursor it does not know and lists everything. Here an upstream that
// answers one cursor with a list of its own, as that server does, one
// with an error of its own (code, message and data), and refuses the
// rest as a Go SDK server does (-32602).
func TestResourcesListForeignCursor(t *testing.T) {
	newUp := func() *mcp.Server {
		up := pagedUpstream(3)
		up.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && method == "resources/list" && p != nil {
					switch p.Cursor {
					case "ignored":
						return &mcp.ListResourcesResult{Resources: []*mcp.Resource{{URI: "test://any-cursor", Name: "all"}}}, nil
					case "expired":
						return nil, &jsonrpc.Error{Code: -32001, Message: "cursor expired; list again from the start", Data: json.RawMessage(`{"retry":true}`)}
					}
				}
				return next(ctx, method, req)
			}
		})
		return up
	}
	for _, v := range []string{legacy, "2026-07-28"} {
		t.Run(v, func(t *testing.T) { resourcesListForeignCursor(t, newUp, v) })
	}
}

func resourcesListForeignCursor(t *testing.T, newUp func() *mcp.Server, version string) {
	direct := directClient(t, newUp(), version)
	_, _, cs := startAt(t, Upstream{Dial: dialServer(newUp())}, Options{}, nil, version)
	ctx := context.Background()
	answer := func(cs *mcp.ClientSession, cursor string) string {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		var je *jsonrpc.Error
		switch {
		case errors.As(err, &je):
			b, _ := json.Marshal(je)
			return "error " + string(b)
		case err != nil:
			return "error " + err.Error()
		}
		var uris []string
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		return fmt.Sprintf("resources %v, nextCursor %q", uris, res.NextCursor)
	}
	for _, cursor := range []string{"ignored", "expired", "made-up"} {
		if got, want := answer(cs, cursor), answer(direct, cursor); got != want {
			t.Errorf("cursor %q: through the proxy %s; directly %s", cursor, got, want)
		}
	}
	// The upstream's list says no cacheScope: it reaches the client with
	// the protocol's default, as a resources/read does, not as "", which
	// is no scope at all.
	res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	if res.CacheScope != "public" {
		t.Errorf("the upstream's list for a foreign cursor: cacheScope %q, want public", res.CacheScope)
	}
}
