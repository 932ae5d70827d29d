package proxy

import (
	"context"
	"errors"
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
// tools there are. An upstream's own error result passes through
// untouched, and its protocol error stays a protocol error.
func TestErrorResultsMatchScrollbackMCP(t *testing.T) {
	up := testUpstream()
	mcp.AddTool(up, &mcp.Tool{Name: "refuse", Description: "Refuse with a long protocol error."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "refused: " + strings.Repeat("😀", 2000)}
	})
	_, sess, cs := start(t, Upstream{Dial: dialServer(up)}, Options{}, nil)
	// Only the call to "hang" should time out: a proxy of its own has the
	// short call timeout, so that a busy machine cannot make the others
	// miss it.
	_, hangSess, hangCS := start(t, Upstream{Dial: dialServer(up)}, Options{CallTimeout: 300 * time.Millisecond}, nil)

	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		kind       string
		want       []string
	}{
		{"unknown tool", "no_such_tool", map[string]any{}, scrollback.KindArgument, []string{`unknown tool "no_such_tool"`, "echo", "read_tool_output", "run_code"}},
		{"unknown output id", "read_tool_output", map[string]any{"id": "out_aaaaaaaaaaaaaaaaaaaaaaaaaa"}, scrollback.KindNotFound, []string{"no retained output with that id in this session"}},
		{"bad limit", "read_tool_output", map[string]any{"id": "out_aaaaaaaaaaaaaaaaaaaaaaaaaa", "limit": 0}, scrollback.KindArgument, []string{"limit 0"}},
		{"upstream timed out", "hang", map[string]any{}, scrollback.KindUnavailable, []string{"hang", "did not answer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, sess := cs, sess
			if tc.tool == "hang" {
				cs, sess = hangCS, hangSess
			}
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

	// The upstream's protocol error stays one, code kept, its message cut
	// on a character boundary (TestUpstreamRPCErrorKept has the rest).
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "refuse", Arguments: map[string]any{}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.HasPrefix(je.Message, "refused: 😀") || len(je.Message) > 4096 || !utf8.ValidString(je.Message) {
		t.Errorf("an upstream protocol error: got %v", err)
	}

	// The upstream's own error result is its to word: no kind, no session.
	res := call(t, cs, "big_error", map[string]any{"n": 10})
	if !res.IsError || res.Meta[mcpserver.MetaErrorKind] != nil || res.Meta[MetaSession] != nil {
		t.Errorf("upstream error result: isError %v, _meta %v", res.IsError, res.Meta)
	}
}
