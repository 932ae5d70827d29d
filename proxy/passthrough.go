package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/present"
)

// ErrNoCaller is returned to the upstream when it asks for sampling,
// elicitation or roots over the shared link while no client's request is
// in flight, or several clients' are, so the proxy cannot tell which
// client to ask. (Over HTTP each client session has a link of its own.)
var ErrNoCaller = errors.New("proxy: the proxy cannot tell which of its clients this request is for (none, or several, have requests in flight); ask during a tool call, or run one proxy per client")

// progressRoute is where an upstream progress notification goes.
type progressRoute struct {
	ss    *mcp.ServerSession
	token any // the client's own token
	// ctx is the client's request's, without its cancellation: a
	// notification sent with it goes out on that request's own stream,
	// before its answer, which is the only way to a client of 2026-07-28
	// over HTTP (it opens no other stream) and keeps the order for others.
	ctx context.Context
	// clock renews the request's call timeout with each notification.
	clock *progressClock
}

// relayOptions adds the upstream client's handlers that relay what the
// upstream sends over l to l's clients, and declares caps: the client's
// own, so that the upstream asks only for what the client can do.
func (l *link) relayOptions(o *mcp.ClientOptions, caps *mcp.ClientCapabilities, ord *noticeOrder) {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	o.Capabilities = caps
	o.ProgressNotificationHandler = func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		defer ord.handled()
		pr := req.Params
		l.relay.mu.Lock()
		r, ok := l.relay.progress[tokenKey(pr.ProgressToken)]
		l.relay.mu.Unlock()
		if ok {
			r.clock.tick()
			r.ss.NotifyProgress(r.ctx, &mcp.ProgressNotificationParams{Meta: pr.Meta, ProgressToken: r.token,
				Progress: pr.Progress, Total: pr.Total, Message: pr.Message})
		}
	}
	o.LoggingMessageHandler = func(ctx context.Context, req *mcp.LoggingMessageRequest) {
		defer ord.handled()
		for _, s := range l.servers() {
			for ss := range s.srv.Sessions() {
				ss.Log(ctx, req.Params)
			}
		}
	}
	o.ResourceUpdatedHandler = func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		defer ord.handled()
		for _, s := range l.servers() {
			s.srv.ResourceUpdated(ctx, req.Params)
		}
	}
	// A handler is set only for what the client declared: the SDK
	// declares what it has a handler for.
	if caps.Sampling != nil {
		if caps.Sampling.Tools != nil {
			o.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
				return relayTo(ctx, l, "sampling/createMessage", func(ctx context.Context, ss *mcp.ServerSession) (*mcp.CreateMessageWithToolsResult, error) {
					return ss.CreateMessageWithTools(ctx, req.Params)
				})
			}
		} else {
			o.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return relayTo(ctx, l, "sampling/createMessage", func(ctx context.Context, ss *mcp.ServerSession) (*mcp.CreateMessageResult, error) {
					return ss.CreateMessage(ctx, req.Params)
				})
			}
		}
	}
	if caps.Elicitation != nil {
		// The upstream's word that a URL-mode elicitation is complete
		// reaches the client it asked: the client may be waiting for it to
		// go on, and there is no other way for it to learn.
		o.ElicitationCompleteHandler = func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			if ss := l.caller(); ss != nil {
				ss.NotifyElicitationComplete(ctx, req.Params)
			} else {
				l.p.log.Warn("proxy: an elicitation-complete notice of the upstream is for no client the proxy can tell", "elicitation", req.Params.ElicitationID)
			}
		}
		o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return relayTo(ctx, l, "elicitation/create", func(ctx context.Context, ss *mcp.ServerSession) (*mcp.ElicitResult, error) {
				return ss.Elicit(ctx, req.Params)
			})
		}
	}
}

// relayTo asks the client a request of the upstream is for, within the
// call timeout.
func relayTo[T any](ctx context.Context, l *link, method string, f func(context.Context, *mcp.ServerSession) (T, error)) (T, error) {
	var zero T
	ss := l.caller()
	if ss == nil {
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: ErrNoCaller.Error()}
	}
	ctx, cancel := l.p.withTimeout(ctx)
	defer cancel()
	res, err := f(ctx, ss)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%w: the client did not answer the upstream's %s within %s", ErrCallTimeout, method, l.p.opts.CallTimeout)
	}
	var je *jsonrpc.Error
	if err != nil && !errors.As(err, &je) {
		// The proxy's own failure (a timeout, the SDK's check of the
		// client's answer): a JSON-RPC error of the internal kind, not
		// the code 0 a plain error would go upstream with.
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	if err != nil {
		return zero, err
	}
	return res, nil
}

// relayMiddleware answers the upstream's roots/list with the roots of the
// client the request is for, and passes its elicitation/create, when the
// client declared elicitation, to that client as it came: the SDK's client
// would first check its schema against the schemas it knows, and refuse
// some that the client and the upstream take (titled multi-select enums,
// in v1.8.0); the client checks it, and the SDK's server checks the
// answer against it.
func (l *link) relayMiddleware(elicits bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "roots/list":
				params, _ := req.GetParams().(*mcp.ListRootsParams)
				return relayTo(ctx, l, method, func(ctx context.Context, ss *mcp.ServerSession) (*mcp.ListRootsResult, error) {
					return ss.ListRoots(ctx, params)
				})
			case "elicitation/create":
				if params, ok := req.GetParams().(*mcp.ElicitParams); ok && params != nil && elicits {
					return relayTo(ctx, l, method, func(ctx context.Context, ss *mcp.ServerSession) (*mcp.ElicitResult, error) {
						return ss.Elicit(ctx, params)
					})
				}
			}
			return next(ctx, method, req)
		}
	}
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

// caller is the client a request from the upstream over l is for: a
// client session's link's own client; over the shared link, the one
// client with requests in flight, or the only client there is. With
// requests of several clients in flight it is nil: the connection is
// shared and MCP does not say which request a server's request belongs
// to, so the proxy refuses rather than risk asking (and showing the
// prompt to) the wrong client.
func (l *link) caller() *mcp.ServerSession {
	if l.owner != nil {
		return l.owner.session()
	}
	l.relay.mu.Lock()
	n := len(l.relay.calls)
	var one *mcp.ServerSession
	for ss := range l.relay.calls {
		one = ss
	}
	l.relay.mu.Unlock()
	if n > 1 {
		return nil
	}
	if one != nil {
		return one
	}
	var only *mcp.ServerSession
	n = 0
	for _, s := range l.servers() {
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
func (l *link) begin(ss *mcp.ServerSession) func() {
	if ss == nil {
		return func() {}
	}
	l.relay.mu.Lock()
	l.relay.calls[ss]++
	l.relay.mu.Unlock()
	return func() {
		l.relay.mu.Lock()
		if l.relay.calls[ss]--; l.relay.calls[ss] <= 0 {
			delete(l.relay.calls, ss)
		}
		l.relay.mu.Unlock()
	}
}

// progressKey carries the upstream progress token of a call in its context.
type progressKey struct{}

// routeProgress gives a client's progress token an upstream token of the
// proxy's own (two clients may use the same), returned in ctx for call.
func (l *link) routeProgress(ctx context.Context, ss *mcp.ServerSession, token any) (context.Context, func()) {
	if token == nil || ss == nil {
		return ctx, func() {}
	}
	l.relay.mu.Lock()
	l.relay.next++
	up := "scrollback-" + l.p.nonce + "-" + strconv.FormatInt(l.relay.next, 10)
	clock := &progressClock{}
	l.relay.progress[tokenKey(up)] = progressRoute{ss: ss, token: token, ctx: context.WithoutCancel(ctx), clock: clock}
	l.relay.mu.Unlock()
	ctx = context.WithValue(ctx, clockKey{}, clock)
	return context.WithValue(ctx, progressKey{}, up), func() {
		// The SDK may hand over a notification the upstream sent just
		// before its response after the response: keep the route a moment.
		time.AfterFunc(progressGrace, func() {
			l.relay.mu.Lock()
			delete(l.relay.progress, tokenKey(up))
			l.relay.mu.Unlock()
		})
	}
}

// routeProgress routes the upstream's progress on a client's request
// (tools/call, resources/read, prompts/get) to that
// client, when the request has a progress token: l.routeProgress over the
// client's link. done ends the route.
func (s *server) routeProgress(ctx context.Context, ss *mcp.ServerSession, params mcp.RequestParams) (_ context.Context, done func()) {
	if params == nil {
		return ctx, func() {}
	}
	tok := params.GetProgressToken()
	if tok == nil {
		return ctx, func() {}
	}
	l, err := s.link(ss)
	if err != nil {
		return ctx, func() {}
	}
	return l.routeProgress(ctx, ss, tok)
}

// upstreamProgress puts in up the proxy's progress token that ctx carries
// (routeProgress), if any: upstreamMeta left the client's own out.
func upstreamProgress(ctx context.Context, up mcp.RequestParams) {
	if tok := ctx.Value(progressKey{}); tok != nil {
		up.SetProgressToken(tok)
	}
}

// progressGrace is how long a progress route outlives its request.
const progressGrace = 5 * time.Second

// progressClock renews the call timeout of the request a progress route
// belongs to (withCallTimeout).
type progressClock struct {
	mu    sync.Mutex
	renew func()
}

// tick renews the timeout, if the request has one.
func (c *progressClock) tick() {
	if c == nil {
		return
	}
	c.mu.Lock()
	renew := c.renew
	c.mu.Unlock()
	if renew != nil {
		renew()
	}
}

// clockKey carries a request's progressClock in its context.
type clockKey struct{}

// withCallTimeout bounds a client's request forwarded upstream by the
// call timeout, counted afresh from each progress notification the
// upstream sends for it: an upstream that reports progress is answering,
// and a long task that does (a build, a test run) runs as long as it
// would without the proxy. A request without a progress token, or whose
// progress stops, ends after the timeout. Whether it did is
// timedOut(ctx).
func (p *Proxy) withCallTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	d := p.opts.CallTimeout
	clock, _ := ctx.Value(clockKey{}).(*progressClock)
	if clock == nil || d <= 0 {
		return p.withTimeout(ctx)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	clock.mu.Lock()
	clock.renew = func() { timer.Reset(d) }
	clock.mu.Unlock()
	return cctx, func() {
		clock.mu.Lock()
		clock.renew = nil
		clock.mu.Unlock()
		timer.Stop()
		cancel(context.Canceled)
	}
}

// timedOut reports whether ctx, from withCallTimeout or withTimeout,
// ended at its timeout.
func timedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), context.DeadlineExceeded)
}

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
		case "initialize":
			if s.own {
				break
			}
			// The shared connection declares this client's capabilities
			// (before the client can send anything else): it connects
			// again, at once, if they differ from those it declared.
			if params, ok := req.GetParams().(*mcp.InitializeParams); ok {
				s.p.main.declare(cloneCaps(params.Capabilities))
			}
			res, err := next(ctx, method, req)
			if err == nil {
				go func() {
					ctx, cancel := s.p.withTimeout(context.Background())
					defer cancel()
					s.p.main.conn(ctx)
				}()
			}
			return res, err
		case "notifications/initialized":
			res, err := next(ctx, method, req)
			if err == nil && ss != nil {
				logAll(ctx, next, ss)
			}
			return res, err
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
			s.settleLists(ctx, ss)
			if lr, ok := req.(*mcp.ListResourcesRequest); ok {
				return s.listResources(ctx, next, lr)
			}
			res, err := next(ctx, method, req)
			if err == nil {
				inUpstreamOrder(res, s.snapshot())
			}
			return res, err
		case "tools/call":
			params, _ := req.GetParams().(*mcp.CallToolParamsRaw)
			if params != nil && !s.usesUpstream(params.Name) {
				// Not (yet) listed: a tool the upstream offers only to a
				// client with the capabilities this one declared, which
				// called it before listing (a script that knows its name,
				// a client with the list cached). Wait, as a list does,
				// for what the upstream offers over a connection that
				// declares them.
				s.settleLists(ctx, ss)
			}
			if !s.own {
				defer s.p.main.begin(ss)()
			}
			if params == nil || !s.usesUpstream(params.Name) {
				return next(ctx, method, req)
			}
			ctx, done := s.routeProgress(ctx, ss, params)
			defer done()
			return next(ctx, method, req)
		case "resources/read":
			params, _ := req.GetParams().(*mcp.ReadResourceParams)
			if params == nil {
				return next(ctx, method, req)
			}
			if strings.HasPrefix(params.URI, mcpserver.OutputURIPrefix) {
				// A retained copy of the proxy's own, or, when the upstream
				// is a scrollback server too and the proxy holds no such
				// copy, of the upstream's.
				res, err := mcpserver.ReadOutputResource(ctx, s.b, params.URI)
				if res != nil {
					res.CacheScope = "private" // the principal's copy
				}
				s.mu.Lock()
				up := s.upstreamOutputs
				s.mu.Unlock()
				if !up || scrollback.ErrorKind(resourceErr(err)) != scrollback.KindNotFound {
					return typedRead(ss)(res, err)
				}
			}
			if err := s.unowned(ctx); err != nil {
				return nil, mcpserver.ResourceError(params.URI, fmt.Errorf("resources/read: %w", err))
			}
			if !s.own {
				defer s.p.main.begin(ss)()
			}
			ctx, done := s.routeProgress(ctx, ss, params)
			defer done()
			return typedRead(ss)(forward(ctx, s, ss, func(ctx context.Context, c *conn) (*mcp.ReadResourceResult, error) {
				up := *params
				up.Meta = upstreamMeta(params.Meta, c)
				upstreamProgress(ctx, &up)
				res, err := c.cs.ReadResource(ctx, &up)
				c.ord.wait(ctx) // what the upstream said before it first
				if err != nil {
					return nil, err
				}
				res = readForClient(res)
				if res.CacheScope == "" {
					// An upstream before 2026-07-28 says none: the
					// protocol's default, as the SDK's own results say it.
					res.CacheScope = "public"
				}
				s.p.mendContents(res.Contents)
				return s.shapeRead(ctx, params, res), nil
			}))
		case "prompts/get":
			if !s.own {
				defer s.p.main.begin(ss)()
			}
			params, _ := req.GetParams().(*mcp.GetPromptParams)
			if params == nil {
				return next(ctx, method, req)
			}
			if err := s.unowned(ctx); err != nil {
				return nil, mcpserver.ResourceError("", fmt.Errorf("prompts/get: %w", err))
			}
			ctx, done := s.routeProgress(ctx, ss, params)
			defer done()
			return typedPrompt(ss)(forward(ctx, s, ss, func(ctx context.Context, c *conn) (*mcp.GetPromptResult, error) {
				up := *params
				up.Meta = upstreamMeta(params.Meta, c)
				upstreamProgress(ctx, &up)
				res, err := c.cs.GetPrompt(ctx, &up)
				c.ord.wait(ctx) // what the upstream said before it first
				if err != nil {
					return nil, err
				}
				res = promptForClient(res)
				return s.shapePrompt(ctx, params, res), nil
			}))
		case "logging/setLevel":
			params, _ := req.GetParams().(*mcp.SetLoggingLevelParams)
			if params == nil {
				return next(ctx, method, req)
			}
			if _, err := forward(ctx, s, ss, func(ctx context.Context, c *conn) (struct{}, error) {
				up := *params
				up.Meta = upstreamMeta(params.Meta, c)
				return struct{}{}, c.cs.SetLoggingLevel(ctx, &up)
			}); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		}
		return next(ctx, method, req)
	}
}

// logAll makes ss's client get every log message the upstream sends until
// it sets a level of its own. A server sends its log messages to a client
// that has set no level (the TypeScript SDK's server does, and the
// upstream filters by the level the client sets, which the proxy passes
// on); the Go SDK's server sends none until the client sets one, and most
// clients never do. The SDK's own logging/setLevel handler sets the level
// (it has no other way), to debug, the lowest: as if no level were set.
func logAll(ctx context.Context, next mcp.MethodHandler, ss *mcp.ServerSession) {
	next(ctx, "logging/setLevel", &mcp.ServerRequest[*mcp.SetLoggingLevelParams]{Session: ss, Params: &mcp.SetLoggingLevelParams{Level: "debug"}})
}

// settleLists makes the server's lists, before a list or a call of a
// tool not listed, those the upstream offers to ss's client: over stdio
// it waits for the shared connection that declares the client's
// capabilities (settle); over HTTP it makes the client's own upstream
// session's lists its own (ownLists).
func (s *server) settleLists(ctx context.Context, ss *mcp.ServerSession) {
	if !s.own && !s.perRequest {
		s.p.main.settle(ctx)
	} else if s.own && !modernCaller(ss) {
		s.ownLists(ctx, ss)
	}
}

// ownLists makes the lists of a client with an upstream session of its
// own (over HTTP) that session's from its first list on, when the client
// declared capabilities the proxy's shared connection did not: a server
// may offer some features only to a client with a capability (a tool that
// samples), and the shared connection declares none. The client's
// upstream session is so made on its first list rather than on its first
// call. It tries once: an upstream that cannot be reached does not hold
// up every list (they are the shared connection's meanwhile).
func (s *server) ownLists(ctx context.Context, ss *mcp.ServerSession) {
	if ss == nil {
		return
	}
	s.mu.Lock()
	tried := s.ownListed
	s.ownListed = true
	s.mu.Unlock()
	if tried {
		return
	}
	caps := clientCaps(ss)
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	s.p.main.mu.Lock()
	shared := s.p.main.caps
	s.p.main.mu.Unlock()
	if shared == nil {
		shared = &mcp.ClientCapabilities{}
	}
	if capsKey(caps) == capsKey(shared) {
		return
	}
	l, err := s.link(ss)
	if err != nil {
		return
	}
	defer l.use()()
	ctx, cancel := s.p.withTimeout(ctx)
	defer cancel()
	if _, err := l.conn(ctx); err != nil {
		return
	}
	l.relist(listAll, false)
}

// inUpstreamOrder puts the items of a list result in the order the
// upstream listed them, the proxy's own after them. The SDK's server lists
// what it holds sorted by name; a client shows the upstream's tools,
// prompts and resources as the upstream ordered them (and a model reads
// them so), as it would without the proxy. The SDK pages its sorted list,
// so the order is the upstream's within each page: all of it, unless a
// list is longer than a page (1000).
func inUpstreamOrder(res mcp.Result, snap snapshot) {
	switch r := res.(type) {
	case *mcp.ListToolsResult:
		sortLike(r.Tools, snap.tools, func(t *mcp.Tool) string { return t.Name })
	case *mcp.ListPromptsResult:
		sortLike(r.Prompts, snap.prompts, func(p *mcp.Prompt) string { return p.Name })
	case *mcp.ListResourcesResult:
		sortLike(r.Resources, snap.resources, func(r *mcp.Resource) string { return r.URI })
	case *mcp.ListResourceTemplatesResult:
		sortLike(r.ResourceTemplates, snap.templates, func(t *mcp.ResourceTemplate) string { return t.URITemplate })
	}
}

// sortLike sorts items as their keys stand in order; items not there go
// last, in the order they had.
func sortLike[T any](items, order []*T, key func(*T) string) {
	rank := make(map[string]int, len(order))
	for i, it := range order {
		if it != nil {
			if _, dup := rank[key(it)]; !dup {
				rank[key(it)] = i
			}
		}
	}
	at := func(it *T) int {
		if it != nil {
			if r, ok := rank[key(it)]; ok {
				return r
			}
		}
		return len(order)
	}
	slices.SortStableFunc(items, func(a, b *T) int { return cmp.Compare(at(a), at(b)) })
}

// forward makes one request of the upstream over s's link within the call
// timeout. An upstream JSON-RPC error reaches the client as it is, code
// and data included.
func forward[T any](ctx context.Context, s *server, ss *mcp.ServerSession, f func(context.Context, *conn) (T, error)) (T, error) {
	var zero T
	l, err := s.link(ss)
	if err != nil {
		return zero, err
	}
	defer l.use()()
	c, err := l.conn(ctx)
	if err != nil {
		return zero, err
	}
	p := s.p
	ctx, cancel := p.withCallTimeout(ctx)
	defer cancel()
	res, err := f(ctx, c)
	if err == nil {
		return res, nil
	}
	if timedOut(ctx) {
		return zero, &Error{Err: ErrCallTimeout, Msg: fmt.Sprintf("the upstream server did not answer within %s, so the request was cancelled", p.opts.CallTimeout),
			Hint: "the server may be stuck or the work too slow; raise --call-timeout if it needs longer"}
	}
	if e := l.rejected(c, err); e != nil {
		return zero, e
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return zero, keepRPC(je)
	}
	return zero, err
}

// subscribe forwards a client's subscription, once per URI for all the
// clients of its link.
func (s *server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	l, err := s.link(req.Session)
	if err != nil {
		return err
	}
	l.relay.mu.Lock()
	first := len(l.relay.subs[uri]) == 0
	l.relay.mu.Unlock()
	if first {
		if _, err := forward(ctx, s, req.Session, func(ctx context.Context, c *conn) (struct{}, error) {
			up := *req.Params
			up.Meta = upstreamMeta(req.Params.Meta, c)
			return struct{}{}, c.cs.Subscribe(ctx, &up)
		}); err != nil {
			return err
		}
	}
	l.relay.mu.Lock()
	if l.relay.subs[uri] == nil {
		l.relay.subs[uri] = map[*server]bool{}
	}
	l.relay.subs[uri][s] = true
	l.relay.mu.Unlock()
	return nil
}

// unsubscribe forwards the last unsubscription of a URI over its link.
func (s *server) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	l, err := s.link(req.Session)
	if err != nil {
		return err
	}
	l.relay.mu.Lock()
	delete(l.relay.subs[uri], s)
	last := len(l.relay.subs[uri]) == 0
	if last {
		delete(l.relay.subs, uri)
	}
	l.relay.mu.Unlock()
	if !last {
		return nil
	}
	_, err = forward(ctx, s, req.Session, func(ctx context.Context, c *conn) (struct{}, error) {
		return struct{}{}, c.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	return err
}

// forget drops what a server holds upstream when its client has gone: its
// own link, or its subscriptions on the shared one.
func (s *server) forget() {
	s.lnMu.Lock()
	s.gone = true
	own := s.ln
	s.lnMu.Unlock()
	if s.own {
		if own != nil {
			s.p.closeLink(own)
		}
		return
	}
	l := s.p.main
	l.relay.mu.Lock()
	var gone []string
	for uri, subs := range l.relay.subs {
		delete(subs, s)
		if len(subs) == 0 {
			delete(l.relay.subs, uri)
			gone = append(gone, uri)
		}
	}
	l.relay.mu.Unlock()
	c := l.live()
	if c == nil {
		return
	}
	for _, uri := range gone {
		ctx, cancel := s.p.withTimeout(context.Background())
		c.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
		cancel()
	}
}

// resubscribe renews every subscription of l on a new upstream connection
// (a restarted command, a reconnected URL).
func (l *link) resubscribe(ctx context.Context, c *conn) {
	l.relay.mu.Lock()
	uris := make([]string, 0, len(l.relay.subs))
	for uri := range l.relay.subs {
		uris = append(uris, uri)
	}
	l.relay.mu.Unlock()
	for _, uri := range uris {
		sctx, cancel := l.p.withTimeout(ctx)
		if err := c.cs.Subscribe(sctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			l.p.log.Warn("proxy: renewing a resource subscription failed", "uri", uri, "err", err)
		}
		cancel()
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
	shown, sess := s.retain(ctx, s.b, what, cutString(source, 200), t, budget)
	return shown.Preview, retainedMeta(sess, shown)
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
		// The preview names the principal's copy: no intermediary may
		// serve it to anyone else.
		res.CacheScope = "private"
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
			if er, m := s.previewEmbedded(ctx, "prompts/get", "prompts/get "+name, c); er != nil {
				msg.Content = er
				mergeMeta(&res.Meta, m)
			}
		}
	}
	return res
}

// mergeMeta adds m to *dst unless a recovery reference is there already
// (the first previewed part's stands): present.MergeMeta.
func mergeMeta(dst *mcp.Meta, m mcp.Meta) { present.MergeMeta(dst, m) }
