package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// issuer is the OAuth authorization server of -oauth: what the server
// needs of one to verify access tokens (OpenID discovery and a JWKS with
// one RS256 key) served on loopback by this program, and the tokens it
// signs for the clients, as a real issuer's JWT access tokens look.
type issuer struct {
	url string
	kid string
	sig jose.Signer
}

// startIssuer serves an issuer on 127.0.0.1 until the program ends.
func startIssuer() (*issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	iss := &issuer{url: "http://" + ln.Addr().String(), kid: "bench-key"}
	iss.sig, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", iss.kid))
	if err != nil {
		return nil, err
	}
	jwks := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: iss.kid, Algorithm: "RS256", Use: "sig"}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                iss.url,
			"jwks_uri":                              iss.url + "/jwks",
			"authorization_endpoint":                iss.url + "/authorize",
			"token_endpoint":                        iss.url + "/token",
			"response_types_supported":              []string{"code"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(jwks)
	})
	go http.Serve(ln, mux)
	return iss, nil
}

// token signs an access token of user sub for audience, valid for an hour,
// carrying both of scrollback's scopes.
func (iss *issuer) token(sub, audience string) (string, error) {
	now := time.Now()
	raw, err := jwt.Signed(iss.sig).Claims(map[string]any{
		"iss": iss.url, "sub": sub, "aud": audience,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"scope": "scrollback:read scrollback:run", "preferred_username": sub,
		"client_id": "mcp-bench",
	}).Serialize()
	if err != nil {
		return "", fmt.Errorf("signing a token: %w", err)
	}
	return raw, nil
}
