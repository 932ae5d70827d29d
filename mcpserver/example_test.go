package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// Serve one session's tools to an MCP client, here over in-memory
// transports; `scrollback mcp` does the same over stdio.
func ExampleNewServer() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		log.Fatal(err)
	}

	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := mcpserver.NewServer(sess, mcpserver.Options{}).Connect(ctx, serverT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	client, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo hello"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println(res.Meta[mcpserver.MetaSession] == sess.ID())

	// A bad id is a tool error the model can read, not a protocol error.
	res, err = client.CallTool(ctx, &mcp.CallToolParams{Name: "read_tool_output", Arguments: map[string]any{"id": "out_nope"}})
	fmt.Println(err, res.IsError)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// hello
	// true
	// <nil> true
	// read_tool_output: no retained output with that id in this session: "out_nope"; ids come from the output_id of a result in this same session
}

// Offer some of scrollback's session tools from a server of your own: here
// read_tool_output and grep_tool_output, over a session made on first use.
func ExampleAddTools() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	eng := scrollback.New(st, scrollback.Options{})

	srv := mcp.NewServer(&mcp.Implementation{Name: "my-agent-tools"}, nil)
	b := mcpserver.NewBinding(eng, scrollback.LocalOwner)
	if err := mcpserver.AddTools(srv, b, "read_tool_output", "grep_tool_output"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(mcpserver.AddTools(srv, b, "cat"))

	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	client, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	for tool, err := range client.Tools(ctx, nil) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tool.Name)
	}
	fmt.Println("session made before any call:", b.Current() != nil)
	// Output:
	// mcpserver: no session tool named "cat"; the tools are run_command, read_tool_output, read_file, grep_tool_output, query_tool_output, run_code
	// grep_tool_output
	// read_tool_output
	// session made before any call: false
}
