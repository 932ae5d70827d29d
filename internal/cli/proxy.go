package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/proxy"
)

func init() {
	register(commandInfo{name: "proxy", order: 85,
		usage:   "proxy [--session ID] [--db PATH] [--budget N] [--budget-for TOOL=N] [--preview-bytes N] [--call-timeout DUR] [--max-ref-bytes N] [--http ADDR [--max-upstreams N]] ([--env K=V] [--cwd DIR] -- COMMAND... | --url URL [--header 'K: V'] [--header-file FILE])",
		summary: "serve an upstream MCP server's tools with large results previewed and retained",
		examples: []example{
			{"preview and retain the large results of a filesystem MCP server", "scrollback proxy -- npx -y @modelcontextprotocol/server-filesystem /data"},
			{"proxy an HTTP MCP server, sending a header", "scrollback proxy --url https://mcp.example.com/mcp --header 'Authorization: Bearer TOKEN'"},
		},
		make: func(io IO) command { return &proxyCmd{serverCmd: serverCmd{base: base{io: io}}} }})
}

// proxyCmd is `scrollback proxy`: an MCP server in front of another one.
type proxyCmd struct {
	serverCmd
	url         string
	headers     headerFlag
	headerFile  string
	env         envFlag
	cwd         string
	budget      int
	budgetFor   budgetFlag
	callTimeout time.Duration
	maxUp       int
	maxRefBytes int64
}

// headerFlag collects repeated --header 'Name: value' flags.
type headerFlag http.Header

func (h headerFlag) String() string { return "" }

func (h headerFlag) wants() (string, string) { return "'Name: value'", "'X-Team: search'" }

func (h headerFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want 'Name: value', got %q", v)
	}
	http.Header(h).Add(strings.TrimSpace(k), strings.TrimSpace(val))
	return nil
}

// headersFrom adds to h the "Name: value" lines of text; blank lines and
// lines starting with # are skipped.
func headersFrom(h headerFlag, text, from string) error {
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := h.Set(line); err != nil {
			return fmt.Errorf("%s line %d: %v", from, i+1, err)
		}
	}
	return nil
}

// minBudget is the smallest --budget and --budget-for: below it no
// preview fits a head, a tail and the footer that leads to the rest, and
// one larger than the budget would be shown (proxy.ErrBudget).
const minBudget = scrollback.MinShownBytes

// budgetFlag collects repeated --budget-for TOOL=N flags.
type budgetFlag map[string]int

func (b budgetFlag) String() string { return "" }

func (b budgetFlag) wants() (string, string) {
	return fmt.Sprintf("TOOL=BYTES with BYTES at least %d", minBudget), "read_file=65536"
}

func (b budgetFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	n, err := strconv.Atoi(val)
	if !ok || k == "" || err != nil || n < minBudget {
		return fmt.Errorf("want TOOL=BYTES with BYTES at least %d, got %q", minBudget, v)
	}
	b[k] = n
	return nil
}

func (c *proxyCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("proxy", true, false)
	// Over stdio the proxy opens a new session, as scrollback mcp does,
	// not the database's default one other commands use.
	fs.Lookup("session").Usage = "over stdio, keep copies in the session `ID`, resuming it (default $SCROLLBACK_SESSION, else a new session)"
	c.addRetentionFlag(fs)
	c.headers, c.budgetFor = headerFlag{}, budgetFlag{}
	fs.StringVar(&c.url, "url", "", "connect to the upstream's streamable HTTP endpoint `URL` (default none: run the command after --)")
	fs.Var(c.headers, "header", "send the header `'Name: value'` with every request to --url (repeatable; default none)")
	fs.StringVar(&c.headerFile, "header-file", "", "read headers for --url from `FILE`, one 'Name: value' a line, so that a token is not on the command line (also: $SCROLLBACK_PROXY_HEADERS; default none)")
	c.env = envFlag{}
	fs.Var(c.env, "env", "set `NAME=VALUE` in the upstream command's environment (repeatable; default none)")
	fs.StringVar(&c.cwd, "cwd", "", "run the upstream command in `DIR` (default the current directory)")
	fs.IntVar(&c.budget, "budget", scrollback.HistoryBudget, fmt.Sprintf("show results up to `N` bytes whole and preview larger ones within it, N at least %d (default %d bytes)", minBudget, scrollback.HistoryBudget))
	fs.Var(c.budgetFor, "budget-for", fmt.Sprintf("the budget of one tool, `TOOL=N` bytes, at least %d (repeatable; default --budget)", minBudget))
	c.preview.add(fs)
	fs.DurationVar(&c.callTimeout, "call-timeout", proxy.DefaultCallTimeout, fmt.Sprintf("give up on an upstream call after `DUR`, e.g. 30s or 2m (default %s)", proxy.DefaultCallTimeout))
	fs.Int64Var(&c.maxRefBytes, "max-ref-bytes", proxy.DefaultMaxRefBytes, fmt.Sprintf("replace references to retained copies (scrollback://output/ID) in an upstream call's arguments with at most `N` bytes of their text in all, or -1 to pass them on as they are (default %d)", proxy.DefaultMaxRefBytes))
	fs.IntVar(&c.maxUp, "max-upstreams", proxy.DefaultMaxUpstreams, fmt.Sprintf("with --http, hold at most `N` upstream connections at once, one per client session (for a command, one process each): the one idle longest closes to make room, and connects again when its client next calls; -1 for no limit (default %d)", proxy.DefaultMaxUpstreams))
	c.workers.addFlag(fs, false)
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
	case (len(c.headers) > 0 || c.headerFile != "") && c.url == "":
		return usagef("--header and --header-file apply to --url only")
	case (len(c.env) > 0 || c.cwd != "") && c.url != "":
		return usagef("--env and --cwd apply to an upstream command only, not to --url")
	case c.maxUp == 0 || c.maxUp < -1:
		return badFlag("max-upstreams", "a positive number, or -1 for no limit,", "64", c.maxUp)
	case c.http == "" && flagSet(fs, "max-upstreams"):
		return usagef("--max-upstreams applies to --http only: over stdio the proxy has one client and one upstream connection")
	case c.maxRefBytes == 0 || c.maxRefBytes < -1:
		return badFlag("max-ref-bytes", "a positive number of bytes, or -1 to leave references as they are,", "8388608", c.maxRefBytes)
	case c.budget < minBudget:
		return badFlag("budget", fmt.Sprintf("a number of bytes of at least %d", minBudget), "32768", c.budget)
	case c.http != "" && c.session != "":
		return usagef("--session applies to stdio only: over HTTP a client resumes a session with the %s header", mcpserver.SessionHeader)
	}

	if err := c.checkFlags(fs, c.io.Getenv); err != nil {
		return err
	}
	if c.cwd != "" {
		if err := checkDir("cwd", c.cwd); err != nil {
			return err
		}
	}
	sb, stop, err := c.start(ctx, fileOptions(c.io.Getenv))
	if err != nil {
		return err
	}
	defer stop()
	eng := sb.eng
	var env []string
	for k, v := range c.env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	up := proxy.Upstream{Command: pos, Stderr: c.io.Stderr, Env: env, Dir: c.cwd}
	if c.url != "" {
		if env := c.io.Getenv("SCROLLBACK_PROXY_HEADERS"); env != "" {
			if err := headersFrom(c.headers, env, "$SCROLLBACK_PROXY_HEADERS"); err != nil {
				return usagef("%v", err)
			}
		}
		if c.headerFile != "" {
			b, err := os.ReadFile(c.headerFile)
			if err != nil {
				return fmt.Errorf("--header-file: %w", err)
			}
			if err := headersFrom(c.headers, string(b), c.headerFile); err != nil {
				return usagef("%v", err)
			}
		}
		up = proxy.Upstream{URL: c.url, Header: http.Header(c.headers)}
	}
	p, err := proxy.New(eng, up, proxy.Options{Budget: c.budget, ToolBudgets: c.budgetFor, CallTimeout: c.callTimeout, MaxUpstreams: c.maxUp, MaxRefBytes: c.maxRefBytes, Version: Version(), Logger: c.log})
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.Start(ctx); err != nil {
		return err
	}
	c.checkBudgets(p)
	// Retention spares the sessions connected clients hold (live).
	live := &mcpserver.Live{}
	if c.http != "" {
		defer c.startRetention(ctx, c.io, sb.store, sb.retention, live)()
		return c.serveHTTP(ctx, p, eng, live)
	}

	// The session first, so that retention's first pass already spares it.
	sess, err := c.openSession(ctx, eng, true)
	if err != nil {
		return err
	}
	live.Hold(mcpserver.BindSession(sess))
	defer c.startRetention(ctx, c.io, sb.store, sb.retention, live)()
	srv := p.Server(sess)
	c.observeStdio(c.io, srv, sess)
	c.say(c.io, slog.LevelInfo, fmt.Sprintf("scrollback proxy: serving %d upstream tools on stdio, session %s (resume it with --session %s)", len(p.Offered()), sess.ID(), sess.ID()), "session", sess.ID())
	return serveStdio(ctx, srv, c.io)
}

func (c *proxyCmd) serveHTTP(ctx context.Context, p *proxy.Proxy, eng *scrollback.Engine, live *mcpserver.Live) error {
	c.obs.Registry().MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "scrollback_proxy_upstream_restarts_total",
		Help: "Times the proxy connected to its upstream again after losing it.",
	}, func() float64 { return float64(p.UpstreamRestarts()) }))
	c.obs.Registry().MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "scrollback_proxy_upstreams",
		Help: "Upstream connections of client sessions (for a command, processes) the proxy holds, bounded by --max-upstreams.",
	}, func() float64 { return float64(p.Upstreams()) }))
	ready := func(ctx context.Context) error { return mcpserver.StoreReady(ctx, eng.Store()) }
	handler := func(h mcpserver.HTTPOptions) http.Handler {
		h.Live = live
		return p.HTTPHandler(h)
	}
	return c.serve(ctx, c.io, handler, ready, fmt.Sprintf("scrollback proxy: serving %d upstream tools", len(p.Offered())))
}

// flagSet reports whether the flag name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// checkBudgets warns of each --budget-for that names no tool the upstream
// lists (a typo would otherwise leave the tool at --budget in silence).
// Not an error: a tool may be listed later.
func (c *proxyCmd) checkBudgets(p *proxy.Proxy) {
	if len(c.budgetFor) == 0 {
		return
	}
	var names []string
	have := map[string]bool{}
	for _, t := range p.Offered() {
		names = append(names, t.Name)
		have[t.Name] = true
	}
	sort.Strings(names)
	if len(names) > 20 {
		names = append(names[:20], fmt.Sprintf("and %d more", len(names)-20))
	}
	var missing []string
	for name := range c.budgetFor {
		// resources/read and prompts/get budget those results.
		if !have[name] && name != "resources/read" && name != "prompts/get" {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		c.log.Warn(fmt.Sprintf("proxy: --budget-for names a tool the upstream does not list: %s (its tools: %s)", name, strings.Join(names, ", ")))
	}
}
