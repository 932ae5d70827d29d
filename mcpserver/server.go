package mcpserver

import (
	"context"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
)

// MetaSession is the _meta key of every tool result: the id of the
// scrollback session the call acted on (resume it with --session, or over
// HTTP with the Scrollback-Session header). The _meta keys are package
// present's.
const MetaSession = present.MetaSession

// Instructions is the server's MCP instructions: the rule of section 4 of
// the product contract, in the project's words (present.Instructions).
const Instructions = present.Instructions

// Options configures the MCP servers this package makes.
type Options struct {
	// Version is reported to clients as the server's version; "" = "(devel)".
	Version string
	// Logger receives the SDK's log of server activity; nil = none.
	Logger *slog.Logger
}

// A Binding is the scrollback session one MCP server acts on. Over stdio it
// is fixed at start (BindSession); over HTTP it is opened on the first
// tool call that needs it: a new session for an MCP session (NewBinding),
// so that a connection that never calls a tool leaves nothing behind, or,
// for a request without an MCP session (protocol 2026-07-28), the
// principal's default session (DefaultBinding) or the one its
// Scrollback-Session header names. It is safe for concurrent use.
type Binding struct {
	eng   *scrollback.Engine
	owner string
	// open finds or makes the session on first use; nil for a fixed one.
	open func(context.Context) (*scrollback.Session, error)
	// makes: open makes a new session, so that asking whether a copy
	// exists must not call it.
	makes bool
	// perRequest: the binding serves requests without an MCP session;
	// done is closed when it serves no more.
	perRequest bool
	done       chan struct{}

	mu   sync.Mutex
	sess *scrollback.Session
}

// NewBinding returns a binding that creates a new session of eng, owned by
// owner, when Session is first called.
func NewBinding(eng *scrollback.Engine, owner string) *Binding {
	return &Binding{eng: eng, owner: owner, makes: true, open: func(ctx context.Context) (*scrollback.Session, error) {
		return eng.NewSession(ctx, owner)
	}}
}

// DefaultBinding returns a binding to owner's default session of eng
// (Engine.DefaultSession), found when Session is first called and made if
// owner has none: every binding of one owner, on any server sharing the
// store, finds the same session, until it is deleted (by retention, say)
// and the next one makes another.
func DefaultBinding(eng *scrollback.Engine, owner string) *Binding {
	return &Binding{eng: eng, owner: owner, open: func(ctx context.Context) (*scrollback.Session, error) {
		return eng.DefaultSession(ctx, owner)
	}}
}

// ResumeBinding returns a binding to session id of eng, found when
// Session is first called: an error wrapping scrollback.ErrNoSession then
// when owner has no such session (another owner's reads the same).
func ResumeBinding(eng *scrollback.Engine, owner, id string) *Binding {
	return &Binding{eng: eng, owner: owner, open: func(ctx context.Context) (*scrollback.Session, error) {
		return eng.Session(ctx, owner, id)
	}}
}

// BindSession returns a binding fixed to sess.
func BindSession(sess *scrollback.Session) *Binding {
	return &Binding{eng: sess.Engine(), owner: sess.Owner(), sess: sess}
}

// Session returns the bound session, opening it on first use. The opening
// is not cancelled with ctx: a session half-made for a call that went away
// would be made again by the next one.
func (b *Binding) Session(ctx context.Context) (*scrollback.Session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sess == nil {
		s, err := b.open(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		b.sess = s
	}
	return b.sess, nil
}

// PerRequest reports whether the binding serves requests without an MCP
// session (protocol 2026-07-28 over HTTP): those of one principal and one
// Scrollback-Session header (or none), on a server made for the first and
// kept while they keep coming, until Done.
func (b *Binding) PerRequest() bool { return b.perRequest }

// Done is closed when a PerRequest binding's server is no longer used;
// nil (never closed) for the others.
func (b *Binding) Done() <-chan struct{} { return b.done }

// Existing returns the bound session like Session, except that a binding
// that would make a new session returns nil instead: a session made only
// to look something up in it would hold nothing.
func (b *Binding) Existing(ctx context.Context) (*scrollback.Session, error) {
	if b.makes {
		return b.Current(), nil
	}
	return b.Session(ctx)
}

// Current returns the bound session, or nil before it is opened.
func (b *Binding) Current() *scrollback.Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sess
}

// NewServer returns an MCP server whose tools act on sess: every copy they
// retain belongs to it, and read_tool_output reads only its copies. Serve it
// over stdio with srv.Run(ctx, &mcp.StdioTransport{}), or over any other
// transport of the SDK.
func NewServer(sess *scrollback.Session, opts Options) *mcp.Server {
	return newServer(BindSession(sess), opts)
}

// schemas caches the tools' inferred JSON schemas across servers: the HTTP
// handler makes one server per MCP session.
var schemas = mcp.NewSchemaCache()

func newServer(b *Binding, opts Options) *mcp.Server {
	version := opts.Version
	if version == "" {
		version = "(devel)"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "scrollback", Title: "scrollback", Version: version}, &mcp.ServerOptions{
		Instructions: Instructions,
		Logger:       opts.Logger,
		SchemaCache:  schemas,
		// No list-changed notifications: the tools never change, and the
		// copies listed as resources are read from the store on each list.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}},
		SetCacheable: privateCopies,
	})
	AddTools(srv, b) // all of them: cannot fail
	AddOutputResources(srv, b)
	srv.AddReceivingMiddleware(listOutputResources(b))
	srv.AddReceivingMiddleware(FinishResults(b, ToolNames, nil))
	return srv
}

// privateCopies marks the results that hold a session's copies (their
// text, their list) cacheScope "private": they belong to one principal,
// and a "public" result (the SDK's default) may be cached by an
// intermediary and served to anyone asking the same.
func privateCopies(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	switch req.(type) {
	case *mcp.ReadResourceRequest, *mcp.ListResourcesRequest:
		c.CacheScope = "private"
	}
}

// ToolNames lists the session tools this package offers, in the order
// they are added (tools/list itself sorts them by name, as the SDK does);
// each is a name AddTools accepts.
func ToolNames() []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.name
	}
	return names
}
