package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNotificationsBeforeResult: the log messages and resource-updated
// notifications the upstream sends during a tools/call, resources/read or
// prompts/get, before its answer, reach the client before the answer too,
// as progress does (TestProgressBeforeResult): a client that shows logs
// next to the call (the MCP Inspector, Claude Desktop) otherwise shows
// them after it, or attached to nothing. A Go SDK client through the
// proxy, in front of a Go SDK upstream that logs before it answers; the
// order is the one the client's connection read, request after request.
// The upstream over a pipe (as a command) and over streamable HTTP
// (--url); over HTTP a resource-updated notification goes out on the
// upstream's stream for no request, in no order with the answer, so only
// the logs are counted there.
func TestNotificationsBeforeResult(t *testing.T) {
	t.Run("pipe", func(t *testing.T) { notificationsBeforeResult(t, true, pipeUpstream) })
	t.Run("url", func(t *testing.T) {
		notificationsBeforeResult(t, false, func(up *mcp.Server) Upstream { return urlUpstream(t, up) })
	})
}

func notificationsBeforeResult(t *testing.T, updates bool, upstream func(*mcp.Server) Upstream) {
	const logs = 5
	var up *mcp.Server
	up = mcp.NewServer(&mcp.Implementation{Name: "logger", Version: "v1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{"2025-11-25"},
		Capabilities:              &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
		SubscribeHandler:          func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler:        func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	// chat logs, and reports test://r updated, before it answers.
	chat := func(ctx context.Context, ss *mcp.ServerSession) {
		for i := 1; i <= logs; i++ {
			ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "logger", Data: fmt.Sprintf("step %d", i)})
		}
		if updates {
			up.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://r"})
		}
	}
	mcp.AddTool(up, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		chat(ctx, req.Session)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	up.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		chat(ctx, req.Session)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "r"}}}, nil
	})
	up.AddPrompt(&mcp.Prompt{Name: "p"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		chat(ctx, req.Session)
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "p"}}}}, nil
	})

	p, sess := startProxy(t, upstream(up), Options{})
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server(sess).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	rec := &readOrder{Transport: ct}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, rec, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if updates {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://r"}); err != nil {
			t.Fatal(err)
		}
	}
	want := fmt.Sprintf("%d logs", logs)
	if updates {
		want += ", 1 updated"
	}
	late := 0
	for i := 0; i < 30; i++ {
		var err error
		what := []string{"tools/call", "resources/read", "prompts/get"}[i%3]
		rec.take() // what came before this request
		switch what {
		case "tools/call":
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "work", Arguments: map[string]any{}})
		case "resources/read":
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://r"})
		case "prompts/get":
			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "p"})
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := rec.take(); got != want {
			late++
			t.Logf("%s %d: before its answer the client read %s, want %s", what, i, got, want)
		}
	}
	if late > 0 {
		t.Errorf("%d of 30 requests got their answer before the logs the upstream sent ahead of it", late)
	}
}

// readOrder is a client transport that notes the log messages and
// resource-updated notifications its connection reads, up to the
// response it reads next.
type readOrder struct {
	mcp.Transport
	mu      sync.Mutex
	logs    int
	updated int
	// answered is set when a response is read: what is read after it
	// belongs to the next request.
	answered bool
	next     []string
}

func (r *readOrder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &readOrderConn{Connection: c, r: r}, nil
}

// take returns what was read before the last response (as "N logs" and
// ", N updated" when there was an update), and starts counting anew.
func (r *readOrder) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := fmt.Sprintf("%d logs", r.logs)
	if r.updated > 0 {
		s += fmt.Sprintf(", %d updated", r.updated)
	}
	if len(r.next) > 0 {
		s += " (then, after the answer: " + strings.Join(r.next, ", ") + ")"
	}
	r.logs, r.updated, r.answered, r.next = 0, 0, false, nil
	return s
}

type readOrderConn struct {
	mcp.Connection
	r *readOrder
}

func (c *readOrderConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		return m, err
	}
	r := c.r
	r.mu.Lock()
	defer r.mu.Unlock()
	switch m := m.(type) {
	case *jsonrpc.Response:
		r.answered = true
	case *jsonrpc.Request:
		switch {
		case r.answered:
			r.next = append(r.next, m.Method)
		case m.Method == "notifications/message":
			r.logs++
		case m.Method == "notifications/resources/updated":
			r.updated++
		}
	}
	return m, nil
}
