package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
)

// Path is where the streamable HTTP endpoint is served.
const Path = "/mcp"

// SessionHeader names the scrollback session an MCP client resumes over
// HTTP. It is read on the request that starts an MCP session (the one
// without an Mcp-Session-Id), and on every request of protocol 2026-07-28,
// which has no MCP session; the session must belong to the caller.
const SessionHeader = "Scrollback-Session"

// Limits of the HTTP transport.
const (
	// DefaultMaxRequestBytes bounds one HTTP request body unless
	// HTTPOptions.MaxRequestBytes says otherwise. Larger requests get 413
	// Request Entity Too Large.
	DefaultMaxRequestBytes = 4 << 20
	// DefaultIdleTimeout closes an MCP session that sent no request for
	// this long. Its scrollback session stays: a client resumes it with the
	// Scrollback-Session header.
	DefaultIdleTimeout = 8 * time.Hour
)

// bodyReadTimeout bounds the time a client takes to send a request body.
var bodyReadTimeout = time.Minute

// Sentinel errors.
var (
	// ErrNeedToken is returned by Listen for an address that is not
	// loopback when no bearer token is configured.
	ErrNeedToken = errors.New("mcpserver: serving a non-loopback address requires a bearer token")

	// ErrBadAddress is returned by CheckAddress and Listen for an address
	// that is not HOST:PORT with a port from 0 to 65535.
	ErrBadAddress = errors.New("mcpserver: bad address")

	// ErrNoTokens is returned by ReadTokenFile for a file that holds no
	// token.
	ErrNoTokens = errors.New("mcpserver: no token in the token file")
)

// HTTPOptions configures NewHTTPHandler.
type HTTPOptions struct {
	Options
	// Tokens are bearer tokens accepted, each named "unnamed-" and a short
	// hash of it in logs and metrics. TokenSet, when set, wins.
	Tokens []string
	// TokenSet is the set of named bearer tokens accepted; it may be
	// replaced while the handler serves. With at least one token (here or
	// in Tokens), every request but the health checks must carry
	// "Authorization: Bearer TOKEN" with one of them, and each session
	// belongs to the token that created it. With none, every session
	// belongs to scrollback.LocalOwner and the server must only listen on
	// loopback (see Listen).
	TokenSet *TokenSet
	// IdleTimeout closes MCP sessions idle for this long; 0 means
	// DefaultIdleTimeout, a negative value never.
	IdleTimeout time.Duration
	// MaxRequestBytes bounds one request body; 0 means
	// DefaultMaxRequestBytes. Larger requests get 413.
	MaxRequestBytes int64
	// Limits bounds the calls in flight and the MCP sessions of each
	// token, and drains calls on shutdown; nil means NewLimits(0, 0).
	Limits *Limits
	// AllowOrigins lists the browser origins ("https://app.example.com")
	// allowed besides the server's own, with the CORS headers a browser
	// needs (a preflight is answered without a token). A request whose
	// Origin header is neither gets 403 on every path; a request without
	// one is served.
	AllowOrigins []string
	// Observer, when set, counts and logs every tool call and serves
	// /metrics (behind the token when one is configured).
	Observer *Observer
	// Ready reports whether the server can serve, for /readyz: nil when it
	// can. It is given a second. nil means asking the engine's store.
	Ready func(context.Context) error
	// JSONResponse answers each request with one application/json body
	// instead of an event stream. Messages the server sends while a call
	// runs (progress, logging, sampling) then go out on the session's
	// standalone stream (a GET), so a server that sends them during calls
	// (the proxy, passing its upstream's through) should leave it off.
	JSONResponse bool
	// Live, when set, holds the scrollback session of each open MCP
	// session, from its initialize until it ends (closed by the client or
	// idle past IdleTimeout), for retention to keep.
	Live *Live
	// OAuth, when set, makes the server an OAuth 2.1 resource server
	// besides any static tokens: it accepts the issuer's JWT access tokens
	// for its audience, each user (issuer and subject) owning their
	// sessions; it serves Protected Resource Metadata (RFC 9728) at
	// /.well-known/oauth-protected-resource (and the same followed by the
	// audience's path), names it in the WWW-Authenticate header of every
	// 401, and answers a token that lacks the scope a request needs with
	// 403 insufficient_scope.
	OAuth *OAuth
	// RateLimit, when set, bounds the requests each principal sends to
	// Path; one over it gets 429 with Retry-After.
	RateLimit *RateLimit
}

// Listen opens a TCP listener for the HTTP server. Unless tokens is true
// (a bearer token is configured) it refuses, with ErrNeedToken, any address
// that is not loopback, before binding it: an empty host, 0.0.0.0, [::],
// an interface's address, or a name that resolves to one. Port 0 picks a
// free port; the listener's Addr says which.
func Listen(ctx context.Context, addr string, tokens bool) (net.Listener, error) {
	if err := CheckAddress(ctx, addr, tokens); err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !tokens && (!ok || !a.IP.IsLoopback()) {
		ln.Close()
		return nil, fmt.Errorf("%w: %s is bound to %s; use 127.0.0.1 or give a token (--token-file or $SCROLLBACK_TOKEN)", ErrNeedToken, addr, ln.Addr())
	}
	return ln, nil
}

// CheckAddress checks addr as Listen does before binding it: HOST:PORT
// with a port from 0 to 65535 (else ErrBadAddress), and unless tokens, a
// loopback host (else ErrNeedToken; a name is resolved to know).
func CheckAddress(ctx context.Context, addr string, tokens bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return fmt.Errorf("%w %q: want HOST:PORT, e.g. 127.0.0.1:7777", ErrBadAddress, addr)
	}
	if !tokens {
		return checkLoopback(ctx, host)
	}
	return nil
}

func checkLoopback(ctx context.Context, host string) error {
	hint := "listen on 127.0.0.1 or [::1], or give a token (--token-file or $SCROLLBACK_TOKEN)"
	if host == "" {
		return fmt.Errorf("%w: an empty host means every interface; %s", ErrNeedToken, hint)
	}
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return fmt.Errorf("%w: %s is not a loopback address; %s", ErrNeedToken, host, hint)
		}
		return nil
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return fmt.Errorf("mcpserver: cannot resolve %q: %v", host, err)
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return fmt.Errorf("%w: %s resolves to %s, which is not loopback; %s", ErrNeedToken, host, ip.IP, hint)
		}
	}
	return nil
}

// namedSessionGone reports whether b, a kept binding of a request naming
// session sid in its Scrollback-Session header, opened sid and it no
// longer exists for owner (or b moved from it). A store that cannot say
// is taken to still hold it: the call then fails or not on its own.
func (h *httpHandler) namedSessionGone(ctx context.Context, b *Binding, owner, sid string) bool {
	cur := b.Current()
	if cur == nil {
		return false // not opened yet: its first use finds it, or not_found
	}
	if cur.ID() != sid {
		return true
	}
	_, err := h.eng.Session(ctx, owner, sid)
	return errors.Is(err, scrollback.ErrNoSession)
}

// NewHTTPHandler returns the streamable HTTP transport of scrollback's MCP
// server, serving Path, with /healthz, /readyz and (given an Observer)
// /metrics beside it; other paths get 404. Each MCP session gets its own
// scrollback session of eng, created on its first tool call, unless the
// request that starts it names one of the caller's sessions in the
// Scrollback-Session header; a session that does not exist or belongs to
// another token gets the same 404. A request of protocol 2026-07-28 has no
// MCP session: it acts on the session its Scrollback-Session header names
// (one the caller does not own is the tools' not_found error), else on its
// principal's default session, made on first use and found again by every
// later request, on any server sharing the store. With tokens configured,
// a request without a valid bearer token gets 401 and touches nothing
// (the health checks need none). Without tokens (nor OAuth), a request
// whose Host is not a loopback name gets 403 on every path: a guard
// against DNS rebinding.
func NewHTTPHandler(eng *scrollback.Engine, opts HTTPOptions) http.Handler {
	return NewSessionHandler(eng, opts, func(b *Binding) *mcp.Server { return newServer(b, opts.Options) })
}

// NewSessionHandler is NewHTTPHandler for any MCP server whose tools act on
// a scrollback session (AddTools adds them to a server): the same paths,
// bearer tokens, owners, limits, Scrollback-Session header and
// observation. newServer makes the server of each new MCP session, once,
// given the binding to its scrollback session: a new one of eng, made when
// the server first calls Binding.Session, or the one the header named.
func NewSessionHandler(eng *scrollback.Engine, opts HTTPOptions, newServer func(*Binding) *mcp.Server) http.Handler {
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	} else if idle < 0 {
		idle = 0
	}
	maxBody := opts.MaxRequestBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxRequestBytes
	}
	limits := opts.Limits
	if limits == nil {
		limits = NewLimits(0, 0)
	}
	tokens := opts.TokenSet
	if tokens == nil && len(opts.Tokens) > 0 {
		named := make([]Token, len(opts.Tokens))
		for i, t := range opts.Tokens {
			named[i] = Token{Name: unnamed(t), Secret: t}
		}
		tokens = NewTokenSet(named)
	}
	obs := opts.Observer
	proto := mcp.NewServer(&mcp.Implementation{Name: "scrollback", Version: opts.Version}, nil)
	getServer := func(r *http.Request) *mcp.Server {
		// The SDK asks for a server on every request; only the request that
		// starts a session, or a request served without one, carries a
		// binding, and its server is made once.
		hs, ok := r.Context().Value(httpSessionKey{}).(*httpSession)
		if !ok {
			return proto
		}
		hs.once.Do(func() {
			hs.srv = newServer(hs.b)
			// Outermost first: the observer sees what the limits refused,
			// and both see results as the server finished them.
			hs.srv.AddReceivingMiddleware(obs.middleware(hs.b), limits.middleware(hs))
		})
		return hs.srv
	}
	sdk := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:                       opts.Logger,
		SessionTimeout:               idle,
		MaxRequestBodyBytes:          maxBody,
		PropagateRequestCancellation: true,
		JSONResponse:                 opts.JSONResponse,
		// Hosts are checked before, and only when no token guards the
		// server (see loopbackHost): the SDK's check would refuse a
		// reverse proxy on the same host that passes on the public Host.
		DisableLocalhostProtection: true,
	})
	// Protocol 2026-07-28 has no MCP session: each request is served on
	// its own, by the SDK's stateless handler, and acts on its
	// principal's default scrollback session (or the one its
	// Scrollback-Session header names).
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:                       opts.Logger,
		Stateless:                    true,
		MaxRequestBodyBytes:          maxBody,
		PropagateRequestCancellation: true,
		JSONResponse:                 opts.JSONResponse,
		// Hosts are checked before, and only when no token guards the
		// server (see loopbackHost): the SDK's check would refuse a
		// reverse proxy on the same host that passes on the public Host.
		DisableLocalhostProtection: true,
	})

	ready := opts.Ready
	if ready == nil {
		ready = func(ctx context.Context) error { return StoreReady(ctx, eng.Store()) }
	}
	mcpHandler := &httpHandler{eng: eng, sdk: sdk, stateless: stateless, requests: &requestServers{live: opts.Live},
		limits: limits, obs: obs, maxBody: maxBody, live: opts.Live, rate: opts.RateLimit}
	open := http.NewServeMux() // no token needed
	open.Handle("GET /healthz", HealthHandler())
	open.Handle("GET /readyz", ReadyHandler(ready))
	guarded := http.NewServeMux()
	guarded.Handle(Path, mcpHandler)
	if obs != nil {
		guarded.Handle("GET /metrics", obs.Handler())
	}
	guarded.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "scrollback: not found: the MCP endpoint is "+Path, http.StatusNotFound)
	})
	// Path, where nearly every request goes, is routed without the mux,
	// behind the token check as the others.
	var authed http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Path {
			mcpHandler.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
	if tokens != nil || opts.OAuth != nil {
		authed = newAuthenticator(tokens, opts.OAuth, authed)
	}
	authed = obs.traceHTTP(authed)
	// Protected Resource Metadata is public and read by browser-based
	// clients from any origin (RFC 9728 §3): it is served before the origin
	// check, with the SDK's handler (CORS for any origin).
	public := http.NewServeMux()
	if opts.OAuth != nil {
		prm := auth.ProtectedResourceMetadataHandler(opts.OAuth.Metadata())
		for _, p := range metadataPaths(opts.OAuth.Audience()) {
			public.Handle(p, prm)
		}
	}
	origins := newOriginCheck(opts.AllowOrigins)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			// A body must arrive within bodyReadTimeout. A request refused
			// without reading it (no token, say), whose rest the HTTP
			// server reads before it answers, cannot hold the connection
			// by sending it a byte at a time.
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(bodyReadTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		other := r.URL.Path != Path // Path is neither public nor open
		if other {
			if h, pattern := public.Handler(r); pattern != "" {
				h.ServeHTTP(w, r)
				return
			}
		}
		if err := origins.check(r); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		if tokens == nil && opts.OAuth == nil {
			if err := loopbackHost(r); err != nil {
				http.Error(w, err.Error(), http.StatusForbidden)
				return
			}
		}
		if origins.cors(w, r) {
			return // a browser's preflight
		}
		if other {
			if h, pattern := open.Handler(r); pattern != "" {
				h.ServeHTTP(w, r)
				return
			}
		}
		authed.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the connection's read deadline once the body is read
// to its end: the server then watches the connection for the client's
// leaving, which must not time out while a call runs.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// bearer returns the request's bearer token.
func bearer(r *http.Request) (string, bool) {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}

type httpSessionKey struct{}

// httpSession is the binding of one new MCP session and its server, made
// once, and its place among its token's sessions.
type httpSession struct {
	b     *Binding
	owner string
	name  string // the token's name, for logs and metrics
	once  sync.Once
	srv   *mcp.Server

	// release gives the session's place back, once; claimed says the SDK
	// made the session, which then releases it when it ends.
	release func()
	claimed atomic.Bool
}

// httpHandler checks each request body, binds each new MCP session to a
// scrollback session within its token's limit, then hands the request to
// the SDK's handler.
type httpHandler struct {
	eng       *scrollback.Engine
	sdk       *mcp.StreamableHTTPHandler
	stateless *mcp.StreamableHTTPHandler // for requests of protocol 2026-07-28
	requests  *requestServers            // their servers
	limits    *Limits
	obs       *Observer
	maxBody   int64
	live      *Live
	rate      *RateLimit
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Session-Id") != "" {
		nw := &refusalWriter{ResponseWriter: w, status: http.StatusForbidden, answer: answerOtherSession}
		defer nw.finish()
		w = nw
	}
	if r.Method != http.MethodPost {
		if h.limited(w, r, nil) {
			return
		}
		h.sdk.ServeHTTP(w, r)
		return
	}
	body, ok := readMessage(w, r, h.maxBody)
	if !ok {
		return
	}
	if h.limited(w, r, body) {
		return
	}
	if !checkScope(w, r, body) {
		return
	}
	rw := &refusalWriter{ResponseWriter: w, status: http.StatusBadRequest, answer: func(w http.ResponseWriter, msg string) {
		answerRefusal(w, body, msg)
	}}
	defer rw.finish()
	w = rw
	r.Body = io.NopCloser(bytes.NewReader(body))
	if r.Header.Get("Mcp-Session-Id") != "" {
		h.sdk.ServeHTTP(w, r)
		return
	}
	id, method := messageHead(body)
	version := metaVersion(body) // "" when _meta names none
	if v := version; v >= StatelessVersion && r.Header.Get("Mcp-Protocol-Version") == "" {
		// The SDK would take it for protocol 2025-03-26 and refuse that
		// version, though it supports it, naming neither the version sent
		// nor the header missing.
		writeRPCError(w, http.StatusBadRequest, id, mcp.CodeHeaderMismatch, fmt.Sprintf(
			"missing MCP-Protocol-Version header: the request's _meta names protocol %s, which needs the header \"MCP-Protocol-Version: %s\" on every request", v, v))
		return
	}
	p := RequestPrincipal(r.Context())
	owner, name := p.Owner, p.Name
	if statelessRequest(r, method) {
		// No MCP session: the request acts on the session its header
		// names, found when a tool first needs it (one the caller does
		// not own is the tools' not_found error), else on the principal's
		// default session.
		sid := r.Header.Get(SessionHeader)
		key := owner + "\x00" + sid
		mk := func() *httpSession {
			b := DefaultBinding(h.eng, owner)
			if sid != "" {
				b = ResumeBinding(h.eng, owner, sid)
			}
			b.perRequest, b.done = true, make(chan struct{})
			return &httpSession{b: b, owner: owner, name: name, release: func() {}}
		}
		hs := h.requests.get(key, mk)
		if sid != "" && h.namedSessionGone(r.Context(), hs.b, owner, sid) {
			// Deleted since the kept server opened it: each request names
			// the session anew, and one that does not exist is not_found,
			// as on a server that never saw it. The kept server's session
			// handle would run the call in the deleted session, or move to
			// a new session of its own making on its first save.
			h.requests.forget(key, hs)
			hs = h.requests.get(key, mk)
		}
		h.stateless.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), httpSessionKey{}, hs)))
		return
	}
	if len(id) > 0 && string(id) != "null" && !sessionless(method) && version == "" {
		// The SDK would answer in a session made for this one request,
		// never initialized: 200 with an error of code 0, "invalid during
		// session initialization". The specification asks for 400.
		writeRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			"invalid request: no Mcp-Session-Id: %q needs an MCP session; send initialize first, then its Mcp-Session-Id header on every request (or, with protocol %s, the MCP-Protocol-Version header and the version in _meta)",
			method, StatelessVersion))
		return
	}
	b := NewBinding(h.eng, owner)
	if sid := r.Header.Get(SessionHeader); sid != "" {
		s, err := h.eng.Session(r.Context(), owner, sid)
		if err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, scrollback.ErrNoSession) {
				status = http.StatusNotFound
			}
			http.Error(w, "scrollback: "+SessionHeader+": "+err.Error(), status)
			return
		}
		b = BindSession(s)
	}
	hs := &httpSession{b: b, owner: owner, name: name, release: func() {}}
	if method == "initialize" {
		// Only an initialize makes a session that lasts; other requests
		// without a session id (a discovery probe) end with their answer.
		release, err := h.limits.openSession(owner, name)
		if err != nil {
			writeRPCError(w, http.StatusTooManyRequests, id, CodeLimit, err.Error())
			return
		}
		h.obs.sessionOpened(name)
		unhold := h.live.Hold(b)
		hs.release = sync.OnceFunc(func() {
			unhold()
			release()
			h.obs.sessionClosed(name)
		})
	}
	r = r.WithContext(context.WithValue(r.Context(), httpSessionKey{}, hs))
	h.sdk.ServeHTTP(w, r)
	if !hs.claimed.Load() {
		hs.release() // the SDK made no session of it
	}
}

// sessionless reports whether the SDK serves a request of method outside
// an initialized MCP session: initialize, and the few requests the
// specification allows before it.
func sessionless(method string) bool {
	switch method {
	case "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return true
	}
	return false
}

// metaVersion returns the protocol version a message carries in its
// _meta, as one of protocol 2026-07-28 does (the SDK serves it without a
// session even when its header is missing), or "".
func metaVersion(body []byte) string {
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	raw, ok := m.Params.Meta["io.modelcontextprotocol/protocolVersion"]
	if !ok {
		return ""
	}
	var v string
	if json.Unmarshal(raw, &v) != nil || v == "" {
		return "?" // present, not a version: not "" (none)
	}
	return v
}

// statelessRequest reports whether a POST without an MCP session is of
// protocol 2026-07-28 or later (its MCP-Protocol-Version header says so,
// as that protocol requires) or is its server/discover, which a client
// sends before it knows which protocol the server speaks.
func statelessRequest(r *http.Request, method string) bool {
	return method == "server/discover" || r.Header.Get("Mcp-Protocol-Version") >= StatelessVersion
}

// StatelessVersion is the first MCP protocol version without sessions:
// each request carries its version and capabilities in its _meta.
const StatelessVersion = "2026-07-28"

// limited answers 429 and reports true when the request's principal is
// over the rate limit.
func (h *httpHandler) limited(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if h.rate == nil {
		return false
	}
	p := RequestPrincipal(r.Context())
	wait := h.rate.reserve(p.Owner, time.Now())
	if wait <= 0 {
		return false
	}
	id, _ := messageHead(body)
	h.rate.refuse(w, id, p.Name, wait)
	h.obs.rateLimited(p.Name)
	return true
}

// refusalWriter holds back the SDK's plain-text refusal with one status
// (its http.Error), for answer to write in its place from the refusal's
// text ("" when it came without a body). Everything else passes through,
// flushes included; a flush while a refusal is held waits for its answer,
// which sets the status.
type refusalWriter struct {
	http.ResponseWriter
	status int
	answer func(w http.ResponseWriter, msg string)
	held   bool // a refusal is held back, to be answered
	done   bool // the status is written: what follows passes through
}

func (w *refusalWriter) WriteHeader(status int) {
	if !w.done && status == w.status && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.held = true
		return
	}
	w.done = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *refusalWriter) Write(p []byte) (int, error) {
	if w.held {
		w.held, w.done = false, true
		w.answer(w.ResponseWriter, string(p))
		return len(p), nil
	}
	w.done = true
	return w.ResponseWriter.Write(p)
}

// finish answers a refusal that came without a body.
func (w *refusalWriter) finish() {
	if w.held {
		w.held, w.done = false, true
		w.answer(w.ResponseWriter, "")
	}
}

func (w *refusalWriter) Flush() {
	if w.held {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// answerOtherSession answers the SDK's 403 for a request in another
// token's MCP session as one in a session that does not exist (the SDK's
// 404 "session not found"): whether another token's session exists is not
// revealed. Any other 403 is written as it was.
func answerOtherSession(w http.ResponseWriter, msg string) {
	if strings.TrimSpace(msg) == sessionMismatch {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusForbidden)
	io.WriteString(w, msg)
}

// sessionMismatch is the text of the SDK's refusal of another user's
// session.
const sessionMismatch = "session user mismatch"
