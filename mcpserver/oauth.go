package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The OAuth 2.1 resource server of the MCP authorization spec: the server
// accepts JWT access tokens that an authorization server (the issuer)
// signed for it, publishes Protected Resource Metadata (RFC 9728) so that
// clients find that issuer, and answers a request without a good token
// with 401 and a WWW-Authenticate header naming the metadata.

// Scopes of the OAuth resource server, when OAuthOptions asks for them.
const (
	// ScopeRead is the conventional scope that lets a token read retained
	// copies: read_tool_output, grep_tool_output, query_tool_output,
	// resources/read and prompts/get.
	ScopeRead = "scrollback:read"
	// ScopeRun is the conventional scope that lets a token run commands,
	// code and every other tool (read_file, and upstream tools behind the
	// proxy).
	ScopeRun = "scrollback:run"
)

// DefaultNameClaim is the claim that names an OAuth user in logs and
// metrics unless OAuthOptions.NameClaim says otherwise; a token without
// it is named by its subject.
const DefaultNameClaim = "preferred_username"

// OAuthOptions configures NewOAuth.
type OAuthOptions struct {
	// Issuer is the authorization server's issuer identifier, an https
	// URL (http only on loopback). Its keys are found by OpenID Connect
	// discovery (/.well-known/openid-configuration), else by RFC 8414
	// (/.well-known/oauth-authorization-server); they are cached and
	// fetched again when a token names a key the cache lacks, so a key
	// rotation at the issuer is picked up without a restart.
	Issuer string
	// Audience is this server's resource identifier (RFC 8707): a token
	// is accepted only when its aud claim holds it. It is what Protected
	// Resource Metadata publishes as "resource"; conventionally the
	// server's own /mcp URL.
	Audience string
	// ReadScope, when not empty, is the scope a token needs to read
	// retained copies (ScopeRead, say); RunScope the scope it needs to
	// call any other tool (ScopeRun). A token lacking the scope a request
	// needs gets 403 insufficient_scope. Requests that read or call
	// nothing (initialize, tools/list, ping) need neither.
	ReadScope, RunScope string
	// NameClaim names the claim that names a user in logs and metrics;
	// "" means DefaultNameClaim. A token without it is named by its sub.
	NameClaim string
	// Client fetches the issuer's metadata and keys; nil means
	// http.DefaultClient.
	Client *http.Client
	// Leeway is the clock skew allowed on exp, nbf and iat; 0 means
	// DefaultOAuthLeeway.
	Leeway time.Duration
}

// DefaultOAuthLeeway is the clock skew allowed between this server and
// the issuer unless OAuthOptions.Leeway says otherwise.
const DefaultOAuthLeeway = 30 * time.Second

// OAuth verifies the access tokens of one issuer for one audience. It is
// safe for concurrent use.
type OAuth struct {
	opts     OAuthOptions
	verifier *oidc.IDTokenVerifier
	algs     []string
	verified verifiedTokens
}

// ErrOAuthConfig is returned by NewOAuth for options that cannot work.
var ErrOAuthConfig = errors.New("mcpserver: OAuth")

// NewOAuth discovers the issuer's metadata and keys and returns the
// verifier of tokens for opts.Audience. It fails when the issuer cannot
// be reached or names another issuer than the one asked for.
func NewOAuth(ctx context.Context, opts OAuthOptions) (*OAuth, error) {
	if err := CheckIssuer(opts.Issuer); err != nil {
		return nil, err
	}
	if opts.Audience == "" {
		return nil, fmt.Errorf("%w: no audience: give the URI tokens must name in aud, e.g. https://scrollback.example.com/mcp", ErrOAuthConfig)
	}
	if opts.NameClaim == "" {
		opts.NameClaim = DefaultNameClaim
	}
	if opts.Leeway == 0 {
		opts.Leeway = DefaultOAuthLeeway
	}
	client := opts.Client
	if client == nil {
		client = http.DefaultClient
	}
	ctx = oidc.ClientContext(ctx, client)
	provider, err := oidc.NewProvider(ctx, opts.Issuer)
	if err != nil {
		// Not an OpenID provider: an OAuth authorization server publishes
		// the same under RFC 8414's well-known path.
		meta, merr := oauthex.GetAuthServerMeta(ctx, authServerMetaURL(opts.Issuer), opts.Issuer, client)
		if merr != nil || meta == nil || meta.JWKSURI == "" {
			if merr == nil {
				merr = errors.New("it names no jwks_uri")
			}
			return nil, fmt.Errorf("%w: discovering the keys of issuer %s: OpenID discovery: %v; RFC 8414 metadata: %v", ErrOAuthConfig, opts.Issuer, err, merr)
		}
		provider = (&oidc.ProviderConfig{IssuerURL: opts.Issuer, JWKSURL: meta.JWKSURI}).NewProvider(ctx)
	}
	var claims struct {
		Algs []string `json:"id_token_signing_alg_values_supported"`
	}
	provider.Claims(&claims)
	o := &OAuth{opts: opts}
	// Access tokens are signed with whatever the issuer uses; accept the
	// asymmetric algorithms go-oidc knows, never "none" or HMAC (whose key
	// the issuer would have to share with us).
	o.algs = []string{oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA}
	o.verifier = provider.VerifierContext(ctx, &oidc.Config{
		ClientID:             opts.Audience,
		SupportedSigningAlgs: o.algs,
		Now:                  func() time.Time { return time.Now().Add(-opts.Leeway) },
	})
	return o, nil
}

// Why CheckIssuer refuses an issuer; its errors wrap one of them (and
// ErrOAuthConfig).
var (
	// ErrIssuerNotURL: the issuer is not an absolute http or https URL.
	ErrIssuerNotURL = errors.New("want the issuer's URL, e.g. https://accounts.example.com/realms/team")
	// ErrIssuerNotHTTPS: an issuer off this machine uses http.
	ErrIssuerNotHTTPS = errors.New("an issuer off this machine must use https")
)

// CheckIssuer refuses an issuer that is not an absolute https URL (http
// is allowed on loopback, for development), as NewOAuth does, without
// asking the issuer anything.
func CheckIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%w: issuer %q: %w", ErrOAuthConfig, issuer, ErrIssuerNotURL)
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		return fmt.Errorf("%w: issuer %q: %w", ErrOAuthConfig, issuer, ErrIssuerNotHTTPS)
	}
	return nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authServerMetaURL is RFC 8414's metadata URL of issuer: the well-known
// path inserted before the issuer's own path.
func authServerMetaURL(issuer string) string {
	u, _ := url.Parse(issuer)
	u.Path = "/.well-known/oauth-authorization-server" + strings.TrimSuffix(u.Path, "/")
	return u.String()
}

// Issuer returns the issuer whose tokens o accepts.
func (o *OAuth) Issuer() string { return o.opts.Issuer }

// Audience returns the resource identifier tokens must name.
func (o *OAuth) Audience() string { return o.opts.Audience }

// OAuthOwner returns the owner recorded for the sessions of an OAuth user:
// the issuer and subject together, so that two issuers' users never share
// sessions.
func OAuthOwner(issuer, subject string) string {
	return "oauth:" + issuer + "#" + subject
}

// Verify checks an access token: signature by one of the issuer's keys,
// issuer, audience, expiry and not-before. It returns the token's info
// (owner, scopes, expiry, and the user's name for logs), or an error that
// wraps auth.ErrInvalidToken and says what was wrong. A token verified
// before is taken from a cache until it expires (see verifiedTokens), and
// its info is then the same value: do not modify it.
func (o *OAuth) Verify(ctx context.Context, raw string) (*auth.TokenInfo, error) {
	now := time.Now()
	if info, ok := o.verified.get(raw, now); ok {
		return info, nil
	}
	kid, gen := tokenKeyID(raw), o.verified.generation()
	info, err := o.verify(ctx, raw)
	o.verified.put(raw, kid, gen, info, o.opts.Leeway)
	return info, err
}

// verify is Verify without the cache.
func (o *OAuth) verify(ctx context.Context, raw string) (*auth.TokenInfo, error) {
	tok, err := o.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, o.explain(raw, err))
	}
	var claims struct {
		Scope string     `json:"scope"`
		Scp   stringList `json:"scp"`
	}
	if err := tok.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: the token's claims do not decode: %v", auth.ErrInvalidToken, err)
	}
	if tok.Subject == "" {
		return nil, fmt.Errorf("%w: the token names no subject (sub); this server needs one to own sessions", auth.ErrInvalidToken)
	}
	var all map[string]any
	tok.Claims(&all)
	name, _ := all[o.opts.NameClaim].(string)
	if name == "" {
		name = tok.Subject
	}
	scopes := strings.Fields(claims.Scope)
	for _, s := range claims.Scp {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	return &auth.TokenInfo{
		UserID:     OAuthOwner(tok.Issuer, tok.Subject),
		Scopes:     scopes,
		Expiration: tok.Expiry,
		Extra:      map[string]any{tokenNameKey: name, oauthKey: true},
	}, nil
}

// verifiedTokens remembers the access tokens an OAuth verified, each until
// it expires, so that a client's every request does not pay for checking
// the same signature again (an RSA verification and three decodings of
// the claims: most of what OAuth adds to a call). go-oidc fetches the
// issuer's keys again when a signature does not verify with those it has,
// which may withdraw keys; so a token refused, or signed with a key no
// remembered token names, empties the cache, and the tokens of a withdrawn
// key are refused from their next request on, as without it. It is
// bounded (maxVerifiedTokens) and safe for concurrent use.
type verifiedTokens struct {
	mu      sync.Mutex
	entries map[string]verifiedToken // by the token as sent
	kids    map[string]int           // the entries' key ids, counted
	gen     uint64                   // how many times it was emptied
}

type verifiedToken struct {
	info  *auth.TokenInfo
	until time.Time // its expiry, plus the leeway
}

// maxVerifiedTokens bounds the cache (tokens are a kilobyte or so each);
// past it, it starts again empty.
const maxVerifiedTokens = 4096

// get returns the info of raw when it was verified and has not expired.
func (c *verifiedTokens) get(raw string, now time.Time) (*auth.TokenInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[raw]
	if !ok || !now.Before(e.until) {
		return nil, false
	}
	return e.info, true
}

// generation says how many times the cache was emptied, for put.
func (c *verifiedTokens) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put records the outcome of verifying raw, a token naming key kid, which
// began when the cache's generation was gen: info, nil when it was
// refused, is kept until its expiry plus leeway, unless the cache was
// emptied meanwhile (the verification may have used keys since withdrawn).
func (c *verifiedTokens) put(raw, kid string, gen uint64, info *auth.TokenInfo, leeway time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stale := gen != c.gen
	if info == nil || c.kids[kid] == 0 || len(c.entries) >= maxVerifiedTokens {
		c.entries, c.kids = nil, nil
		c.gen++
	}
	if info == nil || stale {
		return
	}
	if c.entries == nil {
		c.entries, c.kids = map[string]verifiedToken{}, map[string]int{}
	}
	if _, ok := c.entries[raw]; !ok {
		c.kids[kid]++
	}
	c.entries[raw] = verifiedToken{info: info, until: info.Expiration.Add(leeway)}
}

// tokenKeyID returns the key id (kid) in a JWT's header, "" when it has
// none or is no JWT.
func tokenKeyID(raw string) string {
	head, _, ok := strings.Cut(raw, ".")
	if !ok {
		return ""
	}
	data, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return ""
	}
	var h struct {
		Kid string `json:"kid"`
	}
	json.Unmarshal(data, &h)
	return h.Kid
}

// stringList decodes a claim that is a list of strings or one string
// of space-separated values (scp is either, depending on the issuer).
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*l = list
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = strings.Fields(s)
	return nil
}

// explain says in the caller's terms why go-oidc refused a token: it reads
// the claims without trusting them (the token is refused whatever they
// say), to tell an expired token from one for another audience.
func (o *OAuth) explain(raw string, err error) string {
	var expired *oidc.TokenExpiredError
	if errors.As(err, &expired) {
		return fmt.Sprintf("the token expired at %s", expired.Expiry.UTC().Format(time.RFC3339))
	}
	parsed, perr := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{
		jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512, jose.EdDSA,
		jose.HS256, jose.HS384, jose.HS512,
	})
	if perr != nil {
		return "the token is not a signed JWT this server can verify (want an access token in JWT form from " + o.opts.Issuer + ")"
	}
	var c jwt.Claims
	if parsed.UnsafeClaimsWithoutVerification(&c) == nil {
		now := time.Now()
		switch {
		case c.Issuer != o.opts.Issuer:
			return fmt.Sprintf("the token's issuer is %q, not %q", c.Issuer, o.opts.Issuer)
		case !c.Audience.Contains(o.opts.Audience):
			return fmt.Sprintf("the token's audience %q does not name this server (%q); ask the issuer for a token with resource=%s", []string(c.Audience), o.opts.Audience, o.opts.Audience)
		case c.NotBefore != nil && now.Before(c.NotBefore.Time()):
			return fmt.Sprintf("the token is not valid before %s", c.NotBefore.Time().UTC().Format(time.RFC3339))
		}
	}
	msg := err.Error()
	if strings.Contains(msg, "signature") || strings.Contains(msg, "key") {
		return "the token's signature does not verify with the issuer's keys"
	}
	return strings.TrimPrefix(msg, "oidc: ")
}

// Metadata returns the Protected Resource Metadata (RFC 9728) of the
// server: its resource identifier, the issuer, the scopes it knows.
func (o *OAuth) Metadata() *oauthex.ProtectedResourceMetadata {
	m := &oauthex.ProtectedResourceMetadata{
		Resource:               o.opts.Audience,
		AuthorizationServers:   []string{o.opts.Issuer},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "scrollback",
	}
	for _, s := range []string{o.opts.ReadScope, o.opts.RunScope} {
		if s != "" && !slices.Contains(m.ScopesSupported, s) {
			m.ScopesSupported = append(m.ScopesSupported, s)
		}
	}
	return m
}

// ScopeFor returns the scope a request needs, "" for none: the read scope
// to read copies (the reader tools, resources/read, resources/list,
// prompts/get), the run scope for every other tool.
func (o *OAuth) ScopeFor(method, tool string) string {
	switch method {
	case "tools/call":
		if IsReaderTool(tool) {
			return o.opts.ReadScope
		}
		return o.opts.RunScope
	case "resources/read", "resources/list", "prompts/get":
		// resources/list names the caller's copies and the commands
		// that made them.
		return o.opts.ReadScope
	}
	return ""
}

// scoped reports whether any request needs a scope.
func (o *OAuth) scoped() bool { return o.opts.ReadScope != "" || o.opts.RunScope != "" }

// IsReaderTool reports whether tool only reads retained copies of the
// caller's session.
func IsReaderTool(tool string) bool {
	switch tool {
	case "read_tool_output", "grep_tool_output", "query_tool_output":
		return true
	}
	return false
}

// ParseScopes reads the --oauth-scopes setting: a comma- or space-separated
// list whose items are ScopeRead or ScopeRun (that scope for its role) or
// read=SCOPE / run=SCOPE (an issuer's own scope name for the role, such as
// api://scrollback/Copies.Read). It returns the read and run scopes.
func ParseScopes(s string) (read, run string, err error) {
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		role, scope, named := strings.Cut(item, "=")
		if !named {
			switch item {
			case ScopeRead:
				read = item
			case ScopeRun:
				run = item
			default:
				return "", "", fmt.Errorf("%q is not a scope this server knows: give %s, %s, read=SCOPE or run=SCOPE", item, ScopeRead, ScopeRun)
			}
			continue
		}
		if scope == "" {
			return "", "", fmt.Errorf("%q names no scope after %q", item, role+"=")
		}
		switch role {
		case "read":
			read = scope
		case "run":
			run = scope
		default:
			return "", "", fmt.Errorf("%q: the role before = is read or run", item)
		}
	}
	return read, run, nil
}
