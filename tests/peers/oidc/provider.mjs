// A real authorization server for mcpgen's authorization tests: the certified `oidc-provider`
// (npm), configured as an MCP authorization server. Usage: node provider.mjs PORT
//
// Dynamic client registration (open), authorization code with PKCE (required), resource
// indicators (RFC 8707: JWT access tokens whose `aud` is the requested MCP server), refresh
// tokens for clients that register the grant, client credentials, the `iss` response parameter,
// and the development login/consent pages (any user name, any password), which the tests fill in
// without a browser. DPoP (RFC 9449): a token request with a DPoP proof gets a DPoP-bound token
// (`cnf.jkt`). Environment: ACCESS_TOKEN_TTL (seconds, default 300), RESOURCE_SCOPES (space-separated
// scopes the MCP servers may be granted; default "mcp:tools"), DPOP_NONCE=1 (the token endpoint asks
// for a server-supplied DPoP nonce: RFC 9449 §8).
import crypto from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.argv[2]);
const issuer = `http://127.0.0.1:${port}`;
const ttl = Number(process.env.ACCESS_TOKEN_TTL || 300);
const resourceScopes = process.env.RESOURCE_SCOPES || 'mcp:tools';

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'machine', client_secret: 'machine-secret-0123456789',
    grant_types: ['client_credentials'], redirect_uris: [], response_types: [],
  }, {
    // a client whose id is a user's name: its tokens must never pass for user alice's
    client_id: 'alice', client_secret: 'alice-secret-0123456789',
    grant_types: ['client_credentials'], redirect_uris: [], response_types: [],
  }],
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    dPoP: {
      enabled: true,
      nonceSecret: crypto.randomBytes(32),
      requireNonce: () => process.env.DPOP_NONCE === '1',
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: resourceScopes,
        audience: resourceIndicator,
        accessTokenTTL: ttl,
        // resources whose URL ends in /opaque get opaque tokens (checked by introspection)
        accessTokenFormat: resourceIndicator.endsWith('/opaque') ? 'opaque' : 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  scopes: ['openid', 'offline_access'],
  pkce: { required: () => true },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: ttl, ClientCredentials: ttl },
  cookies: { keys: ['mcpgen-test-cookie-key'] },
});
provider.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening ${issuer}\n`);
});
