package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProgressBeforeResult: the upstream's progress notifications for a
// call, which it sends before its result, reach the client before the
// result too, as directly: the SDK handles the upstream's notifications
// apart from its responses, so the proxy used to forward the last one
// after the result now and then, and a client drops progress for a
// request it has the answer to (the TypeScript SDK's never shows it).
// Read on the client's wire, call after call, with the upstream over a
// pipe (as a command) and over streamable HTTP (--url).
func TestProgressBeforeResult(t *testing.T) {
	t.Run("pipe", func(t *testing.T) { progressBeforeResult(t, pipeUpstream) })
	t.Run("url", func(t *testing.T) {
		progressBeforeResult(t, func(up *mcp.Server) Upstream { return urlUpstream(t, up) })
	})
}

// pipeUpstream is up as a command's upstream: a pipe to it.
func pipeUpstream(up *mcp.Server) Upstream { return Upstream{Dial: dialServer(up)} }

// urlUpstream is up as a --url upstream: served over streamable HTTP
// until the test ends.
func urlUpstream(t *testing.T, up *mcp.Server) Upstream {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(srv.Close)
	return Upstream{URL: srv.URL}
}

func progressBeforeResult(t *testing.T, upstream func(*mcp.Server) Upstream) {
	const steps = 5
	up := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "v1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	mcp.AddTool(up, &mcp.Tool{Name: "steps"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= steps; i++ {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: steps})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	send, r := wireClient(t, upstream(up))
	// until reads messages until the response to id, returning the
	// progress notifications read before it.
	until := func(id int) (progress int) {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				ID     *int   `json:"id"`
				Method string `json:"method"`
			}
			json.Unmarshal(line, &m)
			switch {
			case m.Method == "notifications/progress":
				progress++
			case m.Method == "" && m.ID != nil && *m.ID == id:
				return progress
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wire","version":"0"}}}`)
	until(0)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	late := 0
	for i := 1; i <= 40; i++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"steps","arguments":{},"_meta":{"progressToken":"t%d"}}}`, i, i))
		if n := until(i); n != steps {
			late++
			t.Logf("call %d: %d of %d progress notifications before the result", i, n, steps)
		}
	}
	if late > 0 {
		t.Errorf("%d of 40 calls got their result before the last of their progress", late)
	}
}

// FuzzSSEProgress: an event stream passes through byte for byte, however
// it is read, and every data line of at most strayProbe bytes that is an
// ordered notification (progress, a log message, a resource updated) is
// counted once its newline is read, no other.
func FuzzSSEProgress(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n"), uint8(3))
	f.Add([]byte("data:{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\ndata: {\"method\":\"notifications/progress\"}\n"), uint8(1))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"a://b\"}}\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n"), uint8(5))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		want := int64(0)
		lines := bytes.Split(in, []byte("\n"))
		for _, line := range lines[:len(lines)-1] { // a line ends at its newline
			if data, ok := bytes.CutPrefix(line, []byte("data:")); ok && len(line) <= strayProbe {
				if ok, method := message(data); ok && ordered(method) {
					want++
				}
			}
		}
		ord := newNoticeOrder()
		got, err := io.ReadAll(&sseNotices{r: &chunked{b: in, n: int(chunk%9) + 1}, ord: ord})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, in) {
			t.Errorf("passed %q, want %q", got, in)
		}
		if ord.read != want {
			t.Errorf("counted %d ordered notifications, want %d", ord.read, want)
		}
	})
}

// wireClient starts a proxy of upstream and serves one session of it over
// a pipe, as a client on the raw wire sees it: send writes one message,
// r reads the proxy's. The proxy stops when the test ends.
func wireClient(t *testing.T, upstream Upstream) (send func(string), r *bufio.Reader) {
	t.Helper()
	p, sess := startProxy(t, upstream, Options{})
	a, b := net.Pipe()
	go p.Server(sess).Run(context.Background(), &mcp.IOTransport{Reader: b, Writer: b})
	t.Cleanup(func() { a.Close() })
	return func(m string) {
		if _, err := a.Write([]byte(m + "\n")); err != nil {
			t.Fatal(err)
		}
	}, bufio.NewReader(a)
}
