"""Integrity-protected `requestState` for multi round-trip requests (MRTR-05..10).

A state token is `v1.<payload>.<mac>`: the payload is URL-safe Base64 of canonical JSON, the
MAC is HMAC-SHA256 over `"mcpgen.requestState.v1." + payload` with the first configured key.
Verification accepts a MAC from any configured key, so secrets can be rotated: put the new
secret first and keep the old one until the longest state TTL has passed.

Inside the payload:

    exp   expiry, epoch milliseconds (MRTR-09)
    n     a random nonce (two rounds never share a token)
    p     digest of the caller's principal (MRTR-08)
    r     digest of the method and its salient params, e.g. tool name + arguments (MRTR-10)
    a     the input keys asked in the round that issued the state
    c     answers carried from earlier rounds
    s     the handler's own `ctx.state`
    u     1 when the state may be redeemed once only (MRTR-11; absent otherwise)

The payload is signed, not encrypted: the client can read it (it already knows the answers
it gave). Never put secrets in `ctx.state`. Integrity and TTL do not make a state single-use
(MRTR-11): a state sealed with `single_use=True` carries `u`, and the dispatcher records its
nonce in the server's store when it is redeemed (`store.claim`), so every replica sharing the
store refuses it the second time.

Secrets come from `ServerConfig.state_secrets`, else the environment variable
`MCPGEN_STATE_SECRET` (comma-separated for rotation, first one signs), else a random key per
process, with a warning: then a retry served by another worker, or after a restart, fails.
`configured_keys` checks them when the server is built (the `Dispatcher` calls it), so a secret
that cannot work stops the server at start with a message naming what to fix, instead of failing
every multi-round call later; the message never contains the secret.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import os
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

from ... import _json

__all__ = [
    "STATE_SECRET_ENV",
    "StateCodec",
    "StateError",
    "StateSecretError",
    "canonical",
    "configured_keys",
    "principal_digest",
    "request_digest",
]

_LOG = logging.getLogger("mcpgen.server")

STATE_SECRET_ENV = "MCPGEN_STATE_SECRET"
_VERSION = "v1"
_CONTEXT = b"mcpgen.requestState.v1."
MIN_SECRET_BYTES = 16
# Params that are MRTR plumbing or per-request metadata, not part of "the same request".
_NOT_SALIENT = frozenset({"_meta", "inputResponses", "requestState"})


class StateError(ValueError):
    """A `requestState` that must be rejected; the message says why (safe to show the client)."""


class StateSecretError(ValueError):
    """The configured requestState secrets cannot be used; the message says how to fix it."""


_SECRET_HINT = (
    "set a random value of {n} bytes or more, e.g. the output of "
    '`python -c "import secrets; print(secrets.token_urlsafe(32))"`'
)


def configured_keys(configured: Sequence[str | bytes] | None) -> list[bytes] | None:
    """The signing keys from `ServerConfig.state_secrets`, else `MCPGEN_STATE_SECRET` (comma
    separated); None when neither is set. Raises StateSecretError when a secret is too short, or
    the variable is set but holds no secret."""
    hint = _SECRET_HINT.format(n=MIN_SECRET_BYTES)
    if configured:
        where, keys = "ServerConfig.state_secrets", list(configured)
    else:
        env = os.environ.get(STATE_SECRET_ENV, "")
        if not env:
            return None
        where, keys = STATE_SECRET_ENV, [part.strip() for part in env.split(",") if part.strip()]
        if not keys:
            raise StateSecretError(f"{STATE_SECRET_ENV} is set but holds no secret; {hint}, or unset it")
    out = []
    for position, key in enumerate(keys, start=1):
        raw = key.encode("utf-8") if isinstance(key, str) else bytes(key)
        if len(raw) < MIN_SECRET_BYTES:
            which = f"secret {position} of {len(keys)}" if len(keys) > 1 else "the secret"
            raise StateSecretError(
                f"{where}: {which} is {len(raw)} bytes long, shorter than the {MIN_SECRET_BYTES} bytes "
                f"a requestState secret needs; {hint}"
            )
        out.append(raw)
    return out


def canonical(value: Any) -> bytes:
    """Canonical JSON (sorted keys): for digests and cache keys, never for the wire."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


_B64URL = re.compile(r"[A-Za-z0-9_-]*\Z")


def _unb64(text: str) -> bytes:
    """Strict base64url without padding: a token has exactly one spelling. Anything else —
    padding, characters outside the alphabet, non-zero unused bits in the last character —
    is refused, so nothing that keys on the token (single use, caches, logs) can be fooled."""
    if not _B64URL.match(text) or len(text) % 4 == 1:
        raise ValueError("not canonical base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not canonical base64url")
    return data


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return _b64(h.digest()[:18])


def principal_digest(principal_id: str | None) -> str:
    """Digest of the caller's identity ("" when anonymous)."""
    return "" if principal_id is None else _digest(b"principal", principal_id.encode("utf-8"))


def request_digest(method: str, params: Mapping[str, Any]) -> str:
    """Digest of the method and its salient params (MRTR-10).

    For `tools/call` that is the tool name and arguments (a missing `arguments` equals `{}`),
    for `prompts/get` name and arguments, for `resources/read` the uri: everything in params
    except `_meta`, `inputResponses` and `requestState`.
    """
    salient = {k: v for k, v in params.items() if k not in _NOT_SALIENT}
    if method == "tools/call" and salient.get("arguments") is None:
        salient["arguments"] = {}
    return _digest(b"request", method.encode("utf-8"), canonical(salient))


def _key_bytes(secret: str | bytes) -> bytes:
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if len(key) < MIN_SECRET_BYTES:
        raise ValueError(f"a requestState secret needs at least {MIN_SECRET_BYTES} bytes")
    return key


class StateCodec:
    """Seals and opens request states with HMAC-SHA256; `keys[0]` signs, any key verifies."""

    def __init__(
        self,
        keys: Sequence[str | bytes],
        *,
        ttl_s: float = 600.0,
        max_bytes: int = 64 * 1024,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not keys:
            raise ValueError("StateCodec needs at least one key")
        if ttl_s <= 0:
            raise ValueError("state TTL must be positive")
        self._keys = tuple(_key_bytes(k) for k in keys)
        self._ttl_ms = int(ttl_s * 1000)
        self._max = max_bytes
        self._clock = clock

    @classmethod
    def from_config(
        cls, configured: Sequence[str | bytes] | None, *, ttl_s: float = 600.0, max_bytes: int = 64 * 1024
    ) -> StateCodec:
        """Keys from the config, else `MCPGEN_STATE_SECRET`, else a random per-process key (warned)."""
        keys: Sequence[str | bytes] | None = configured_keys(configured)
        if not keys:
            _LOG.warning(
                "%s is not set: requestState is signed with a random per-process key, so a multi-round "
                "retry served by another process or after a restart will be rejected",
                STATE_SECRET_ENV,
            )
            keys = [secrets.token_bytes(32)]
        return cls(keys, ttl_s=ttl_s, max_bytes=max_bytes)

    def _mac(self, key: bytes, payload: str) -> bytes:
        return hmac.new(key, _CONTEXT + payload.encode("ascii"), hashlib.sha256).digest()

    def seal(
        self,
        *,
        principal: str,
        request: str,
        asked: Sequence[str],
        carried: Mapping[str, Any],
        state: Mapping[str, Any],
        single_use: bool = False,
    ) -> str:
        body: dict[str, Any] = {
            "exp": int(self._clock() * 1000) + self._ttl_ms,
            "n": _b64(secrets.token_bytes(9)),
            "p": principal,
            "r": request,
            "a": list(asked),
            "c": dict(carried),
            "s": dict(state),
        }
        if single_use:
            body["u"] = 1
        try:
            payload = _b64(_json.dumps(body))
        except TypeError as exc:  # orjson: not JSON (a handler put something odd in ctx.state)
            raise TypeError(f"ctx.state and input answers must be JSON data: {exc}") from exc
        token = f"{_VERSION}.{payload}.{_b64(self._mac(self._keys[0], payload))}"
        if len(token) > self._max:
            raise ValueError(
                f"requestState would be {len(token)} bytes (limit {self._max}); keep ctx.state small"
            )
        return token

    def open(self, token: str, *, principal: str, request: str) -> dict[str, Any]:
        """The verified payload; `StateError` when it was tampered with, expired, or is presented
        by another principal or on another request (MRTR-07..10)."""
        if len(token) > self._max:
            raise StateError("requestState is too large")
        version, dot, rest = token.partition(".")
        payload, dot2, mac_text = rest.partition(".")
        if version != _VERSION or not dot or not dot2 or not payload or not mac_text:
            raise StateError("requestState is malformed")
        try:
            mac = _unb64(mac_text)
            raw = _unb64(payload)
        except (binascii.Error, ValueError) as exc:
            raise StateError("requestState is malformed") from exc
        if not any(hmac.compare_digest(mac, self._mac(key, payload)) for key in self._keys):
            raise StateError("requestState failed integrity verification")
        try:
            body = _json.loads(raw)
        except _json.JSONDecodeError as exc:  # pragma: no cover - only we can produce a valid MAC
            raise StateError("requestState is malformed") from exc
        if not isinstance(body, dict) or not isinstance(body.get("exp"), int):
            raise StateError("requestState is malformed")  # pragma: no cover - same
        if body["exp"] <= int(self._clock() * 1000):
            raise StateError("requestState has expired; retry the request without it")
        if body.get("p") != principal:
            raise StateError("requestState was issued to a different principal")
        if body.get("r") != request:
            raise StateError("requestState was issued for a different request")
        return body
