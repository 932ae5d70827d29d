package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
)

// Path is where the streamable HTTP endpoint is served.
const Path = "/mcp"

// SessionHeader names the scrollback session an MCP client resumes over
// HTTP. It is read on the request that starts an MCP session (the one
// without an Mcp-Session-Id); the session must belong to the caller.
const SessionHeader = "Scrollback-Session"

// Request body and idle limits of the HTTP transport.
const (
	// MaxRequestBytes bounds one HTTP request body: the same 16 MiB the
	// SDK's stdio transport allows for one message. Larger requests get
	// 413 Request Entity Too Large.
	MaxRequestBytes = 16 << 20
	// DefaultIdleTimeout closes an MCP session that sent no request for
	// this long. Its scrollback session stays: a client resumes it with the
	// Scrollback-Session header.
	DefaultIdleTimeout = 8 * time.Hour
)

// Sentinel errors.
var (
	// ErrNeedToken is returned by Listen for an address that is not
	// loopback when no bearer token is configured.
	ErrNeedToken = errors.New("mcpserver: serving a non-loopback address requires a bearer token")

	// ErrNoTokens is returned by ReadTokenFile for a file that holds no
	// token.
	ErrNoTokens = errors.New("mcpserver: no token in the token file")
)

// HTTPOptions configures NewHTTPHandler.
type HTTPOptions struct {
	Options
	// Tokens are the bearer tokens accepted. When there is at least one,
	// every request must carry "Authorization: Bearer TOKEN" with one of
	// them, and each session belongs to the token that created it. When
	// there is none, every session belongs to scrollback.LocalOwner and the
	// server must only listen on loopback (see Listen).
	Tokens []string
	// IdleTimeout closes MCP sessions idle for this long; 0 means
	// DefaultIdleTimeout, a negative value never.
	IdleTimeout time.Duration
}

// TokenOwner returns the owner recorded for sessions made with token: a
// hash of it, never the token itself.
func TokenOwner(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "token:" + hex.EncodeToString(sum[:16])
}

// ReadTokenFile reads bearer tokens from a file: one per line, blank lines
// and lines starting with # ignored, surrounding spaces trimmed.
func ReadTokenFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: reading the token file: %w", err)
	}
	var tokens []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			return nil, fmt.Errorf("mcpserver: token file %s: a token may not contain spaces; put one token per line", path)
		}
		tokens = append(tokens, line)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%w %s: write one token per line", ErrNoTokens, path)
	}
	return tokens, nil
}

// Listen opens a TCP listener for the HTTP server. Unless tokens is true
// (a bearer token is configured) it refuses, with ErrNeedToken, any address
// that is not loopback, before binding it: an empty host, 0.0.0.0, [::],
// an interface's address, or a name that resolves to one. Port 0 picks a
// free port; the listener's Addr says which.
func Listen(ctx context.Context, addr string, tokens bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: bad address %q: want HOST:PORT, e.g. 127.0.0.1:7777", addr)
	}
	if !tokens {
		if err := checkLoopback(ctx, host); err != nil {
			return nil, err
		}
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

// NewHTTPHandler returns the streamable HTTP transport of scrollback's MCP
// server, serving Path (other paths get 404). Each MCP session gets its own
// scrollback session of eng, created on its first tool call, unless the
// request that starts it names one of the caller's sessions in the
// Scrollback-Session header; a session that does not exist or belongs to
// another token gets the same 404. With opts.Tokens set, a request without
// a valid bearer token gets 401 and touches nothing.
func NewHTTPHandler(eng *scrollback.Engine, opts HTTPOptions) http.Handler {
	return NewSessionHandler(eng, opts, func(b *Binding) *mcp.Server { return newServer(b, opts.Options) })
}

// NewSessionHandler is NewHTTPHandler for any MCP server whose tools act on
// a scrollback session (AddTools adds them to a server): the same path,
// bearer tokens, owners and Scrollback-Session header. newServer makes the
// server of each new MCP session, once, given the binding to its
// scrollback session: a new one of eng, made when the server first calls
// Binding.Session, or the one the header named.
func NewSessionHandler(eng *scrollback.Engine, opts HTTPOptions, newServer func(*Binding) *mcp.Server) http.Handler {
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	} else if idle < 0 {
		idle = 0
	}
	proto := mcp.NewServer(&mcp.Implementation{Name: "scrollback", Version: opts.Version}, nil)
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		// The SDK asks for a server on every request; only the request that
		// starts a session carries a binding, and its server is made once.
		hs, ok := r.Context().Value(httpSessionKey{}).(*httpSession)
		if !ok {
			return proto
		}
		hs.once.Do(func() { hs.srv = newServer(hs.b) })
		return hs.srv
	}, &mcp.StreamableHTTPOptions{
		Logger:                       opts.Logger,
		SessionTimeout:               idle,
		MaxRequestBodyBytes:          MaxRequestBytes,
		PropagateRequestCancellation: true,
	})

	mux := http.NewServeMux()
	mux.Handle(Path, &httpHandler{eng: eng, sdk: sdk})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "scrollback: not found: the MCP endpoint is "+Path, http.StatusNotFound)
	})
	if len(opts.Tokens) == 0 {
		return mux
	}
	verify := verifier(opts.Tokens)
	authed := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Refuse here, before the SDK's middleware, to add the challenge
		// RFC 6750 wants on a 401 (the SDK names none without OAuth
		// metadata). The SDK's middleware then puts the owner in the
		// context, which also keeps one token out of another's MCP session.
		token, ok := bearer(r)
		if !ok {
			unauthorized(w, "scrollback: this server requires \"Authorization: Bearer TOKEN\"")
			return
		}
		if _, err := verify(r.Context(), token, r); err != nil {
			unauthorized(w, "scrollback: the bearer token is not one this server accepts")
			return
		}
		authed.ServeHTTP(w, r)
	})
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="scrollback"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// bearer returns the request's bearer token.
func bearer(r *http.Request) (string, bool) {
	f := strings.Fields(r.Header.Get("Authorization"))
	if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
		return "", false
	}
	return f[1], true
}

// verifier checks a bearer token against the configured ones in constant
// time (comparing hashes, so the tokens' lengths do not leak either), and
// names its owner.
func verifier(tokens []string) auth.TokenVerifier {
	sums := make([][32]byte, len(tokens))
	for i, t := range tokens {
		sums[i] = sha256.Sum256([]byte(t))
	}
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		got := sha256.Sum256([]byte(token))
		ok := 0
		for _, s := range sums {
			ok |= subtle.ConstantTimeCompare(got[:], s[:])
		}
		if ok != 1 {
			return nil, fmt.Errorf("%w: scrollback: the bearer token is not one this server accepts", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: TokenOwner(token)}, nil
	}
}

type httpSessionKey struct{}

// httpSession is the binding of one new MCP session and its server, made
// once.
type httpSession struct {
	b    *Binding
	once sync.Once
	srv  *mcp.Server
}

// httpHandler binds each new MCP session to a scrollback session, then
// hands the request to the SDK's handler.
type httpHandler struct {
	eng *scrollback.Engine
	sdk *mcp.StreamableHTTPHandler
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		owner := scrollback.LocalOwner
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			owner = ti.UserID
		}
		b := NewBinding(h.eng, owner)
		if id := r.Header.Get(SessionHeader); id != "" {
			s, err := h.eng.Session(r.Context(), owner, id)
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
		r = r.WithContext(context.WithValue(r.Context(), httpSessionKey{}, &httpSession{b: b}))
	}
	h.sdk.ServeHTTP(w, r)
}
