"""`IntrospectionVerifier`: opaque access tokens checked at the authorization server's
introspection endpoint (RFC 7662).

A token is accepted only when the answer says `active: true`, its `exp` (if any) is in the future,
its `iss` (if any) is the configured `issuer`, its `aud` (if any) names this resource (AUTH-23),
and it names whom the token speaks for (`TokenPrincipal`, verifier.py): `sub` a user
(`ISSUER#SUB`; a `sub` equal to the `client_id` is the client's own, as in jwt.py), else
`username` (`username:ISSUER#NAME`), else `client_id` alone the client's own
(`client:ISSUER#CLIENT_ID`). An active token naming none of them is refused. ISSUER is `issuer`,
else the answer's `iss` when it is an http(s) URL without a fragment, else the endpoint's URL.

Whatever tokens arrive, introspection is bounded:

- one check per token at a time: concurrent requests with the same token share it (verifier.py);
- a token the endpoint refused (inactive, or a check above failed) is refused again without
  asking for `refused_cache_s` seconds (10), at most `cache_size` (4096) refusals remembered;
  an accepted one is remembered until it expires, at most `max_cache_s` (60);
- at most `max_concurrent` (8) introspection requests are in flight; one more waits for a slot;
- one deadline, `timeout` seconds (5), covers the wait for a slot and the whole exchange; an
  answer is read up to `MAX_ANSWER` bytes. Past either the token is refused (401) and the
  refusal is not remembered (the endpoint failed, not the token), as on a transport error or a
  status other than 200;
- requests go through one pooled HTTP client per event loop (`aclose()` closes it).

A refused token is logged with the reason at debug level, a failing endpoint at warning level;
never the token.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .fetch import fetch_json
from .verifier import (
    CACHE_SIZE,
    CachedVerifier,
    PrincipalKind,
    TokenPrincipal,
    Unverifiable,
    issuer_url,
    scopes_of,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_ANSWER", "IntrospectionVerifier"]

_LOG = logging.getLogger("mcpgen.server.introspection")
MAX_ANSWER = 64 * 1024


class _Pool(NamedTuple):
    """The HTTP client and request slots of one event loop."""

    loop: asyncio.AbstractEventLoop
    client: httpx.AsyncClient
    slots: asyncio.Semaphore


class IntrospectionVerifier(CachedVerifier):
    """RFC 7662: ask the authorization server whether a token is active, and for whom (module doc)."""

    def __init__(
        self,
        endpoint: str,
        *,
        audience: str,
        client_id: str,
        client_secret: str,
        issuer: str | None = None,
        timeout: float = 5.0,
        max_concurrent: int = 8,
        max_cache_s: float = 60.0,
        refused_cache_s: float = 10.0,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        super().__init__(cache_size=cache_size, max_cache_s=max_cache_s, refused_cache_s=refused_cache_s)
        if timeout <= 0 or max_concurrent < 1:
            raise ValueError("timeout and max_concurrent must be positive")
        self.endpoint = issuer_url(endpoint, "the introspection endpoint")
        self.audience = audience
        self.issuer = None if issuer is None else issuer_url(issuer)
        self.max_concurrent = max_concurrent
        self._credentials = (client_id, client_secret)
        self._timeout = timeout
        self._pool: _Pool | None = None
        self.introspections = 0  # requests sent (for monitoring and tests)

    async def verify(self, token: str) -> TokenPrincipal | None:
        import httpx  # a runtime dependency; only introspecting servers need it here

        pool = self._pool_of_this_loop()
        try:
            async with asyncio.timeout(self._timeout):
                async with pool.slots:
                    self.introspections += 1
                    answer = await fetch_json(
                        pool.client,
                        "POST",
                        self.endpoint,
                        max_bytes=MAX_ANSWER,
                        data={"token": token, "token_type_hint": "access_token"},
                        auth=self._credentials,
                    )
        except TimeoutError:
            _LOG.warning(
                "token introspection at %s: no complete answer within %gs", self.endpoint, self._timeout
            )
            raise Unverifiable from None
        except (httpx.HTTPError, ValueError) as exc:
            _LOG.warning(
                "token introspection at %s failed: %s", self.endpoint, str(exc)[:200] or type(exc).__name__
            )
            raise Unverifiable from None
        return self.principal_of(answer)

    def principal_of(self, answer: Any) -> TokenPrincipal | None:
        """The principal an introspection answer names, or None (module doc)."""
        if not isinstance(answer, dict) or answer.get("active") is not True:
            return _refuse("not active")
        exp = answer.get("exp")
        if isinstance(exp, int | float) and exp < time.time():
            return _refuse("expired")
        iss = answer.get("iss")
        if self.issuer is not None and iss is not None and iss != self.issuer:
            return _refuse("another issuer")
        aud = answer.get("aud")
        if aud is not None and self.audience not in (aud if isinstance(aud, list) else [aud]):
            return _refuse("another audience")
        try:
            sub, username, client_id = [_name(answer, claim) for claim in ("sub", "username", "client_id")]
        except ValueError as exc:
            return _refuse(str(exc))
        kind: PrincipalKind
        if sub is not None:
            kind, subject = ("client" if sub == client_id else "user"), sub
        elif username is not None:
            kind, subject = "username", username
        elif client_id is not None:
            kind, subject = "client", client_id
        else:
            return _refuse("no sub, username or client_id")
        expires = float(exp) if isinstance(exp, int | float) else None
        return TokenPrincipal(
            subject, self._issuer_of(iss), scopes_of(answer), client_id, expires, answer, kind=kind
        )

    async def aclose(self) -> None:
        """Close the pooled client (of the running event loop)."""
        pool, self._pool = self._pool, None
        if pool is not None and pool.loop is asyncio.get_running_loop():
            await pool.client.aclose()

    def _issuer_of(self, iss: Any) -> str:
        if self.issuer is not None:
            return self.issuer
        if isinstance(iss, str):
            try:
                return issuer_url(iss)
            except ValueError:
                pass
        return self.endpoint

    def _pool_of_this_loop(self) -> _Pool:
        import httpx

        loop = asyncio.get_running_loop()
        pool = self._pool
        if pool is None or pool.loop is not loop:
            size = self.max_concurrent
            client = httpx.AsyncClient(
                timeout=self._timeout,
                follow_redirects=False,
                limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
            )
            pool = self._pool = _Pool(loop, client, asyncio.Semaphore(size))
        return pool


def _name(answer: Mapping[str, Any], claim: str) -> str | None:
    """`answer[claim]` when a non-empty string, None when absent or null; else ValueError."""
    value = answer.get(claim)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{claim} is not a non-empty string")
    return value


def _refuse(why: str) -> TokenPrincipal | None:
    _LOG.debug("access token refused: %s", why)
    return None
