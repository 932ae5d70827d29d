package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
)

// What a server running for a team needs besides its tools: health checks,
// limits on what clients send, origin checks and a drain on shutdown.

// Defaults of the limits on each token.
const (
	// DefaultMaxInFlight is how many tool calls one token may have under
	// way at once; one more is refused at once, not queued.
	DefaultMaxInFlight = 16
	// DefaultMaxSessions is how many MCP sessions one token may hold open.
	DefaultMaxSessions = 1000
	// ReadyTimeout is how long /readyz waits for the store to answer.
	ReadyTimeout = time.Second
)

// JSON-RPC error codes this package answers with, beside the standard ones.
const (
	// CodeLimit refuses a call or session over one of a token's limits,
	// or a call that arrives while the server drains.
	CodeLimit = -32001
)

// Sentinel errors of the limits.
var (
	// ErrLimit is the error of a call or session refused by a limit.
	ErrLimit = errors.New("mcpserver: limit reached")
	// ErrStopping is the cause of the context of a call that Drain
	// stopped: the server is shutting down.
	ErrStopping = errors.New("mcpserver: the server is shutting down")
)

// HealthHandler answers GET /healthz: 200 while the process serves.
func HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, "ok\n")
	})
}

// ReadyHandler answers GET /readyz: 200 when ready answers nil within
// ReadyTimeout, else 503 with the reason.
func ReadyHandler(ready func(context.Context) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- ready(ctx) }()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			err = fmt.Errorf("the store did not answer within %s", ReadyTimeout)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %v\n", err)
			return
		}
		io.WriteString(w, "ready\n")
	})
}

// StoreReady asks st a question that needs the database: the store's own
// Ping when it has one, else a lookup of a session that does not exist.
func StoreReady(ctx context.Context, st store.Store) error {
	if p, ok := st.(interface{ Ping(context.Context) error }); ok {
		if err := p.Ping(ctx); err != nil {
			return fmt.Errorf("store: %w", err)
		}
		return nil
	}
	_, err := st.GetSession(ctx, "scrollback:readyz", store.NewID(store.SessionPrefix))
	if err != nil && !errors.Is(err, store.ErrSessionNotFound) {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// readMessage reads a POST body of at most limit bytes and checks that it
// is JSON in UTF-8, answering for the SDK otherwise: 413 when too large,
// 400 with a JSON-RPC parse error (-32700, id null) when it does not
// parse. It returns the body.
func readMessage(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("scrollback: the request body is over %d bytes, this server's limit (--max-body); send a smaller message", limit))
			return nil, false
		}
		http.Error(w, "scrollback: reading the request body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if msg := ParseProblem(body); msg != "" {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, msg)
		return nil, false
	}
	return body, true
}

// messageHead returns the id and method of body, a JSON message, when it
// is a JSON-RPC request that has them. Only a request that starts an MCP
// session needs them, so the others are not decoded twice.
func messageHead(body []byte) (id json.RawMessage, method string) {
	if len(body) > 0 && body[0] == '{' {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil {
			method = m.Method
			if len(m.ID) > 0 && (m.ID[0] == '"' || m.ID[0] == '-' || m.ID[0] >= '0' && m.ID[0] <= '9') {
				id = m.ID
			}
		}
	}
	return id, method
}

// callTarget returns a message's method and, for tools/call, the tool's
// name ("" when the message is not one request).
func callTarget(body []byte) (method, tool string) {
	if len(body) == 0 || body[0] != '{' {
		return "", ""
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return "", ""
	}
	if m.Method == "tools/call" {
		tool = m.Params.Name
	}
	return m.Method, tool
}

// ParseProblem says what keeps msg from being a JSON message (not UTF-8,
// not JSON), as the message of a JSON-RPC parse error, or "".
func ParseProblem(msg []byte) string {
	if !utf8.Valid(msg) {
		i := 0
		for i < len(msg) {
			r, n := utf8.DecodeRune(msg[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return fmt.Sprintf("parse error: the message is not valid UTF-8 (byte %d); JSON-RPC messages are UTF-8 JSON", i)
	}
	if !json.Valid(msg) {
		var v any
		err := json.Unmarshal(msg, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Sprintf("parse error: %v at byte %d; send one JSON-RPC message as JSON", se, se.Offset)
		}
		return fmt.Sprintf("parse error: %v; send one JSON-RPC message as JSON", err)
	}
	return ""
}

// writeRPCError answers a request with a JSON-RPC error; id is the
// request's id as sent, or nil for null (the request's id is not known).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(RPCError(id, code, msg), '\n'))
}

// RPCError encodes a JSON-RPC error response: id is the request's id as
// sent, or nil for null, as JSON-RPC wants when the id is not known.
func RPCError(id json.RawMessage, code int64, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}})
	return data
}

// originCheck implements the Origin rule of the MCP transport: a request
// with an Origin header is served only when the origin is the server's own
// (its host is the request's Host) or one of the allowed ones.
type originCheck struct{ allowed map[string]bool }

func newOriginCheck(allowed []string) originCheck {
	c := originCheck{allowed: map[string]bool{}}
	for _, o := range allowed {
		c.allowed[normalOrigin(o)] = true
	}
	return c
}

func normalOrigin(o string) string {
	return strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/"))
}

func (c originCheck) check(r *http.Request) error {
	o := r.Header.Get("Origin")
	if o == "" {
		return nil
	}
	if c.allowed[normalOrigin(o)] {
		return nil
	}
	if u, err := url.Parse(o); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
		return nil
	}
	return fmt.Errorf("scrollback: Origin %q is not allowed: only this server's own origin and those given with --allow-origin may call it", o)
}

// What a page of an origin given with --allow-origin may send and read.
const (
	corsAllowHeaders  = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, " + SessionHeader + ", traceparent, tracestate"
	corsExposeHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After"
)

// cors lets a browser page of an allowed origin call the server, as CORS
// wants: its answers name the origin (else the browser hides them from the
// page) and expose the MCP headers, and its preflight (an OPTIONS that
// carries no token) is answered here, before the token check. Other
// origins get no CORS headers. It reports whether it answered the request.
func (c originCheck) cors(w http.ResponseWriter, r *http.Request) (answered bool) {
	o := r.Header.Get("Origin")
	if o == "" || !c.allowed[normalOrigin(o)] {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Origin", o)
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	allow := r.Header.Get("Access-Control-Request-Headers")
	if allow == "" {
		allow = corsAllowHeaders
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	h.Set("Access-Control-Allow-Headers", allow)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// loopbackHost refuses, on a server without tokens serving a loopback
// address, a request whose Host is not a loopback name: a web page of
// another site whose name its DNS re-points at 127.0.0.1 (DNS rebinding)
// would otherwise call the server as its own origin, with no token to
// stop it. A server with tokens needs no such check (the page has no
// token), so one behind a reverse proxy on the same host may be sent the
// public Host.
func loopbackHost(r *http.Request) error {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil || r.Host == "" {
		return nil
	}
	if ta, ok := la.(*net.TCPAddr); !ok || !ta.IP.IsLoopback() {
		return nil
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || strings.EqualFold(host, "localhost") {
		return nil
	}
	return fmt.Errorf("scrollback: Host %q is not a loopback name: without a token this server answers only requests addressed to 127.0.0.1, [::1] or localhost (a guard against DNS rebinding); behind a reverse proxy, give a token (--token-file or $SCROLLBACK_TOKEN) or have the proxy send Host: 127.0.0.1", r.Host)
}

// ValidOrigin checks one --allow-origin value: scheme://host[:port].
func ValidOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || !validPort(u.Port()) {
		return fmt.Errorf("mcpserver: origin %q: want scheme://host[:port], e.g. https://app.example.com", o)
	}
	return nil
}

// validPort reports whether p, the port of a URL, is none or 1 to 65535.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// Limits bounds what each token may hold at once: tool calls in flight and
// MCP sessions open. A call or session over a limit is refused at once,
// with an error that says which limit and what to do; nothing queues.
// Without tokens (a loopback server, every session the local owner's) the
// limits do not apply: there is no one client to hold to them. Limits also
// drains the calls in flight when the server stops. It is safe for
// concurrent use; one Limits may serve several handlers.
type Limits struct {
	maxCalls, maxSessions int

	mu       sync.Mutex
	calls    map[string]int // owner → calls in flight
	sessions map[string]int // owner → MCP sessions open
	running  map[*runningCall]struct{}
	draining bool
	idle     chan struct{} // closed when running empties while draining
}

type runningCall struct{ cancel context.CancelCauseFunc }

// NewLimits returns limits of maxInFlight calls and maxSessions sessions
// per token; 0 means the default (DefaultMaxInFlight, DefaultMaxSessions),
// a negative value no limit.
func NewLimits(maxInFlight, maxSessions int) *Limits {
	if maxInFlight == 0 {
		maxInFlight = DefaultMaxInFlight
	}
	if maxSessions == 0 {
		maxSessions = DefaultMaxSessions
	}
	return &Limits{maxCalls: maxInFlight, maxSessions: maxSessions,
		calls: map[string]int{}, sessions: map[string]int{}, running: map[*runningCall]struct{}{}}
}

// InFlight returns the number of tool calls under way.
func (l *Limits) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.running)
}

// openSession takes one of owner's session places, and returns the func
// that gives it back.
func (l *Limits) openSession(owner, name string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.draining {
		return nil, fmt.Errorf("%w: the server is shutting down; connect to another instance or try again shortly", ErrLimit)
	}
	if l.maxSessions > 0 && owner != scrollback.LocalOwner && l.sessions[owner] >= l.maxSessions {
		return nil, fmt.Errorf("%w: token %q has %d MCP sessions open, its limit (--max-sessions); close some (HTTP DELETE with Mcp-Session-Id) or let idle ones expire", ErrLimit, name, l.maxSessions)
	}
	l.sessions[owner]++
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.sessions[owner]--; l.sessions[owner] <= 0 {
			delete(l.sessions, owner)
		}
	}, nil
}

// enter starts one call of owner, or refuses it.
func (l *Limits) enter(ctx context.Context, owner, name string) (context.Context, func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.draining {
		return nil, nil, fmt.Errorf("%w: the server is shutting down and takes no new calls; call again on another instance or after it restarts", ErrLimit)
	}
	if l.maxCalls > 0 && owner != scrollback.LocalOwner && l.calls[owner] >= l.maxCalls {
		return nil, nil, fmt.Errorf("%w: token %q already has %d tool calls in flight, its limit (--max-in-flight); wait for one to finish and call again", ErrLimit, name, l.maxCalls)
	}
	l.calls[owner]++
	ctx, cancel := context.WithCancelCause(ctx)
	c := &runningCall{cancel: cancel}
	l.running[c] = struct{}{}
	return ctx, func() {
		cancel(nil)
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.calls[owner]--; l.calls[owner] <= 0 {
			delete(l.calls, owner)
		}
		delete(l.running, c)
		if l.draining && len(l.running) == 0 && l.idle != nil {
			close(l.idle)
			l.idle = nil
		}
	}, nil
}

// Drain refuses new calls and sessions from now on and waits for the calls
// in flight to finish. When ctx ends first, it cancels the calls still
// running (a command's process group is killed, and its result says so)
// and returns how many it cancelled; the caller may then Wait for them to
// return their results.
func (l *Limits) Drain(ctx context.Context) (cancelled int) {
	l.mu.Lock()
	l.draining = true
	if len(l.running) == 0 {
		l.mu.Unlock()
		return 0
	}
	if l.idle == nil {
		l.idle = make(chan struct{})
	}
	idle := l.idle
	l.mu.Unlock()
	select {
	case <-idle:
		return 0
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.running {
		c.cancel(ErrStopping)
		cancelled++
	}
	return cancelled
}

// Wait waits until no call is in flight, or ctx ends; it reports whether
// none is.
func (l *Limits) Wait(ctx context.Context) bool {
	for {
		l.mu.Lock()
		n := len(l.running)
		l.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// middleware counts the tool calls of one MCP session against its token's
// limit, lets Drain cancel them, and ties the session's place to the life
// of the SDK's session.
func (l *Limits) middleware(hs *httpSession) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "initialize":
				res, err := next(ctx, method, req)
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && err == nil && hs.claimed.CompareAndSwap(false, true) {
					go func() {
						ss.Wait()
						hs.release()
					}()
				}
				return res, err
			case "tools/call":
				ctx, done, err := l.enter(ctx, hs.owner, hs.name)
				if err != nil {
					return nil, &jsonrpc.Error{Code: CodeLimit, Message: "scrollback: " + strings.TrimPrefix(err.Error(), "mcpserver: limit reached: ")}
				}
				defer done()
				return next(ctx, method, req)
			}
			return next(ctx, method, req)
		}
	}
}

// OpsOptions configures OpsHandler.
type OpsOptions struct {
	// Observer's metrics are served at /metrics; nil serves none there.
	Observer *Observer
	// Ready reports whether the server can serve, for /readyz.
	Ready func(context.Context) error
	// TokenSet, when set, guards /metrics as on the MCP address: a request
	// without one of its bearer tokens gets 401. The health checks need
	// none.
	TokenSet *TokenSet
	// AllowOrigins lists the browser origins allowed besides the server's
	// own, as in HTTPOptions; any other Origin gets 403 on every path.
	AllowOrigins []string
}

// OpsHandler serves /metrics, /healthz and /readyz on an address of their
// own (scrollback's --metrics), under the same rules as on the MCP
// address: the Origin check on every path, and /metrics behind the bearer
// token when tokens are configured. Other paths get 404.
func OpsHandler(opts OpsOptions) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", HealthHandler())
	mux.Handle("GET /readyz", ReadyHandler(opts.Ready))
	if opts.Observer != nil {
		metrics := opts.Observer.Handler()
		if tokens := opts.TokenSet; tokens != nil {
			inner := metrics
			metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				token, ok := bearer(r)
				if !ok {
					unauthorized(w, "", "scrollback: /metrics requires \"Authorization: Bearer TOKEN\" (one of --token-file's)")
					return
				}
				if _, ok := tokens.lookup(token); !ok {
					unauthorized(w, "invalid_token", "scrollback: the bearer token is not one this server accepts")
					return
				}
				inner.ServeHTTP(w, r)
			})
		}
		mux.Handle("GET /metrics", metrics)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "scrollback: not found: this address serves /metrics, /healthz and /readyz", http.StatusNotFound)
	})
	origins := newOriginCheck(opts.AllowOrigins)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := origins.check(r); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		if opts.TokenSet == nil {
			if err := loopbackHost(r); err != nil {
				http.Error(w, err.Error(), http.StatusForbidden)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// answerRefusal answers the SDK's plain-text refusal of a POSTed message
// body, whose text is msg (400 "JSON RPC not handled: ..." for a method it
// does not know, 400 for a message it cannot take; a refusalWriter holds
// it back), with a JSON-RPC error a client can read, as over stdio: method
// not found (-32601), answered with 200 as any answer to a request, or id
// null and 400 for a notification; invalid request (-32600) with 400 for
// the other refusals.
func answerRefusal(w http.ResponseWriter, body []byte, msg string) {
	w.Header().Del("X-Content-Type-Options")
	id, method := messageHead(body)
	msg = strings.TrimSpace(msg)
	if strings.HasPrefix(msg, "JSON RPC not handled") {
		if len(id) == 0 {
			writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeMethodNotFound,
				fmt.Sprintf("method not found: %q is not a method of this server", method))
			return
		}
		writeRPCError(w, http.StatusOK, id, jsonrpc.CodeMethodNotFound,
			fmt.Sprintf("method not found: %q is not a method of this server", method))
		return
	}
	writeRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "invalid request: "+msg)
}
