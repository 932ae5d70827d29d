package proxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

// HTTPHandler serves the proxy over streamable HTTP at mcpserver.Path,
// with the scrollback server's rules: each MCP session gets its own
// scrollback session of the proxy's engine (created when a result is first
// retained), unless the request that starts it names one of the caller's
// sessions in the mcpserver.SessionHeader header; with opts.Tokens set,
// every request needs one of the bearer tokens, and a session belongs to
// the token that made it. Listen with mcpserver.Listen, which refuses
// non-loopback addresses without a token. Every MCP session shares the one
// upstream connection.
func (p *Proxy) HTTPHandler(opts mcpserver.HTTPOptions) http.Handler {
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = mcpserver.DefaultIdleTimeout
	} else if idle < 0 {
		idle = 0
	}
	proto := mcp.NewServer(&mcp.Implementation{Name: "scrollback-proxy", Version: p.opts.Version}, nil)
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		h, ok := r.Context().Value(bindingKey{}).(*httpBinding)
		if !ok {
			return proto
		}
		h.once.Do(func() { h.srv = p.newServer(h.b).srv })
		return h.srv
	}, &mcp.StreamableHTTPOptions{
		Logger:                       opts.Logger,
		SessionTimeout:               idle,
		MaxRequestBodyBytes:          mcpserver.MaxRequestBytes,
		PropagateRequestCancellation: true,
	})
	mux := http.NewServeMux()
	mux.Handle(mcpserver.Path, &httpHandler{eng: p.eng, sdk: sdk})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "scrollback proxy: not found: the MCP endpoint is "+mcpserver.Path, http.StatusNotFound)
	})
	if len(opts.Tokens) == 0 {
		return mux
	}
	verify := verifier(opts.Tokens)
	authed := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := strings.Fields(r.Header.Get("Authorization"))
		if len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
			unauthorized(w, "scrollback proxy: this server requires \"Authorization: Bearer TOKEN\"")
			return
		}
		if _, err := verify(r.Context(), f[1], r); err != nil {
			unauthorized(w, "scrollback proxy: the bearer token is not one this server accepts")
			return
		}
		authed.ServeHTTP(w, r)
	})
}

type bindingKey struct{}

// httpBinding is the binding of one MCP session and its server, made once.
type httpBinding struct {
	b    *binding
	once sync.Once
	srv  *mcp.Server
}

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
		b := &binding{eng: h.eng, owner: owner}
		if id := r.Header.Get(mcpserver.SessionHeader); id != "" {
			s, err := h.eng.Session(r.Context(), owner, id)
			if err != nil {
				status := http.StatusInternalServerError
				if errors.Is(err, scrollback.ErrNoSession) {
					status = http.StatusNotFound
				}
				http.Error(w, "scrollback proxy: "+mcpserver.SessionHeader+": "+err.Error(), status)
				return
			}
			b.sess = s
		}
		r = r.WithContext(context.WithValue(r.Context(), bindingKey{}, &httpBinding{b: b}))
	}
	h.sdk.ServeHTTP(w, r)
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="scrollback"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

// verifier checks a bearer token in constant time and names its owner
// with mcpserver.TokenOwner, so that the proxy and the scrollback server
// agree on who owns a session.
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
			return nil, fmt.Errorf("%w: scrollback proxy: the bearer token is not one this server accepts", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: mcpserver.TokenOwner(token)}, nil
	}
}
