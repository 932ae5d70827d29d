package proxy

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

// TestErrorResultsMatchScrollbackMCP: the proxy's failures are finished as
// scrollback mcp's are (mcpserver.FinishResults): tool errors with the
// session and the error's kind in _meta, an unknown tool named with the
// tools there are, a long message cut on a character boundary. An
// upstream's own error result passes through untouched.
func TestErrorResultsMatchScrollbackMCP(t *testing.T) {
	up := testUpstream()
	mcp.AddTool(up, &mcp.Tool{Name: "refuse", Description: "Refuse with a long protocol error."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "refused: " + strings.Repeat("😀", 2000)}
	})
	_, sess, cs := start(t, Upstream{Dial: dialServer(up)}, Options{CallTimeout: 300 * time.Millisecond}, nil)

	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		kind       string
		want       []string
	}{
		{"unknown tool", "no_such_tool", map[string]any{}, scrollback.KindArgument, []string{`unknown tool "no_such_tool"`, "echo", "read_tool_output", "run_code"}},
		{"unknown output id", "read_tool_output", map[string]any{"id": "out_aaaaaaaaaaaaaaaaaaaaaaaaaa"}, scrollback.KindNotFound, []string{"no retained output with that id in this session"}},
		{"bad limit", "read_tool_output", map[string]any{"id": "out_aaaaaaaaaaaaaaaaaaaaaaaaaa", "limit": 0}, scrollback.KindArgument, []string{"limit 0"}},
		{"upstream refused", "refuse", map[string]any{}, scrollback.KindArgument, []string{"refuse", "refused: 😀", "error message cut"}},
		{"upstream timed out", "hang", map[string]any{}, scrollback.KindUnavailable, []string{"hang", "did not answer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, tc.tool, tc.args)
			msg := text(res)
			if !res.IsError {
				t.Fatalf("no tool error: %.200q", msg)
			}
			if got := res.Meta[mcpserver.MetaErrorKind]; got != tc.kind {
				t.Errorf("%s = %v, want %q", mcpserver.MetaErrorKind, got, tc.kind)
			}
			if got := res.Meta[MetaSession]; got != sess.ID() {
				t.Errorf("%s = %v, want %s", MetaSession, got, sess.ID())
			}
			if !utf8.ValidString(msg) || len(msg) > 4096 {
				t.Errorf("message of %d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %.300q lacks %q", msg, w)
				}
			}
		})
	}

	// The upstream's own error result is its to word: no kind, no session.
	res := call(t, cs, "big_error", map[string]any{"n": 10})
	if !res.IsError || res.Meta[mcpserver.MetaErrorKind] != nil || res.Meta[MetaSession] != nil {
		t.Errorf("upstream error result: isError %v, _meta %v", res.IsError, res.Meta)
	}
}
