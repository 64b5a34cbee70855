"""MCP authorization (OAuth 2.1) without I/O, shared by the client's login and the server's checks.

- `challenge.py`: `WWW-Authenticate` read (RFC 7235/6750/9728 parameters) and written
- `discovery.py`: where metadata lives (RFC 9728, RFC 8414, OIDC discovery) and what a document
  must say before it is used (resource and issuer matches, PKCE, HTTPS)
- `grants.py`: the authorization-code and client-credentials requests and their answers (PKCE,
  `resource`, `iss`, client authentication) on Authlib's primitives; needs `mcpgen-runtime[auth]`

Rules: AUTH-01..20 in docs/RULES.md.
"""
