"""Shared server state behind one interface (`Store`): the in-memory default and Redis.

`open_store(url, namespace)` picks one from configuration: `memory` (or nothing) for
`MemoryStore`, `redis://…` / `rediss://…` / `unix://…` for `RedisStore` (the `mcpgen-runtime[redis]`
extra: a clear error when the package is missing).
"""

from __future__ import annotations

from .base import Store, StoreUnavailable, Unsubscribe, namespace_prefix
from .memory import MemoryStore

__all__ = [
    "STORE_ENV",
    "MemoryStore",
    "Store",
    "StoreUnavailable",
    "Unsubscribe",
    "namespace_prefix",
    "open_store",
]

STORE_ENV = "MCPGEN_STORE"
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def open_store(url: str | None, namespace: str) -> Store:
    """The store a URL names (see the module docstring); ValueError for one it cannot open."""
    if url is None or url.strip() in ("", "memory"):
        return MemoryStore()
    url = url.strip()
    if url.startswith(_REDIS_SCHEMES):
        try:
            from .redis_store import RedisStore  # the optional extra, imported only when configured
        except ImportError as exc:
            raise ValueError(str(exc)) from None
        return RedisStore(url, namespace)
    scheme = url.partition("://")[0] if "://" in url else url[:20]
    raise ValueError(f"unknown store {scheme!r}: use 'memory' or a redis://host:port/db URL")
