package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/internal/telemetry"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/store"
)

// httpServing is what `mcp` and `proxy` share to serve streamable HTTP:
// the address, the bearer tokens, the limits, the logs and metrics, and
// the serving loop with its graceful stop.
type httpServing struct {
	http        string
	tokenFile   string
	idle        time.Duration
	metrics     string
	logFormat   string
	logLevel    string
	maxBody     int64
	maxInFlight int
	maxSessions int
	origins     originFlag
	drain       time.Duration
	rate        rateFlag
	httpExample string // --http's example address, as its usage gives it

	oauthIssuer    string
	oauthAudience  string
	oauthScopes    string
	oauthNameClaim string

	// Read by checkFlags: the token file's tokens, else $SCROLLBACK_TOKEN.
	tokenList []mcpserver.Token

	// Made by startTracing, prepareLog and prepare.
	tracing *telemetry.Tracing
	log     *slog.Logger
	obs     *mcpserver.Observer
	tokens  *mcpserver.TokenSet
	limits  *mcpserver.Limits
}

// rateFlag is --rate-limit: requests per second, minute or hour.
type rateFlag struct{ l *mcpserver.RateLimit }

func (r *rateFlag) String() string {
	if r.l == nil {
		return ""
	}
	return r.l.String()
}

func (r *rateFlag) wants() (string, string) {
	return "requests per second, minute or hour (N/s, N/m or N/h)", "20/s"
}

func (r *rateFlag) Set(v string) error {
	l, err := mcpserver.ParseRateLimit(v)
	if err != nil {
		return err
	}
	r.l = l
	return nil
}

// originFlag collects repeated --allow-origin flags.
type originFlag []string

func (o *originFlag) String() string { return strings.Join(*o, ",") }

func (o *originFlag) wants() (string, string) {
	return "an origin (scheme://host[:port])", "https://app.example.com"
}

func (o *originFlag) Set(v string) error {
	if err := mcpserver.ValidOrigin(v); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "mcpserver: "))
	}
	*o = append(*o, v)
	return nil
}

// Default drain of in-flight calls on SIGTERM.
const defaultDrain = 30 * time.Second

// idleConnTimeout closes a kept-alive HTTP connection that sent no request
// for this long (an event stream being answered is not idle). Without it
// such a connection, a client's or anyone's, held a descriptor forever.
var idleConnTimeout = 2 * time.Minute

// metricsExample is the example address of --metrics.
const metricsExample = "127.0.0.1:9090"

// addFlags puts the HTTP serving flags on fs; example is --http's example
// address.
func (h *httpServing) addFlags(fs *flag.FlagSet, example string) {
	h.httpExample = example
	fs.StringVar(&h.http, "http", "", "serve streamable HTTP at /mcp on `ADDR`, e.g. "+example+" (port 0 picks one; default none: stdio)")
	fs.StringVar(&h.tokenFile, "token-file", "", "with --http, require a bearer token from `FILE`: one a line, \"alice: TOKEN\" or a bare TOKEN; re-read on SIGHUP (default: $SCROLLBACK_TOKEN, the token itself, else none)")
	fs.DurationVar(&h.idle, "idle-timeout", mcpserver.DefaultIdleTimeout, fmt.Sprintf("with --http, close MCP sessions idle for `DUR` (their copies stay; default %s)", mcpserver.DefaultIdleTimeout))
	fs.StringVar(&h.metrics, "metrics", "", "with --http, also serve /metrics (behind the token when one is configured), /healthz and /readyz on `ADDR`, e.g. "+metricsExample+" (default none)")
	fs.StringVar(&h.logFormat, "log-format", "text", "log one line per tool call to stderr as `FORMAT` text or json (default text)")
	fs.StringVar(&h.logLevel, "log-level", "info", "the least `LEVEL` logged: debug, info, warn or error; warn leaves out the line per call (default info)")
	fs.Int64Var(&h.maxBody, "max-body", mcpserver.DefaultMaxRequestBytes, fmt.Sprintf("with --http, refuse request bodies over `BYTES` with 413 (default %d)", mcpserver.DefaultMaxRequestBytes))
	fs.IntVar(&h.maxInFlight, "max-in-flight", mcpserver.DefaultMaxInFlight, fmt.Sprintf("with --http and tokens, refuse a token's tool call over `N` in flight; -1: no limit (default %d)", mcpserver.DefaultMaxInFlight))
	fs.IntVar(&h.maxSessions, "max-sessions", mcpserver.DefaultMaxSessions, fmt.Sprintf("with --http and tokens, refuse a token's MCP session over `N` open; -1: no limit (default %d)", mcpserver.DefaultMaxSessions))
	fs.Var(&h.origins, "allow-origin", "with --http, serve browser requests from `ORIGIN` (scheme://host[:port]) besides the server's own; repeatable (default none)")
	fs.DurationVar(&h.drain, "drain", defaultDrain, fmt.Sprintf("with --http, on SIGTERM give calls in flight `DUR` to finish before their commands are killed (default %s)", defaultDrain))
	fs.Var(&h.rate, "rate-limit", "with --http, refuse a token's or user's requests over `RATE` (N/s, N/m or N/h, e.g. 20/s) with 429 and Retry-After (default none)")
	fs.StringVar(&h.oauthIssuer, "oauth-issuer", "", "with --http, accept the JWT access tokens of the OAuth issuer at `URL` (OpenID discovery; its keys cached and refreshed), each user owning their sessions; static tokens still work (default none)")
	fs.StringVar(&h.oauthAudience, "oauth-audience", "", "with --oauth-issuer, the resource `URI` tokens must name in aud (default the server's own URL, http://ADDR/mcp)")
	fs.StringVar(&h.oauthScopes, "oauth-scopes", "", "with --oauth-issuer, the `SCOPES` requests need: scrollback:read (read copies) and/or scrollback:run (run commands, code and other tools), or read=SCOPE,run=SCOPE for the issuer's own names (default none needed)")
	fs.StringVar(&h.oauthNameClaim, "oauth-name-claim", mcpserver.DefaultNameClaim, fmt.Sprintf("with --oauth-issuer, the token `CLAIM` that names a user in logs and metrics, else its sub (default %s)", mcpserver.DefaultNameClaim))
}

// checkFlags refuses HTTP-only flags given without --http, and bad values:
// among them an address that is not HOST:PORT, or not loopback without a
// token (getenv gives $SCROLLBACK_TOKEN), a token file that cannot be read
// or holds no token, and an OAuth issuer that cannot be one, all before
// anything is started. It keeps the tokens it read for prepare.
func (h *httpServing) checkFlags(fs *flag.FlagSet, getenv func(string) string) error {
	if h.logFormat != "text" && h.logFormat != "json" {
		return badFlag("log-format", "text or json", "", fmt.Sprintf("%q", h.logFormat))
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(h.logLevel)); err != nil {
		return badFlag("log-level", "debug, info, warn or error", "", fmt.Sprintf("%q", h.logLevel))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["http"] && h.http == "" {
		return badFlag("http", "an address (HOST:PORT)", "127.0.0.1:7777", `""`)
	}
	if set["oauth-issuer"] && h.oauthIssuer == "" {
		return badFlag("oauth-issuer", "the issuer's URL", "https://accounts.example.com/realms/team", `""`)
	}
	if h.http == "" {
		var bad []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "token-file", "idle-timeout", "metrics", "max-body", "max-in-flight", "max-sessions", "allow-origin", "drain",
				"rate-limit", "oauth-issuer", "oauth-audience", "oauth-scopes", "oauth-name-claim":
				bad = append(bad, "--"+f.Name)
			}
		})
		if len(bad) > 0 {
			return usagef("%s applies to --http only: over stdio the client that starts the server is its only user", strings.Join(bad, ", "))
		}
		return nil
	}
	switch {
	case h.maxBody < 1024:
		return badFlag("max-body", "at least 1024 bytes", "1048576", h.maxBody)
	case h.maxInFlight == 0 || h.maxInFlight < -1:
		return badFlag("max-in-flight", "a positive number, or -1 for no limit,", "16", h.maxInFlight)
	case h.maxSessions == 0 || h.maxSessions < -1:
		return badFlag("max-sessions", "a positive number, or -1 for no limit,", "16", h.maxSessions)
	case h.drain < 0:
		return badFlag("drain", "a duration of 0 or more", "30s or 2m", h.drain)
	case h.idle <= 0:
		return badFlag("idle-timeout", "a positive duration", "8h or 30m", h.idle)
	}
	list, err := h.readTokens(getenv)
	if err != nil {
		return usagef("--token-file %s: %s", h.tokenFile, strings.TrimPrefix(err.Error(), "mcpserver: "))
	}
	h.tokenList = list
	tokens := len(list) > 0 || h.oauthIssuer != ""
	if err := checkAddress("http", h.http, h.httpExample, tokens); err != nil {
		return err
	}
	if h.metrics != "" {
		if err := checkAddress("metrics", h.metrics, metricsExample, tokens); err != nil {
			return err
		}
	}
	if h.oauthIssuer == "" {
		var bad []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "oauth-audience", "oauth-scopes", "oauth-name-claim":
				bad = append(bad, "--"+f.Name)
			}
		})
		if len(bad) > 0 {
			return usagef("%s applies with --oauth-issuer only", strings.Join(bad, ", "))
		}
		return nil
	}
	if err := mcpserver.CheckIssuer(h.oauthIssuer); errors.Is(err, mcpserver.ErrIssuerNotURL) {
		return badFlag("oauth-issuer", "the issuer's URL", "https://accounts.example.com/realms/team", fmt.Sprintf("%q", h.oauthIssuer))
	} else if err != nil {
		return usagef("--oauth-issuer %s: %v", h.oauthIssuer, mcpserver.ErrIssuerNotHTTPS)
	}
	if h.oauthAudience == "" && !knownHost(h.http) {
		return usagef("--oauth-audience is needed: the server listens on every interface (%s), so the URL clients use is not known; give it, e.g. --oauth-audience https://scrollback.example.com/mcp", h.http)
	}
	if _, _, err := mcpserver.ParseScopes(h.oauthScopes); err != nil {
		return usagef("--oauth-scopes: %v", err)
	}
	if h.oauthNameClaim == "" {
		return usagef("--oauth-name-claim: give a claim's name, e.g. preferred_username, email or sub")
	}
	return nil
}

// knownHost reports whether addr (HOST:PORT) names a host clients can
// use, so that the server's own URL is known: not every interface (an
// empty host, 0.0.0.0 or [::]).
func knownHost(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return host != "" && (ip == nil || !ip.IsUnspecified())
}

// checkAddress is the usage error for the address flag name (--http,
// --metrics) when addr is not HOST:PORT or, without tokens, not loopback.
func checkAddress(name, addr, example string, tokens bool) error {
	err := mcpserver.CheckAddress(context.Background(), addr, tokens)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mcpserver.ErrBadAddress):
		return badFlag(name, "an address (HOST:PORT)", example, fmt.Sprintf("%q", addr))
	default:
		return usagef("%s %s: %s", dashed(name), addr, strings.TrimPrefix(err.Error(), "mcpserver: "))
	}
}

// startTracing sets up OpenTelemetry tracing as the OTEL_* environment
// variables say (nothing when they say nothing); call it first. Call the
// returned function when serving ends: it flushes the spans not yet sent.
func (h *httpServing) startTracing(ctx context.Context) (flush func(), err error) {
	t, err := telemetry.FromEnv(ctx, Version())
	if err != nil {
		return nil, err
	}
	h.tracing = t
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil && h.log != nil {
			h.log.Warn("tracing: the last spans were not exported", "error", err)
		}
	}, nil
}

// say prints what a serving command says besides its per-call logs (what
// it serves, retention, the store's background work): a plain line on
// stderr, or with --log-format json a JSON record, as every line then is.
// Call it after prepareLog.
func (h *httpServing) say(std IO, level slog.Level, msg string, args ...any) {
	if h.logFormat == "json" {
		h.log.Log(context.Background(), level, strings.TrimPrefix(msg, "scrollback: "), args...)
		return
	}
	fmt.Fprintln(std.Stderr, msg)
}

// sayStore says, once at start, what keeps the store from its background
// work (PostgreSQL's VACUUM, for a user that does not own the tables),
// and routes that work's later failures through say; st is the store as
// opened, before observeStore wraps it.
func (h *httpServing) sayStore(std IO, st store.Store) {
	if v, ok := st.(interface{ VacuumBlocked() string }); ok {
		if why := v.VacuumBlocked(); why != "" {
			h.say(std, slog.LevelWarn, "scrollback: no background VACUUM: "+why)
		}
	}
	if v, ok := st.(interface{ SetVacuumErrorLog(func(error)) }); ok {
		v.SetVacuumErrorLog(func(err error) {
			h.say(std, slog.LevelWarn, fmt.Sprintf("scrollback: background VACUUM of the chunks failed (their freed space waits for autovacuum): %v", err))
		})
	}
}

// prepareLog makes the logger on stderr and the observer that logs each
// tool call to it (and counts them, for /metrics over HTTP); call it after
// checkFlags. Over stdio it is all prepare makes.
func (h *httpServing) prepareLog(std IO) {
	if h.obs != nil {
		return
	}
	var level slog.Level
	level.UnmarshalText([]byte(h.logLevel))
	ho := &slog.HandlerOptions{Level: level}
	if h.logFormat == "json" {
		h.log = slog.New(slog.NewJSONHandler(std.Stderr, ho))
	} else {
		h.log = slog.New(slog.NewTextHandler(std.Stderr, ho))
	}
	h.obs = mcpserver.NewObserver(h.log)
	if h.tracing.Enabled() {
		h.obs.Trace(h.tracing.Provider, h.tracing.Propagator)
	}
}

// observeStdio logs and counts the tool calls of srv, served over stdio on
// sess, as the HTTP server does each session's.
func (h *httpServing) observeStdio(std IO, srv *mcp.Server, sess *scrollback.Session) {
	if h.log == nil {
		h.prepareLog(std)
	}
	srv.AddReceivingMiddleware(h.obs.Middleware(mcpserver.BindSession(sess)))
}

// prepare makes the logger, the observer, the token set and the limits;
// call it after checkFlags, before observeStore and serve.
func (h *httpServing) prepare(std IO) {
	h.prepareLog(std)
	if len(h.tokenList) > 0 {
		h.tokens = mcpserver.NewTokenSet(h.tokenList)
	}
	h.limits = mcpserver.NewLimits(h.maxInFlight, h.maxSessions)
}

// prepareStore makes the logger and observer (and, over HTTP, the tokens
// and limits: see prepare), says what keeps the store from its background
// work, and returns st observed: over HTTP for the metrics (see
// observeStore), over stdio only when tracing is on. Call stop before
// closing st.
func (h *httpServing) prepareStore(ctx context.Context, std IO, st store.Store) (observed store.Store, stop func(), err error) {
	if h.http != "" {
		h.prepare(std)
	} else {
		h.prepareLog(std)
	}
	h.sayStore(std, st)
	if h.http != "" {
		observed, stop = h.observeStore(ctx, st)
		return observed, stop, nil
	}
	if h.tracing.Enabled() {
		return h.obs.Store(st), func() {}, nil
	}
	return st, func() {}, nil
}

// startRetention starts applying retention to st (see the package
// function), saying what it does through say.
func (h *httpServing) startRetention(ctx context.Context, std IO, st store.Store, period time.Duration, live *mcpserver.Live) (stop func()) {
	return startRetention(ctx, st, period, func(level slog.Level, msg string) { h.say(std, level, msg) }, live.Sessions)
}

// observeStore returns st with its errors and saved bytes counted in the
// metrics and, when st keeps statistics, starts watching them for the
// metrics (see Observer.WatchStore). Call stop before closing st.
func (h *httpServing) observeStore(ctx context.Context, st store.Store) (observed store.Store, stop func()) {
	stop = func() {}
	if hk, ok := st.(store.Housekeeper); ok {
		stop = h.obs.WatchStore(ctx, mcpserver.DefaultStatsEvery, func(ctx context.Context) (mcpserver.StoreStats, error) {
			s, err := hk.Stats(ctx, "")
			return mcpserver.StoreStats{RetainedBytes: s.LogicalBytes, StoredBytes: s.StoredBytes, Evicted: s.Evictions}, err
		})
	}
	return h.obs.Store(st), stop
}

// openOAuth discovers the --oauth-issuer's keys, for the audience given or
// this server's own URL at addr; nil without --oauth-issuer.
func (h *httpServing) openOAuth(ctx context.Context, addr net.Addr) (*mcpserver.OAuth, error) {
	if h.oauthIssuer == "" {
		return nil, nil
	}
	audience := h.oauthAudience
	if audience == "" {
		// checkFlags refused an address of every interface without one.
		host, _, _ := net.SplitHostPort(h.http)
		// The host as given (a name such as localhost is what clients
		// use, and the resource they ask a token for), the port as bound.
		_, port, _ := net.SplitHostPort(addr.String())
		audience = "http://" + net.JoinHostPort(host, port) + mcpserver.Path
	}
	read, run, _ := mcpserver.ParseScopes(h.oauthScopes) // checked by checkFlags
	oa, err := mcpserver.NewOAuth(ctx, mcpserver.OAuthOptions{
		Issuer: h.oauthIssuer, Audience: audience, ReadScope: read, RunScope: run, NameClaim: h.oauthNameClaim,
	})
	if err != nil {
		return nil, fmt.Errorf("--oauth-issuer: %w", err)
	}
	return oa, nil
}

// readTokens returns the configured bearer tokens: the token file's, else
// $SCROLLBACK_TOKEN, else none.
func (h *httpServing) readTokens(getenv func(string) string) ([]mcpserver.Token, error) {
	if h.tokenFile != "" {
		return mcpserver.ReadTokenFile(h.tokenFile)
	}
	if t := strings.TrimSpace(getenv("SCROLLBACK_TOKEN")); t != "" {
		return []mcpserver.Token{{Name: "env", Secret: t}}, nil
	}
	return nil, nil
}

// reload re-reads the token file on SIGHUP. A file that cannot be read
// leaves the tokens as they were.
func (h *httpServing) reload() {
	if h.tokenFile == "" || h.tokens == nil {
		h.log.Warn("SIGHUP: no --token-file to re-read; the tokens stay as they are")
		return
	}
	tokens, err := mcpserver.ReadTokenFile(h.tokenFile)
	if err != nil {
		h.log.Error("SIGHUP: the token file was not re-read; the tokens stay as they are", "error", err)
		return
	}
	h.tokens.Replace(tokens)
	names := make([]string, len(tokens))
	for i, t := range tokens {
		names[i] = t.Name
	}
	h.log.Info("SIGHUP: token file re-read", "tokens", len(tokens), "names", strings.Join(names, ","))
}

// serve listens on the address (loopback only without a token), prints
// what it serves, and serves the handler newHandler makes, with /metrics
// on --metrics too, until ctx is done or a SIGTERM or SIGINT comes; then it
// stops gracefully (see stop). SIGHUP re-reads the token file.
func (h *httpServing) serve(ctx context.Context, std IO, newHandler func(opts mcpserver.HTTPOptions) http.Handler, ready func(context.Context) error, what string) error {
	tuneGCForServing(std.Getenv)
	profiles, err := serveProfiles(ctx, std.Getenv)
	if err != nil {
		return err
	}
	if profiles != "" {
		h.say(std, slog.LevelInfo, "scrollback: Go profiles ($"+profileEnv+") on "+profiles, "url", profiles)
	}
	ln, err := mcpserver.Listen(ctx, h.http, h.tokens != nil || h.oauthIssuer != "")
	if err != nil {
		return err
	}
	oauth, err := h.openOAuth(ctx, ln.Addr())
	if err != nil {
		ln.Close()
		return err
	}
	var mln net.Listener
	if h.metrics != "" {
		// Without a token, as the MCP address: loopback only.
		mln, err = mcpserver.Listen(ctx, h.metrics, h.tokens != nil || h.oauthIssuer != "")
		if err != nil {
			ln.Close()
			return fmt.Errorf("--metrics %s: %w", h.metrics, err)
		}
	}
	srv := &http.Server{
		Handler: newHandler(mcpserver.HTTPOptions{
			TokenSet: h.tokens, IdleTimeout: h.idle, MaxRequestBytes: h.maxBody, Limits: h.limits,
			AllowOrigins: h.origins, Observer: h.obs, Ready: ready, OAuth: oauth, RateLimit: h.rate.l,
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idleConnTimeout,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
	var auth []string
	if h.tokens != nil {
		auth = append(auth, fmt.Sprintf("bearer token required (%d configured)", h.tokens.Len()))
	}
	if oauth != nil {
		auth = append(auth, fmt.Sprintf("OAuth access tokens of %s for %s", oauth.Issuer(), oauth.Audience()))
	}
	if len(auth) == 0 {
		auth = append(auth, "no token: loopback only, every session is local")
	}
	if h.rate.l != nil {
		auth = append(auth, "at most "+h.rate.l.String()+" each")
	}
	if h.tracing.Enabled() {
		auth = append(auth, "tracing over OTLP "+h.tracing.Protocol)
	}
	url := fmt.Sprintf("http://%s%s", ln.Addr(), mcpserver.Path)
	h.say(std, slog.LevelInfo, fmt.Sprintf("%s on %s (%s)", what, url, strings.Join(auth, "; ")), "url", url)

	servers := []*http.Server{srv}
	done := make(chan error, 2)
	if h.metrics != "" {
		msrv := &http.Server{
			Handler: mcpserver.OpsHandler(mcpserver.OpsOptions{
				Observer: h.obs, Ready: ready, TokenSet: h.tokens, AllowOrigins: h.origins,
			}),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       idleConnTimeout,
			ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
		}
		servers = append(servers, msrv)
		murl := fmt.Sprintf("http://%s/metrics", mln.Addr())
		h.say(std, slog.LevelInfo, fmt.Sprintf("%s: metrics on %s", strings.SplitN(what, ":", 2)[0], murl), "url", murl)
		go func() { done <- msrv.Serve(mln) }()
	}
	go func() { done <- srv.Serve(ln) }()

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, os.Interrupt)
	defer signal.Stop(sigs)

	// A second stop request stops at once. The first may come twice, on
	// sigs and as ctx (cmd/scrollback turns SIGTERM into ctx's end): ctx
	// ended by a signal is not counted, its copy on sigs is.
	stops := 0
	hard, hardStop := context.WithCancel(context.Background())
	defer hardStop()
	var stopped chan struct{}
	startStop := func() {
		if stopped == nil {
			stopped = make(chan struct{})
			go func() {
				h.stop(hard, servers)
				close(stopped)
			}()
		}
	}
	ctxDone := ctx.Done()
	for {
		select {
		case err := <-done:
			if stopped == nil {
				for _, s := range servers {
					s.Close()
				}
				return err
			}
		case s := <-sigs:
			if s == syscall.SIGHUP {
				h.reload()
				continue
			}
			if stops++; stops > 1 {
				h.log.Warn("second stop signal: stopping at once", "signal", s.String())
				hardStop()
			}
			startStop()
		case <-ctxDone:
			ctxDone = nil
			if cause := context.Cause(ctx); cause == context.Canceled || cause == context.DeadlineExceeded {
				stops++ // not a signal: none will follow on sigs
			}
			startStop()
		case <-stopped:
			return nil
		}
	}
}

// stop stops the servers gracefully: no new connections or calls, calls in
// flight given --drain to finish, then cancelled (a command's process group
// killed, its result saying so) unless hard ends first, which cancels
// them at once.
func (h *httpServing) stop(hard context.Context, servers []*http.Server) {
	n := h.limits.InFlight()
	h.log.Info("stopping: no new connections or calls", "in_flight", n, "drain", h.drain.String())
	shut := make(chan struct{})
	go func() {
		shutdown, cancel := context.WithCancel(hard)
		defer cancel()
		for _, s := range servers {
			s.Shutdown(shutdown) // closes the listeners at once, then waits for idle connections
		}
		close(shut)
	}()
	drain, cancel := context.WithTimeout(hard, h.drain)
	defer cancel()
	if killed := h.limits.Drain(drain); killed > 0 {
		h.log.Warn("stopping: calls still running were stopped; their commands' process groups are killed", "calls", killed)
		// Their results, which say the command was killed, go to their
		// clients: the runner gives a command a grace period after
		// SIGTERM, then sends SIGKILL.
		wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		h.limits.Wait(wait)
		cancel()
	}
	// Let the last responses be written (long-lived event streams would
	// hold Shutdown forever), then close what is left.
	select {
	case <-shut:
	case <-time.After(time.Second):
	case <-hard.Done():
	}
	for _, s := range servers {
		s.Close()
	}
	h.log.Info("stopped")
}

// serverCmd is what `mcp` and `proxy` share besides their own flags: the
// common flags, HTTP serving, the code workers and the shown size.
type serverCmd struct {
	base
	httpServing
	workers codeWorkers
	preview previewBytes
}

// serverBase is what a server stands on, made by serverCmd.start.
type serverBase struct {
	eng       *scrollback.Engine
	store     store.Store   // observed, as prepareStore says
	retention time.Duration // for startRetention
}

// start checks the shared flags, then starts tracing, opens and prepares
// the store, starts the code workers and makes the engine over them, its
// file reads as fo says. Call stop when serving ends: it undoes all of it
// in reverse order. On error, what was started is already undone.
func (c *serverCmd) start(ctx context.Context, fo filepager.Options) (serverBase, func(), error) {
	var sb serverBase
	if err := c.preview.check(); err != nil {
		return sb, nil, err
	}
	if err := c.workers.check(); err != nil {
		return sb, nil, err
	}
	retention, err := c.retentionPeriod(c.io.Getenv)
	if err != nil {
		return sb, nil, err
	}
	var undo []func()
	stop := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	flush, err := c.startTracing(ctx)
	if err != nil {
		return sb, nil, err
	}
	undo = append(undo, flush)
	st, err := c.openStore(ctx)
	if err != nil {
		stop()
		return sb, nil, err
	}
	undo = append(undo, func() { st.Close() })
	observed, stopWatch, err := c.prepareStore(ctx, c.io, st)
	if err != nil {
		stop()
		return sb, nil, err
	}
	undo = append(undo, stopWatch)
	workers := c.workers.pool(c.log, c.workers.n)
	undo = append(undo, func() { workers.Close() })
	sb = serverBase{
		eng:       scrollback.New(observed, scrollback.Options{File: fo, CodeWorkers: workers, ShownBytes: c.preview.n}),
		store:     observed,
		retention: retention,
	}
	return sb, stop, nil
}
