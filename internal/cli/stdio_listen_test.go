package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that opened a subscriptions/listen stream and died (its stdin
// closed without a cancellation, as when a proxy is killed) does not keep
// the stdio server running: the stream is answered only when the session
// ends, so the end of input does not wait for it, while it still waits
// for the answers of the other requests read.
func TestStdioEndsWithListenOpen(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	env := map[string]string{"SCROLLBACK_DB": filepath.Join(t.TempDir(), "m.db"), "HOME": t.TempDir()}
	done := make(chan int, 1)
	go func() {
		done <- Main(t.Context(), []string{"mcp", "--code-workers", "0"},
			IO{Stdin: inR, Stdout: outW, Stderr: &stderr, Getenv: func(k string) string { return env[k] }})
		outW.Close()
	}()
	out := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(outR)
		out <- string(b)
	}()
	// What `scrollback proxy` sends its upstream first (MCP 2026-07-28,
	// stateless): the listen stream stays open.
	meta := `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{` + meta + `,"notifications":{"resourcesListChanged":true}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + meta + `,"name":"run_command","arguments":{"command":"echo answered-before-the-end"}}}`,
	} {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("mcp exited %d; stderr %q", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the server still runs a minute after its client went; stderr %q", stderr.String())
	}
	if got := <-out; !strings.Contains(got, `"id":3,"result"`) || !strings.Contains(got, "answered-before-the-end") {
		t.Errorf("the request read before the end was not answered: %s", got)
	}
}

// run_code through `scrollback mcp` with its default worker pool: the
// workers are this test binary (TestMain serves as one), and a script
// runs in one of them.
func TestMCPRunCodeInWorker(t *testing.T) {
	cs, stderr, stop := stdioMCP(t, filepath.Join(t.TempDir(), "m.db"))
	defer stop()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a worker that never serves would hang the call
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "return 40 + 2"}})
	if err != nil || res.IsError {
		t.Fatalf("run_code: %v %+v; stderr %q", err, res, stderr.String())
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != "42" {
		t.Errorf("run_code returned %q, want 42", text)
	}
}
