package proxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
)

// relay routes what the upstream sends on its own (progress, log
// messages, resource updates, and its requests for sampling, elicitation
// and roots) to the client it concerns, over the one upstream connection
// every client shares.
type relay struct {
	mu       sync.Mutex
	next     int64
	progress map[string]progressRoute    // upstream progress token → the client's
	calls    map[*mcp.ServerSession]int  // sessions with requests in flight → how many
	subs     map[string]map[*server]bool // resource URI → the servers subscribed to it
}

// progressRoute is where an upstream progress notification goes.
type progressRoute struct {
	ss    *mcp.ServerSession
	token any // the client's own token
}

// ErrNoCaller is returned to the upstream when it asks for sampling,
// elicitation or roots while no client's request is in flight, so the
// proxy cannot tell which client to ask.
var ErrNoCaller = errors.New("proxy: the proxy cannot tell which of its clients this request is for (none, or several, have requests in flight); ask during a tool call, or run one proxy per client")

// relayOptions adds the upstream client's handlers that relay what the
// upstream sends to the proxy's clients, and declares the capabilities it
// relays (a client that lacks one refuses the request, and the refusal
// goes back upstream).
func (p *Proxy) relayOptions(o *mcp.ClientOptions) {
	p.relay.progress = map[string]progressRoute{}
	p.relay.calls = map[*mcp.ServerSession]int{}
	p.relay.subs = map[string]map[*server]bool{}
	caps := &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{}}
	caps.Roots.ListChanged = true
	o.Capabilities = caps
	o.ProgressNotificationHandler = func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		pr := req.Params
		p.relay.mu.Lock()
		r, ok := p.relay.progress[tokenKey(pr.ProgressToken)]
		p.relay.mu.Unlock()
		if ok {
			r.ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{Meta: pr.Meta, ProgressToken: r.token,
				Progress: pr.Progress, Total: pr.Total, Message: pr.Message})
		}
	}
	o.LoggingMessageHandler = func(ctx context.Context, req *mcp.LoggingMessageRequest) {
		for _, s := range p.servers() {
			for ss := range s.srv.Sessions() {
				ss.Log(ctx, req.Params)
			}
		}
	}
	o.ResourceUpdatedHandler = func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		for _, s := range p.servers() {
			s.srv.ResourceUpdated(ctx, req.Params)
		}
	}
	o.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		ss := p.caller()
		if ss == nil {
			return nil, ErrNoCaller
		}
		return ss.CreateMessage(ctx, req.Params)
	}
	o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		ss := p.caller()
		if ss == nil {
			return nil, ErrNoCaller
		}
		return ss.Elicit(ctx, req.Params)
	}
}

// rootsMiddleware answers the upstream's roots/list with the roots of the
// client whose request is in flight.
func (p *Proxy) rootsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "roots/list" {
			return next(ctx, method, req)
		}
		ss := p.caller()
		if ss == nil {
			return nil, ErrNoCaller
		}
		params, _ := req.GetParams().(*mcp.ListRootsParams)
		return ss.ListRoots(ctx, params)
	}
}

// relayVersions are the protocol versions the proxy offers its clients:
// those under which a server may ask its client during a request.
func relayVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			out = append(out, v)
		}
	}
	return out
}

func tokenKey(t any) string { return fmt.Sprintf("%T:%v", t, t) }

// servers returns the proxy's live servers.
func (p *Proxy) servers() []*server {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*server, 0, len(p.srvs))
	for s := range p.srvs {
		out = append(out, s)
	}
	return out
}

// caller is the client a request from the upstream is for: the one client
// with requests in flight, or the only client there is. With requests of
// several clients in flight it is nil: the upstream connection is shared
// and MCP does not say which request a server's request belongs to, so
// the proxy refuses rather than risk asking (and showing the prompt to)
// the wrong client.
func (p *Proxy) caller() *mcp.ServerSession {
	p.relay.mu.Lock()
	n := len(p.relay.calls)
	var one *mcp.ServerSession
	for ss := range p.relay.calls {
		one = ss
	}
	p.relay.mu.Unlock()
	if n > 1 {
		return nil
	}
	if one != nil {
		return one
	}
	var only *mcp.ServerSession
	n = 0
	for _, s := range p.servers() {
		for ss := range s.srv.Sessions() {
			only = ss
			n++
		}
	}
	if n == 1 {
		return only
	}
	return nil
}

// begin marks a request of ss in flight until the returned func is called.
func (p *Proxy) begin(ss *mcp.ServerSession) func() {
	if ss == nil {
		return func() {}
	}
	p.relay.mu.Lock()
	p.relay.calls[ss]++
	p.relay.mu.Unlock()
	return func() {
		p.relay.mu.Lock()
		if p.relay.calls[ss]--; p.relay.calls[ss] <= 0 {
			delete(p.relay.calls, ss)
		}
		p.relay.mu.Unlock()
	}
}

// progressKey carries the upstream progress token of a call in its context.
type progressKey struct{}

// routeProgress gives a client's progress token an upstream token of the
// proxy's own (two clients may use the same), returned in ctx for call.
func (p *Proxy) routeProgress(ctx context.Context, ss *mcp.ServerSession, token any) (context.Context, func()) {
	if token == nil || ss == nil {
		return ctx, func() {}
	}
	p.relay.mu.Lock()
	p.relay.next++
	up := "scrollback-" + p.nonce + "-" + strconv.FormatInt(p.relay.next, 10)
	p.relay.progress[tokenKey(up)] = progressRoute{ss: ss, token: token}
	p.relay.mu.Unlock()
	return context.WithValue(ctx, progressKey{}, up), func() {
		// The SDK may hand over a notification the upstream sent just
		// before its response after the response: keep the route a moment.
		time.AfterFunc(progressGrace, func() {
			p.relay.mu.Lock()
			delete(p.relay.progress, tokenKey(up))
			p.relay.mu.Unlock()
		})
	}
}

// progressGrace is how long a progress route outlives its request.
const progressGrace = 5 * time.Second

// withTimeout bounds a forwarded request by the call timeout.
func (p *Proxy) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.opts.CallTimeout > 0 {
		return context.WithTimeout(ctx, p.opts.CallTimeout)
	}
	return ctx, func() {}
}

// passThrough forwards to the upstream what the SDK's server would
// otherwise answer from its registry: resources/read (of any URI the
// upstream serves, listed or not) and prompts/get, both previewed over
// the budget; logging/setLevel; and it tracks each client's requests in
// flight and their progress tokens.
func (s *server) passThrough(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		switch method {
		case "tools/call":
			defer s.p.begin(ss)()
			if pp, ok := req.GetParams().(interface{ GetProgressToken() any }); ok {
				var done func()
				ctx, done = s.p.routeProgress(ctx, ss, pp.GetProgressToken())
				defer done()
			}
			return next(ctx, method, req)
		case "resources/read":
			defer s.p.begin(ss)()
			params, _ := req.GetParams().(*mcp.ReadResourceParams)
			return forward(ctx, s.p, func(ctx context.Context, c *conn) (*mcp.ReadResourceResult, error) {
				res, err := c.cs.ReadResource(ctx, params)
				if err != nil {
					return nil, err
				}
				s.p.mendContents(res.Contents)
				return s.shapeRead(ctx, params, res), nil
			})
		case "prompts/get":
			defer s.p.begin(ss)()
			params, _ := req.GetParams().(*mcp.GetPromptParams)
			return forward(ctx, s.p, func(ctx context.Context, c *conn) (*mcp.GetPromptResult, error) {
				res, err := c.cs.GetPrompt(ctx, params)
				if err != nil {
					return nil, err
				}
				return s.shapePrompt(ctx, params, res), nil
			})
		case "logging/setLevel":
			params, _ := req.GetParams().(*mcp.SetLoggingLevelParams)
			if _, err := forward(ctx, s.p, func(ctx context.Context, c *conn) (struct{}, error) {
				return struct{}{}, c.cs.SetLoggingLevel(ctx, params)
			}); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		}
		return next(ctx, method, req)
	}
}

// forward makes one request of the upstream within the call timeout.
func forward[T any](ctx context.Context, p *Proxy, f func(context.Context, *conn) (T, error)) (T, error) {
	var zero T
	c, err := p.conn(ctx)
	if err != nil {
		return zero, err
	}
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	res, err := f(ctx, c)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return zero, &Error{Err: ErrCallTimeout, Msg: fmt.Sprintf("the upstream server did not answer within %s, so the request was cancelled", p.opts.CallTimeout)}
	}
	return res, err
}

// subscribe forwards a client's subscription, once per URI for all the
// proxy's clients.
func (s *server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	s.p.relay.mu.Lock()
	first := len(s.p.relay.subs[uri]) == 0
	s.p.relay.mu.Unlock()
	if first {
		if _, err := forward(ctx, s.p, func(ctx context.Context, c *conn) (struct{}, error) {
			return struct{}{}, c.cs.Subscribe(ctx, req.Params)
		}); err != nil {
			return err
		}
	}
	s.p.relay.mu.Lock()
	if s.p.relay.subs[uri] == nil {
		s.p.relay.subs[uri] = map[*server]bool{}
	}
	s.p.relay.subs[uri][s] = true
	s.p.relay.mu.Unlock()
	return nil
}

// unsubscribe forwards the last unsubscription of a URI.
func (s *server) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	s.p.relay.mu.Lock()
	delete(s.p.relay.subs[uri], s)
	last := len(s.p.relay.subs[uri]) == 0
	if last {
		delete(s.p.relay.subs, uri)
	}
	s.p.relay.mu.Unlock()
	if !last {
		return nil
	}
	_, err := forward(ctx, s.p, func(ctx context.Context, c *conn) (struct{}, error) {
		return struct{}{}, c.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	return err
}

// forget drops a server's subscriptions when its client has gone.
func (s *server) forget() {
	s.p.relay.mu.Lock()
	var gone []string
	for uri, subs := range s.p.relay.subs {
		delete(subs, s)
		if len(subs) == 0 {
			delete(s.p.relay.subs, uri)
			gone = append(gone, uri)
		}
	}
	s.p.relay.mu.Unlock()
	for _, uri := range gone {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		forward(ctx, s.p, func(ctx context.Context, c *conn) (struct{}, error) {
			return struct{}{}, c.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
		})
		cancel()
	}
}

// resubscribe renews every subscription on a new upstream connection (a
// restarted command, a reconnected URL).
func (p *Proxy) resubscribe(ctx context.Context, c *conn) {
	p.relay.mu.Lock()
	uris := make([]string, 0, len(p.relay.subs))
	for uri := range p.relay.subs {
		uris = append(uris, uri)
	}
	p.relay.mu.Unlock()
	for _, uri := range uris {
		if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			p.log.Warn("proxy: renewing a resource subscription failed", "uri", uri, "err", err)
		}
	}
}

// retainText shows one long text of a resource or prompt as a tool
// result's text is shown: whole within the budget, else a preview whose
// footer leads to a retained copy. meta is nil when it was shown whole.
func (s *server) retainText(ctx context.Context, what, source, text string) (string, mcp.Meta) {
	p := s.p
	budget := p.budget(what)
	if len(text) <= budget && !p.wasCut(text) {
		return text, nil
	}
	t := p.resultText(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, p.copyCap(), budget)
	status := ""
	if t.original > int64(len(t.data)) && t.gap != nil {
		status = fmt.Sprintf("the upstream's result held %d bytes of text; over the copy cap, the copy keeps its head and its tail", t.original)
	}
	sess, err := s.b.Session(ctx)
	if err != nil {
		return text[:min(len(text), budget/2)] + "\n[scrollback: the rest was not shown and could not be saved: " + err.Error() + "]", nil
	}
	shown := sess.Retain(ctx, scrollback.RetainInput{Tool: what, Source: cutString(source, 200), Data: t.data, Complete: t.complete,
		Budget: budget, Gap: t.gap, Status: status})
	m := mcp.Meta{MetaSession: sess.ID(), MetaTotalBytes: shown.TotalBytes, MetaComplete: shown.Complete, MetaRecovery: shown.Recovery}
	if shown.OutputID != "" {
		m[MetaOutputID] = shown.OutputID
	}
	return shown.Preview, m
}

// shapeRead previews each text content of a resources/read result over
// the budget; the first one's recovery reference goes in _meta.
func (s *server) shapeRead(ctx context.Context, params *mcp.ReadResourceParams, res *mcp.ReadResourceResult) *mcp.ReadResourceResult {
	for i, c := range res.Contents {
		if c == nil || c.Text == "" {
			continue
		}
		pv, m := s.retainText(ctx, "resources/read", "resources/read "+c.URI, c.Text)
		if m == nil {
			continue
		}
		cc := *c
		cc.Text = pv
		res.Contents[i] = &cc
		mergeMeta(&res.Meta, m)
	}
	return res
}

// shapePrompt previews each text of a prompts/get result over the budget.
func (s *server) shapePrompt(ctx context.Context, params *mcp.GetPromptParams, res *mcp.GetPromptResult) *mcp.GetPromptResult {
	name := ""
	if params != nil {
		name = params.Name
	}
	for _, msg := range res.Messages {
		if msg == nil {
			continue
		}
		switch c := msg.Content.(type) {
		case *mcp.TextContent:
			if pv, m := s.retainText(ctx, "prompts/get", "prompts/get "+name, c.Text); m != nil {
				msg.Content = &mcp.TextContent{Text: pv, Annotations: c.Annotations}
				mergeMeta(&res.Meta, m)
			}
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				if pv, m := s.retainText(ctx, "prompts/get", "prompts/get "+name+" "+c.Resource.URI, c.Resource.Text); m != nil {
					r := *c.Resource
					r.Text = pv
					msg.Content = &mcp.EmbeddedResource{Resource: &r, Annotations: c.Annotations}
					mergeMeta(&res.Meta, m)
				}
			}
		}
	}
	return res
}

// mergeMeta adds m to *dst unless a recovery reference is there already
// (the first previewed part's stands).
func mergeMeta(dst *mcp.Meta, m mcp.Meta) {
	if *dst == nil {
		*dst = mcp.Meta{}
	}
	if _, ok := (*dst)[MetaOutputID]; ok {
		return
	}
	for k, v := range m {
		(*dst)[k] = v
	}
}
