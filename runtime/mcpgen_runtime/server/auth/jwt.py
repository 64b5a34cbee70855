"""`JwtVerifier`: JWT access tokens (RFC 9068) checked against the authorization server's keys,
with joserfc (the `mcpgen[auth]` extra).

A token is accepted only when its signature verifies with a key of the issuer's JWKS under an
allowed algorithm (never `none`, never HMAC with a public key), `iss` is the issuer, `aud`
names this resource (AUTH-20/23), and `exp` / `nbf` / `iat` hold with `leeway` seconds of clock
skew. The JWKS (`jwks_uri`, else the one the issuer's metadata names) is fetched on first use,
kept for `jwks_max_age` seconds, and fetched again when a token names a key id it does not
have (a key rotation), at most once every `refetch_interval` seconds. Every fetch is bounded
in time and size. A refused token is logged with the reason at debug level, never the token.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from typing import Any

try:
    from joserfc import jws, jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("JWT verification needs the auth extra: pip install 'mcpgen[auth]'") from exc

import httpx

from ... import _json
from ...protocol.oauth.discovery import as_metadata_urls
from .oauth import CachedVerifier, TokenPrincipal, scopes_of

__all__ = ["DEFAULT_ALGORITHMS", "JwtVerifier"]

_LOG = logging.getLogger("mcpgen.server.jwt")
DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256", "ES384", "EdDSA")
MAX_DOCUMENT = 512 * 1024


class JwtVerifier(CachedVerifier):
    def __init__(self, issuer: str, *, audience: str, jwks_uri: str | None = None,
                 algorithms: Collection[str] = DEFAULT_ALGORITHMS, leeway: int = 30,
                 jwks_max_age: float = 3600.0, refetch_interval: float = 30.0, timeout: float = 5.0,
                 required_claims: Collection[str] = ("exp",)) -> None:
        super().__init__()
        bad = {alg for alg in algorithms if alg.lower() == "none" or alg.upper().startswith("HS")}
        if bad:
            raise ValueError(f"algorithms {sorted(bad)} are not allowed for access tokens verified with public keys")
        self.issuer = issuer
        self.audience = audience
        self.jwks_uri = jwks_uri
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self._max_age = jwks_max_age
        self._refetch_interval = refetch_interval
        self._timeout = timeout
        self._required = tuple(required_claims)
        self._keys: KeySet | None = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def verify(self, token: str) -> TokenPrincipal | None:
        try:
            header = jws.extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError):
            return self._refuse("not a compact JWS")
        if header.get("alg") not in self.algorithms:
            return self._refuse(f"algorithm {str(header.get('alg'))[:20]!r} is not allowed")
        keys = await self._key_set(header.get("kid"))
        if keys is None:
            return self._refuse("no signing keys")
        try:
            decoded = jwt.decode(token, keys, algorithms=list(self.algorithms))
            options: dict[str, Any] = {"iss": {"essential": True, "value": self.issuer},
                                       "aud": {"essential": True, "value": self.audience}}
            for claim in self._required:
                options.setdefault(claim, {"essential": True})
            jwt.JWTClaimsRegistry(leeway=self.leeway, **options).validate(decoded.claims)
        except (JoseError, ValueError) as exc:
            return self._refuse(f"{type(exc).__name__}: {str(exc)[:120]}")
        claims = decoded.claims
        subject = claims.get("sub") or claims.get("client_id")
        if not isinstance(subject, str) or not subject:
            return self._refuse("no subject")
        exp = claims.get("exp")
        client_id = claims.get("client_id") or claims.get("azp")
        return TokenPrincipal(subject, self.issuer, scopes_of(claims), client_id if isinstance(client_id, str) else None,
                              float(exp) if isinstance(exp, int | float) else None, claims)

    @staticmethod
    def _refuse(why: str) -> TokenPrincipal | None:
        _LOG.debug("access token refused: %s", why)
        return None

    async def _key_set(self, kid: Any) -> KeySet | None:
        now = time.monotonic()
        keys = self._keys
        stale = keys is None or now - self._fetched_at > self._max_age
        unknown = keys is not None and isinstance(kid, str) and all(key.kid != kid for key in keys.keys)
        if stale or (unknown and now - self._fetched_at > self._refetch_interval):
            async with self._lock:
                if self._keys is keys:  # nobody else fetched meanwhile
                    fetched = await self._fetch_keys()
                    if fetched is not None:
                        self._keys, self._fetched_at = fetched, time.monotonic()
        return self._keys

    async def _fetch_keys(self) -> KeySet | None:
        try:
            async with httpx.AsyncClient(timeout=self._timeout, follow_redirects=False) as client:
                uri = self.jwks_uri or await self._discover_jwks_uri(client)
                if uri is None:
                    return None
                document = await _get_json(client, uri)
            if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
                raise ValueError("not a JWK set")
            public = {"keys": [key for key in document["keys"] if isinstance(key, dict) and "d" not in key]}
            return KeySet.import_key_set(public)  # type: ignore[arg-type]
        except (httpx.HTTPError, ValueError, JoseError) as exc:
            _LOG.warning("cannot load the signing keys of %s: %s", self.issuer, str(exc)[:200])
            return None

    async def _discover_jwks_uri(self, client: httpx.AsyncClient) -> str | None:
        """`jwks_uri` from the issuer's metadata (RFC 8414, then OpenID discovery)."""
        for url in as_metadata_urls(self.issuer):
            try:
                document = await _get_json(client, url)
            except (httpx.HTTPError, ValueError):
                continue
            if isinstance(document, dict) and document.get("issuer") == self.issuer:
                uri = document.get("jwks_uri")
                if isinstance(uri, str):
                    self.jwks_uri = uri
                    return uri
        _LOG.warning("authorization server %s publishes no jwks_uri", self.issuer)
        return None


async def _get_json(client: httpx.AsyncClient, url: str) -> Any:
    async with client.stream("GET", url, headers={"Accept": "application/json"}) as response:
        if response.status_code != 200:
            raise ValueError(f"{url} answered HTTP {response.status_code}")
        body = b""
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_DOCUMENT:
                raise ValueError(f"{url} is larger than {MAX_DOCUMENT} bytes")
    return _json.loads(body)
