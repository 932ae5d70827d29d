package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/present"
)

// Instructions is the proxy's MCP instructions: the scrollback server's
// rule, then the upstream server's own instructions, if any.
func (p *Proxy) Instructions() string {
	p.mu.Lock()
	up, name, version := p.snap.instructions, p.snap.upName, p.snap.upVersion
	p.mu.Unlock()
	s := present.Instructions + "\n\n" + present.ProxyInstructions
	if name != "" {
		s += " " + present.ProxyUpstream(strings.TrimSpace(name+" "+version))
	}
	if strings.TrimSpace(up) != "" {
		s += "\n\n" + present.ProxyUpstreamInstructions + "\n\n" + up
	}
	return s
}

// server is one MCP server of the proxy, bound to one session, kept in
// step with the upstream's tools, prompts and resources.
type server struct {
	p   *Proxy
	b   *mcpserver.Binding
	srv *mcp.Server

	// own: the server's client gets an upstream connection of its own
	// (over HTTP); else it uses the proxy's shared one.
	own bool
	// perRequest: the server serves the requests of protocol 2026-07-28
	// over HTTP of one principal, which have no MCP session; it uses the
	// proxy's modern link.
	perRequest bool

	lnMu sync.Mutex // guards what follows
	ss   *mcp.ServerSession
	ln   *link // its own link, once opened
	gone bool  // its client has gone
	seen bool  // the end of its session is watched

	mu sync.Mutex
	// The upstream's tools, prompts, resources and templates the server
	// holds, by name, and their definitions as registered (JSON), by kind
	// and name (see syncKind).
	tools     map[string]bool
	defs      map[string]string
	prompts   map[string]bool
	resources map[string]bool
	templates map[string]bool
	// upstreamOutputs: the upstream offers retained copies of its own
	// (scrollback://output/{id}): one the proxy does not hold is read
	// there.
	upstreamOutputs bool
	// view is what the client's own upstream session offers, once it told
	// of a change (link.relist); nil: what the proxy's shared connection
	// lists (Proxy.snap).
	view *snapshot
	// ownListed: the server's first list asked for its client's own
	// upstream session's lists (ownLists).
	ownListed bool
}

// snapshot is what the server offers of the upstream's: its client's own
// upstream session's view, or the proxy's.
func (s *server) snapshot() snapshot {
	s.mu.Lock()
	v := s.view
	s.mu.Unlock()
	if v != nil {
		return *v
	}
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return s.p.snap
}

// ownView reports whether the server follows its client's own upstream
// session's lists rather than the proxy's.
func (s *server) ownView() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.view != nil
}

// update makes the server offer what changed (what) of snap. toolsChanged:
// the tools differ from those it offered; told: the upstream told of a
// change, so that the client is told even when they do not.
func (s *server) update(snap snapshot, what int, toolsChanged, told bool) {
	switch {
	case what&listTools != 0 && toolsChanged:
		s.syncTools(snap.tools)
	case what&listTools != 0 && told:
		// The upstream said its tools changed, yet they list the same
		// (it added one it had): its clients are told all the same, as
		// they would be without the proxy.
		s.toolsChanged(snap.tools)
	}
	if what&listPrompts != 0 {
		s.syncPrompts(snap.prompts, told)
	}
	if what&listResources != 0 {
		s.syncResources(snap.resources, snap.templates, told)
	}
}

// Server returns an MCP server offering the upstream's tools (results
// previewed within the budget, copies retained in sess), prompts and
// resources, plus read_tool_output, grep_tool_output, query_tool_output and run_code over
// sess. Serve it over stdio with srv.Run(ctx, &mcp.StdioTransport{}).
// Call Start first, so that the upstream's tools are known.
//
// The server's client shares the proxy's upstream connection, which
// declares that client's capabilities (sampling, elicitation, roots) once
// it has initialized: the connection is made again if they differ from
// those it declared. Serve one client at a time this way; HTTPHandler
// gives each client a connection of its own.
func (p *Proxy) Server(sess *scrollback.Session) *mcp.Server {
	return p.newServer(mcpserver.BindSession(sess), false).srv
}

func (p *Proxy) newServer(b *mcpserver.Binding, own bool) *server {
	perRequest := b.PerRequest()
	own = own && !perRequest
	s := &server{p: p, b: b, own: own, perRequest: perRequest, tools: map[string]bool{}, defs: map[string]string{}, prompts: map[string]bool{}, resources: map[string]bool{}, templates: map[string]bool{}}
	p.mu.Lock()
	snap := p.snap
	p.mu.Unlock()
	opts := &mcp.ServerOptions{
		Instructions: p.Instructions(),
		// One page for each list: the SDK pages in name order, so that
		// the upstream's order (inUpstreamOrder) holds across a page's
		// end only when there is none.
		PageSize:     math.MaxInt32,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		// The upstream's progress on a client's behalf reaches that client
		// (passthrough.go); the client's own progress on a request the
		// upstream made of it (sampling, elicitation), which reached the
		// client with the upstream's token, goes back upstream with it.
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationServerRequest) {
			l, err := s.link(req.Session)
			if err != nil {
				return
			}
			if c := l.live(); c != nil {
				c.cs.NotifyProgress(ctx, req.Params)
			}
		},
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { s.rootsChanged() },
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			ss := req.Session
			if ss == nil {
				return
			}
			s.watch(ss)
		},
	}
	if snap.completions {
		opts.CompletionHandler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return forward(ctx, s, req.Session, func(ctx context.Context, c *conn) (*mcp.CompleteResult, error) {
				up := *req.Params
				up.Meta = upstreamMeta(req.Params.Meta, c)
				return c.cs.Complete(ctx, &up)
			})
		}
	}
	if snap.logging {
		opts.Capabilities.Logging = &mcp.LoggingCapabilities{}
	}
	if snap.hasPrompts {
		// Declared whether or not the upstream lists prompts yet (the SDK
		// declares prompts only while it holds some): an upstream that
		// adds its prompts later says so, and a client told the server
		// has none would never list them.
		opts.Capabilities.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	// The proxy relays the upstream's requests (sampling, elicitation,
	// roots) to a client of a version before 2026-07-28 while its call is
	// in flight; a client of 2026-07-28, which a server may not ask during
	// a call, gets the upstream's result that needs its input instead
	// (multi round-trip), over the modern link.
	if snap.subscribe {
		opts.SubscribeHandler, opts.UnsubscribeHandler = s.subscribe, s.unsubscribe
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "scrollback-proxy", Title: "scrollback proxy", Version: p.opts.Version}, opts)
	s.addOwnTools()
	mcpserver.AddOutputResources(s.srv, s.b)
	s.syncTools(snap.tools)
	s.syncPrompts(snap.prompts, false)
	s.syncResources(snap.resources, snap.templates, false)
	// passThrough is inside FinishResults: an upstream's answer for a tool
	// the proxy does not list is finished like any other result.
	s.srv.AddReceivingMiddleware(s.passThrough)
	s.srv.AddReceivingMiddleware(mcpserver.FinishResults(s.b, s.toolNames, s.upstreamTool))
	p.mu.Lock()
	p.srvs[s] = struct{}{}
	p.mu.Unlock()
	if perRequest {
		// Kept for the requests of one principal while they come, and
		// kept in step with the upstream meanwhile.
		go func() {
			<-b.Done()
			p.mu.Lock()
			delete(p.srvs, s)
			p.mu.Unlock()
		}()
	}
	return s
}

// watch notes the server's session and, once, forgets the server when
// its client goes.
func (s *server) watch(ss *mcp.ServerSession) {
	s.lnMu.Lock()
	if s.ss == nil {
		s.ss = ss
	}
	seen := s.seen
	s.seen = true
	s.lnMu.Unlock()
	if seen {
		return
	}
	go func() {
		ss.Wait()
		s.p.mu.Lock()
		delete(s.p.srvs, s)
		s.p.mu.Unlock()
		s.forget()
	}()
}

// rootsChanged tells the upstream that the client's roots changed, over
// the client's link if it is up (a connection made later lists the roots
// when the upstream asks). The SDK sends notifications/roots/list_changed
// when its client's roots change; the proxy answers roots/list with the
// client's own (rootsMiddleware), so its client's root list is only the
// means of sending it.
func (s *server) rootsChanged() {
	l := s.p.main
	if s.own {
		s.lnMu.Lock()
		l = s.ln
		s.lnMu.Unlock()
	}
	if l == nil {
		return
	}
	if c := l.live(); c != nil && c.cl != nil {
		c.cl.AddRoots(&mcp.Root{URI: "scrollback-proxy://roots-changed", Name: "roots changed"})
	}
}

// session is the server's client session, once known.
func (s *server) session() *mcp.ServerSession {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	return s.ss
}

// link returns the upstream link of the server's client: the shared one,
// or its own, opened on first use declaring the capabilities the client
// declared. ss is the client's session, when the caller has it.
func (s *server) link(ss *mcp.ServerSession) (*link, error) {
	if s.perRequest || modernCaller(ss) {
		return s.p.modern, nil
	}
	if !s.own {
		return s.p.main, nil
	}
	if ss != nil {
		s.watch(ss)
	}
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if s.gone {
		return nil, &Error{Err: ErrUpstreamDown, Msg: "this client's session has ended"}
	}
	if s.ln != nil {
		return s.ln, nil
	}
	l, err := s.p.openLink(s, clientCaps(s.ss))
	if err != nil {
		return nil, err
	}
	s.ln = l
	return l, nil
}

// usesUpstream reports whether a call of the tool name goes to the
// upstream: an upstream tool's, or run_code's, whose script calls them.
func (s *server) usesUpstream(name string) bool {
	return name == codemode.Name || s.upstreamTool(name)
}

// call calls an upstream tool over the server's link, the references to
// retained copies in its arguments replaced by their text (resolveRefs);
// from is the client's request, nil for a script's call.
func (s *server) call(ctx context.Context, ss *mcp.ServerSession, name string, args json.RawMessage, from *mcp.CallToolParamsRaw) (*mcp.CallToolResult, error) {
	args, err := s.p.resolveRefs(ctx, s.b, args)
	if err != nil {
		return nil, err
	}
	l, err := s.link(ss)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			pe.Tool = name
		}
		return nil, err
	}
	return l.call(ctx, name, args, from)
}

// ownTools are the proxy's own tools, sessionTools and run_code; an
// upstream tool of the same name is not re-exported.
var ownTools = func() map[string]bool {
	own := map[string]bool{codemode.Name: true}
	for _, name := range sessionTools {
		own[name] = true
	}
	return own
}()

// listed returns the upstream tools the proxy lists, in the upstream's
// order: each name once, none that a tool of the proxy's own hides. hidden
// names the others (a nil tool has no name and is dropped silently).
func listed(tools []*mcp.Tool) (shown []*mcp.Tool, hidden []string) {
	seen := map[string]bool{}
	for _, t := range tools {
		switch {
		case t == nil:
		case ownTools[t.Name] || seen[t.Name]:
			hidden = append(hidden, t.Name)
		default:
			seen[t.Name] = true
			shown = append(shown, t)
		}
	}
	return shown, hidden
}

// previewNote is appended to every re-exported tool's description
// (present.ProxyNote).
func previewNote(budget int) string { return present.ProxyNote(budget) }

// exportTool is an upstream tool as the proxy offers it: same name, input
// schema and annotations, the description followed by the note on
// previews, and no output schema (a preview cannot conform to it).
func (p *Proxy) exportTool(t *mcp.Tool) *mcp.Tool {
	e := *t
	e.OutputSchema = nil
	// The upstream's description as it wrote it (a client may compare),
	// then one blank line and the note.
	note, d := previewNote(p.budget(t.Name)), t.Description
	switch {
	case d == "", strings.HasSuffix(d, "\n\n"):
		e.Description = d + note
	case strings.HasSuffix(d, "\n"):
		e.Description = d + "\n" + note
	default:
		e.Description = d + "\n\n" + note
	}
	if !objectSchema(e.InputSchema) {
		p.log.Warn("proxy: upstream tool has no object input schema; offering it as taking any object", "tool", t.Name)
		e.InputSchema = map[string]any{"type": "object"}
	}
	return &e
}

func objectSchema(s any) bool {
	m, ok := s.(map[string]any)
	return ok && m["type"] == "object"
}

// syncTools makes the server's upstream tools those of tools.
func (s *server) syncTools(tools []*mcp.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	shown, hidden := listed(tools)
	for _, name := range hidden {
		s.p.log.Warn("proxy: upstream tool hidden by a tool of the proxy, or listed twice", "tool", name)
	}
	exported := make([]*mcp.Tool, 0, len(shown))
	for _, t := range shown {
		exported = append(exported, s.p.exportTool(t))
	}
	// addTool logs a definition the SDK refuses rather than panicking, so
	// every tool counts as held, as it always has.
	s.tools, _ = syncKind(s, "tool", exported, s.tools, func(t *mcp.Tool) string { return t.Name },
		func(t *mcp.Tool) { s.addTool(t, s.upstreamHandler(t.Name)) }, s.srv.RemoveTools)
	s.addRunCode(tools)
}

// toolsChanged tells the server's clients that its tools changed when
// they did not (see Proxy.list). The SDK tells them only when a tool is
// added or removed: run_code, added again unchanged, is that tool.
func (s *server) toolsChanged(tools []*mcp.Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addRunCode(tools)
}

// addTool adds a tool, logging instead of panicking on a definition the
// SDK refuses.
func (s *server) addTool(t *mcp.Tool, h mcp.ToolHandler) {
	defer func() {
		if r := recover(); r != nil {
			s.p.log.Warn("proxy: cannot offer upstream tool", "tool", t.Name, "err", r)
		}
	}()
	s.srv.AddTool(t, h)
}

// unowned returns the not_found error of a Scrollback-Session header
// naming a session the caller does not own (or none that exists), so that
// the upstream is not called for a result with no session to be kept in,
// as scrollback mcp's tools refuse it; nil otherwise, a store that cannot
// be reached included: the upstream's result is then still returned,
// saying its copy could not be saved.
func (s *server) unowned(ctx context.Context) error {
	if _, err := s.b.Existing(ctx); scrollback.ErrorKind(err) == scrollback.KindNotFound {
		return err
	}
	return nil
}

// upstreamHandler calls the upstream tool with the arguments untouched and
// shapes its result.
func (s *server) upstreamHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		if err := s.unowned(ctx); err != nil {
			return toolError(err), nil
		}
		res, err := s.call(ctx, req.Session, name, args, req.Params)
		if err != nil {
			var pe *Error
			if errors.As(err, &pe) && pe.RPC != nil {
				// The upstream's own protocol error, code and data kept.
				return nil, pe.RPC
			}
			return toolError(err), nil
		}
		return s.shape(ctx, s.b, name, args, res), nil
	}
}

// syncPrompts makes the server's prompts those of prompts (syncKind).
// told: the upstream told of a change; its clients are told even when the
// prompts list the same, as they would be without the proxy.
func (s *server) syncPrompts(prompts []*mcp.Prompt, told bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	get := func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return forward(ctx, s, req.Session, func(ctx context.Context, c *conn) (*mcp.GetPromptResult, error) {
			return c.cs.GetPrompt(ctx, req.Params)
		})
	}
	var changed bool
	s.prompts, changed = syncKind(s, "prompt", prompts, s.prompts, func(p *mcp.Prompt) string { return p.Name },
		func(p *mcp.Prompt) { s.srv.AddPrompt(p, get) }, s.srv.RemovePrompts)
	if told && !changed {
		for _, pr := range prompts {
			if pr != nil {
				s.srv.AddPrompt(pr, get)
				break
			}
		}
	}
}

// syncResources is syncPrompts for resources and resource templates.
func (s *server) syncResources(resources []*mcp.Resource, templates []*mcp.ResourceTemplate, told bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	read := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return forward(ctx, s, req.Session, func(ctx context.Context, c *conn) (*mcp.ReadResourceResult, error) {
			return c.cs.ReadResource(ctx, req.Params)
		})
	}
	var changed, templatesChanged bool
	s.resources, changed = syncKind(s, "resource", resources, s.resources, func(r *mcp.Resource) string { return r.URI },
		func(r *mcp.Resource) { s.srv.AddResource(r, read) }, s.srv.RemoveResources)

	s.upstreamOutputs = false
	var theirs []*mcp.ResourceTemplate
	for _, t := range templates {
		if t != nil && t.URITemplate == mcpserver.OutputURITemplate {
			// The upstream is a scrollback server too: the proxy's own
			// template stands for both (see passThrough).
			s.upstreamOutputs = true
			continue
		}
		theirs = append(theirs, t)
	}
	s.templates, templatesChanged = syncKind(s, "template", theirs, s.templates, func(t *mcp.ResourceTemplate) string { return t.URITemplate },
		func(t *mcp.ResourceTemplate) { s.srv.AddResourceTemplate(t, read) }, s.srv.RemoveResourceTemplates)
	if told && !changed && !templatesChanged {
		// Told all the same (see syncPrompts): a resource registered
		// again unchanged.
		for _, r := range resources {
			if r != nil && s.resources[r.URI] {
				s.try(func() { s.srv.AddResource(r, read) })
				break
			}
		}
	}
}

// syncKind makes the server hold items, of kind ("tool", "prompt",
// "resource", "template"), and none of the others of that kind it held
// (had): it returns the names it holds now and whether that changed
// anything; s.mu is held. Only a new or changed item is registered (by
// add) again: each registration makes the SDK tell the clients, 10 ms
// after the last change, that the list changed; registering every item
// again could let that notice go out, on a busy machine, before a new item
// was in place (a client calling a new tool at once would find it
// unknown), and a re-list that found the same items (the proxy connected
// again, say) is no change. An item the SDK refuses (add panics) is
// logged, not held, and tried again at the next sync.
func syncKind[T any](s *server, kind string, items []*T, had map[string]bool, name func(*T) string, add func(*T), remove func(...string)) (held map[string]bool, changed bool) {
	held = map[string]bool{}
	for _, it := range items {
		if it == nil {
			continue
		}
		key, def := kind+" "+name(it), defOf(it)
		if s.defs[key] == def {
			held[name(it)] = true
			continue
		}
		if !s.try(func() { add(it) }) {
			continue
		}
		held[name(it)] = true
		s.defs[key] = def
		changed = true
	}
	if gone := missing(had, held); len(gone) > 0 {
		remove(gone...)
		for _, n := range gone {
			delete(s.defs, kind+" "+n)
		}
		changed = true
	}
	return held, changed
}

// defOf is a definition as the server registered it, to tell a change.
func defOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// try runs f, reporting false (and logging) if the SDK panicked on a
// definition it refuses, such as an invalid URI.
func (s *server) try(f func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			s.p.log.Warn("proxy: cannot offer an upstream's tool, prompt, resource or template", "err", r)
			ok = false
		}
	}()
	f()
	return true
}

// upstreamTool reports whether name is an upstream tool's: its results
// pass through as the upstream made them, or previewed by shape.
func (s *server) upstreamTool(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools[name]
}

// toolNames lists the server's tools, for the error a call of an unknown
// tool gets: the upstream's, in its order, then the proxy's own.
func (s *server) toolNames() []string {
	upstream := s.snapshot().tools
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, t := range upstream {
		if t != nil && s.tools[t.Name] && !slices.Contains(names, t.Name) {
			names = append(names, t.Name)
		}
	}
	return append(append(names, sessionTools...), codemode.Name)
}

// missing returns the names in had that are not in want: what an upstream
// list change took away.
func missing(had, want map[string]bool) []string {
	var gone []string
	for name := range had {
		if !want[name] {
			gone = append(gone, name)
		}
	}
	return gone
}
