package mcpserver

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
)

// listNames returns the names of the tools a client sees.
func listNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestAddTools: AddTools adds exactly the tools named (all for none), in
// any server; an unknown name adds nothing and names the tools there are.
func TestAddTools(t *testing.T) {
	tests := []struct {
		names   []string
		want    []string
		wantErr string
	}{
		{nil, []string{"grep_tool_output", "query_tool_output", "read_file", "read_tool_output", "run_code", "run_command"}, ""},
		{[]string{"read_tool_output"}, []string{"read_tool_output"}, ""},
		{[]string{"grep_tool_output", "read_tool_output"}, []string{"grep_tool_output", "read_tool_output"}, ""},
		{[]string{"read_tool_output", "cat"}, nil, `no session tool named "cat"; the tools are run_command, read_tool_output`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.names, ","), func(t *testing.T) {
			eng, _ := newEngine(t, filepager.Options{})
			srv := mcp.NewServer(&mcp.Implementation{Name: "host"}, nil)
			err := AddTools(srv, NewBinding(eng, scrollback.LocalOwner), tt.names...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "mcpserver: ") {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := listNames(t, connect(t, srv)); !slices.Equal(got, tt.want) {
				t.Errorf("tools = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBindingLazy: a binding from NewBinding makes its session on the
// first tool call that needs one, once, and the tools added to any server
// act on it; BindSession's is fixed.
func TestBindingLazy(t *testing.T) {
	ctx := context.Background()
	eng, _ := newEngine(t, filepager.Options{})
	b := NewBinding(eng, scrollback.LocalOwner)
	if b.Current() != nil {
		t.Fatal("a new binding has a session before any call")
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "host"}, nil)
	if err := AddTools(srv, b, "run_command", "read_tool_output"); err != nil {
		t.Fatal(err)
	}
	srv.AddReceivingMiddleware(FinishResults(b, ToolNames, nil))
	cs := connect(t, srv)
	listNames(t, cs)
	if b.Current() != nil {
		t.Fatal("listing tools made a session")
	}
	res := call(t, cs, "run_command", map[string]any{"command": "seq 20000"})
	var rc scrollback.RunCommandResult
	decode(t, res, &rc)
	s := b.Current()
	if s == nil || rc.OutputID == "" || res.Meta[MetaSession] != s.ID() {
		t.Fatalf("session %v, output %q, meta %v", s, rc.OutputID, res.Meta)
	}
	res = call(t, cs, "read_tool_output", map[string]any{"id": rc.OutputID, "limit": 6})
	var p scrollback.Page
	decode(t, res, &p)
	if res.IsError || p.Text != "1\n2\n3\n" {
		t.Errorf("page %q (error %v)", p.Text, res.IsError)
	}
	if again, _ := b.Session(ctx); again != s {
		t.Error("Session made a second session")
	}
	if fixed := BindSession(s); fixed.Current() != s {
		t.Error("BindSession is not bound to its session")
	}
}

// TestNewSessionHandler: any server factory gets the HTTP rules: one
// server per MCP session, made once, bound to a fresh session or to the
// one the Scrollback-Session header names.
func TestNewSessionHandler(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	var made atomic.Int32
	h := NewSessionHandler(eng, HTTPOptions{}, func(b *Binding) *mcp.Server {
		made.Add(1)
		srv := mcp.NewServer(&mcp.Implementation{Name: "custom"}, nil)
		if err := AddTools(srv, b, "run_command", "read_tool_output"); err != nil {
			t.Error(err)
		}
		srv.AddReceivingMiddleware(FinishResults(b, ToolNames, nil))
		return srv
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)

	cs := mustHTTPClient(t, ts.URL, nil)
	if got := listNames(t, cs); !slices.Equal(got, []string{"read_tool_output", "run_command"}) {
		t.Errorf("tools = %v", got)
	}
	id, sid := runBig(t, cs)
	cs2 := mustHTTPClient(t, ts.URL, map[string]string{SessionHeader: sid})
	if res := call(t, cs2, "read_tool_output", map[string]any{"id": id, "limit": 2}); res.IsError {
		t.Errorf("the resumed session cannot read its copy: %v", res.Content)
	}
	cs3 := mustHTTPClient(t, ts.URL, nil)
	if res := call(t, cs3, "read_tool_output", map[string]any{"id": id}); !res.IsError {
		t.Error("a fresh session read another's copy")
	}
	// The SDK may ask for a server for more than one request before a
	// session starts (a discovery request, then initialize): at least one
	// per MCP session.
	if n := made.Load(); n < 3 {
		t.Errorf("made %d servers for 3 MCP sessions", n)
	}
	if _, err := httpClient(t, ts.URL, map[string]string{SessionHeader: "s_nope"}); err == nil {
		t.Error("an unknown Scrollback-Session was accepted")
	}
}
