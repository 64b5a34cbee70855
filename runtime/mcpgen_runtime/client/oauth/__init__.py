"""Logging in to protected MCP servers (OAuth 2.1, the MCP authorization spec) — `mcpgen-runtime[auth]`.

    from mcpgen_runtime.client.oauth import OAuth
    with Client("https://mcp.example.com/mcp", auth=OAuth()) as client:
        client.list_all_tools()          # a 401 starts the login; tokens are kept for next time

- `config.py`: `OAuth`, the settings a client takes as `auth=`
- `identity.py`: logins without a person at a browser: `workload_token` / `github_actions_token`
  (workload identity, SEP-1933) and `EnterpriseIdP` (enterprise-managed authorization, SEP-990)
- `_async/login.py`: `AsyncOAuthLogin` / `OAuthLogin`, the login bound to one server URL
- `_async/fetch.py`: the bounded HTTP exchanges of a login
- `redirect.py`: `RedirectHandler`, `LoopbackRedirect` (127.0.0.1 listener + browser)
- `store.py`: `TokenStore` and the file, keyring and memory stores

The wire pieces without I/O are in `mcpgen_runtime.protocol.oauth`.
"""

from .config import OAuth
from .identity import EnterpriseIdP, github_actions_token, workload_token
from .redirect import LoopbackRedirect, RedirectHandler
from .store import FileTokenStore, KeyringTokenStore, MemoryTokenStore, TokenStore, default_token_store

__all__ = [
    "EnterpriseIdP",
    "FileTokenStore",
    "KeyringTokenStore",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "RedirectHandler",
    "TokenStore",
    "default_token_store",
    "github_actions_token",
    "workload_token",
]
