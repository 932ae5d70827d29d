package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
)

// DefaultCallTimeout is how long a call of an upstream tool may take when
// Options.CallTimeout is 0.
const DefaultCallTimeout = 5 * time.Minute

// Options configures a Proxy. The zero value gives the contract's defaults.
type Options struct {
	// Budget is the most bytes of a result's text passed on whole; larger
	// results become a head-and-tail preview, never larger than it. 0 =
	// the engine's history budget (32 KiB); New refuses one below
	// scrollback.MinShownBytes (ErrBudget).
	Budget int
	// ToolBudgets overrides Budget for single upstream tools, by name
	// ("resources/read" and "prompts/get" for those results); each at
	// least scrollback.MinShownBytes, as Budget.
	ToolBudgets map[string]int
	// CallTimeout bounds one call of an upstream tool; 0 =
	// DefaultCallTimeout, negative = none.
	CallTimeout time.Duration
	// Version is reported to clients as the proxy's version.
	Version string
	// Logger receives what the proxy logs (an upstream tool it hides, a
	// stray line on the upstream's stdout, a failed re-list); nil =
	// nothing. The SDK's own lines are not logged: at every level they
	// are routine for a proxy ("server run cancelled" when it stops, a
	// notification to a client that has gone).
	Logger *slog.Logger
	// MaxUpstreams bounds the upstream connections of a proxy served
	// over HTTP, where each client session that uses the upstream gets a
	// connection of its own (for a command, a process of its own); 0 =
	// DefaultMaxUpstreams, negative = no bound. Over it, a client gets
	// ErrTooManyUpstreams.
	MaxUpstreams int
	// MaxRefBytes bounds the text that references to retained copies
	// (scrollback://output/ID) put into the arguments of one upstream
	// call; 0 = DefaultMaxRefBytes, negative = references are not
	// replaced, and reach the upstream as the strings they are.
	MaxRefBytes int64
}

// Proxy stands between MCP clients and one upstream MCP server. It is safe
// for concurrent use. It lists the upstream's features over a connection
// of its own, which also serves the client of a server made by Server
// (over stdio); over HTTP (HTTPHandler) each client session gets its own
// upstream connection, so that what the upstream asks of a client during
// its call (sampling, elicitation, roots) reaches that client and no other.
type Proxy struct {
	eng   *scrollback.Engine
	up    Upstream
	opts  Options
	nonce string // marks strings cut by cutReader
	log   *slog.Logger
	main  *link // the shared connection
	// modern is the shared connection of clients of protocol 2026-07-28:
	// requests over HTTP without an MCP session, and a stdio client of
	// that version. A result that needs the client's input (an elicitation,
	// say) reaches them as it is, for them to answer on their next call.
	modern *link

	mu     sync.Mutex // guards what follows
	closed bool
	snap   snapshot
	srvs   map[*server]struct{}
	links  map[*link]bool // client sessions' own links
	held   map[*link]bool // those holding a connection, at most MaxUpstreams

	restarts atomic.Int64 // connections made after one was lost
	// authStatus is the last 401 or 403 of a URL upstream, 0 after any
	// other answer.
	authStatus atomic.Int32

	refreshMu   sync.Mutex // guards what follows
	refreshing  bool       // a re-list runs
	refreshWant int        // what the notices since it began asked for
}

// snapshot is what the upstream offers, as last listed.
type snapshot struct {
	instructions string
	tools        []*mcp.Tool
	prompts      []*mcp.Prompt
	resources    []*mcp.Resource
	templates    []*mcp.ResourceTemplate
	completions  bool
	logging      bool // the upstream sends log messages
	subscribe    bool // the upstream takes resource subscriptions
	hasPrompts   bool // the upstream offers prompts, listed or not yet
	upName       string
	upVersion    string
	toolsKey     string // JSON of tools, to tell a change
}

// New returns a proxy in front of up whose retained copies go to eng's
// store. It does not connect yet: call Start.
func New(eng *scrollback.Engine, up Upstream, opts Options) (*Proxy, error) {
	if err := up.validate(); err != nil {
		return nil, err
	}
	if err := checkBudgets(opts); err != nil {
		return nil, err
	}
	if opts.CallTimeout == 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.MaxRefBytes == 0 {
		opts.MaxRefBytes = DefaultMaxRefBytes
	}
	if opts.MaxUpstreams == 0 {
		opts.MaxUpstreams = DefaultMaxUpstreams
	}
	if opts.Version == "" {
		opts.Version = "(devel)"
	}
	var nonce [6]byte
	rand.Read(nonce[:])
	p := &Proxy{eng: eng, up: up, opts: opts, nonce: hex.EncodeToString(nonce[:]), srvs: map[*server]struct{}{}, links: map[*link]bool{}, held: map[*link]bool{}}
	p.log = opts.Logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.main = p.newLink(nil, nil)
	p.modern = p.newLink(nil, nil)
	p.modern.lists, p.modern.modern = false, true
	return p, nil
}

// Start connects to the upstream (starting it, for a command) and lists
// what it offers. It fails when the upstream cannot be reached: a proxy
// that has never seen its upstream has no tools to offer.
func (p *Proxy) Start(ctx context.Context) error {
	_, err := p.conn(ctx)
	var pe *Error
	if errors.As(err, &pe) {
		// The hint of a call's error says the proxy tries again on the
		// next call; whoever started the proxy gets none.
		e := *pe
		e.Hint = "check that the server starts and answers MCP on its own (run its command by itself, or fetch its URL)"
		if errors.Is(pe.Err, ErrCallTimeout) {
			e.Hint = "the server may be stuck, or slow to start; raise --call-timeout if it needs longer"
		}
		if h := p.authHint(); h != "" {
			e.Hint = h
		}
		return &e
	}
	return err
}

// authHint says what to do when a URL upstream last answered 401 or 403,
// else "".
func (p *Proxy) authHint() string {
	switch code := p.authStatus.Load(); code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Sprintf("the server answered %d %s: it wants a token, or another one; send it with every request (scrollback proxy --header 'Authorization: Bearer TOKEN', or --header-file FILE so that it is not on the command line); the proxy does not sign in with OAuth, so take a token the server's own site issues (an API key, a personal access token)", code, http.StatusText(int(code)))
	}
	return ""
}

// Close ends every upstream connection (and the upstream processes, for a
// command). Servers made by the proxy answer every later call with an
// error.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.links, p.held = map[*link]bool{}, map[*link]bool{}
	p.mu.Unlock()
	for _, l := range links {
		l.close()
	}
	p.modern.close()
	return p.main.close()
}

// Tools returns the upstream's tools as last listed.
func (p *Proxy) Tools() []*mcp.Tool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.Tool(nil), p.snap.tools...)
}

// Offered returns the upstream tools the proxy offers, of those last
// listed: each name once, none named like one of the proxy's own tools
// (read_tool_output, grep_tool_output, query_tool_output, run_code), which
// hide it.
func (p *Proxy) Offered() []*mcp.Tool {
	shown, _ := listed(p.Tools())
	return shown
}

// conn returns the shared upstream connection, connecting (and listing
// what the upstream offers) when there is none.
func (p *Proxy) conn(ctx context.Context) (*conn, error) { return p.main.conn(ctx) }

// UpstreamRestarts returns how many times the proxy connected to its
// upstream again after losing the connection (a crashed command, a
// dropped HTTP session), for the metrics.
func (p *Proxy) UpstreamRestarts() int64 { return p.restarts.Load() }

// dial makes one connection for l, declaring caps.
//
// The connection outlives the request that made it, and must not carry
// its values (the SDK hands the connect context's values to the
// handlers of what the upstream sends: a client's HTTP request's would
// send progress to that request's finished stream), so it is made under
// a context of its own, cancelled with ctx while connecting.
func (p *Proxy) dial(ctx context.Context, l *link, caps *mcp.ClientCapabilities) (*conn, error) {
	dctx, cancel := context.WithTimeout(context.Background(), p.connectTimeout())
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	ctx = dctx
	ord := newNoticeOrder()
	t, proc, err := p.transport(ctx, ord)
	if err != nil {
		return nil, err
	}
	cl := l.newClient(caps, ord)
	cs, err := cl.Connect(ctx, t, nil)
	if err != nil {
		if proc != nil {
			select {
			case <-proc.exited:
				err = fmt.Errorf("%w; the server process exited (%s)%s", err, proc.state(), proc.stderrNote())
			case <-time.After(200 * time.Millisecond):
			}
			proc.Close()
		}
		return nil, err
	}
	c := &conn{cs: cs, done: make(chan struct{}), proc: proc, cl: cl, ord: ord}
	go func() {
		cs.Wait()
		close(c.done)
	}()
	return c, nil
}

// connectTimeout bounds starting and initialising the upstream: npx may
// download the server first.
func (p *Proxy) connectTimeout() time.Duration {
	if t := p.opts.CallTimeout; t > 0 && t < 2*time.Minute {
		return 2 * time.Minute
	} else if t > 0 {
		return t
	}
	return 2 * time.Minute
}

// What list fetches.
const (
	listTools = 1 << iota
	listPrompts
	listResources
	listAll = listTools | listPrompts | listResources
)

// refresh re-lists what changed upstream and updates every server. The
// upstream tells each of its connections of a change (one per client
// session over HTTP): the notices that arrive while a re-list runs make
// one more, not one each.
func (p *Proxy) refresh(what int) {
	p.refreshMu.Lock()
	p.refreshWant |= what
	if p.refreshing {
		p.refreshMu.Unlock()
		return
	}
	p.refreshing = true
	p.refreshMu.Unlock()
	for {
		p.refreshMu.Lock()
		what := p.refreshWant
		p.refreshWant = 0
		if what == 0 {
			p.refreshing = false
			p.refreshMu.Unlock()
			return
		}
		p.refreshMu.Unlock()
		c := p.main.live()
		if c == nil {
			continue
		}
		ctx, cancel := p.withTimeout(context.Background())
		if err := p.list(ctx, c, what); err != nil {
			p.log.Warn("proxy: re-listing the upstream's features failed", "err", err)
		}
		cancel()
	}
}

// list fetches what the upstream offers and updates every server but
// those whose client's own upstream session told of a change of its own
// (see link.relist).
func (p *Proxy) list(ctx context.Context, c *conn, what int) error {
	p.mu.Lock()
	snap := p.snap
	p.mu.Unlock()
	snap, toolsChanged, err := fetch(ctx, c, what, snap)
	if err != nil {
		return err
	}
	defer c.listed.Store(true)

	p.mu.Lock()
	p.snap = snap
	srvs := make([]*server, 0, len(p.srvs))
	for s := range p.srvs {
		if !s.ownView() {
			srvs = append(srvs, s)
		}
	}
	p.mu.Unlock()
	// Clients listening for changes (protocol 2026-07-28) first: they are
	// waiting for the news, while each of the other servers (one per MCP
	// session, many of them idle) takes its time to update.
	slices.SortStableFunc(srvs, func(a, b *server) int {
		switch {
		case a.perRequest == b.perRequest:
			return 0
		case a.perRequest:
			return -1
		}
		return 1
	})
	for _, s := range srvs {
		s.update(snap, what, toolsChanged, c.listed.Load())
	}
	return nil
}

// fetch lists over c what changed (what) of snap: the upstream's lists,
// and its identity and capabilities. toolsChanged reports whether the
// tools differ from snap's.
func fetch(ctx context.Context, c *conn, what int, snap snapshot) (_ snapshot, toolsChanged bool, err error) {
	init := c.cs.InitializeResult()
	var caps mcp.ServerCapabilities
	if init != nil && init.Capabilities != nil {
		caps = *init.Capabilities
	}
	if init != nil {
		snap.instructions = init.Instructions
		if init.ServerInfo != nil {
			snap.upName, snap.upVersion = init.ServerInfo.Name, init.ServerInfo.Version
		}
	}
	snap.completions = caps.Completions != nil
	snap.logging = caps.Logging != nil
	snap.subscribe = caps.Resources != nil && caps.Resources.Subscribe
	snap.hasPrompts = caps.Prompts != nil
	if what&listTools != 0 {
		snap.tools = nil
		if caps.Tools != nil {
			if snap.tools, err = collect(c.cs.Tools(ctx, nil)); err != nil {
				return snap, false, err
			}
		}
	}
	if what&listPrompts != 0 {
		snap.prompts = nil
		if caps.Prompts != nil {
			if snap.prompts, err = collect(c.cs.Prompts(ctx, nil)); err != nil {
				return snap, false, err
			}
		}
	}
	if what&listResources != 0 {
		snap.resources, snap.templates = nil, nil
		if caps.Resources != nil {
			if snap.resources, err = collect(c.cs.Resources(ctx, nil)); err != nil {
				return snap, false, err
			}
			if snap.templates, err = collect(c.cs.ResourceTemplates(ctx, nil)); err != nil {
				// Templates are optional: a server may not implement the method.
				snap.templates = nil
			}
		}
	}
	key, _ := json.Marshal(snap.tools)
	toolsChanged = string(key) != snap.toolsKey
	snap.toolsKey = string(key)
	return snap, toolsChanged, nil
}

func collect[T any](seq func(func(*T, error) bool)) ([]*T, error) {
	var out []*T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// call calls an upstream tool over the shared link.
func (p *Proxy) call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	return p.main.call(ctx, name, args, nil)
}

// call calls an upstream tool with args passed through untouched, and
// from the client's request (nil for a script's call) its _meta (see
// upstreamMeta) and, retrying a call that needed the client's input, its
// input responses and request state. An upstream JSON-RPC error is an
// *Error of ErrUpstreamError whose RPC is that error, code and data
// included.
func (l *link) call(ctx context.Context, name string, args json.RawMessage, from *mcp.CallToolParamsRaw) (*mcp.CallToolResult, error) {
	p := l.p
	defer l.use()()
	c, err := l.conn(ctx)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			pe.Tool = name
		}
		return nil, err
	}
	cctx, cancel := p.withCallTimeout(ctx)
	defer cancel()
	var arg any = args
	if len(args) == 0 {
		arg = map[string]any{}
	}
	params := &mcp.CallToolParams{Name: name, Arguments: arg}
	if from != nil {
		params.Meta = upstreamMeta(from.Meta, c)
		params.InputResponses, params.RequestState = from.InputResponses, from.RequestState
	}
	if tok := ctx.Value(progressKey{}); tok != nil {
		params.SetProgressToken(tok)
	}
	res, err := c.cs.CallTool(cctx, params)
	c.ord.wait(ctx) // what the upstream said before it first
	if err == nil {
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		return toolResultForClient(res), nil
	}
	if errors.Is(err, mcp.ErrSessionMissing) && ctx.Err() == nil && ctx.Value(retryKey{}) == nil {
		// An HTTP upstream that restarted since the last request knows
		// no old session (404): the call never ran, and runs once more
		// over a new connection.
		l.drop(c)
		return l.call(context.WithValue(ctx, retryKey{}, true), name, args, from)
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case timedOut(cctx):
		return nil, &Error{Tool: name, Err: ErrCallTimeout,
			Msg:  fmt.Sprintf("the upstream server did not answer within %s, so the call was cancelled", p.opts.CallTimeout),
			Hint: "the server may be stuck or the work too slow; narrow the request, or raise --call-timeout"}
	}
	if e := l.rejected(c, err); e != nil {
		e.Tool = name
		return nil, e
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) && c.alive() {
		return nil, &Error{Tool: name, Err: ErrUpstreamError, Msg: "the upstream server answered with an error: " + cutString(je.Message, 2048), RPC: keepRPC(je)}
	}
	// The connection broke: drop it, so that the next call reconnects.
	why := c.why()
	l.drop(c)
	if h := p.authHint(); h != "" && c.proc == nil {
		// Refused, not failed: the call never ran, and would be
		// refused again with the same token.
		return nil, &Error{Tool: name, Err: ErrUpstreamDown,
			Msg:  fmt.Sprintf("the upstream server refused the call (%v)", cutString(err.Error(), 512)),
			Hint: h}
	}
	hint := "the proxy reconnects to it on the next call"
	if c.proc != nil {
		hint = "the proxy starts it again on the next call"
	}
	return nil, &Error{Tool: name, Err: ErrUpstreamFailed,
		Msg:  fmt.Sprintf("the upstream server failed during the call: %s (%v)", why, cutString(err.Error(), 512)),
		Hint: hint + "; the result of this call is lost, so call the tool again if it is safe to repeat"}
}

// retryKey marks the context of a call made again after its upstream
// session was found missing.
type retryKey struct{}

// rejectedCode and rejectedMessage are the SDK's own JSON-RPC error for a
// request its HTTP transport could not deliver (jsonrpc2.ErrRejected,
// internal to the SDK): it is no answer of the upstream's.
const (
	rejectedCode    = -32005
	rejectedMessage = "rejected by transport"
)

// rejected returns the error of a request to an HTTP upstream that the
// SDK's transport could not deliver, or nil when err is another: the
// server could not be reached (the connection is dropped, so that the
// next request connects afresh: a restarted server knows no old session),
// or answered with a status that says "not now" (429, 502, 503, 504). The
// SDK reports both as the JSON-RPC error -32005, which a client would take
// for the upstream's answer; the upstream's own error in a non-2xx
// response comes first in err, and is not this.
func (l *link) rejected(c *conn, err error) *Error {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != rejectedCode || je.Message != rejectedMessage {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		l.drop(c)
		return &Error{Err: ErrUpstreamDown,
			Msg:  fmt.Sprintf("the upstream server %s could not be reached: %s", l.p.up, cutString(err.Error(), 512)),
			Hint: "the request did not reach it; the proxy connects again on the next call, so call again once the server is up"}
	}
	return &Error{Err: ErrUpstreamDown,
		Msg:  fmt.Sprintf("the upstream server %s did not take the request: %s", l.p.up, cutString(err.Error(), 512)),
		Hint: "it is busy or restarting; call again in a while"}
}

// checkBudgets refuses a budget below scrollback.MinShownBytes: a result
// over it could not be previewed within it (the engine would raise it to
// the minimum, and the client would get more than the budget it set).
func checkBudgets(opts Options) error {
	tooSmall := func(name string, b int) error {
		return fmt.Errorf("%w: %s is %d bytes; give at least %d (scrollback.MinShownBytes), room for a head, a tail and the footer that leads to the rest", ErrBudget, name, b, scrollback.MinShownBytes)
	}
	if opts.Budget > 0 && opts.Budget < scrollback.MinShownBytes {
		return tooSmall("Options.Budget", opts.Budget)
	}
	for _, tool := range slices.Sorted(maps.Keys(opts.ToolBudgets)) {
		if b := opts.ToolBudgets[tool]; b > 0 && b < scrollback.MinShownBytes {
			return tooSmall(fmt.Sprintf("Options.ToolBudgets[%q]", tool), b)
		}
	}
	return nil
}

// budget is the history budget of an upstream tool.
func (p *Proxy) budget(tool string) int {
	if b, ok := p.opts.ToolBudgets[tool]; ok && b > 0 {
		return b
	}
	if p.opts.Budget > 0 {
		return p.opts.Budget
	}
	return p.eng.Options().HistoryBudget
}

// copyCap is the most bytes one retained copy holds.
func (p *Proxy) copyCap() int { return p.eng.Options().CopyLimit() }

// binaryMax is the most base64 (images, audio, blobs) one upstream message
// carries; a binary string that does not fit is replaced by a note.
const binaryMax = 16 << 20

// structureMax is the room one upstream message has, after cutting, for
// everything but its text and binary strings.
const structureMax = 16 << 20

// newStrayFilter drops the lines of an upstream's stdout that are not
// MCP messages (see strayFilter), logging each.
func (p *Proxy) newStrayFilter(r io.Reader, ord *noticeOrder) io.Reader {
	f := newStrayFilter(r, func(line []byte) {
		p.log.Warn("proxy: the upstream wrote a line to its stdout that is not an MCP message; skipped it (a server should log to stderr)", "line", string(line))
	})
	f.notice = ord.saw
	return f
}

// newCutReader filters what the upstream sends (see cutReader): each
// message keeps at most the copy cap of content text and of structured
// content, the last quarter of it from the end of the first string cut.
func (p *Proxy) newCutReader(r io.Reader, lines bool) *cutReader {
	c := p.copyCap()
	return newCutReader(r, lines, int64(c), c/4, binaryMax, p.nonce)
}

// frameLimit bounds one upstream message after cutting: what is left of
// its strings, and its structure.
func (p *Proxy) frameLimit() int { return 2*p.copyCap() + 2*cutMarkerRoom + binaryMax + structureMax }

// keepRPC is an upstream's JSON-RPC error as the proxy passes it on: the
// same code and data, the message cut to a few KiB on a character
// boundary.
func keepRPC(je *jsonrpc.Error) *jsonrpc.Error {
	e := *je
	e.Message = cutString(e.Message, rpcMessageMax)
	return &e
}

// rpcMessageMax is the most bytes of an upstream error's message passed on.
const rpcMessageMax = 2048

// cutString shortens s to n bytes (present.Clip).
func cutString(s string, n int) string { return present.Clip(s, n) }

var _ io.Closer = (*Proxy)(nil)
