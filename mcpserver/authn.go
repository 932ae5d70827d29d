package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Who may call: static bearer tokens (a TokenSet), OAuth access tokens
// (OAuth), or both. A token is looked up in the static set first (a
// constant-time hash compare), then verified as a JWT of the issuer.

// metadataPrefix is RFC 9728's well-known path of Protected Resource
// Metadata.
const metadataPrefix = "/.well-known/oauth-protected-resource"

// oauthKey marks the token info of an OAuth user (whose scopes count), as
// opposed to a static token's (which may do everything).
const oauthKey = "scrollback/oauth"

// authenticator refuses a request without a good bearer token, with the
// challenge RFC 6750 and RFC 9728 want, and hands the others to the SDK's
// middleware, which puts the token's info in the request's context (and
// so keeps one owner out of another's MCP session).
type authenticator struct {
	tokens *TokenSet
	oauth  *OAuth
	sdk    http.Handler
}

type verifiedKey struct{}

// verified is a token this request's authenticator already checked, so
// that the SDK's middleware does not verify a JWT a second time.
type verified struct {
	token string
	info  *auth.TokenInfo
}

func newAuthenticator(tokens *TokenSet, oauth *OAuth, next http.Handler) *authenticator {
	a := &authenticator{tokens: tokens, oauth: oauth}
	a.sdk = auth.RequireBearerToken(func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		if v, ok := ctx.Value(verifiedKey{}).(*verified); ok && v.token == token {
			return v.info, nil
		}
		return a.verify(ctx, token)
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return a
}

// verify returns the info of a static token of the set, else of an
// OAuth access token; the set is read on every request, so a token taken
// out of it is refused from its next request on.
func (a *authenticator) verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if a.tokens != nil {
		if info, err := a.tokens.verifier()(ctx, token, nil); err == nil {
			return info, nil
		}
	}
	if a.oauth != nil {
		return a.oauth.Verify(ctx, token) // its info carries oauthKey
	}
	return nil, fmt.Errorf("%w: scrollback: the bearer token is not one this server accepts", auth.ErrInvalidToken)
}

func (a *authenticator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := bearer(r)
	if !ok {
		a.challenge(w, r, "", "scrollback: this server requires \"Authorization: Bearer TOKEN\"")
		return
	}
	info, err := a.verify(r.Context(), token)
	if err != nil {
		msg := "scrollback: the bearer token is not one this server accepts"
		if a.oauth != nil && errors.Is(err, auth.ErrInvalidToken) {
			msg = "scrollback: the bearer token is refused: " + strings.TrimPrefix(err.Error(), auth.ErrInvalidToken.Error()+": ")
		}
		a.challenge(w, r, "invalid_token", msg)
		return
	}
	ctx := context.WithValue(r.Context(), verifiedKey{}, &verified{token: token, info: info})
	ctx = context.WithValue(ctx, authKey{}, a)
	a.sdk.ServeHTTP(w, r.WithContext(ctx))
}

// challenge answers 401 with a WWW-Authenticate header: with OAuth, the
// metadata's URL first (how a client finds the issuer), then the error
// when a token was given.
func (a *authenticator) challenge(w http.ResponseWriter, r *http.Request, code, msg string) {
	if a.oauth == nil {
		unauthorized(w, code, msg)
		return
	}
	params := []string{fmt.Sprintf("resource_metadata=%q", a.metadataURL(r))}
	if code != "" {
		params = append(params, fmt.Sprintf("error=%q", code), fmt.Sprintf("error_description=%q", oneLine(msg)))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	http.Error(w, msg, http.StatusUnauthorized)
}

// unauthorized answers 401 to a request without a static token the server
// accepts; code is RFC 6750's error, "invalid_token" when a token was
// given, "" when none was.
func unauthorized(w http.ResponseWriter, code, msg string) {
	challenge := `Bearer realm="scrollback"`
	if code != "" {
		challenge += fmt.Sprintf(", error=%q", code)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	http.Error(w, msg, http.StatusUnauthorized)
}

type authKey struct{}

// checkScope refuses, with 403 insufficient_scope, a request of an OAuth
// user whose token lacks the scope that the message (its method, and its
// tool for tools/call) needs. It reports whether the request may go on.
// Static tokens, and servers without OAuth scopes, pass without reading
// the message.
func checkScope(w http.ResponseWriter, r *http.Request, body []byte) bool {
	a, _ := r.Context().Value(authKey{}).(*authenticator)
	if a == nil || a.oauth == nil || !a.oauth.scoped() {
		return true
	}
	info := auth.TokenInfoFromContext(r.Context())
	if info == nil || info.Extra[oauthKey] != true {
		return true
	}
	method, tool := callTarget(body)
	need := a.oauth.ScopeFor(method, tool)
	if need == "" || slices.Contains(info.Scopes, need) {
		return true
	}
	what := method
	if tool != "" {
		what = tool
	}
	msg := fmt.Sprintf("scrollback: %s needs the scope %s, which this token does not carry; ask the issuer for a token with scope %s", what, need, need)
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Bearer error=\"insufficient_scope\", scope=%q, resource_metadata=%q, error_description=%q",
		need, a.metadataURL(r), oneLine(msg)))
	http.Error(w, msg, http.StatusForbidden)
	return false
}

// metadataURL is where the server's Protected Resource Metadata is: under
// the audience's origin when the audience is an http(s) URL, else under
// the host the request was sent to.
func (a *authenticator) metadataURL(r *http.Request) string {
	if u, err := url.Parse(a.oauth.Audience()); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		return u.Scheme + "://" + u.Host + metadataPrefix + strings.TrimSuffix(u.Path, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + metadataPrefix + Path
}

// metadataPaths are the paths the metadata is served at: the bare
// well-known path, that path followed by /mcp, and followed by the
// audience's own path when it differs (a server behind a reverse proxy
// that mounts it elsewhere).
func metadataPaths(audience string) []string {
	paths := []string{metadataPrefix, metadataPrefix + Path}
	if u, err := url.Parse(audience); err == nil && u.Path != "" && u.Path != "/" && u.Path != Path {
		paths = append(paths, metadataPrefix+strings.TrimSuffix(u.Path, "/"))
	}
	return paths
}

// oneLine keeps a message fit for a quoted header parameter.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < ' ' {
			return '\''
		}
		return r
	}, s)
}
