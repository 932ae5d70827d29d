package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// Floor servers: what the official SDK's streamable HTTP handler costs with
// tools that do nothing, measured exactly as scrollback's server is (a
// process of its own, the same clients, its CPU time read from /proc). They
// are this program run again with -serve-floor.
const (
	// floorPage answers read_tool_output with a result shaped like
	// scrollback's page: the same 4,096 bytes of the benchmark's text in a
	// text block and in structuredContent, a second text block saying
	// where the page is, and the page's numbers.
	floorPage = "page"
	// floorTiny answers with a two-byte text.
	floorTiny = "tiny"
	// floorStore reads the page from scrollback's store, as scrollback
	// does (one session of the engine, on the SQLite database
	// $SCROLLBACK_DB), and answers the page as scrollback shapes it, with
	// nothing else around it: no middleware, no observer, no limits, the
	// arguments decoded by encoding/json. What the SDK and the store cost
	// together, the least any server reading scrollback's copies over this
	// SDK pays.
	floorStore = "store"
)

// floorText is one page of the benchmark's copy, as scrollback returns it
// for an offset at a line's start.
func floorText() string {
	var buf []byte
	for i := 0; len(buf) < 4096; i++ {
		buf = fmt.Appendf(buf, "line %08d of the benchmark's retained copy\n", i)
	}
	return string(buf[:4096])
}

// floorPageResult mirrors scrollback.Page, the structuredContent of a page.
type floorPageResult struct {
	Text       string `json:"text"`
	NextOffset int64  `json:"nextOffset"`
	TotalBytes int64  `json:"totalBytes"`
	HasMore    bool   `json:"hasMore"`
	Complete   bool   `json:"complete"`
}

// serveFloor serves a floor server of the given kind on 127.0.0.1 until
// the process is stopped, printing its endpoint as `scrollback mcp --http`
// does, and with the garbage collector set as scrollback sets it when
// serving (GOGC=400, a 1 GiB soft limit) unless the environment says
// otherwise.
func serveFloor(kind string) {
	if kind != floorPage && kind != floorTiny && kind != floorStore {
		log.Fatalf("-serve-floor: want %q, %q or %q, not %q", floorPage, floorTiny, floorStore, kind)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
	text := floorText()
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "v0"}, nil)
	if kind == floorStore {
		storeTools(srv)
	} else {
		pageTools(srv, kind, text)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true})
	if addr := os.Getenv("SCROLLBACK_PPROF"); addr != "" {
		// Go's profiles, as scrollback serves them for -profile.
		pln, err := net.Listen("tcp", addr)
		if err != nil {
			log.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		go http.Serve(pln, mux)
		fmt.Fprintf(os.Stderr, "floor (%s): Go profiles on http://%s/debug/pprof/\n", kind, pln.Addr())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "floor (%s): serving MCP on http://%s/mcp\n", kind, ln.Addr())
	log.Fatal(http.Serve(ln, h))
}

// pageTools adds the tools of floor-page and floor-tiny: a run_command
// that saves nothing and a read_tool_output that reads nothing.
func pageTools(srv *mcp.Server, kind, text string) {
	srv.AddTool(&mcp.Tool{Name: "run_command", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "saved"}},
				StructuredContent: map[string]any{"output_id": "out_floor"}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "read_tool_output", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if kind == floorTiny {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}},
					StructuredContent: map[string]any{"text": "hi"}}, nil
			}
			const off, total = 4186112, 8 << 20
			return &mcp.CallToolResult{
				Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: fmt.Sprintf(
					"[scrollback: bytes %d to %d of %d. More follows: call read_tool_output {\"id\": %q, \"offset\": %d}]",
					off, off+4096, total, "out_abcdefghijklmnopqrstuvwxyz", off+4096)}},
				StructuredContent: floorPageResult{Text: text, NextOffset: off + 4096, TotalBytes: total, HasMore: true, Complete: true},
				Meta:              mcp.Meta{"scrollback/session": "s_abcdefghijklmnopqrstuvwxyz"},
			}, nil
		})
}

// storeTools adds the tools of floor-store: run_command and
// read_tool_output of one scrollback session, in the engine's own calls.
func storeTools(srv *mcp.Server) {
	ctx := context.Background()
	st, err := sqlite.Open(os.Getenv("SCROLLBACK_DB"), nil)
	if err != nil {
		log.Fatal(err)
	}
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		log.Fatal(err)
	}
	meta := mcp.Meta{"scrollback/session": sess.ID()}
	srv.AddTool(&mcp.Tool{Name: "run_command", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in scrollback.RunCommandInput
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			rc, err := sess.RunCommand(ctx, in)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: rc.Preview}}, StructuredContent: rc, Meta: meta}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "read_tool_output", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in scrollback.ReadInput
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			page, err := sess.ReadToolOutput(ctx, in)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{
				Content: []mcp.Content{&mcp.TextContent{Text: page.Text}, &mcp.TextContent{Text: fmt.Sprintf(
					"[scrollback: bytes %d to %d of %d. More follows: call read_tool_output {\"id\": %q, \"offset\": %d}]",
					in.Offset, page.NextOffset, page.TotalBytes, in.ID, page.NextOffset)}},
				StructuredContent: page,
				Meta:              meta,
			}, nil
		})
}
