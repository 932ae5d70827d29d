package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

func init() {
	register(commandInfo{name: "mcp", order: 80,
		usage:   "mcp [--session ID] [--db PATH] [--root DIR]  |  mcp --http ADDR [--token-file F] [--db PATH] [--root DIR]",
		summary: "serve the tools over MCP: stdio (one session), or streamable HTTP at /mcp",
		make:    func(io IO) command { return &mcpCmd{base: base{io: io}} }})
}

// mcpCmd is `scrollback mcp`: the MCP server, over stdio by default, over
// streamable HTTP with --http.
type mcpCmd struct {
	base
	root      string
	http      string
	tokenFile string
	idle      time.Duration
}

func (c *mcpCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("mcp", true, false)
	fs.StringVar(&c.root, "root", "", "confine read_file to the directory tree `DIR`")
	fs.StringVar(&c.http, "http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:7777; port 0 picks one) instead of stdio")
	fs.StringVar(&c.tokenFile, "token-file", "", "require a bearer token from `FILE` (one per line; default $SCROLLBACK_TOKEN)")
	fs.DurationVar(&c.idle, "idle-timeout", mcpserver.DefaultIdleTimeout, "with --http, close MCP sessions idle for `DUR` (their copies stay)")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("mcp takes no arguments, got %q", pos)
	}
	if c.http == "" && c.tokenFile != "" {
		return usagef("--token-file applies to --http only: over stdio the client that starts the server is its only user")
	}
	if c.http != "" && c.session != "" {
		return usagef("--session applies to stdio only: over HTTP a client resumes a session with the %s header", mcpserver.SessionHeader)
	}

	st, err := c.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	fo := fileOptions(c.io.Getenv)
	fo.Root = c.root
	eng := scrollback.New(st, scrollback.Options{File: fo})
	opts := mcpserver.Options{Version: Version()}
	if c.http != "" {
		return c.serveHTTP(ctx, eng, opts)
	}
	return c.serveStdio(ctx, eng, opts)
}

// serveStdio serves one session on stdin and stdout: a new one unless
// --session (or $SCROLLBACK_SESSION) names one to resume.
func (c *mcpCmd) serveStdio(ctx context.Context, eng *scrollback.Engine, opts mcpserver.Options) error {
	id := c.session
	if id == "" {
		id = c.io.Getenv("SCROLLBACK_SESSION")
	}
	var sess *scrollback.Session
	var err error
	if id == "" {
		sess, err = eng.NewSession(ctx, scrollback.LocalOwner)
	} else {
		sess, err = eng.Session(ctx, scrollback.LocalOwner, id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.io.Stderr, "scrollback: serving MCP on stdio, session %s (resume it with --session %s)\n", sess.ID(), sess.ID())
	srv := mcpserver.NewServer(sess, opts)
	return serveStdio(ctx, srv, c.io)
}

// serveHTTP serves streamable HTTP until ctx is done.
func (c *mcpCmd) serveHTTP(ctx context.Context, eng *scrollback.Engine, opts mcpserver.Options) error {
	tuneGCForServing(c.io.Getenv)
	var tokens []string
	switch {
	case c.tokenFile != "":
		t, err := mcpserver.ReadTokenFile(c.tokenFile)
		if err != nil {
			return err
		}
		tokens = t
	case strings.TrimSpace(c.io.Getenv("SCROLLBACK_TOKEN")) != "":
		tokens = []string{strings.TrimSpace(c.io.Getenv("SCROLLBACK_TOKEN"))}
	}
	ln, err := mcpserver.Listen(ctx, c.http, len(tokens) > 0)
	if err != nil {
		return err
	}
	h := mcpserver.NewHTTPHandler(eng, mcpserver.HTTPOptions{Options: opts, Tokens: tokens, IdleTimeout: c.idle})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	auth := "no token: loopback only, every session is local"
	if len(tokens) > 0 {
		auth = fmt.Sprintf("bearer token required (%d configured)", len(tokens))
	}
	fmt.Fprintf(c.io.Stderr, "scrollback: serving MCP on http://%s%s (%s)\n", ln.Addr(), mcpserver.Path, auth)

	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(shutdown)
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
