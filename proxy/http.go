package proxy

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/mcpserver"
)

// HTTPHandler serves the proxy over streamable HTTP at mcpserver.Path,
// with the scrollback server's rules (it is mcpserver.NewSessionHandler):
// each MCP session gets its own scrollback session of the proxy's engine
// (created when a result is first retained), unless the request that
// starts it names one of the caller's sessions in the
// mcpserver.SessionHeader header; with opts.Tokens set, every request
// needs one of the bearer tokens, and a session belongs to the token that
// made it (mcpserver.TokenOwner, so that the proxy and the scrollback
// server agree on who owns a session). Listen with mcpserver.Listen, which
// refuses non-loopback addresses without a token. Each MCP session that
// uses the upstream gets an upstream connection of its own (for a command,
// a process of its own), declaring the capabilities its client declared,
// at most Options.MaxUpstreams at once, ended with the session.
func (p *Proxy) HTTPHandler(opts mcpserver.HTTPOptions) http.Handler {
	return mcpserver.NewSessionHandler(p.eng, opts, func(b *mcpserver.Binding) *mcp.Server {
		return p.newServer(b, true).srv
	})
}
