package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
)

// rawSession is an MCP session spoken to with plain JSON-RPC POSTs, so that
// a benchmark bills little client work to the server's process.
type rawSession struct {
	url, id string
	c       *http.Client
	n       atomic.Int64
	// stateless: each request is one of protocol 2026-07-28, standing
	// alone (no initialize, no MCP session).
	stateless bool
}

// post sends one JSON-RPC message and returns the result of a request (nil
// for a notification).
func (s *rawSession) post(method string, params any) (json.RawMessage, error) {
	if m, ok := params.(map[string]any); ok && s.stateless {
		m["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	notify := strings.HasPrefix(method, "notifications/")
	if !notify {
		msg["id"] = s.n.Add(1)
	}
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	if s.stateless {
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if m, ok := params.(map[string]any); ok && method == "tools/call" {
			req.Header.Set("Mcp-Name", m["name"].(string))
		}
	}
	resp, err := s.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: %s: %s", method, resp.Status, data)
	}
	if s.id == "" {
		s.id = resp.Header.Get("Mcp-Session-Id")
	}
	if notify {
		return nil, nil
	}
	// A response is one JSON object, or an event stream whose data line
	// holds it.
	if i := bytes.Index(data, []byte("data: ")); i >= 0 && resp.Header.Get("Content-Type") == "text/event-stream" {
		data = data[i+len("data: "):]
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			data = data[:j]
		}
	}
	var r struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %v in %.200q", method, err, data)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%s: %s", method, r.Error.Message)
	}
	return r.Result, nil
}

func newRawSession(url string, c *http.Client) (*rawSession, error) {
	s := &rawSession{url: url, c: c}
	if _, err := s.post("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "v0"},
	}); err != nil {
		return nil, err
	}
	_, err := s.post("notifications/initialized", map[string]any{})
	return s, err
}

// BenchmarkHTTPReadToolOutput measures read_tool_output over streamable
// HTTP on loopback, with the clients in parallel, each in its own session
// holding a 1 MiB copy: bare, and observed (metrics, one JSON log line a
// call, limits), the server an operator runs; the ratio of the two is the
// cost of observing; and json, observed with JSONResponse, as `scrollback
// mcp --http` serves. BenchmarkHTTPSDKFloor is its reference.
func BenchmarkHTTPReadToolOutput(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchHTTPRead(b, false, false) })
	b.Run("observed", func(b *testing.B) { benchHTTPRead(b, true, false) })
	b.Run("json", func(b *testing.B) { benchHTTPRead(b, true, true) })
	b.Run("json-2026", func(b *testing.B) { benchHTTPReadAt(b, true, true, true) })
}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per op as cpu-ns/op. It counts the clients' work too,
// but unlike ns/op it does not grow with the other processes sharing the
// machine: compare it between benchmarks of one run.
func reportCPU(b *testing.B) func() {
	cpu0 := processCPU()
	return func() {
		if cpu := processCPU(); cpu > 0 {
			b.ReportMetric(float64(cpu-cpu0)/float64(b.N), "cpu-ns/op")
		}
	}
}

func benchHTTPRead(b *testing.B, observed, jsonResponse bool) {
	benchHTTPReadAt(b, observed, jsonResponse, false)
}

// benchHTTPReadAt is benchHTTPRead, with the requests of protocol
// 2026-07-28 when stateless: each stands alone and acts on the default
// session, which every client then shares.
func benchHTTPReadAt(b *testing.B, observed, jsonResponse, stateless bool) {
	eng, _ := newEngine(b, filepager.Options{})
	opts := HTTPOptions{JSONResponse: jsonResponse}
	if observed {
		opts.Observer = NewObserver(slog.New(slog.NewJSONHandler(io.Discard, nil)))
		opts.Limits = NewLimits(0, 0)
		eng = scrollback.New(opts.Observer.Store(eng.Store()), eng.Options())
	}
	ts := httptest.NewServer(NewHTTPHandler(eng, opts))
	defer ts.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer hc.CloseIdleConnections()
	const size, clients = 1 << 20, 8
	type client struct {
		s  *rawSession
		id string
	}
	var cl []client
	for range clients {
		s, err := &rawSession{url: ts.URL + Path, c: hc, stateless: true}, error(nil)
		if !stateless {
			s, err = newRawSession(ts.URL+Path, hc)
		}
		if err != nil {
			b.Fatal(err)
		}
		res, err := s.post("tools/call", map[string]any{"name": "run_command",
			"arguments": map[string]any{"command": fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", size)}})
		var rc struct{ StructuredContent scrollback.RunCommandResult }
		if err == nil {
			err = json.Unmarshal(res, &rc)
		}
		if err != nil || rc.StructuredContent.OutputID == "" {
			b.Fatalf("making a copy: %v %s", err, res)
		}
		cl = append(cl, client{s, rc.StructuredContent.OutputID})
	}
	var next, who atomic.Int64
	b.SetParallelism(clients / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		c := cl[int(who.Add(1)-1)%clients]
		for pb.Next() {
			off := next.Add(4093) % size
			if _, err := c.s.post("tools/call", map[string]any{"name": "read_tool_output",
				"arguments": map[string]any{"id": c.id, "offset": off}}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHTTPSDKFloor is the reference for BenchmarkHTTPReadToolOutput:
// the same clients and calls against the SDK's streamable handler with a
// tool that does nothing (sdk-tiny: a two-byte text; sdk-page: a result
// shaped like a page, 4 KiB of text in its text block and in
// structuredContent), and against a plain net/http handler writing that
// page's JSON (nethttp). What read_tool_output costs above sdk-page is
// scrollback's; sdk-page above nethttp is the SDK's.
func BenchmarkHTTPSDKFloor(b *testing.B) {
	text := strings.Repeat("x", 4096)
	for _, mode := range []string{"nethttp", "sdk-tiny", "sdk-page"} {
		b.Run(mode, func(b *testing.B) {
			var h http.Handler
			switch mode {
			case "nethttp":
				resp := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}],"structuredContent":{"text":"` + text + `"}}}`)
				h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Header.Get("Mcp-Session-Id") == "" {
						w.Header().Set("Mcp-Session-Id", "x")
					}
					w.Header().Set("Content-Type", "application/json")
					w.Write(resp)
				})
			default:
				srv := mcp.NewServer(&mcp.Implementation{Name: "x", Version: "v"}, nil)
				big := mode == "sdk-page"
				srv.AddTool(&mcp.Tool{Name: "read_tool_output", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					if !big {
						return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: "where"}},
						StructuredContent: struct {
							Text string `json:"text"`
						}{text}}, nil
				})
				h = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
			}
			ts := httptest.NewServer(h)
			defer ts.Close()
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer hc.CloseIdleConnections()
			const clients = 8
			var cl []*rawSession
			for range clients {
				s, err := newRawSession(ts.URL, hc)
				if err != nil {
					b.Fatal(err)
				}
				cl = append(cl, s)
			}
			var who atomic.Int64
			b.SetParallelism(clients / runtime.GOMAXPROCS(0))
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				c := cl[int(who.Add(1)-1)%clients]
				for pb.Next() {
					if _, err := c.post("tools/call", map[string]any{"name": "read_tool_output",
						"arguments": map[string]any{"id": "abc", "offset": 5}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
