package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

func init() {
	register(commandInfo{name: "mcp", order: 80,
		usage:   "mcp [--session ID] [--db PATH] [--root DIR] [--deny PATTERN] [--preview-bytes N]  |  mcp --http ADDR [--token-file F] [--metrics ADDR] [--log-format text|json] [--drain DUR] [--db PATH] [--root DIR]",
		summary: "serve the tools over MCP: stdio (one session), or streamable HTTP at /mcp",
		examples: []example{
			{"serve the tools to one agent over stdio, file reads confined to a project", "scrollback mcp --root ~/src/project"},
			{"serve many clients over HTTP, each with a bearer token from a file", "scrollback mcp --http 127.0.0.1:7777 --token-file tokens.txt"},
		},
		make: func(io IO) command { return &mcpCmd{serverCmd: serverCmd{base: base{io: io}}} }})
}

// mcpCmd is `scrollback mcp`: the MCP server, over stdio by default, over
// streamable HTTP with --http.
type mcpCmd struct {
	serverCmd
	root string
	deny denyFlag
}

func (c *mcpCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("mcp", true, false)
	fs.Lookup("session").Usage = "over stdio, keep copies in the session `ID`, resuming it (default $SCROLLBACK_SESSION, else a new session)"
	c.addRetentionFlag(fs)
	fs.StringVar(&c.root, "root", "", "confine read_file to the directory tree `DIR` (default: any file scrollback can read)")
	fs.Var(&c.deny, "deny", denyUsage)
	c.preview.add(fs)
	c.workers.addFlag(fs, false)
	c.addFlags(fs, "127.0.0.1:7777")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("mcp takes no arguments, got %q", pos)
	}
	if err := c.checkFlags(fs, c.io.Getenv); err != nil {
		return err
	}
	if c.http != "" && c.session != "" {
		return usagef("--session applies to stdio only: over HTTP a client resumes a session with the %s header", mcpserver.SessionHeader)
	}
	if c.root != "" {
		if err := checkDir("root", c.root); err != nil {
			return err
		}
	}
	fo := fileOptions(c.io.Getenv)
	fo.Root = c.root
	fo.Deny = c.deny
	sb, stop, err := c.start(ctx, fo)
	if err != nil {
		return err
	}
	defer stop()
	eng := sb.eng
	opts := mcpserver.Options{Version: Version()}
	// Retention spares the sessions connected clients hold (live).
	live := &mcpserver.Live{}
	if c.http != "" {
		defer c.startRetention(ctx, c.io, sb.store, sb.retention, live)()
		return c.serveHTTP(ctx, eng, opts, live)
	}
	// The session first, so that retention's first pass already spares it.
	sess, err := c.openSession(ctx, eng, true)
	if err != nil {
		return err
	}
	live.Hold(mcpserver.BindSession(sess))
	defer c.startRetention(ctx, c.io, sb.store, sb.retention, live)()
	return c.serveStdio(ctx, sess, opts)
}

// serveStdio serves one session on stdin and stdout: a new one unless
// --session (or $SCROLLBACK_SESSION) named one to resume.
func (c *mcpCmd) serveStdio(ctx context.Context, sess *scrollback.Session, opts mcpserver.Options) error {
	srv := mcpserver.NewServer(sess, opts)
	srv.AddReceivingMiddleware(stopCallsWith(ctx))
	c.observeStdio(c.io, srv, sess)
	c.say(c.io, slog.LevelInfo, fmt.Sprintf("scrollback: serving MCP on stdio, session %s (resume it with --session %s)", sess.ID(), sess.ID()), "session", sess.ID())
	return serveStdio(ctx, srv, c.io)
}

// stopCallsWith ends the tool calls in flight when ctx ends (SIGTERM or
// SIGINT to a stdio server): their commands' process groups are killed and
// their results, with the output before and their copies, say why
// (mcpserver.ErrStopping). A stdio server has one client, which is the
// one shutting it down: there is nobody to drain for, and the client's
// SIGKILL, which follows soon, would leave the commands running with no
// copy. (Over HTTP, --drain lets calls finish first.)
func stopCallsWith(ctx context.Context) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(hctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(hctx, method, req)
			}
			hctx, cancel := context.WithCancelCause(hctx)
			defer cancel(nil)
			defer context.AfterFunc(ctx, func() { cancel(mcpserver.ErrStopping) })()
			return next(hctx, method, req)
		}
	}
}

// serveHTTP serves streamable HTTP until ctx is done.
func (c *mcpCmd) serveHTTP(ctx context.Context, eng *scrollback.Engine, opts mcpserver.Options, live *mcpserver.Live) error {
	ready := func(ctx context.Context) error { return mcpserver.StoreReady(ctx, eng.Store()) }
	return c.serve(ctx, c.io, func(h mcpserver.HTTPOptions) http.Handler {
		h.Options = opts
		// Each answer is one JSON body: no event stream to frame and flush.
		// The only messages sent while a call runs, progress notifications
		// (to a call that gave a progressToken), go out on the session's
		// standalone stream (GET), which the TypeScript SDK's client opens.
		h.JSONResponse = true
		h.Live = live
		return mcpserver.NewHTTPHandler(eng, h)
	}, ready, "scrollback: serving MCP")
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
