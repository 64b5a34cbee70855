"""What every token verifier shares: the principal it makes of a token, and its caches.

`TokenPrincipal` is who a verified access token speaks for; its `str` keys legacy sessions,
requestState, rate limits and private caches (core/bearer_auth.py `principal_id`), which compare
it whole and never parse it. `CachedVerifier` is a verifier's base: concurrent requests with the
same token share one verification, a principal is remembered until its token expires, and a
refusal, when the verifier asks for it, for a short while (`refused_cache_s`).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "CACHE_SIZE",
    "CachedVerifier",
    "TokenPrincipal",
    "Unverifiable",
    "issuer_url",
    "scopes_of",
]

CACHE_SIZE = 4096
PrincipalKind = Literal["user", "username", "client"]
_PREFIX: dict[PrincipalKind, str] = {"user": "", "username": "username:", "client": "client:"}


@dataclass(frozen=True)
class TokenPrincipal:
    """Who a verified access token speaks for. Never holds the token itself.

    `kind` says what `subject` is, and each kind is a namespace of its own in the `str`:

    - "user": a resource owner's stable `sub` — `ISSUER#SUB`;
    - "username": a resource owner known only by the `username` an introspection answer gives
      (RFC 7662 §2.2; no `sub`) — `username:ISSUER#NAME`;
    - "client": a client acting for itself (client credentials: no `sub`, or `sub` equal to its
      `client_id`) — `client:ISSUER#CLIENT_ID`.

    An issuer is an http(s) URL without a fragment (`issuer_url`), so a user's string starts with
    `http`, no two kinds share a string, and within a kind the first `#` ends the issuer.
    """

    subject: str
    issuer: str
    scopes: frozenset[str] = frozenset()
    client_id: str | None = None
    expires_at: float | None = None
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    kind: PrincipalKind = "user"

    def __str__(self) -> str:
        return f"{_PREFIX[self.kind]}{self.issuer}#{self.subject}"

    def missing(self, needed: Iterable[str]) -> list[str]:
        return [scope for scope in needed if scope not in self.scopes]

    @property
    def dpop_jkt(self) -> str | None:
        """The thumbprint of the DPoP key the token is bound to (`cnf.jkt`, RFC 9449 §6), None for
        an unbound token; "" (no key's thumbprint) for a `cnf.jkt` that is not a string."""
        cnf = self.claims.get("cnf")
        if not isinstance(cnf, Mapping) or "jkt" not in cnf:
            return None
        jkt = cnf["jkt"]
        return jkt if isinstance(jkt, str) else ""


def issuer_url(url: str, what: str = "the issuer") -> str:
    """`url` when it is an http(s) URL with a host and without a fragment or space (RFC 8414 §2),
    else ValueError: principals' strings depend on it (`TokenPrincipal`)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or "#" in url or " " in url:
        raise ValueError(f"{what} is an http(s) URL without a fragment (RFC 8414 §2)")
    return url


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """`scope` (RFC 9068/8693: space-separated) or `scp` (a list, some servers)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list):
        return frozenset(item for item in scp if isinstance(item, str))
    return frozenset()


class Unverifiable(Exception):
    """`verify` could not decide (the authorization server failed or was too slow): the request
    is refused, and the refusal is not remembered."""


class CachedVerifier:
    """A verifier's base (module doc). Subclasses implement `verify`: a principal, None (refused),
    or `Unverifiable`. Tokens are remembered by SHA-256 digest only: principals until their
    token's `exp`, at most `max_cache_s`; refusals for `refused_cache_s` (0: never); each cache
    keeps at most `cache_size` entries, the least recently used leaving first."""

    def __init__(
        self, *, cache_size: int = CACHE_SIZE, max_cache_s: float = 300.0, refused_cache_s: float = 0.0
    ) -> None:
        if cache_size < 1 or max_cache_s < 0 or refused_cache_s < 0:
            raise ValueError("cache_size must be positive, max_cache_s and refused_cache_s not negative")
        self._cache: OrderedDict[bytes, tuple[float, TokenPrincipal]] = OrderedDict()
        self._refused: OrderedDict[bytes, float] = OrderedDict()  # digest -> monotonic time it ends
        self._cache_size = cache_size
        self._max_cache_s = max_cache_s
        self._refused_cache_s = refused_cache_s
        self._verifying: dict[bytes, asyncio.Task[TokenPrincipal | None]] = {}

    async def __call__(self, token: str) -> TokenPrincipal | None:
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        hit = self._cache.get(digest)
        if hit is not None:
            if hit[0] > time.time():
                self._cache.move_to_end(digest)
                return hit[1]
            del self._cache[digest]
        refused_until = self._refused.get(digest)
        if refused_until is not None:
            if refused_until > time.monotonic():
                return None
            del self._refused[digest]
        loop = asyncio.get_running_loop()
        task = self._verifying.get(digest)
        if task is None or task.get_loop() is not loop:
            task = loop.create_task(self._verify_and_remember(token, digest))
            self._verifying[digest] = task
            task.add_done_callback(self._finished(digest))
        # One verification per token at a time; a caller that leaves does not cancel it (its
        # deadline is the verifier's own), so the verdict is remembered for the next.
        return await asyncio.shield(task)

    async def verify(self, token: str) -> TokenPrincipal | None:
        raise NotImplementedError

    async def _verify_and_remember(self, token: str, digest: bytes) -> TokenPrincipal | None:
        try:
            principal = await self.verify(token)
        except Unverifiable:
            return None
        if principal is None:
            if self._refused_cache_s > 0:
                self._refused[digest] = time.monotonic() + self._refused_cache_s
                _bound(self._refused, self._cache_size)
            return None
        until = time.time() + self._max_cache_s
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        self._cache[digest] = (until, principal)
        _bound(self._cache, self._cache_size)
        return principal

    def _finished(self, digest: bytes) -> Callable[[asyncio.Task[TokenPrincipal | None]], None]:
        def forget(task: asyncio.Task[TokenPrincipal | None]) -> None:
            if self._verifying.get(digest) is task:
                del self._verifying[digest]
            if not task.cancelled():
                task.exception()  # retrieved: every caller may have left

        return forget


def _bound(cache: OrderedDict[bytes, Any], size: int) -> None:
    while len(cache) > size:
        cache.popitem(last=False)
