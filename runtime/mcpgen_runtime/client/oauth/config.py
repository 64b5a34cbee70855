"""`OAuth`: how a client logs in to a protected server — the one object `Client(url, auth=...)`
and `AsyncClient(url, auth=...)` take. It holds settings only; each client binds it to its
URL in a login (`_async/login.py`), which does it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from .identity import EnterpriseIdP, TokenSource
from .redirect import LoopbackRedirect, RedirectHandler
from .store import TokenStore, default_token_store

__all__ = ["DPoPMode", "Grant", "OAuth"]

Grant = Literal["auto", "authorization_code", "client_credentials", "jwt_bearer", "enterprise"]
DPoPMode = Literal["auto", "required", "off"]
_GRANTS = ("auto", "authorization_code", "client_credentials", "jwt_bearer", "enterprise")


@dataclass(frozen=True)
class OAuth:
    """Log in to a server that answers `401` with an OAuth challenge (MCP authorization).

    Client identity, in the spec's order (AUTH-05): `client_id` (+ `client_secret` or
    `private_key`) when registered beforehand with the authorization server `issuer`;
    `client_metadata_url` (a Client ID Metadata Document URL) when the server supports them;
    otherwise dynamic registration. `grant`: `"authorization_code"` (a person logs in through
    `redirect`), `"client_credentials"` (machine to machine, with a secret or a private key),
    or `"auto"`: client credentials when the server offers no authorization-code grant and the
    client has a secret or key.

    Without a person: `assertion` (workload identity, SEP-1933) is the workload's JWT, or a
    function returning it (`identity.workload_token(file=...)`), sent as an RFC 7523 JWT-bearer
    grant (`grant="jwt_bearer"`, implied); `enterprise` (enterprise-managed authorization, SEP-990)
    exchanges the person's identity-provider ID token for an identity assertion (ID-JAG) and
    that for an access token (`grant="enterprise"`, implied), with `client_id`/`client_secret`
    registered at the MCP server's authorization server.

    `dpop`: "auto" binds tokens to a key of this login (DPoP, RFC 9449) when the authorization
    server says it supports ES256 proofs; "required" always asks for bound tokens; "off" never.

    `scopes` replaces the server's scope choice (AUTH-07); `offline_access` asks for a refresh
    token where the server offers one (AUTH-14). `store` keeps tokens between runs (default:
    the keyring when usable, else a 0600 file in the user's config directory); `redirect`
    defaults to a loopback listener and the browser (`open_browser=False` prints the URL
    only). Every login request is bounded by `timeout` seconds and `max_response_bytes`;
    `max_authorizations` bounds the logins for one request (step-up, AUTH-08).
    """

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    private_key: str | None = field(default=None, repr=False)  # PEM, for private_key_jwt
    signing_alg: str = "ES256"
    issuer: str | None = None  # the authorization server pre-registered credentials belong to
    client_metadata_url: str | None = None
    client_name: str = "mcpgen"
    grant: Grant = "auto"
    scopes: Sequence[str] | None = None
    offline_access: bool = True
    redirect: RedirectHandler | None = None
    open_browser: bool = True
    store: TokenStore | None = None
    timeout: float = 30.0
    max_response_bytes: int = 1024 * 1024
    max_authorizations: int = 3
    assertion: TokenSource | None = field(default=None, repr=False)
    enterprise: EnterpriseIdP | None = None
    dpop: DPoPMode = "auto"

    def __post_init__(self) -> None:
        if self.client_secret is not None and self.client_id is None:
            raise ValueError("client_secret needs client_id")
        if self.private_key is not None and self.client_id is None:
            raise ValueError("private_key needs client_id")
        if self.grant not in _GRANTS:
            raise ValueError(f"grant must be one of {', '.join(_GRANTS)}, not {self.grant!r}")
        if self.dpop not in ("auto", "required", "off"):
            raise ValueError(f"dpop must be auto, required or off, not {self.dpop!r}")
        if self.assertion is not None and self.enterprise is not None:
            raise ValueError("assertion (workload identity) and enterprise are two kinds of login: pass one")
        if self.grant == "jwt_bearer" and self.assertion is None:
            raise ValueError('grant="jwt_bearer" needs assertion= (the workload token, or what reads it)')
        if self.grant == "enterprise" and self.enterprise is None:
            raise ValueError('grant="enterprise" needs enterprise=EnterpriseIdP(...)')
        if self.enterprise is not None and self.client_id is None:
            raise ValueError(
                "enterprise login needs client_id (registered at the MCP server's authorization server)"
            )
        if self.max_authorizations < 1 or self.timeout <= 0 or self.max_response_bytes < 1024:
            raise ValueError(
                "max_authorizations >= 1, timeout > 0 and max_response_bytes >= 1024 are required"
            )
        if self.client_metadata_url is not None:
            parts = urlsplit(self.client_metadata_url)
            if parts.scheme != "https" or not parts.hostname or parts.path in ("", "/"):  # AUTH-18
                raise ValueError("client_metadata_url must be an https URL with a path")

    @property
    def chosen_grant(self) -> Grant:
        """The grant `auto` stands for when an assertion or an identity provider is given."""
        if self.grant != "auto":
            return self.grant
        if self.assertion is not None:
            return "jwt_bearer"
        return "enterprise" if self.enterprise is not None else "auto"

    def token_store(self) -> TokenStore:
        return self.store if self.store is not None else default_token_store()

    def redirect_handler(self) -> RedirectHandler:
        return (
            self.redirect if self.redirect is not None else LoopbackRedirect(open_browser=self.open_browser)
        )

    def store_key(self, resource: str) -> str:
        """Tokens are kept per resource and client (the configured id, or `-` for dynamic ones)."""
        return f"tokens {resource} {self.client_id or self.client_metadata_url or '-'}"
