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
// is fixed at start (BindSession); over HTTP it is created on the first
// tool call that needs it (NewBinding), so that a connection that never
// calls a tool leaves nothing behind. It is safe for concurrent use.
type Binding struct {
	eng   *scrollback.Engine
	owner string

	mu   sync.Mutex
	sess *scrollback.Session
}

// NewBinding returns a binding that creates a new session of eng, owned by
// owner, when Session is first called.
func NewBinding(eng *scrollback.Engine, owner string) *Binding {
	return &Binding{eng: eng, owner: owner}
}

// BindSession returns a binding fixed to sess.
func BindSession(sess *scrollback.Session) *Binding {
	return &Binding{eng: sess.Engine(), owner: sess.Owner(), sess: sess}
}

// Session returns the bound session, creating it on first use. The
// creation is not cancelled with ctx: a session half-made for a call that
// went away would be made again by the next one.
func (b *Binding) Session(ctx context.Context) (*scrollback.Session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sess == nil {
		s, err := b.eng.NewSession(context.WithoutCancel(ctx), b.owner)
		if err != nil {
			return nil, err
		}
		b.sess = s
	}
	return b.sess, nil
}

// Current returns the bound session, or nil before it is created.
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
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	AddTools(srv, b) // all of them: cannot fail
	srv.AddReceivingMiddleware(FinishResults(b, ToolNames, nil))
	return srv
}

// ToolNames lists the session tools this package offers, in the order
// tools/list shows them; each is a name AddTools accepts.
func ToolNames() []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.name
	}
	return names
}
