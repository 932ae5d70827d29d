package proxy

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// samplerUpstream is an upstream that offers the tool "sampler", which
// samples, to the clients of connections after the first, as the
// everything-server offers trigger-sampling-request only to a client that
// can sample: the proxy's first connection, which declares no
// capabilities, does not list it. Connections after the first are made
// after delay.
func samplerUpstream(delay time.Duration) func(context.Context) (io.ReadWriteCloser, error) {
	var dials atomic.Int32
	return func(ctx context.Context) (io.ReadWriteCloser, error) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "v1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
		mcp.AddTool(srv, &mcp.Tool{Name: "plain"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "plain"}}}, nil, nil
		})
		if dials.Add(1) > 1 {
			time.Sleep(delay)
			srv.AddTool(&mcp.Tool{Name: "sampler", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{res.Content}}, nil
			})
		}
		return dialServer(srv)(ctx)
	}
}

// TestCallBeforeList: a client that calls a tool the upstream offers only
// to clients with its capabilities, first thing, without listing the tools
// (a script that knows the tool's name, a client with the list cached),
// gets the tool's result, as directly, not "unknown tool": the call waits,
// as a list does, for the upstream connection that declares the client's
// capabilities, and what the upstream offers over it. Over stdio the
// second connection is made slow to start, so that the call comes first.
func TestCallBeforeList(t *testing.T) {
	copts := (&chattyClient{}).options("sampled")
	t.Run("stdio", func(t *testing.T) {
		_, _, cs := start(t, Upstream{Dial: samplerUpstream(300 * time.Millisecond)}, Options{}, copts)
		res := call(t, cs, "sampler", map[string]any{})
		if res.IsError || text(res) != "sampled" {
			t.Fatalf("sampler: %v %q", res.IsError, text(res))
		}
	})
	t.Run("http", func(t *testing.T) {
		_, url := serveHTTP(t, Upstream{Dial: samplerUpstream(0)}, Options{})
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, copts).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res := call(t, cs, "sampler", map[string]any{})
		if res.IsError || text(res) != "sampled" {
			t.Fatalf("sampler: %v %q", res.IsError, text(res))
		}
	})
}
