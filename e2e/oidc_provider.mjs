// A real OpenID provider for the OAuth end-to-end tests: panva's
// oidc-provider (OpenID Certified), on loopback. It issues JWT access
// tokens for the resource a token request names (RFC 8707), RESOURCE (the
// scrollback servers' /mcp URL) when it names none, with the client
// credentials grant; each client stands for one user (its id is the
// token's sub).
//
//   node oidc_provider.mjs PORT RESOURCE KEYS_FILE
//
// KEYS_FILE holds the private JWKS to sign with ({"keys":[...]}); starting
// the provider again with another file is how the tests rotate keys. It
// prints "issuer URL" on stdout once it listens.
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const [port, resource, keysFile] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const jwks = JSON.parse(readFileSync(keysFile, 'utf8'));

// Each user is a confidential client; alice may run and read, bob may
// only read, carol has no scrollback scope.
const users = {
  alice: 'scrollback:read scrollback:run',
  bob: 'scrollback:read',
  carol: '',
};
const clients = Object.entries(users).map(([id, scope]) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  scope: scope || 'openid',
}));

const provider = new Provider(issuer, {
  clients,
  scopes: ['openid', 'scrollback:read', 'scrollback:run'],
  jwks,
  features: {
    clientCredentials: { enabled: true },
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      // Any resource asked for gets tokens for itself: the tests ask for
      // another server's to check that scrollback refuses them.
      getResourceServerInfo: (ctx, indicator) => {
        return {
          scope: 'scrollback:read scrollback:run',
          audience: indicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  // A user's name for logs: the client id again, as preferred_username.
  extraTokenClaims: (ctx, token) => ({ preferred_username: token.clientId }),
});
provider.proxy = false;

provider.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(`issuer ${issuer}\n`);
});
