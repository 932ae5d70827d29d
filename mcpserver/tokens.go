package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// A Token is one bearer token the HTTP server accepts, with the name that
// logs and metrics show instead of it.
type Token struct {
	// Name names the token's holder ("alice"). It is what logs and metrics
	// show; the secret never is.
	Name string
	// Secret is the bearer token itself.
	Secret string
}

// TokenOwner returns the owner recorded for sessions made with a bare
// token (one a token file gives without a name, or HTTPOptions.Tokens): a
// hash of it, never the token itself.
func TokenOwner(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "token:" + hex.EncodeToString(sum[:16])
}

// NamedOwner returns the owner recorded for sessions made with a token
// named name (`alice: TOKEN`): the principal is the name, so that a token
// replaced under the same name keeps its sessions.
func NamedOwner(name string) string { return "token-name:" + name }

// ownerOf is the owner of t's sessions: its name's when it was given one,
// else its hash's (a bare token's name is a short hash, which two tokens
// may share).
func ownerOf(t Token) string {
	if t.Name == "" || t.Name == unnamed(t.Secret) {
		return TokenOwner(t.Secret)
	}
	return NamedOwner(t.Name)
}

// unnamed is the name of a token given on a line of its own: a short hash,
// the same on every read of the file, never the token.
func unnamed(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "unnamed-" + hex.EncodeToString(sum[:4])
}

// ReadTokenFile reads the bearer tokens of a token file. Each line holds
// one token, either named (`alice: TOKEN`, the name before a colon and a
// space) or bare (`TOKEN`, named "unnamed-" and a short hash of it); blank
// lines and lines starting with # are ignored, surrounding spaces trimmed.
// A token may not contain spaces; names and tokens may not repeat.
func ReadTokenFile(path string) ([]Token, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: reading the token file: %w", err)
	}
	var tokens []Token
	names := map[string]int{}
	secrets := map[string]int{}
	n := 0
	for line := range strings.Lines(string(data)) {
		n++
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if name, ok := strings.CutSuffix(line, ":"); ok {
			return nil, fmt.Errorf("mcpserver: token file %s line %d: no token after %q; write \"%s: TOKEN\"", path, n, line, name)
		}
		t := Token{Secret: line}
		if name, secret, ok := strings.Cut(line, ":"); ok && strings.IndexAny(secret, " \t") == 0 {
			t = Token{Name: strings.TrimSpace(name), Secret: strings.TrimSpace(secret)}
			if t.Name == "" || strings.ContainsAny(t.Name, " \t") {
				return nil, fmt.Errorf("mcpserver: token file %s line %d: a name is one word before the colon, as in \"alice: TOKEN\"", path, n)
			}
			if t.Secret == "" {
				return nil, fmt.Errorf("mcpserver: token file %s line %d: no token after %q; write \"%s: TOKEN\"", path, n, t.Name+":", t.Name)
			}
		}
		if strings.ContainsAny(t.Secret, " \t") {
			return nil, fmt.Errorf("mcpserver: token file %s line %d: a token may not contain spaces; write one token a line, as \"alice: TOKEN\" or \"TOKEN\"", path, n)
		}
		if t.Name == "" {
			t.Name = unnamed(t.Secret)
		}
		if prev, dup := names[t.Name]; dup {
			return nil, fmt.Errorf("mcpserver: token file %s: the name %q is on lines %d and %d; give each token its own name", path, t.Name, prev, n)
		}
		if prev, dup := secrets[t.Secret]; dup {
			return nil, fmt.Errorf("mcpserver: token file %s: lines %d and %d hold the same token; give each holder their own", path, prev, n)
		}
		names[t.Name], secrets[t.Secret] = n, n
		tokens = append(tokens, t)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%w %s: write one token a line, as \"alice: TOKEN\" or \"TOKEN\"", ErrNoTokens, path)
	}
	return tokens, nil
}

// A TokenSet is the set of bearer tokens an HTTP server accepts, which can
// be replaced while it serves (on SIGHUP, say): a request is checked
// against the set current when it arrives, so a token removed from the set
// is refused from its next request on. It is safe for concurrent use.
type TokenSet struct {
	cur atomic.Pointer[[]tokenEntry]
}

type tokenEntry struct {
	sum   [32]byte
	name  string
	owner string
}

// NewTokenSet returns a set holding tokens.
func NewTokenSet(tokens []Token) *TokenSet {
	s := &TokenSet{}
	s.Replace(tokens)
	return s
}

// Replace makes tokens the accepted set, at once.
func (s *TokenSet) Replace(tokens []Token) {
	entries := make([]tokenEntry, len(tokens))
	for i, t := range tokens {
		entries[i] = tokenEntry{sum: sha256.Sum256([]byte(t.Secret)), name: t.Name, owner: ownerOf(t)}
	}
	s.cur.Store(&entries)
}

// Len returns how many tokens the set holds.
func (s *TokenSet) Len() int { return len(*s.cur.Load()) }

// lookup checks token against the set in constant time (comparing hashes,
// so the tokens' lengths do not leak either) and returns its entry.
func (s *TokenSet) lookup(token string) (e tokenEntry, ok bool) {
	got := sha256.Sum256([]byte(token))
	for _, c := range *s.cur.Load() {
		if subtle.ConstantTimeCompare(got[:], c.sum[:]) == 1 {
			e, ok = c, true
		}
	}
	return e, ok
}

// tokenNameKey is the key of a token's name in auth.TokenInfo.Extra.
const tokenNameKey = "scrollback/token_name"

// verifier names the owner and the name of a token of the set.
func (s *TokenSet) verifier() auth.TokenVerifier {
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		e, ok := s.lookup(token)
		if !ok {
			return nil, fmt.Errorf("%w: scrollback: the bearer token is not one this server accepts", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{UserID: e.owner, Extra: map[string]any{tokenNameKey: e.name}}, nil
	}
}

// TokenName returns the name of the token that made a request, from its
// token info, or "" without one (no token configured).
func TokenName(ti *auth.TokenInfo) string {
	if ti == nil {
		return ""
	}
	name, _ := ti.Extra[tokenNameKey].(string)
	return name
}
