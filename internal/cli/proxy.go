package cli

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/proxy"
)

func init() {
	register(commandInfo{name: "proxy", order: 85,
		usage:   "proxy [--session ID] [--db PATH] [--budget N] [--budget-for TOOL=N] [--call-timeout DUR] [--http ADDR] (-- COMMAND... | --url URL [--header 'K: V'])",
		summary: "serve an upstream MCP server's tools with large results previewed and retained",
		examples: []example{
			{"preview and retain the large results of a filesystem MCP server", "scrollback proxy -- npx -y @modelcontextprotocol/server-filesystem /data"},
			{"proxy an HTTP MCP server, sending a header", "scrollback proxy --url https://mcp.example.com/mcp --header 'Authorization: Bearer TOKEN'"},
		},
		make: func(io IO) command { return &proxyCmd{base: base{io: io}} }})
}

// proxyCmd is `scrollback proxy`: an MCP server in front of another one.
type proxyCmd struct {
	base
	url         string
	headers     headerFlag
	budget      int
	budgetFor   budgetFlag
	callTimeout time.Duration
	httpServing
}

// headerFlag collects repeated --header 'Name: value' flags.
type headerFlag http.Header

func (h headerFlag) String() string { return "" }

func (h headerFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want 'Name: value', got %q", v)
	}
	http.Header(h).Add(strings.TrimSpace(k), strings.TrimSpace(val))
	return nil
}

// budgetFlag collects repeated --budget-for TOOL=N flags.
type budgetFlag map[string]int

func (b budgetFlag) String() string { return "" }

func (b budgetFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	n, err := strconv.Atoi(val)
	if !ok || k == "" || err != nil || n < 1 {
		return fmt.Errorf("want TOOL=BYTES with BYTES a positive number, got %q", v)
	}
	b[k] = n
	return nil
}

func (c *proxyCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("proxy", true, false)
	c.addRetentionFlag(fs)
	c.headers, c.budgetFor = headerFlag{}, budgetFlag{}
	fs.StringVar(&c.url, "url", "", "connect to the upstream's streamable HTTP endpoint `URL` (default none: run the command after --)")
	fs.Var(c.headers, "header", "send the header `'Name: value'` with every request to --url (repeatable; default none)")
	fs.IntVar(&c.budget, "budget", scrollback.HistoryBudget, fmt.Sprintf("show results up to `N` bytes whole and preview larger ones (default %d bytes)", scrollback.HistoryBudget))
	fs.Var(c.budgetFor, "budget-for", "the budget of one tool, `TOOL=N` bytes (repeatable; default --budget)")
	fs.DurationVar(&c.callTimeout, "call-timeout", proxy.DefaultCallTimeout, fmt.Sprintf("give up on an upstream call after `DUR`, e.g. 30s or 2m (default %s)", proxy.DefaultCallTimeout))
	c.addFlags(fs, "127.0.0.1:7778")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	switch {
	case c.url == "" && len(pos) == 0:
		return usagef("no upstream: put its command after --, e.g. scrollback proxy -- npx -y @modelcontextprotocol/server-filesystem /data, or give --url")
	case c.url != "" && len(pos) > 0:
		return usagef("give either --url or a command, not both")
	case len(c.headers) > 0 && c.url == "":
		return usagef("--header applies to --url only")
	case c.budget < 1:
		return usagef("--budget %d: give a positive number of bytes", c.budget)
	case c.http == "" && c.tokenFile != "":
		return usagef("--token-file applies to --http only")
	case c.http != "" && c.session != "":
		return usagef("--session applies to stdio only: over HTTP a client resumes a session with the %s header", mcpserver.SessionHeader)
	}

	retention, err := c.retentionPeriod(c.io.Getenv)
	if err != nil {
		return err
	}
	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	defer startRetention(ctx, st, retention, c.io.Stderr)()
	eng := scrollback.New(st, scrollback.Options{File: fileOptions(c.io.Getenv)})
	up := proxy.Upstream{Command: pos, Stderr: c.io.Stderr}
	if c.url != "" {
		up = proxy.Upstream{URL: c.url, Header: http.Header(c.headers)}
	}
	p, err := proxy.New(eng, up, proxy.Options{Budget: c.budget, ToolBudgets: c.budgetFor, CallTimeout: c.callTimeout, Version: Version()})
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.Start(ctx); err != nil {
		return err
	}
	if c.http != "" {
		return c.serveHTTP(ctx, p)
	}

	sess, err := c.openSession(ctx, eng, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.io.Stderr, "scrollback proxy: serving %d upstream tools on stdio, session %s\n", len(p.Tools()), sess.ID())
	return serveStdio(ctx, p.Server(sess), c.io)
}

func (c *proxyCmd) serveHTTP(ctx context.Context, p *proxy.Proxy) error {
	return c.serve(ctx, c.io, p.HTTPHandler, fmt.Sprintf("scrollback proxy: serving %d upstream tools", len(p.Tools())))
}
