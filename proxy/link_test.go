package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/mcpserver"
)

// capsUpstream is chattyUpstream with a tool "caps" that returns the
// capabilities its client (the proxy) declared, as JSON.
func capsUpstream() *mcp.Server {
	srv, _, _ := holdingCapsUpstream()
	return srv
}

// holdingCapsUpstream is capsUpstream with a tool "hold" that tells
// started when it begins and returns when release is closed.
func holdingCapsUpstream() (srv *mcp.Server, started chan struct{}, release chan struct{}) {
	srv = chattyUpstream()
	started, release = make(chan struct{}, 16), make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "caps"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		b, _ := json.Marshal(req.Session.InitializeParams().Capabilities)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "hold"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
	})
	return srv, started, release
}

// serveHTTP starts p and serves it over streamable HTTP.
func serveHTTP(t *testing.T, up Upstream, opts Options) (*Proxy, string) {
	t.Helper()
	p, err := New(newEngine(t), up, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ts := httptest.NewServer(p.HTTPHandler(mcpserver.HTTPOptions{}))
	t.Cleanup(ts.Close)
	return p, ts.URL + mcpserver.Path
}

// connectHTTP connects a client at protocol 2025-11-25, with an MCP
// session (connectHTTPAt for another version).
func connectHTTP(t *testing.T, url string, copts *mcp.ClientOptions) *mcp.ClientSession {
	return connectHTTPAt(t, url, copts, legacy)
}

func connectHTTPAt(t *testing.T, url string, copts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, copts).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestPerClientUpstreams: over HTTP each client session gets an upstream
// connection of its own, declaring exactly what its client declared, so
// that a client without sampling is never asked, and the upstream's log
// messages during a call reach the caller only; the connections are
// bounded and end with their sessions.
func TestPerClientUpstreams(t *testing.T) {
	up, started, release := holdingCapsUpstream()
	p, url := serveHTTP(t, Upstream{Dial: dialServer(up)}, Options{MaxUpstreams: 2})
	ca, cb := &chattyClient{}, &chattyClient{}
	a := connectHTTP(t, url, ca.options("A"))
	bopts := cb.options("B")
	bopts.CreateMessageHandler, bopts.ElicitationHandler = nil, nil // B cannot sample nor elicit
	b := connectHTTP(t, url, bopts)

	if n := p.Upstreams(); n != 0 {
		t.Errorf("upstream connections before any call: %d, want 0 (opened on first use)", n)
	}
	var capsA, capsB map[string]any
	json.Unmarshal([]byte(text(call(t, a, "caps", map[string]any{}))), &capsA)
	json.Unmarshal([]byte(text(call(t, b, "caps", map[string]any{}))), &capsB)
	if capsA["sampling"] == nil || capsA["elicitation"] == nil {
		t.Errorf("A's upstream connection declares %v, want sampling and elicitation as A did", capsA)
	}
	if capsB["sampling"] != nil || capsB["elicitation"] != nil {
		t.Errorf("B's upstream connection declares %v, want neither sampling nor elicitation, as B", capsB)
	}
	if n := p.Upstreams(); n != 2 {
		t.Errorf("upstream connections after two clients called: %d, want 2", n)
	}

	for _, cs := range []*mcp.ClientSession{a, b} {
		if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
	}
	got := text(call(t, a, "ask", map[string]any{}))
	if !strings.HasPrefix(got, "sampling: A\nelicitation: accept A") {
		t.Errorf("A's ask: %q", got)
	}
	got = text(call(t, b, "ask", map[string]any{}))
	if !strings.HasPrefix(got, "sampling error") || !strings.Contains(got, "elicitation error") {
		t.Errorf("B's ask: %q, want sampling and elicitation refused (B declared neither)", got)
	}
	for name, cc := range map[string]*chattyClient{"A": ca, "B": cb} {
		eventually(t, name+"'s log message", func() bool {
			cc.mu.Lock()
			defer cc.mu.Unlock()
			return len(cc.logs) >= 1
		})
	}
	// Each made one call that logs once: a log broadcast to every client
	// would give each two.
	call(t, a, "caps", map[string]any{}) // a round trip, after which a stray log has likely arrived
	call(t, b, "caps", map[string]any{})
	for name, cc := range map[string]*chattyClient{"A": ca, "B": cb} {
		cc.mu.Lock()
		if len(cc.logs) != 1 {
			t.Errorf("%s got %d log messages, want its own one: %q", name, len(cc.logs), cc.logs)
		}
		cc.mu.Unlock()
	}

	// A third client takes the place of the client idle longest (A, whose
	// last call came before B's), never sharing a connection; A's next
	// call connects again, declaring A's capabilities as before.
	c := connectHTTP(t, url, nil)
	if res := call(t, c, "caps", map[string]any{}); res.IsError || strings.Contains(text(res), "sampling") {
		t.Errorf("a third client over MaxUpstreams 2: %q, want its own connection, declaring no sampling", text(res))
	}
	if n := p.Upstreams(); n != 2 {
		t.Errorf("upstream connections: %d, want at most MaxUpstreams 2", n)
	}
	json.Unmarshal([]byte(text(call(t, a, "caps", map[string]any{}))), &capsA)
	if capsA["sampling"] == nil || capsA["elicitation"] == nil {
		t.Errorf("A's connection made again declares %v, want sampling and elicitation", capsA)
	}
	if n := p.UpstreamRestarts(); n != 0 {
		t.Errorf("a connection closed to make room counted as %d restarts", n)
	}

	// With every connection busy, one more client gets a clear error.
	var wg sync.WaitGroup
	for _, cs := range []*mcp.ClientSession{a, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := call(t, cs, "hold", map[string]any{}); res.IsError {
				t.Errorf("hold: %q", text(res))
			}
		}()
	}
	<-started
	<-started
	res := call(t, b, "caps", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "--max-upstreams") {
		t.Errorf("a client while MaxUpstreams 2 connections are busy: %q, want an error naming --max-upstreams", text(res))
	}
	close(release)
	wg.Wait()
	if res := call(t, b, "caps", map[string]any{}); res.IsError {
		t.Errorf("B once the calls ended: %q", text(res))
	}
	// A client that goes gives its connection back.
	b.Close()
	eventually(t, "B's upstream connection closed with its session", func() bool { return p.Upstreams() == 1 })
}

// TestPerClientUpstreamProcesses: a command upstream served over HTTP
// runs one process per client session, each restarted on its own after a
// crash.
func TestPerClientUpstreamProcesses(t *testing.T) {
	p, url := serveHTTP(t, commandUpstream(t), Options{})
	a := connectHTTP(t, url, nil)
	b := connectHTTP(t, url, nil)
	pid := func(cs *mcp.ClientSession) string { return text(call(t, cs, "pid", map[string]any{})) }
	pa, pb := pid(a), pid(b)
	if pa == pb || pa == "" {
		t.Fatalf("two clients share the upstream process %q / %q", pa, pb)
	}
	if res := call(t, a, "crash", map[string]any{}); !res.IsError {
		t.Fatalf("crash: %q", text(res))
	}
	if pa2 := pid(a); pa2 == pa {
		t.Errorf("A's upstream was not started again after its crash")
	}
	if pb2 := pid(b); pb2 != pb {
		t.Errorf("A's crash restarted B's upstream too: %s → %s", pb, pb2)
	}
	if n := p.UpstreamRestarts(); n != 1 {
		t.Errorf("restarts: %d, want 1", n)
	}
}

// TestUpstreamRPCErrorKept: an upstream's JSON-RPC error reaches the
// client with its code and data, for tools/call, resources/read and
// prompts/get.
func TestUpstreamRPCErrorKept(t *testing.T) {
	data := json.RawMessage(`{"field":"path","why":"must be absolute"}`)
	refusal := func() error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad path", Data: data}
	}
	up := mcp.NewServer(&mcp.Implementation{Name: "refuser"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "refuse"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, refusal()
	})
	up.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://{x}", Name: "any"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, refusal()
	})
	up.AddPrompt(&mcp.Prompt{Name: "refuse"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, refusal()
	})
	for _, mode := range []string{"stdio", "http"} {
		var cs *mcp.ClientSession
		if mode == "stdio" {
			_, _, cs = start(t, Upstream{Dial: dialServer(up)}, Options{}, nil)
		} else {
			_, url := serveHTTP(t, Upstream{Dial: dialServer(up)}, Options{})
			cs = connectHTTP(t, url, nil)
		}
		ctx := context.Background()
		for method, do := range map[string]func() error{
			"tools/call": func() error {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "refuse", Arguments: map[string]any{}})
				return err
			},
			"resources/read": func() error {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://x"})
				return err
			},
			"prompts/get": func() error {
				_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "refuse"})
				return err
			},
		} {
			err := do()
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || je.Message != "bad path" || string(je.Data) != string(data) {
				t.Errorf("%s %s: got %#v, want code %d, message and data kept", mode, method, err, jsonrpc.CodeInvalidParams)
			}
		}
	}
}

// hangingUpstream is capsUpstream that never answers the methods in hang
// (until the proxy cancels them).
func hangingUpstream(hang ...string) *mcp.Server {
	srv := capsUpstream()
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			for _, h := range hang {
				if method == h {
					<-ctx.Done()
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// TestEveryRequestTimesOut: a hung upstream gets the call timeout on every
// forwarded request, and a client that does not answer the upstream's
// request gets it too, the error going back upstream.
func TestEveryRequestTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	isTimeout := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), "did not answer within "+timeout.String())
	}
	ctx := context.Background()
	for _, tc := range []struct {
		method string
		do     func(cs *mcp.ClientSession) error
	}{
		{"completion/complete", func(cs *mcp.ClientSession) error {
			_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "long"}, Argument: mcp.CompleteParamsArgument{Name: "a", Value: "b"}})
			return err
		}},
		{"resources/subscribe", func(cs *mcp.ClientSession) error {
			return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://r"})
		}},
		{"logging/setLevel", func(cs *mcp.ClientSession) error {
			return cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
		}},
		{"resources/read", func(cs *mcp.ClientSession) error {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://r"})
			return err
		}},
		{"prompts/get", func(cs *mcp.ClientSession) error {
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "long"})
			return err
		}},
		{"tools/call", func(cs *mcp.ClientSession) error {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "caps", Arguments: map[string]any{}})
			if err == nil && res.IsError {
				err = errors.New(text(res))
			}
			return err
		}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			up := hangingUpstream(tc.method)
			_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{CallTimeout: timeout}, nil)
			if err := tc.do(cs); !isTimeout(err) {
				t.Errorf("a hung %s: got %v, want the timeout error", tc.method, err)
			}
		})
	}
	for _, method := range []string{"tools/list", "prompts/list", "resources/list"} {
		t.Run(method, func(t *testing.T) {
			p, err := New(newEngine(t), Upstream{Dial: dialServer(hangingUpstream(method))}, Options{CallTimeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if err := p.Start(ctx); !errors.Is(err, ErrCallTimeout) || !strings.Contains(err.Error(), "within "+timeout.String()) {
				t.Errorf("a hung %s at start: got %v, want ErrCallTimeout", method, err)
			}
		})
	}
	t.Run("sampling relayed to a client that does not answer", func(t *testing.T) {
		// The upstream asks after its call has ended (the shared link
		// asks its only client), so that only the relay's own timeout
		// can end the request.
		errs := make(chan error, 1)
		up := mcp.NewServer(&mcp.Implementation{Name: "asker"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
		mcp.AddTool(up, &mcp.Tool{Name: "ask_later"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			go func() {
				_, err := req.Session.CreateMessage(context.Background(), &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
				errs <- err
			}()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "asked"}}}, nil, nil
		})
		copts := &mcp.ClientOptions{CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}
		_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{CallTimeout: timeout}, copts)
		call(t, cs, "ask_later", map[string]any{})
		if err := <-errs; err == nil || !strings.Contains(err.Error(), "did not answer the upstream's sampling/createMessage within "+timeout.String()) {
			t.Errorf("a client that never answers sampling: the upstream got %v, want the relay's timeout", err)
		}
	})
}

// TestStdioDeclaresClientCapabilities: over stdio the shared upstream
// connection declares what the client declared, connecting again when
// the client's capabilities differ from the first connection's; that is
// not counted as a restart.
func TestStdioDeclaresClientCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name     string
		copts    *mcp.ClientOptions
		sampling bool
	}{
		{"no sampling", nil, false},
		{"sampling and elicitation", (&chattyClient{}).options("A"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, cs := start(t, Upstream{Dial: dialServer(capsUpstream())}, Options{}, tc.copts)
			var caps map[string]any
			json.Unmarshal([]byte(text(call(t, cs, "caps", map[string]any{}))), &caps)
			if got := caps["sampling"] != nil && caps["elicitation"] != nil; got != tc.sampling {
				t.Errorf("the upstream connection declares %v; want sampling and elicitation %v, as the client", caps, tc.sampling)
			}
			if got := caps["sampling"] != nil || caps["elicitation"] != nil; got != tc.sampling {
				t.Errorf("the upstream connection declares %v; want sampling or elicitation %v", caps, tc.sampling)
			}
			if n := p.UpstreamRestarts(); n != 0 {
				t.Errorf("restarts: %d, want 0 (declaring the client's capabilities is no restart)", n)
			}
		})
	}
}

// TestRootsListChangedForwarded: a client's notifications/roots/list_changed
// reaches the upstream over the client's connection, and the upstream's
// roots/list then gets the client's roots.
func TestRootsListChangedForwarded(t *testing.T) {
	changed := make(chan []string, 4)
	up := mcp.NewServer(&mcp.Implementation{Name: "roots"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{"2025-11-25"},
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			var uris []string
			r, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				uris = append(uris, "error: "+err.Error())
			} else {
				for _, root := range r.Roots {
					uris = append(uris, root.URI)
				}
			}
			changed <- uris
		},
	})
	mcp.AddTool(up, &mcp.Tool{Name: "noop"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	_, url := serveHTTP(t, Upstream{Dial: dialServer(up)}, Options{})
	client := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	client.AddRoots(&mcp.Root{URI: "file:///first"})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call(t, cs, "noop", map[string]any{}) // opens the client's upstream connection
	client.AddRoots(&mcp.Root{URI: "file:///second"})
	select {
	case uris := <-changed:
		if strings.Join(uris, " ") != "file:///first file:///second" {
			t.Errorf("after roots/list_changed the upstream listed %v, want the client's two roots", uris)
		}
	case <-time.After(30 * time.Second): // a bound on a hang, not a speed check
		t.Fatal("the client's notifications/roots/list_changed never reached the upstream")
	}
}

// TestProgressRenewsCallTimeout: a call whose upstream keeps reporting
// progress is answering, and runs past the call timeout, as it would
// without the proxy; one that reports nothing for the timeout is still
// cancelled, and so is a call whose client gave no progress token.
func TestProgressRenewsCallTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	up := mcp.NewServer(&mcp.Implementation{Name: "busy"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcp.CallToolRequest, args struct{ Stall bool }) (*mcp.CallToolResult, any, error) {
		tok := req.Params.GetProgressToken()
		for i := range 10 {
			if tok != nil && !(args.Stall && i >= 3) {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 10})
			}
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(timeout / 3):
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{CallTimeout: timeout}, nil)
	work := func(token any, stall bool) (*mcp.CallToolResult, error) {
		params := &mcp.CallToolParams{Name: "work", Arguments: map[string]any{"Stall": stall}}
		if token != nil {
			params.SetProgressToken(token)
		}
		return cs.CallTool(context.Background(), params)
	}
	if res, err := work("t1", false); err != nil || res.IsError || text(res) != "done" {
		t.Errorf("a call reporting progress for %s, over the %s timeout: got %v %v, want done", 10*timeout/3, timeout, err, res)
	}
	if res, err := work("t2", true); err != nil || !res.IsError || !strings.Contains(text(res), "within "+timeout.String()) {
		t.Errorf("a call whose progress stops: got %v %v, want the timeout error", err, res)
	}
	if res, err := work(nil, false); err != nil || !res.IsError || !strings.Contains(text(res), "within "+timeout.String()) {
		t.Errorf("a call without a progress token: got %v %v, want the timeout error", err, res)
	}
}
