package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/scrollback-dev/scrollback"
)

// A Principal is who an HTTP request acts for: the owner of every
// scrollback session it makes or resumes, and the name logs and metrics
// give it. Without tokens every request is LocalPrincipal's; with static
// tokens, each token's name is a principal (NamedOwner), a bare token's
// hash for a token given without a name (TokenOwner). Other ways of
// telling who calls (OAuth, say) add their principals here.
type Principal struct {
	// Owner owns the principal's sessions in the store: a session of
	// another owner reads exactly like one that does not exist.
	Owner string
	// Name is what logs and metrics show: a token's name, never the token.
	Name string
}

// LocalPrincipal is the principal of every request to a server without
// tokens: the local owner, the same as the CLI's and the stdio server's.
var LocalPrincipal = Principal{Owner: scrollback.LocalOwner, Name: "local"}

// RequestPrincipal returns the principal of a request the handler has
// let in (its context carries the token's info), or LocalPrincipal when
// no token is configured.
func RequestPrincipal(ctx context.Context) Principal {
	return principalOf(auth.TokenInfoFromContext(ctx))
}

func principalOf(ti *auth.TokenInfo) Principal {
	if ti == nil {
		return LocalPrincipal
	}
	return Principal{Owner: ti.UserID, Name: TokenName(ti)}
}
