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
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// DefaultCallTimeout is how long a call of an upstream tool may take when
// Options.CallTimeout is 0.
const DefaultCallTimeout = 5 * time.Minute

// Options configures a Proxy. The zero value gives the contract's defaults.
type Options struct {
	// Budget is the most bytes of a result's text passed on whole; larger
	// results become a head-and-tail preview. 0 = the engine's history
	// budget (32 KiB).
	Budget int
	// ToolBudgets overrides Budget for single upstream tools, by name.
	ToolBudgets map[string]int
	// CallTimeout bounds one call of an upstream tool; 0 =
	// DefaultCallTimeout, negative = none.
	CallTimeout time.Duration
	// Version is reported to clients as the proxy's version.
	Version string
	// Logger receives what the proxy and the SDK log; nil = nothing.
	Logger *slog.Logger
}

// Proxy stands between MCP clients and one upstream MCP server. It is safe
// for concurrent use: every client (one over stdio, any number over HTTP)
// shares the one upstream connection.
type Proxy struct {
	eng    *scrollback.Engine
	up     Upstream
	opts   Options
	nonce  string // marks strings cut by cutReader
	client *mcp.Client
	log    *slog.Logger

	connMu sync.Mutex // serialises connecting
	mu     sync.Mutex // guards what follows
	cur    *conn
	closed bool
	snap   snapshot
	srvs   map[*server]struct{}
}

// snapshot is what the upstream offers, as last listed.
type snapshot struct {
	instructions string
	tools        []*mcp.Tool
	prompts      []*mcp.Prompt
	resources    []*mcp.Resource
	templates    []*mcp.ResourceTemplate
	completions  bool
	toolsKey     string // JSON of tools, to tell a change
}

// New returns a proxy in front of up whose retained copies go to eng's
// store. It does not connect yet: call Start.
func New(eng *scrollback.Engine, up Upstream, opts Options) (*Proxy, error) {
	if err := up.validate(); err != nil {
		return nil, err
	}
	if opts.CallTimeout == 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Version == "" {
		opts.Version = "(devel)"
	}
	var nonce [6]byte
	rand.Read(nonce[:])
	p := &Proxy{eng: eng, up: up, opts: opts, nonce: hex.EncodeToString(nonce[:]), srvs: map[*server]struct{}{}}
	p.log = opts.Logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.client = mcp.NewClient(&mcp.Implementation{Name: "scrollback-proxy", Version: opts.Version}, &mcp.ClientOptions{
		Logger:       opts.Logger,
		Capabilities: &mcp.ClientCapabilities{}, // no roots, no sampling
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			go p.refresh(listTools)
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			go p.refresh(listPrompts)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			go p.refresh(listResources)
		},
	})
	return p, nil
}

// Start connects to the upstream (starting it, for a command) and lists
// what it offers. It fails when the upstream cannot be reached: a proxy
// that has never seen its upstream has no tools to offer.
func (p *Proxy) Start(ctx context.Context) error {
	_, err := p.conn(ctx)
	return err
}

// Close ends the upstream connection (and the upstream, for a command).
// Servers made by the proxy answer every later call with an error.
func (p *Proxy) Close() error {
	p.mu.Lock()
	c := p.cur
	p.cur, p.closed = nil, true
	p.mu.Unlock()
	if c != nil {
		return c.cs.Close()
	}
	return nil
}

// Tools returns the upstream's tools as last listed.
func (p *Proxy) Tools() []*mcp.Tool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.Tool(nil), p.snap.tools...)
}

// conn returns the live upstream connection, connecting (and listing what
// the upstream offers) when there is none.
func (p *Proxy) conn(ctx context.Context) (*conn, error) {
	p.connMu.Lock()
	defer p.connMu.Unlock()
	p.mu.Lock()
	c, closed := p.cur, p.closed
	p.mu.Unlock()
	if closed {
		return nil, &Error{Err: ErrUpstreamDown, Msg: "the proxy is closed"}
	}
	if c != nil && c.alive() {
		return c, nil
	}
	if c != nil {
		c.cs.Close()
	}
	c, err := p.dial(ctx)
	if err != nil {
		return nil, &Error{Err: ErrUpstreamDown, Msg: fmt.Sprintf("cannot connect to the upstream server %s: %v", p.up, err),
			Hint: "check that the server starts and answers MCP on its own; the proxy tries again on the next call"}
	}
	if err := p.list(ctx, c, listAll); err != nil {
		c.cs.Close()
		return nil, &Error{Err: ErrUpstreamDown, Msg: fmt.Sprintf("the upstream server %s did not list its features: %v", p.up, err)}
	}
	p.mu.Lock()
	p.cur = c
	p.mu.Unlock()
	return c, nil
}

func (p *Proxy) dial(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, p.connectTimeout())
	defer cancel()
	t, proc, err := p.transport(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := p.client.Connect(ctx, t, nil)
	if err != nil {
		if proc != nil {
			proc.Close()
		}
		return nil, err
	}
	c := &conn{cs: cs, done: make(chan struct{}), proc: proc}
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

// refresh re-lists what changed upstream and updates every server.
func (p *Proxy) refresh(what int) {
	p.mu.Lock()
	c := p.cur
	p.mu.Unlock()
	if c == nil || !c.alive() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.list(ctx, c, what); err != nil {
		p.log.Warn("proxy: re-listing the upstream's features failed", "err", err)
	}
}

// list fetches what the upstream offers and updates every server.
func (p *Proxy) list(ctx context.Context, c *conn, what int) error {
	init := c.cs.InitializeResult()
	var caps mcp.ServerCapabilities
	if init != nil && init.Capabilities != nil {
		caps = *init.Capabilities
	}
	p.mu.Lock()
	snap := p.snap
	p.mu.Unlock()
	if init != nil {
		snap.instructions = init.Instructions
	}
	snap.completions = caps.Completions != nil
	var err error
	if what&listTools != 0 {
		snap.tools = nil
		if caps.Tools != nil {
			if snap.tools, err = collect(c.cs.Tools(ctx, nil)); err != nil {
				return err
			}
		}
	}
	if what&listPrompts != 0 {
		snap.prompts = nil
		if caps.Prompts != nil {
			if snap.prompts, err = collect(c.cs.Prompts(ctx, nil)); err != nil {
				return err
			}
		}
	}
	if what&listResources != 0 {
		snap.resources, snap.templates = nil, nil
		if caps.Resources != nil {
			if snap.resources, err = collect(c.cs.Resources(ctx, nil)); err != nil {
				return err
			}
			if snap.templates, err = collect(c.cs.ResourceTemplates(ctx, nil)); err != nil {
				// Templates are optional: a server may not implement the method.
				snap.templates = nil
			}
		}
	}
	key, _ := json.Marshal(snap.tools)
	toolsChanged := string(key) != snap.toolsKey
	snap.toolsKey = string(key)

	p.mu.Lock()
	p.snap = snap
	srvs := make([]*server, 0, len(p.srvs))
	for s := range p.srvs {
		srvs = append(srvs, s)
	}
	p.mu.Unlock()
	for _, s := range srvs {
		if what&listTools != 0 && toolsChanged {
			s.syncTools(snap.tools)
		}
		if what&listPrompts != 0 {
			s.syncPrompts(snap.prompts)
		}
		if what&listResources != 0 {
			s.syncResources(snap.resources, snap.templates)
		}
	}
	return nil
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

// call calls an upstream tool with args passed through untouched.
func (p *Proxy) call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	c, err := p.conn(ctx)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			pe.Tool = name
		}
		return nil, err
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if p.opts.CallTimeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, p.opts.CallTimeout)
	}
	defer cancel()
	var arg any = args
	if len(args) == 0 {
		arg = map[string]any{}
	}
	res, err := c.cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: arg})
	if err == nil {
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		return res, nil
	}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return nil, &Error{Tool: name, Err: ErrCallTimeout,
			Msg:  fmt.Sprintf("the upstream server did not answer within %s, so the call was cancelled", p.opts.CallTimeout),
			Hint: "the server may be stuck or the work too slow; narrow the request, or raise --call-timeout"}
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) && c.alive() {
		return nil, &Error{Tool: name, Err: ErrUpstreamError, Msg: "the upstream server answered with an error: " + cutString(je.Message, 2048)}
	}
	// The connection broke: drop it, so that the next call reconnects.
	why := c.why()
	c.cs.Close()
	hint := "the proxy reconnects to it on the next call"
	if c.proc != nil {
		hint = "the proxy starts it again on the next call"
	}
	return nil, &Error{Tool: name, Err: ErrUpstreamFailed,
		Msg:  fmt.Sprintf("the upstream server failed during the call: %s (%v)", why, cutString(err.Error(), 512)),
		Hint: hint + "; the result of this call is lost, so call the tool again if it is safe to repeat"}
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
func (p *Proxy) copyCap() int {
	if c := p.eng.Options().Capture.Copy; c > 0 && c < scrollback.CopyCap {
		return int(c)
	}
	return scrollback.CopyCap
}

// cutAt is how many bytes of strings one upstream message may carry before
// cutReader cuts the rest: the copy cap, and room for the rest of the
// message.
func (p *Proxy) cutAt() int64 { return int64(p.copyCap()) + 1<<20 }

// frameLimit bounds one upstream message after cutting: what is left of
// its strings, and its structure.
func (p *Proxy) frameLimit() int { return int(p.cutAt()) + 16<<20 }

func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return utf8x.Cut(s, n) + "…"
}

var _ io.Closer = (*Proxy)(nil)
