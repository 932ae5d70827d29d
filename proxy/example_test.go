package proxy_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/proxy"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// A proxy in front of an MCP server whose "logs" tool returns 200 KB: the
// client gets a preview within 32 KiB and the id of the retained copy, and
// reads the copy back with read_tool_output.
func Example() {
	ctx := context.Background()

	// The upstream: any MCP server. Here one in this process, over a pipe.
	up := mcp.NewServer(&mcp.Implementation{Name: "upstream"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "logs", Description: "Return the logs."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("a log line\n", 20000)}}}, nil, nil
	})
	dial := func(context.Context) (io.ReadWriteCloser, error) {
		a, b := net.Pipe()
		go up.Run(ctx, &mcp.IOTransport{Reader: b, Writer: b})
		return a, nil
	}

	dir, _ := os.MkdirTemp("", "proxy-example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	eng := scrollback.New(st, scrollback.Options{})
	p, err := proxy.New(eng, proxy.Upstream{Dial: dial}, proxy.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	sess, _ := eng.NewSession(ctx, scrollback.LocalOwner)

	// A client of the proxy (over stdio, use p.Server(sess).Run(ctx, &mcp.StdioTransport{})).
	st1, st2 := mcp.NewInMemoryTransports()
	go p.Server(sess).Run(ctx, st1)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, st2, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "logs"})
	preview := res.Content[0].(*mcp.TextContent).Text
	id := res.Meta[proxy.MetaOutputID].(string)
	fmt.Println("preview within 32 KiB:", len(preview) <= 32768)
	fmt.Println("footer names the id:", strings.Contains(preview, id))
	fmt.Println("retained bytes:", res.Meta[proxy.MetaTotalBytes], "complete:", res.Meta[proxy.MetaComplete])

	page, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_tool_output", Arguments: map[string]any{"id": id, "offset": 0, "limit": 22}})
	fmt.Printf("first page: %q\n", page.StructuredContent.(map[string]any)["text"])
	// Output:
	// preview within 32 KiB: true
	// footer names the id: true
	// retained bytes: 220000 complete: true
	// first page: "a log line\na log line\n"
}
