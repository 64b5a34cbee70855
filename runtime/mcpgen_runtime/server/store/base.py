"""The one interface for state that several replicas of a server share.

A server keeps everything that is not carried by the client behind a `Store`:

- records with expiry (`get` / `put` / `touch` / `delete`): legacy sessions, tasks; `put_new`
  writes one only when it is absent (SET NX): a task's single-winner terminal state;
- bounded append-only event logs with expiry (`append` / `read`, which can block for the next
  event): SSE replay buffers, so any replica can serve a `Last-Event-ID` resume and then follow
  the events the producing replica still writes;
- token buckets taken atomically (`take_token`): rate limits;
- single-use claims (`claim`, SET NX with expiry): single-use requestState (MRTR-11);
- small shared values with change fan-out (`put_shared` / `get_shared` / `subscribe`): the
  run-time tool set and its list-changed notifications;
- `ping` (readiness) and `close`.

`MemoryStore` (memory.py) is the default: this process only, no I/O, today's speed.
`RedisStore` (redis_store.py) shares it all through Redis. Every key a store writes is
namespaced `mcpgen:<namespace>:…` (the server's name) and bounded in size and lifetime: callers
pass a TTL with every write, logs a maximum length, and values are limited to `MAX_VALUE_BYTES`.

A store that cannot reach its backend raises `StoreUnavailable`; the server answers the request
that needed it with a retryable error (HTTP 503) and never falls back to per-process state.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

__all__ = [
    "MAX_LOG_LENGTH",
    "MAX_VALUE_BYTES",
    "Store",
    "StoreUnavailable",
    "Unsubscribe",
    "namespace_prefix",
]

MAX_VALUE_BYTES = 1024 * 1024  # one record, event or shared value
MAX_LOG_LENGTH = 10_000  # events kept per log
_NAMESPACE = re.compile(r"[A-Za-z0-9_.-]{1,100}\Z")

# Ends a subscription made with `Store.subscribe`.
Unsubscribe = Callable[[], None]


class StoreUnavailable(Exception):
    """The shared store could not be reached or did not answer in time (retry later). The
    message names the store's address without credentials."""


def namespace_prefix(namespace: str) -> str:
    """`mcpgen:<namespace>:`; the namespace (the server's name) must be a plain identifier so
    that no key of one server can be spelled by another."""
    if not _NAMESPACE.match(namespace):
        raise ValueError(f"store namespace {namespace[:40]!r} must be 1-100 characters of A-Z a-z 0-9 _ . -")
    return f"mcpgen:{namespace}:"


def check_value(value: bytes) -> None:
    if len(value) > MAX_VALUE_BYTES:
        raise ValueError(f"a stored value is limited to {MAX_VALUE_BYTES} bytes (got {len(value)})")


class Store(ABC):
    """Shared state of one server (see the module docstring). Keys are short strings chosen by
    the runtime (`session:<id>`, `events:<session>:<stream>`, `bucket:<caller>`, …); the store
    adds the namespace. TTLs are seconds, > 0."""

    #: True when other processes see what this store holds (a replica needs shared secrets then).
    shared: bool = False

    @property
    @abstractmethod
    def description(self) -> str:
        """Where the state lives, for messages (never with credentials)."""

    # ---- records ---------------------------------------------------------------------------

    @abstractmethod
    async def get(self, key: str, *, touch_s: float | None = None) -> bytes | None:
        """The record, or None when absent or expired; with `touch_s`, its expiry restarts at that
        many seconds in the same step (GETEX)."""

    async def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """The records of `keys` in order (None: absent or expired), read in one step where the
        store can (MGET: one round trip, one instant)."""
        return [await self.get(key) for key in keys]

    @abstractmethod
    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        """Write (or replace) a record that expires `ttl_s` from now."""

    @abstractmethod
    async def put_new(self, key: str, value: bytes, ttl_s: float) -> bool:
        """Write a record only when `key` holds none (SET NX); True when this call wrote it.
        Atomic across replicas: of several writers exactly one wins."""

    @abstractmethod
    async def touch(self, key: str, ttl_s: float) -> bool:
        """Restart a record's expiry; False when it is absent."""

    @abstractmethod
    async def delete(self, key: str) -> bool:
        """Remove a record or log; False when it was absent."""

    # ---- event logs -------------------------------------------------------------------------

    @abstractmethod
    async def append(self, log: str, data: bytes, *, max_len: int, ttl_s: float) -> int:
        """Append one event; returns its position (1, 2, …). The log keeps its last `max_len`
        events and expires `ttl_s` after the last append."""

    @abstractmethod
    async def read(
        self, log: str, after: int, *, block_s: float = 0.0, count: int = 1000
    ) -> list[tuple[int, bytes]]:
        """Events after position `after`, oldest first (at most `count`). With `block_s` > 0 and
        nothing there yet, wait up to that long for the next append (a tail); [] on timeout.
        Events that fell out of the log are skipped."""

    # ---- rate limits and single use ------------------------------------------------------------

    @abstractmethod
    async def take_token(self, bucket: str, *, rate: float, burst: int, ttl_s: float) -> float:
        """Take one token from a bucket refilled at `rate` per second up to `burst` (full when new);
        0.0 when taken, else the seconds until one is there. Atomic across replicas."""

    @abstractmethod
    async def claim(self, key: str, ttl_s: float) -> bool:
        """Mark `key` used for `ttl_s`; True only for the first claim (SET NX semantics)."""

    # ---- shared values and fan-out ----------------------------------------------------------------

    @abstractmethod
    async def get_shared(self, name: str) -> bytes | None:
        """A shared value (no expiry; small), or None."""

    @abstractmethod
    async def put_shared(self, name: str, value: bytes | None) -> None:
        """Set (None: remove) a shared value and tell every subscriber of `name` (`subscribe`)."""

    @abstractmethod
    async def publish(self, channel: str, message: bytes) -> None:
        """Deliver `message` to every current subscriber of `channel`, in every process."""

    @abstractmethod
    async def subscribe(self, channel: str, deliver: Callable[[bytes], None]) -> Unsubscribe:
        """Call `deliver(message)` (on the event loop) for each message published to `channel`
        from now on. `put_shared(name, …)` publishes the new value on channel `name`."""

    # ---- life ----------------------------------------------------------------------------------

    @abstractmethod
    async def ping(self) -> None:
        """Return when the store answers; `StoreUnavailable` otherwise (readiness checks)."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections and end subscriptions."""
