// A real OAuth 2.1 authorization server for the tests of the protected MCP resource.
//
// panva's oidc-provider (a certified OpenID Provider) with the client credentials grant and
// resource indicators (RFC 8707): a token requested with `resource=<the MCP server's URL>` carries
// that URL as its audience. Listens on 127.0.0.1 on a free port and prints its issuer URL as the
// first line on stdout. Its signing key is made at start-up, so every run has its own.
//
// The clients (client_secret_basic; the secrets are test fixtures, not credentials):
//   jwt-client / jwt-secret          RS256 JWT access tokens, valid 300 s
//   second-client / second-secret    as jwt-client: another caller, for per-caller limits
//   short-lived / short-secret       RS256 JWT access tokens, valid 1 s
//   opaque-client / opaque-secret    opaque access tokens (checked through introspection)
//   resource-server / rs-secret      the MCP server's own client, for introspection
//   other-only / other-secret        JWT access tokens, allowed the scope mcp:other only
// Scopes: mcp:tools, mcp:other, and tools:book_flight (a tool's own scope).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

import Provider from 'oidc-provider';

const SCOPES = ['mcp:tools', 'mcp:other', 'tools:book_flight'];

function client(id, secret, scopes = SCOPES) {
  return {
    client_id: id,
    client_secret: secret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: scopes.join(' '),
  };
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };

const http = createServer();
http.listen(0, '127.0.0.1', () => {
  const { port } = http.address();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      client('jwt-client', 'jwt-secret'),
      client('second-client', 'second-secret'),
      client('short-lived', 'short-secret'),
      client('opaque-client', 'opaque-secret'),
      client('resource-server', 'rs-secret'),
      client('other-only', 'other-secret', ['mcp:other']),
    ],
    scopes: SCOPES,
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, cl, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, cl) => ({
          audience: resource,
          scope: SCOPES.join(' '),
          accessTokenTTL: cl.clientId === 'short-lived' ? 1 : 300,
          accessTokenFormat: cl.clientId === 'opaque-client' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  http.on('request', provider.callback());
  process.stdout.write(`${issuer}\n`);
});

process.on('SIGTERM', () => http.close(() => process.exit(0)));
