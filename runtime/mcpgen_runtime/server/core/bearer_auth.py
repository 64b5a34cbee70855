"""Pluggable bearer-token authentication for Streamable HTTP (HTTP-05, BASE-24, RFC 6750).

    def verify(token: str) -> str | None:          # or `async def`
        return TOKENS.get(token)                     # the principal, or None when invalid

    ServerConfig(auth=BearerAuth(verify))

The principal a verifier returns is what `ctx.principal` holds; `principal_id(principal)`
(default `str`) must be a stable identifier, because it binds `requestState` (MRTR-08),
keys the rate limiter (SEC-03) and tells private caches apart (CACHE-13). A missing or
invalid token is answered `401` with `WWW-Authenticate: Bearer …` before the body is parsed.
stdio does not use this (BASE-25): credentials there come from the environment.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["VERIFIED_TOKEN", "BearerAuth", "Unauthorized", "authenticate", "principal_id"]

TokenVerifier = Callable[[str], Any]  # token -> principal | None, or an awaitable of it
# An ASGI scope key: (token, verdict), set by a layer in front of the app that verified the
# request's credentials already (auth/oauth.py), so each request is verified once. The verdict is
# what `verify` made of the token, or an `Unauthorized` when that layer refuses it (a DPoP proof
# that fails, a DPoP-bound token presented as a bearer token); the layer checked the scheme.
VERIFIED_TOKEN = "mcpgen.verified_token"


class Unauthorized(Exception):
    """Answer 401 with `challenge` as the WWW-Authenticate value."""

    def __init__(self, challenge: str) -> None:
        super().__init__(challenge)
        self.challenge = challenge


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class BearerAuth:
    verify: TokenVerifier
    required: bool = True  # False: requests without Authorization are served anonymously
    realm: str = "mcp"
    resource_metadata: str | None = None  # RFC 9728 protected-resource metadata URL, advertised on 401
    principal_id: Callable[[Any], str] = str

    def challenge(self, error: str | None = None, description: str | None = None) -> str:
        parts = [f"realm={_quoted(self.realm)}"]
        if self.resource_metadata is not None:
            parts.append(f"resource_metadata={_quoted(self.resource_metadata)}")
        if error is not None:
            parts.append(f"error={_quoted(error)}")
        if description is not None:
            parts.append(f"error_description={_quoted(description)}")
        return "Bearer " + ", ".join(parts)


async def authenticate(
    auth: BearerAuth, headers: Mapping[str, str], verified: tuple[str, Any] | None = None
) -> Any:
    """The principal for a request (None: anonymous and allowed); `Unauthorized` otherwise.
    `verified`: (token, verdict) of a verification made earlier for this request (`VERIFIED_TOKEN`),
    used when the token is the same: the layer that made it took its scheme."""
    header = headers.get("authorization")
    if header is None:
        if auth.required:
            raise Unauthorized(auth.challenge())
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    vouched = verified is not None and bool(token) and verified[0] == token
    if not vouched and (scheme.lower() != "bearer" or not token or " " in token):
        raise Unauthorized(auth.challenge("invalid_request", "expected 'Authorization: Bearer <token>'"))
    if vouched:
        assert verified is not None
        principal = verified[1]
        if isinstance(principal, Unauthorized):
            raise principal
    else:
        principal = auth.verify(token)
        if inspect.isawaitable(principal):
            principal = await principal
    if principal is None:
        raise Unauthorized(auth.challenge("invalid_token", "the access token is invalid or expired"))
    return principal


def principal_id(auth: BearerAuth | None, principal: Any) -> str | None:
    """The stable identifier of a caller's principal (`BearerAuth.principal_id`, else `str`);
    None when anonymous."""
    if principal is None:
        return None
    return auth.principal_id(principal) if auth is not None else str(principal)
