package cli

import (
	"bufio"
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

// A stdio server told to stop (SIGTERM, SIGINT: its context ends) stops the
// commands in flight at once: their process groups are killed, the client
// gets each result with the output before and why it stopped, and the
// output is kept as a copy. Before, the server waited for the commands to
// end on their own, and a client's SIGKILL after its SIGTERM left them
// running with no copy.
func TestStdioStopEndsCalls(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	env := map[string]string{"SCROLLBACK_DB": filepath.Join(t.TempDir(), "m.db"), "HOME": t.TempDir()}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"mcp", "--code-workers", "0"},
			IO{Stdin: inR, Stdout: outW, Stderr: &stderr, Getenv: func(k string) string { return env[k] }})
		outW.Close()
	}()
	defer inW.Close()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"seq 1 40000; echo started >&2; sleep 600"}}}`,
	} {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if l := <-lines; !strings.Contains(l, `"id":1`) {
		t.Fatalf("no answer to initialize: %s", l)
	}
	for !strings.Contains(stderr.String(), "tool call") && !strings.Contains(stderr.String(), "serving MCP") {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the command has started and written
	stop()
	var answer string
	select {
	case answer = <-lines:
	case <-time.After(time.Minute):
		t.Fatalf("no answer a minute after the server was told to stop; stderr %q", stderr.String())
	}
	for _, want := range []string{`"id":2`, "shutting down and stopped this command", "scrollback://output/", `"truncated":true`} {
		if !strings.Contains(answer, want) {
			t.Errorf("the stopped call's answer lacks %q: %.600s", want, answer)
		}
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the server still runs a minute after it was told to stop")
	}
}
