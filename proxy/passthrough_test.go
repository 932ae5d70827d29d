package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/mcpserver"
)

// chattyUpstream is an upstream whose tool "ask" does, during the call,
// everything a server may do towards its client: progress, a log message,
// sampling, elicitation and roots; it returns what the client answered.
// Its resource test://r can be subscribed to, and the tool "touch" reports
// it updated. test://hidden is served but not listed.
func chattyUpstream() *mcp.Server {
	var srv *mcp.Server
	srv = mcp.NewServer(&mcp.Implementation{Name: "chatty", Version: "v9"}, &mcp.ServerOptions{
		Instructions:       "chatty instructions",
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities:       &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"b1"}}}, nil
		},
		// As a TypeScript-SDK server: it asks its client during a request.
		SupportedProtocolVersions: []string{"2025-11-25"},
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ss := req.Session
		if tok := req.Params.GetProgressToken(); tok != nil {
			ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half"})
		}
		ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "chatty", Data: "hello from upstream"})
		var answers []string
		if m, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}); err != nil {
			answers = append(answers, "sampling error: "+err.Error())
		} else {
			answers = append(answers, "sampling: "+m.Content.(*mcp.TextContent).Text)
		}
		if e, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}); err != nil {
			answers = append(answers, "elicitation error: "+err.Error())
		} else {
			answers = append(answers, fmt.Sprintf("elicitation: %s %v", e.Action, e.Content["name"]))
		}
		if r, err := ss.ListRoots(ctx, nil); err != nil {
			answers = append(answers, "roots error: "+err.Error())
		} else if len(r.Roots) > 0 {
			answers = append(answers, "roots: "+r.Roots[0].URI)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(answers, "\n")}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "touch"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://r"})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "touched"}}}, nil, nil
	})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		text := "small"
		if strings.HasSuffix(req.Params.URI, "big") {
			text = bigText(100 << 10)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
	}
	srv.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, read)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://{x}", Name: "any"}, read)
	srv.AddPrompt(&mcp.Prompt{Name: "long"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: bigText(50 << 10)}}}}, nil
	})
	return srv
}

// chattyClient is a client that answers sampling with answer, elicitation
// with name, and roots with root, and records the notifications it gets.
type chattyClient struct {
	mu       sync.Mutex
	progress []string
	logs     []string
	updated  []string
}

func (c *chattyClient) options(answer string) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: answer}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": answer}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, fmt.Sprintf("%v %v/%v %s", r.Params.ProgressToken, r.Params.Progress, r.Params.Total, r.Params.Message))
			c.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			c.mu.Lock()
			c.logs = append(c.logs, fmt.Sprint(r.Params.Data))
			c.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			c.mu.Lock()
			c.updated = append(c.updated, r.Params.URI)
			c.mu.Unlock()
		},
	}
}

// eventually waits for cond, failing after a generous time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Errorf("%s: never happened", what)
}

func askWithProgress(t *testing.T, cs *mcp.ClientSession, token any) string {
	t.Helper()
	params := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}}
	params.SetProgressToken(token)
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("ask: %v %s", err, text(res))
	}
	return text(res)
}

// TestPassThrough: progress, logging, sampling, elicitation, roots,
// subscriptions, unlisted resources and large resources and prompts pass
// through the proxy.
func TestPassThrough(t *testing.T) {
	cc := &chattyClient{}
	copts := cc.options("A")
	p, _, cs := start(t, Upstream{Dial: dialServer(chattyUpstream())}, Options{}, copts)
	_ = p
	ctx := context.Background()
	if got := cs.InitializeResult().Instructions; !strings.HasPrefix(got, mcpserver.Instructions) || !strings.Contains(got, "chatty v9") || !strings.Contains(got, "chatty instructions") {
		t.Errorf("instructions: scrollback's rule first, then the upstream's name, version and instructions; got %q", got)
	}
	if cs.InitializeResult().Capabilities.Logging == nil {
		t.Error("the logging capability of the upstream is not advertised")
	}
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}

	got := askWithProgress(t, cs, "tok-1")
	if want := "sampling: A\nelicitation: accept A"; !strings.HasPrefix(got, want) {
		t.Errorf("the upstream's requests were not answered by the client: got %q, want %q...", got, want)
	}
	eventually(t, "progress with the client's own token", func() bool {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		return len(cc.progress) == 1 && cc.progress[0] == "tok-1 1/2 half"
	})
	eventually(t, "the upstream's log message", func() bool {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		return len(cc.logs) == 1 && cc.logs[0] == "hello from upstream"
	})

	// A tool the proxy does not list is a tool error naming the tools
	// there are (mcpserver.FinishResults).
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "no_such_tool") || !strings.Contains(text(res), "ask") {
		t.Errorf("an unknown tool: got %v %v, want a tool error naming the tools", err, res)
	}

	// Subscriptions.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://r"}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "touch", map[string]any{})
	eventually(t, "notifications/resources/updated", func() bool {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		return len(cc.updated) == 1 && cc.updated[0] == "test://r"
	})
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://r"}); err != nil {
		t.Fatal(err)
	}

	// A resource not in the list, and a large one.
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://hidden"})
	if err != nil || r.Contents[0].Text != "small" {
		t.Errorf("an unlisted resource: %v %v", err, r)
	}
	r, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://big"})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := r.Meta[MetaOutputID].(string)
	if id == "" || len(r.Contents[0].Text) > 32768 || !strings.Contains(r.Contents[0].Text, id) {
		t.Fatalf("a 100 KiB resource is not previewed with its output_id: %d bytes, _meta %v", len(r.Contents[0].Text), r.Meta)
	}
	if copy, _ := readAll(t, cs, id); copy != bigText(100<<10) {
		t.Errorf("the resource's copy is not its text (%d bytes)", len(copy))
	}
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "long"})
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := pr.Meta[MetaOutputID].(string)
	if pid == "" || len(pr.Messages[0].Content.(*mcp.TextContent).Text) > 32768 {
		t.Errorf("a 50 KiB prompt is not previewed: _meta %v", pr.Meta)
	}
}

// TestPassThroughTwoClients: over HTTP, two clients whose sampling
// handlers answer differently. One after the other and at once, each gets
// its own answer (each client session has its own upstream connection),
// never the other client's nor a refusal; progress always reaches the
// client that asked for it.
func TestPassThroughTwoClients(t *testing.T) {
	_, url := serveHTTP(t, Upstream{Dial: dialServer(chattyUpstream())}, Options{})
	names := []string{"A", "B"}
	clients := map[string]*mcp.ClientSession{}
	ccs := map[string]*chattyClient{}
	for _, name := range names {
		cc := &chattyClient{}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name}, cc.options(name)).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		clients[name], ccs[name] = cs, cc
	}
	for _, name := range names {
		got := askWithProgress(t, clients[name], name+"-seq")
		if want := "sampling: " + name + "\nelicitation: accept " + name; !strings.HasPrefix(got, want) {
			t.Errorf("client %s alone got %q, want %q...", name, got, want)
		}
	}
	var wg sync.WaitGroup
	for _, name := range names {
		other := map[string]string{"A": "B", "B": "A"}[name]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				got := askWithProgress(t, clients[name], fmt.Sprint(name, i))
				for _, line := range strings.Split(got, "\n") {
					if strings.HasSuffix(line, " "+other) {
						t.Errorf("client %s got client %s's answer: %q", name, other, got)
					}
				}
				if want := "sampling: " + name + "\nelicitation: accept " + name; !strings.HasPrefix(got, want) {
					t.Errorf("client %s, with the other's calls in flight, got %q, want %q...", name, got, want)
				}
			}
		}()
	}
	wg.Wait()
	for _, name := range names {
		cc := ccs[name]
		eventually(t, "each client's own progress", func() bool {
			cc.mu.Lock()
			defer cc.mu.Unlock()
			return len(cc.progress) == 6
		})
		cc.mu.Lock()
		for _, p := range cc.progress {
			if !strings.HasPrefix(p, name) {
				t.Errorf("client %s got another's progress %q", name, p)
			}
		}
		cc.mu.Unlock()
	}
}

// TestPromptsCapabilityWithoutPrompts: an upstream that declares prompts
// but lists none yet (it adds them later, and says so) is offered with the
// prompts capability, so that the client lists them when told; the
// prompts it adds reach the client.
func TestPromptsCapabilityWithoutPrompts(t *testing.T) {
	var up *mcp.Server
	up = mcp.NewServer(&mcp.Implementation{Name: "later"}, &mcp.ServerOptions{HasPrompts: true})
	mcp.AddTool(up, &mcp.Tool{Name: "add_prompt"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		up.AddPrompt(&mcp.Prompt{Name: "later"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "later"}}}}, nil
		})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added"}}}, nil, nil
	})
	_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{}, nil)
	if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil || !caps.Prompts.ListChanged {
		t.Fatalf("the proxy's capabilities %+v lack the prompts (with listChanged) the upstream declared", caps)
	}
	call(t, cs, "add_prompt", map[string]any{})
	eventually(t, "the prompt the upstream added, listed", func() bool {
		res, err := cs.ListPrompts(context.Background(), nil)
		return err == nil && len(res.Prompts) == 1 && res.Prompts[0].Name == "later"
	})
}
