package proxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as a command upstream: with this variable set,
// TestMain serves testUpstream over stdio instead of running tests.
const upstreamEnv = "SCROLLBACK_PROXY_TEST_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(upstreamEnv) == "1" {
		srv := testUpstream()
		srv.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type sizeArgs struct {
	N int `json:"n" jsonschema:"bytes of text to return"`
}

type echoArgs struct {
	Text string `json:"text"`
}

type record struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type records struct {
	Records []record `json:"records"`
}

// bigText is n bytes of numbered lines.
func bigText(n int) string {
	var b strings.Builder
	b.Grow(n)
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %07d é\n", i)
	}
	return b.String()[:n]
}

// testUpstream is an MCP server with tools for every case the proxy
// handles: small and large text, structured content, images, errors, a
// hang, a crash, a tool list that changes, prompts and resources.
func testUpstream() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "v1"}, &mcp.ServerOptions{Instructions: "upstream instructions"})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo text back."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}, Meta: mcp.Meta{"upstream/key": "v"}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "Return n bytes of lines."}, func(_ context.Context, _ *mcp.CallToolRequest, in sizeArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bigText(in.N)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "big_error", Description: "Fail with n bytes of text."}, func(_ context.Context, _ *mcp.CallToolRequest, in sizeArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: bigText(in.N)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "records", Description: "Return n records as structured content only."}, func(_ context.Context, _ *mcp.CallToolRequest, in sizeArgs) (*mcp.CallToolResult, records, error) {
		var r records
		for i := range in.N {
			r.Records = append(r.Records, record{ID: i, Name: fmt.Sprintf("name-%d", i)})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{}}, r, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "mixed", Description: "Image, n bytes of text, a resource link."}, func(_ context.Context, _ *mcp.CallToolRequest, in sizeArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ImageContent{Data: []byte("\x89PNG fake"), MIMEType: "image/png"},
			&mcp.TextContent{Text: bigText(in.N)},
			&mcp.ResourceLink{URI: "test://r/1", Name: "r1"},
		}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "hang", Description: "Never answer."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "pid", Description: "The server's process id."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(os.Getpid())}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "crash", Description: "Exit the process mid-call."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_tool", Description: "Add a tool named name."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		srv.AddTool(&mcp.Tool{Name: in.Text, Description: "added", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "I was added"}}}, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "test://r/1", Name: "r1", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "resource one"}}}, nil
	})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "template " + req.Params.URI}}}, nil
	})
	return srv
}

// dialServer returns a Dial function connecting to srv in process over a
// pipe.
func dialServer(srv *mcp.Server) func(context.Context) (io.ReadWriteCloser, error) {
	return func(ctx context.Context) (io.ReadWriteCloser, error) {
		a, b := net.Pipe()
		go srv.Run(context.Background(), &mcp.IOTransport{Reader: b, Writer: b})
		return a, nil
	}
}

// commandUpstream runs this test binary as a command upstream.
func commandUpstream(t testing.TB) Upstream {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Upstream{Command: []string{exe}, Env: []string{upstreamEnv + "=1"}, Stderr: io.Discard}
}
