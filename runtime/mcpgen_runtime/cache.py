"""Client response cache for cacheable results: `server/discover` and `tools/list` pages
(server-utilities-caching.mdx). No I/O: `ClientCore` asks it before a request and tells it
the result after.

- CACHE-03: the key is the server, the protocol version, the method and the params that
  affect the result (`cursor`; `""` is a cursor, not "no cursor"), plus the partition.
- CACHE-04 / CACHE-02: a request carrying `inputResponses`/`requestState`, or an
  `input_required` result, is never stored.
- CACHE-06..09: freshness is `now < received + ttlMs`; a missing, negative or non-integer
  `ttlMs` is 0 (stored, never fresh: kept only to be served when a refetch fails). TTLs are
  capped at 24 hours.
- CACHE-13: `public` results are shared by every authorization context; anything else
  (`private`, or no scope) lives in the caller's partition — a digest of the client's
  static headers and bearer token — and is never read from another one.
- CACHE-14 / CACHE-17: `invalidate(method)` drops what this cache stored or served for a
  method (after `notifications/tools/list_changed`, or a rejected cursor).
- CACHE-15: every page is its own entry with its own clock.

Stores are pluggable (`CacheStore`: get/set/delete/clear over string keys); the default is
an in-memory LRU. A store shared between clients must only be shared by clients that may
see each other's `public` results — the partition keeps `private` ones apart.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from . import _json

__all__ = [
    "MAX_TTL_MS",
    "CacheEntry",
    "CacheStore",
    "MemoryCacheStore",
    "ResponseCache",
    "StaleCacheWarning",
    "auth_partition",
    "cache_scope",
    "ttl_ms",
]

MAX_TTL_MS: Final = 24 * 60 * 60 * 1000
_MRTR_PARAMS: Final = ("inputResponses", "requestState")


class StaleCacheWarning(UserWarning):
    """A refetch failed and a stale cached result was served instead."""


@dataclass(frozen=True, slots=True)
class CacheEntry:
    value: dict[str, Any]  # the result object as received
    stored_at: float  # wall-clock seconds (time.time()) when it was received
    ttl_ms: int  # 0..MAX_TTL_MS

    def fresh(self, now: float) -> bool:
        return now < self.stored_at + self.ttl_ms / 1000  # CACHE-07


@runtime_checkable
class CacheStore(Protocol):
    def get(self, key: str) -> CacheEntry | None: ...

    def set(self, key: str, entry: CacheEntry) -> None: ...

    def delete(self, key: str) -> None: ...

    def clear(self) -> None: ...


class MemoryCacheStore:
    """In-process store; least recently used entries go first beyond `max_entries`."""

    def __init__(self, max_entries: int = 1024) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()

    def get(self, key: str) -> CacheEntry | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def set(self, key: str, entry: CacheEntry) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def delete(self, key: str) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def ttl_ms(result: Mapping[str, Any]) -> int:
    """`ttlMs` as a freshness lifetime: missing, negative or not an integer -> 0 (CACHE-08/09)."""
    ttl = result.get("ttlMs")
    if type(ttl) is not int or ttl <= 0:
        return 0
    return min(ttl, MAX_TTL_MS)


def cache_scope(result: Mapping[str, Any]) -> str:
    """`public` only when the server says so; everything else is treated as `private`."""
    return "public" if result.get("cacheScope") == "public" else "private"


def auth_partition(headers: Mapping[str, str], token: str | None = None) -> str:
    """A digest naming one authorization context: the static headers and the bearer token."""
    digest = hashlib.sha256()
    for name, value in sorted((name.lower(), value) for name, value in headers.items()):
        digest.update(name.encode() + b"\0" + value.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(b"\1" + (token or "").encode("utf-8", "surrogateescape"))
    return digest.hexdigest()[:32]


class ResponseCache:
    """Keys, freshness and scope rules over a `CacheStore` for one server."""

    def __init__(self, store: CacheStore, *, server: str, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.server = server
        self.clock = clock
        self._keys: dict[str, set[str]] = {}  # method -> keys stored or served, for invalidate()

    def key(self, method: str, params: Mapping[str, Any], version: str, partition: str) -> str:
        # A JSON array: no separator can be forged by a cursor or URL (CACHE-03).
        return _json.dumps([self.server, version, method, _result_params(params), partition]).decode()

    def lookup(
        self, method: str, params: Mapping[str, Any], version: str, partition: str | None
    ) -> CacheEntry | None:
        """The entry for this request: a `public` one, else one of `partition` (None: none)."""
        if _is_mrtr(params):
            return None
        for part in ("",) if partition is None else ("", partition):
            key = self.key(method, params, version, part)
            entry = self.store.get(key)
            if entry is not None:
                self._keys.setdefault(method, set()).add(key)
                return entry
        return None

    def save(
        self,
        method: str,
        params: Mapping[str, Any],
        version: str,
        partition: str | None,
        result: dict[str, Any],
    ) -> None:
        """Store a complete result under its scope; a private one needs a known partition."""
        if _is_mrtr(params) or result.get("resultType", "complete") != "complete":
            return  # CACHE-04, CACHE-02
        if cache_scope(result) == "public":
            part = ""
        elif partition is None:
            return
        else:
            part = partition
        key = self.key(method, params, version, part)
        self.store.set(key, CacheEntry(result, self.clock(), ttl_ms(result)))
        self._keys.setdefault(method, set()).add(key)

    def is_fresh(self, entry: CacheEntry) -> bool:
        return entry.fresh(self.clock())

    def invalidate(self, method: str) -> None:
        """Forget every entry of `method` this cache stored or served (CACHE-14, CACHE-17)."""
        for key in self._keys.pop(method, ()):
            self.store.delete(key)

    def clear(self) -> None:
        """Forget everything this cache stored or served (a shared store keeps other entries)."""
        for method in list(self._keys):
            self.invalidate(method)


def _is_mrtr(params: Mapping[str, Any]) -> bool:
    return any(name in params for name in _MRTR_PARAMS)


def _result_params(params: Mapping[str, Any]) -> dict[str, Any]:
    # `_meta` (protocol version aside, which is part of the key) does not select the result.
    return {name: params[name] for name in sorted(params) if name != "_meta"}
