"""DPoP on the server (RFC 9449 §7, SEP-1932): a request made with `Authorization: DPoP <token>`
is served only when its one `DPoP` header is a proof (protocol/oauth/dpop.py `check_proof`) for
this request's method and public URL and for this token, signed by the key the token is bound to
(`cnf.jkt`), and never seen before.

- The public URL (`htu`) is the configured `resource`'s scheme and host with the request's whole
  path (`root_path` included): what a client addressed through a proxy that keeps the path, or that
  strips a prefix the app knows as its `root_path`. The Host header is never trusted for it.
- Replay: each accepted proof's `jti` is claimed in the server's store (`Store.claim`, SET NX) under
  `dpop:<jkt>:<sha256(jti)>` until its `iat` leaves the accepted window, so every replica on one
  shared store refuses a proof another replica served. A proof is at most `MAX_PROOF_CHARS` long,
  its `jti` at most 256 characters, and a claim lives at most `2 * max_age + 1` seconds.
- Server-supplied nonces (RFC 9449 §9, `NonceIssuer`), when asked for: `<unix seconds>.<HMAC>` under
  a key every replica derives from the same `MCPGEN_STATE_SECRET` (else one random per process),
  current for the proof window; nothing is stored. A proof without a current one is refused
  `use_dpop_nonce`, and every answer to a DPoP request carries a fresh one in `DPoP-Nonce`.
- Refusals are `DPoPRefusal(error, description)`: `invalid_dpop_proof` for the proof, `invalid_token`
  for a token that is not DPoP-bound, `use_dpop_nonce`; the caller answers them 401 with a `DPoP`
  challenge (`dpop_challenge`: `algs` = the algorithms `check_proof` verifies).

joserfc is the `mcpgen-runtime[auth]` extra: oauth.py imports this module only when DPoP is on.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Iterable, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from ...protocol.oauth.challenge import bearer_challenge
from ...protocol.oauth.dpop import ALGORITHMS, DPoPProofError, check_proof
from ..store import Store

__all__ = [
    "MAX_PROOF_AGE",
    "SIGNING_ALGORITHMS",
    "DPoPRefusal",
    "NonceIssuer",
    "check_bound_request",
    "dpop_challenge",
    "public_url",
    "replay_key",
]

SIGNING_ALGORITHMS: Final = ALGORITHMS  # advertised as `algs` and `dpop_signing_alg_values_supported`
MAX_PROOF_AGE: Final = 3600.0  # the largest `dpop_max_age` a ProtectedResource takes
MAX_NONCE_CHARS: Final = 64  # a proof's nonce longer than any this server issues is not one of them


class DPoPRefusal(Exception):
    """A request refused under RFC 9449 §7.1: `error` is `invalid_dpop_proof` or `invalid_token`."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def dpop_challenge(
    *,
    resource_metadata: str | None,
    scopes: Iterable[str] = (),
    error: str | None = None,
    description: str | None = None,
) -> str:
    """A `WWW-Authenticate: DPoP …` challenge (RFC 9449 §7.1, with RFC 9728's `resource_metadata`):
    `algs`, then the parameters it shares with Bearer (RFC 6750 §3), spelled by their one writer."""
    shared = bearer_challenge(
        resource_metadata=resource_metadata, scopes=scopes, error=error, description=description
    ).removeprefix("Bearer")
    return f'DPoP algs="{" ".join(SIGNING_ALGORITHMS)}"' + (f",{shared}" if shared else "")


class NonceIssuer:
    """Server-supplied DPoP nonces (module doc): `issue()` one, `current(nonce)` checks one. `keys`:
    the server's state secrets (the first signs, any verifies: rotation); None, a random key."""

    def __init__(self, keys: Sequence[bytes] | None, lifetime: float) -> None:
        roots = list(keys) if keys else [secrets.token_bytes(32)]
        self._keys = [hmac.new(root, b"mcpgen DPoP nonce", hashlib.sha256).digest() for root in roots]
        self._lifetime = lifetime

    def issue(self, now: float | None = None) -> str:
        stamp = str(int(time.time() if now is None else now))
        return f"{stamp}.{self._mac(self._keys[0], stamp)}"

    def current(self, nonce: str | None, now: float | None = None) -> bool:
        if nonce is None or len(nonce) > MAX_NONCE_CHARS:
            return False
        stamp, _, mac = nonce.partition(".")
        if (
            not (stamp.isascii() and stamp.isdigit())
            or not 0 <= (time.time() if now is None else now) - int(stamp) <= self._lifetime
        ):
            return False
        return any(hmac.compare_digest(mac, self._mac(key, stamp)) for key in self._keys)

    @staticmethod
    def _mac(key: bytes, stamp: str) -> str:
        digest = hmac.new(key, stamp.encode("ascii"), hashlib.sha256).digest()[:18]
        return base64.urlsafe_b64encode(digest).decode("ascii")


def public_url(resource: str, scope: Any) -> str:
    """The URL a client addressed (module doc): `resource`'s scheme and host, the request's path."""
    parts = urlsplit(resource)
    path: str = scope.get("path") or "/"
    root: str = scope.get("root_path") or ""
    if root and not (path == root or path.startswith(root.rstrip("/") + "/")):
        path = root.rstrip("/") + path  # a server that passes the path under its root_path
    return f"{parts.scheme}://{parts.netloc}{path}"


def replay_key(jkt: str, jti: str) -> str:
    """The store key that marks a proof used: fixed length whatever the peer's `jti`."""
    return f"dpop:{jkt[:64]}:{hashlib.sha256(jti.encode('utf-8', 'surrogatepass')).hexdigest()}"


def _proof_header(scope: Any) -> str | None:
    """The request's `DPoP` header; several are joined with "," (which `check_proof` refuses)."""
    found = [value for name, value in scope["headers"] if name.lower() == b"dpop"]
    return b",".join(found).decode("latin-1") if found else None


async def check_bound_request(
    scope: Any,
    token: str,
    jkt: str | None,
    *,
    resource: str,
    store: Store,
    max_age: float,
    nonces: NonceIssuer | None = None,
) -> None:
    """Accept the request `scope` made with `Authorization: DPoP <token>`, whose token verified and
    is bound to `jkt` (None: not bound), or raise `DPoPRefusal` (module doc); with `nonces`, its
    proof must carry a current nonce. The store's `StoreUnavailable` goes to the caller."""
    if jkt is None:
        raise DPoPRefusal("invalid_token", "the access token is not DPoP-bound (no cnf.jkt)")
    if not token.isascii():
        raise DPoPRefusal("invalid_token", "the access token is not ASCII")
    try:
        proof = check_proof(
            _proof_header(scope),
            method=scope["method"],
            url=public_url(resource, scope),
            access_token=token,
            max_age=max_age,
        )
    except DPoPProofError as exc:
        raise DPoPRefusal("invalid_dpop_proof", str(exc)) from None
    if proof.jkt != jkt:
        raise DPoPRefusal(
            "invalid_dpop_proof", "the DPoP proof is not signed by the key the token is bound to"
        )
    if nonces is not None and not nonces.current(proof.nonce):  # its jti stays unspent: the retry is new
        raise DPoPRefusal("use_dpop_nonce", "the DPoP proof needs the nonce this answer's DPoP-Nonce gives")
    # Remembered while the proof would still pass the `iat` check, never longer than the window twice.
    ttl = min(max(proof.iat + max_age - time.time(), 0.0), 2 * max_age) + 1.0
    if not await store.claim(replay_key(jkt, proof.jti), ttl):
        raise DPoPRefusal("invalid_dpop_proof", "the DPoP proof was used before (its jti is known)")
