"""`JwtVerifier`: JWT access tokens (RFC 9068) checked against the authorization server's keys,
with joserfc (the `mcpgen-runtime[auth]` extra).

A token is accepted only when its header says it is an access token (`typ` `at+jwt`, RFC 9068
§2.1; `token_types` widens this for an issuer that does not type its tokens), its signature
verifies with a key of the issuer's JWKS under an allowed algorithm (never `none`, never HMAC
with a public key), `iss` is the issuer, `aud` names this resource (AUTH-20/23), and `exp` /
`nbf` / `iat` hold with `leeway` seconds of clock skew. A token whose `sub` is missing or equals
its `client_id` is the client's own (client credentials, RFC 9068 §2.2): its principal is a
client's, which never equals a user's (oauth.py `TokenPrincipal`).

The JWKS (`jwks_uri`, else the one the issuer's metadata names) is fetched on first use, kept
for `jwks_max_age` seconds, and fetched again when a token names a key id it does not have (a
key rotation). Whatever tokens arrive, fetches are bounded:

- at most one fetch runs at a time, and at most one starts in any `refetch_interval` seconds
  (default 30), counted from the last *attempt*, failed or not; one fetch is one GET of the
  JWKS (plus, until a `jwks_uri` is known, up to three metadata documents);
- a fetch has one deadline, `timeout` seconds (default 5), for everything it does, and reads at
  most `MAX_DOCUMENT` bytes per document;
- a token whose key is in the current key set never waits for a fetch (keys past their age are
  refreshed in the background, and kept while the refresh fails); a token naming an unknown key
  waits for the fetch in flight, else is refused at once (until the interval has passed, an
  unknown key id stays unknown).

A refused token is logged with the reason at debug level, never the token.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection
from typing import Any, Literal

try:
    from joserfc import jws, jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("JWT verification needs the auth extra: pip install 'mcpgen-runtime[auth]'") from exc

import httpx

from ...protocol.oauth.discovery import as_metadata_urls
from .fetch import fetch_json
from .verifier import CachedVerifier, TokenPrincipal, issuer_url, scopes_of

__all__ = ["ACCESS_TOKEN_TYPES", "DEFAULT_ALGORITHMS", "JwtVerifier"]

_LOG = logging.getLogger("mcpgen.server.jwt")
DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256", "ES384", "EdDSA")
# `typ` values of an access token (RFC 9068 §2.1), compared without case and without "application/".
# None in `token_types` accepts a token without `typ`.
ACCESS_TOKEN_TYPES: tuple[str | None, ...] = ("at+jwt",)
MAX_DOCUMENT = 512 * 1024


def _media_type(typ: Any) -> str | None:
    if not isinstance(typ, str):
        return None
    lowered: str = typ.strip().lower()
    return lowered.removeprefix("application/")


class JwtVerifier(CachedVerifier):
    def __init__(
        self,
        issuer: str,
        *,
        audience: str,
        jwks_uri: str | None = None,
        algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        leeway: int = 30,
        jwks_max_age: float = 3600.0,
        refetch_interval: float = 30.0,
        timeout: float = 5.0,
        required_claims: Collection[str] = ("exp",),
        token_types: Collection[str | None] = ACCESS_TOKEN_TYPES,
    ) -> None:
        super().__init__()
        bad = {alg for alg in algorithms if alg.lower() == "none" or alg.upper().startswith("HS")}
        if bad:
            raise ValueError(
                f"algorithms {sorted(bad)} are not allowed for access tokens verified with public keys"
            )
        issuer_url(issuer)
        if timeout <= 0 or refetch_interval <= 0:
            raise ValueError("timeout and refetch_interval must be positive")
        self.issuer = issuer
        self.audience = audience
        self.jwks_uri = jwks_uri
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.token_types = frozenset(None if t is None else _media_type(t) for t in token_types)
        self._max_age = jwks_max_age
        self._refetch_interval = refetch_interval
        self._timeout = timeout
        self._required = tuple(required_claims)
        self._keys: KeySet | None = None
        self._fetched_at = 0.0  # monotonic time the current keys arrived
        self._attempted_at: float | None = None  # monotonic start of the last fetch, failed or not
        self._fetching: asyncio.Task[None] | None = None
        self.fetches = 0  # fetches started (for monitoring and tests)

    async def verify(self, token: str) -> TokenPrincipal | None:
        try:
            header = jws.extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError):
            return self._refuse("not a compact JWS")
        if header.get("alg") not in self.algorithms:
            return self._refuse(f"algorithm {str(header.get('alg'))[:20]!r} is not allowed")
        typ = header.get("typ")
        if _media_type(typ) not in self.token_types:
            return self._refuse(f"typ {str(typ)[:20]!r} is not an access token's")
        keys = await self._key_set(header.get("kid"))
        if keys is None:
            return self._refuse("no signing keys")
        try:
            decoded = jwt.decode(token, keys, algorithms=list(self.algorithms))
            options: dict[str, Any] = {
                "iss": {"essential": True, "value": self.issuer},
                "aud": {"essential": True, "value": self.audience},
            }
            for claim in self._required:
                options.setdefault(claim, {"essential": True})
            jwt.JWTClaimsRegistry(leeway=self.leeway, **options).validate(decoded.claims)
        except (JoseError, ValueError) as exc:
            return self._refuse(f"{type(exc).__name__}: {str(exc)[:120]}")
        claims = decoded.claims
        client_id = claims.get("client_id") or claims.get("azp")
        client_id = client_id if isinstance(client_id, str) and client_id else None
        subject = claims.get("sub")
        if subject is None and client_id is not None:
            subject = client_id
        if not isinstance(subject, str) or not subject:
            return self._refuse("no subject")
        # No resource owner (RFC 9068 §2.2): the client's own token, never a user's principal.
        kind: Literal["user", "client"] = "client" if subject == client_id else "user"
        exp = claims.get("exp")
        return TokenPrincipal(
            subject,
            self.issuer,
            scopes_of(claims),
            client_id,
            float(exp) if isinstance(exp, int | float) else None,
            claims,
            kind=kind,
        )

    @staticmethod
    def _refuse(why: str) -> TokenPrincipal | None:
        _LOG.debug("access token refused: %s", why)
        return None

    async def _key_set(self, kid: Any) -> KeySet | None:
        """The keys to check a token with (module doc: when it fetches, and who waits)."""
        keys = self._keys
        now = time.monotonic()
        if keys is not None and not (isinstance(kid, str) and all(key.kid != kid for key in keys.keys)):
            if now - self._fetched_at > self._max_age:
                self._start_fetch(now)  # in the background: this token is checked with the keys we have
            return keys
        # No keys yet, or a key id we do not know (a rotation?): wait for a fetch, when one runs or may start.
        fetching = self._start_fetch(now)
        if fetching is not None:
            await asyncio.shield(fetching)  # a caller that leaves does not cancel it; it has its deadline
        return self._keys

    def _start_fetch(self, now: float) -> asyncio.Task[None] | None:
        """The fetch in flight, else a new one when the interval allows it, else None."""
        loop = asyncio.get_running_loop()
        if self._fetching is not None and self._fetching.get_loop() is loop:
            return self._fetching
        if self._attempted_at is not None and now - self._attempted_at < self._refetch_interval:
            return None
        self._attempted_at = now
        self.fetches += 1
        self._fetching = loop.create_task(self._refresh())
        return self._fetching

    async def _refresh(self) -> None:
        try:
            async with asyncio.timeout(self._timeout):
                fetched = await self._fetch_keys()
            if fetched is not None:
                self._keys, self._fetched_at = fetched, time.monotonic()
        except TimeoutError:
            _LOG.warning(
                "cannot load the signing keys of %s: no complete answer within %gs",
                self.issuer,
                self._timeout,
            )
        except Exception:  # never an unretrieved task exception; the keys we have stay
            _LOG.exception("cannot load the signing keys of %s", self.issuer)
        finally:
            if self._fetching is asyncio.current_task():
                self._fetching = None

    async def _fetch_keys(self) -> KeySet | None:
        try:
            async with httpx.AsyncClient(timeout=self._timeout, follow_redirects=False) as client:
                uri = self.jwks_uri or await self._discover_jwks_uri(client)
                if uri is None:
                    return None
                document = await fetch_json(client, "GET", uri, max_bytes=MAX_DOCUMENT)
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
                document = await fetch_json(client, "GET", url, max_bytes=MAX_DOCUMENT)
            except (httpx.HTTPError, ValueError):
                continue
            if isinstance(document, dict) and document.get("issuer") == self.issuer:
                uri = document.get("jwks_uri")
                if isinstance(uri, str):
                    self.jwks_uri = uri
                    return uri
        _LOG.warning("authorization server %s publishes no jwks_uri", self.issuer)
        return None
