package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/scrollback-dev/scrollback/mcpserver"
)

// profileEnv names the address on which a serving command (mcp --http,
// proxy --http) serves Go's runtime profiles, for measuring where a
// server's CPU and allocations go under load (bench/mcp -profile). Unset,
// nothing is served; it listens on loopback only.
const profileEnv = "SCROLLBACK_PPROF"

// serveProfiles serves net/http/pprof's handlers on the address the
// environment names, until ctx ends; it returns the URL they are under,
// or "" when the environment names none.
func serveProfiles(ctx context.Context, getenv func(string) string) (string, error) {
	addr := getenv(profileEnv)
	if addr == "" {
		return "", nil
	}
	ln, err := mcpserver.Listen(ctx, addr, false) // loopback only
	if err != nil {
		return "", fmt.Errorf("$%s: %w", profileEnv, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	return fmt.Sprintf("http://%s/debug/pprof/", ln.Addr()), nil
}
