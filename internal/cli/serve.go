package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/scrollback-dev/scrollback/mcpserver"
)

// httpServing is what `mcp` and `proxy` share to serve streamable HTTP:
// the address, the bearer tokens and the idle timeout, and the serving
// loop itself.
type httpServing struct {
	http      string
	tokenFile string
	idle      time.Duration
}

// addFlags puts --http, --token-file and --idle-timeout on fs.
func (h *httpServing) addFlags(fs *flag.FlagSet, example string) {
	fs.StringVar(&h.http, "http", "", "serve streamable HTTP at /mcp on `ADDR`, e.g. "+example+" (port 0 picks one; default none: stdio)")
	fs.StringVar(&h.tokenFile, "token-file", "", "with --http, require a bearer token from `FILE` (one per line; default $SCROLLBACK_TOKEN)")
	fs.DurationVar(&h.idle, "idle-timeout", mcpserver.DefaultIdleTimeout, fmt.Sprintf("with --http, close MCP sessions idle for `DUR` (their copies stay; default %s)", mcpserver.DefaultIdleTimeout))
}

// tokens returns the configured bearer tokens: the token file's, else
// $SCROLLBACK_TOKEN, else none.
func (h *httpServing) tokens(getenv func(string) string) ([]string, error) {
	if h.tokenFile != "" {
		return mcpserver.ReadTokenFile(h.tokenFile)
	}
	if t := strings.TrimSpace(getenv("SCROLLBACK_TOKEN")); t != "" {
		return []string{t}, nil
	}
	return nil, nil
}

// serve listens on the address (loopback only without a token), prints
// what it serves, and serves the handler newHandler makes until ctx is
// done; then it shuts down, giving calls under way 5 seconds.
func (h *httpServing) serve(ctx context.Context, std IO, newHandler func(opts mcpserver.HTTPOptions) http.Handler, what string) error {
	tokens, err := h.tokens(std.Getenv)
	if err != nil {
		return err
	}
	tuneGCForServing(std.Getenv)
	ln, err := mcpserver.Listen(ctx, h.http, len(tokens) > 0)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           newHandler(mcpserver.HTTPOptions{Tokens: tokens, IdleTimeout: h.idle}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	auth := "no token: loopback only, every session is local"
	if len(tokens) > 0 {
		auth = fmt.Sprintf("bearer token required (%d configured)", len(tokens))
	}
	fmt.Fprintf(std.Stderr, "%s on http://%s%s (%s)\n", what, ln.Addr(), mcpserver.Path, auth)

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
