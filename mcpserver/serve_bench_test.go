package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
)

// BenchmarkServeRead measures one read_tool_output at a random offset of
// an 8 MiB copy through the HTTP handler alone: each request is handed to
// ServeHTTP and its answer written to a writer that keeps nothing, one at
// a time, so that ns/op, B/op and allocs/op are the handler's own, without
// a network, a client or other requests in flight (cpu-ns/op is the
// process's CPU time, the collector's included). bench/mcp measures the
// same calls as a user makes them, over loopback to a server process.
//
//   - floor: the SDK's streamable handler (JSON answers) with a tool that
//     does nothing and answers a result shaped like a page, as bench/mcp
//     -floor serves it: what the SDK itself costs;
//   - store: the same SDK handler whose read_tool_output reads the page
//     from scrollback's store (an engine session's ReadToolOutput, its
//     arguments decoded by encoding/json) and answers it as scrollback
//     does, nothing else around it, as bench/mcp -floor's floor-store:
//     what the SDK and the store cost together;
//   - session: scrollback's handler as `scrollback mcp --http` sets it up
//     (observer with a text log line a call, limits), in an MCP session;
//   - oauth: the same with an OAuth issuer, the request carrying its JWT
//     access token;
//   - stateless: requests of protocol 2026-07-28, no MCP session.
func BenchmarkServeRead(b *testing.B) {
	const size = 8 << 20
	// The collector set as `scrollback mcp --http` sets it.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	src := filepath.Join(b.TempDir(), "source.txt")
	var text []byte
	for i := 0; len(text) < size; i++ {
		text = fmt.Appendf(text, "line %08d of the benchmark's retained copy\n", i)
	}
	if err := os.WriteFile(src, text[:size], 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("floor", func(b *testing.B) {
		c := &serveClient{h: floorHandler(string(text[:4096]))}
		c.initialize(b)
		c.read(b, "out_floor", size)
	})
	b.Run("store", func(b *testing.B) {
		eng, _ := newEngine(b, filepager.Options{})
		sess, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
		if err != nil {
			b.Fatal(err)
		}
		rc, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "cat " + src})
		if err != nil || rc.OutputID == "" {
			b.Fatalf("making a copy: %v %+v", err, rc)
		}
		c := &serveClient{h: storeFloorHandler(sess)}
		c.initialize(b)
		c.read(b, rc.OutputID, size)
	})
	b.Run("session", func(b *testing.B) {
		c := &serveClient{h: observedHandler(b, nil)}
		c.initialize(b)
		c.read(b, c.copyOf(b, src), size)
	})
	b.Run("oauth", func(b *testing.B) {
		iss := newTestIssuer(b)
		const audience = "http://127.0.0.1:7777" + Path
		oa, err := NewOAuth(context.Background(), OAuthOptions{Issuer: iss.srv.URL, Audience: audience})
		if err != nil {
			b.Fatal(err)
		}
		c := &serveClient{h: observedHandler(b, oa), token: iss.token(b, iss.claims(audience, "alice", ScopeRead, ScopeRun), nil)}
		c.initialize(b)
		c.read(b, c.copyOf(b, src), size)
	})
	b.Run("stateless", func(b *testing.B) {
		c := &serveClient{h: observedHandler(b, nil), stateless: true}
		c.read(b, c.copyOf(b, src), size)
	})
}

// observedHandler is scrollback's handler as `mcp --http` makes it, with
// oa when not nil.
func observedHandler(b *testing.B, oa *OAuth) http.Handler {
	eng, _ := newEngine(b, filepager.Options{})
	obs := NewObserver(slog.New(slog.NewTextHandler(io.Discard, nil)))
	eng = scrollback.New(obs.Store(eng.Store()), eng.Options())
	return NewHTTPHandler(eng, HTTPOptions{Observer: obs, Limits: NewLimits(0, 0), JSONResponse: true, OAuth: oa})
}

// floorHandler is the SDK's handler with bench/mcp's floor-page tools.
func floorHandler(page string) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "v0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "read_tool_output", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			const off, total = 4186112, 8 << 20
			return &mcp.CallToolResult{
				Content: []mcp.Content{&mcp.TextContent{Text: page}, &mcp.TextContent{Text: fmt.Sprintf(
					"[scrollback: bytes %d to %d of %d. More follows: call read_tool_output {\"id\": %q, \"offset\": %d}]",
					off, off+4096, total, "out_abcdefghijklmnopqrstuvwxyz", off+4096)}},
				StructuredContent: scrollback.Page{Text: page, NextOffset: off + 4096, TotalBytes: total, HasMore: true, Complete: true},
				Meta:              mcp.Meta{MetaSession: "s_abcdefghijklmnopqrstuvwxyz"},
			}, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
}

// storeFloorHandler is the SDK's handler with a read_tool_output that
// reads the page of sess's copy and nothing else, as bench/mcp's
// floor-store.
func storeFloorHandler(sess *scrollback.Session) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "v0"}, nil)
	meta := mcp.Meta{MetaSession: sess.ID()}
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
			text := pageText(in, page)
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: text[0]}, &mcp.TextContent{Text: text[1]}},
				StructuredContent: page,
				Meta:              meta,
			}, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
}

// serveClient hands JSON-RPC requests to a handler in process.
type serveClient struct {
	h         http.Handler
	id        string // MCP session
	token     string
	stateless bool
	n         int
	w         nullWriter
}

func (c *serveClient) initialize(b *testing.B) {
	c.post(b, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"v0"}}`)
	c.id = c.w.hdr.Get("Mcp-Session-Id")
	c.post(b, "notifications/initialized", `{}`)
}

// copyOf makes a copy of file src with run_command and returns its id.
func (c *serveClient) copyOf(b *testing.B, src string) string {
	c.w.keep = true
	c.post(b, "tools/call", `{"name":"run_command","arguments":{"command":"cat `+src+`"}}`)
	c.w.keep = false
	var r struct {
		Result struct {
			StructuredContent struct {
				OutputID string `json:"output_id"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(c.w.body.Bytes(), &r); err != nil || r.Result.StructuredContent.OutputID == "" {
		b.Fatalf("making a copy: %v %.300s", err, c.w.body.Bytes())
	}
	return r.Result.StructuredContent.OutputID
}

// read measures read_tool_output calls of copy id at offsets spread over
// its size.
func (c *serveClient) read(b *testing.B, id string, size int64) {
	b.ReportAllocs()
	off := int64(0)
	b.ResetTimer()
	defer reportCPU(b)()
	for b.Loop() {
		off = (off + 1_000_003) % (size - 4096)
		c.post(b, "tools/call", `{"name":"read_tool_output","arguments":{"id":"`+id+`","offset":`+strconv.FormatInt(off, 10)+`}}`)
		if c.w.n < 4096 {
			b.Fatalf("a short answer: %d bytes", c.w.n)
		}
	}
}

// post hands one request to the handler and checks its status.
func (c *serveClient) post(b *testing.B, method, params string) {
	c.n++
	meta := ""
	if c.stateless {
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		params = params[:len(params)-1] + meta + "}"
	}
	body := `{"jsonrpc":"2.0","method":"` + method + `","params":` + params
	if method != "notifications/initialized" {
		body += `,"id":` + strconv.Itoa(c.n)
	}
	body += "}"
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:7777"+Path, bytes.NewReader([]byte(body)))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.id != "" {
		req.Header.Set("Mcp-Session-Id", c.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	if c.stateless {
		req.Header.Set("Mcp-Protocol-Version", StatelessVersion)
		req.Header.Set("Mcp-Method", method)
		if method == "tools/call" {
			var p struct{ Name string }
			json.Unmarshal([]byte(params), &p)
			req.Header.Set("Mcp-Name", p.Name)
		}
	}
	c.w.reset()
	c.h.ServeHTTP(&c.w, req)
	if c.w.status/100 != 2 {
		b.Fatalf("%s: status %d", method, c.w.status)
	}
}

// nullWriter is a ResponseWriter that counts what it is sent (and keeps it
// when asked).
type nullWriter struct {
	hdr    http.Header
	status int
	n      int
	keep   bool
	body   bytes.Buffer
}

func (w *nullWriter) reset() {
	clear(w.hdr)
	if w.hdr == nil {
		w.hdr = http.Header{}
	}
	w.status, w.n = 0, 0
	w.body.Reset()
}

func (w *nullWriter) Header() http.Header { return w.hdr }

func (w *nullWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *nullWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	if w.keep {
		w.body.Write(p)
	}
	return len(p), nil
}

func (w *nullWriter) Flush() {}
