"""`MemoryStore`: the default `Store`, in this process only (no I/O, nothing shared).

Every method completes without suspending except a blocking `read`. Sizes are bounded: records,
claims and buckets have caps (`max_keys` each); at a cap expired entries go first, then the
least recently written record or bucket. A full claim table raises `StoreUnavailable` rather
than forget a claim that is still valid (that would let a single-use state be used twice).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from .base import MAX_LOG_LENGTH, Store, StoreUnavailable, Unsubscribe, check_value

__all__ = ["MemoryStore"]


class _Log:
    __slots__ = ("deadline", "events", "last", "wake")

    def __init__(self, max_len: int) -> None:
        self.events: deque[tuple[int, bytes]] = deque(maxlen=max_len)
        self.last = 0
        self.deadline = 0.0
        self.wake = asyncio.Event()


class MemoryStore(Store):
    """State of this process (see the module docstring)."""

    shared = False

    def __init__(self, *, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be >= 1")
        self._max = max_keys
        self._clock = clock
        self._records: OrderedDict[str, tuple[bytes, float]] = OrderedDict()
        self._logs: dict[str, _Log] = {}
        self._buckets: OrderedDict[str, list[float]] = OrderedDict()  # key -> [tokens, updated]
        self._claims: dict[str, float] = {}
        self._shared: dict[str, bytes] = {}
        self._subscribers: dict[str, set[Callable[[bytes], None]]] = {}

    @property
    def description(self) -> str:
        return "memory (this process)"

    # ---- records -------------------------------------------------------------------------------

    async def get(self, key: str, *, touch_s: float | None = None) -> bytes | None:
        entry = self._records.get(key)
        if entry is None:
            return None
        now = self._clock()
        if entry[1] <= now:
            del self._records[key]
            return None
        if touch_s is not None:
            self._records[key] = (entry[0], now + touch_s)
        return entry[0]

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        check_value(value)
        now = self._clock()
        records = self._records
        records.pop(key, None)
        if len(records) >= self._max:
            self._purge_records(now)
        records[key] = (bytes(value), now + ttl_s)

    async def put_new(self, key: str, value: bytes, ttl_s: float) -> bool:
        entry = self._records.get(key)
        if entry is not None and entry[1] > self._clock():
            return False
        await self.put(key, value, ttl_s)
        return True

    def _purge_records(self, now: float) -> None:
        records = self._records
        for key in [k for k, (_, deadline) in records.items() if deadline <= now]:
            del records[key]
        while len(records) >= self._max:
            records.popitem(last=False)

    async def touch(self, key: str, ttl_s: float) -> bool:
        entry = self._records.get(key)
        now = self._clock()
        if entry is None or entry[1] <= now:
            self._records.pop(key, None)
            return False
        self._records[key] = (entry[0], now + ttl_s)
        return True

    async def delete(self, key: str) -> bool:
        found = self._records.pop(key, None) is not None
        log = self._logs.pop(key, None)
        if log is not None:
            log.wake.set()
        return found or log is not None

    # ---- event logs ------------------------------------------------------------------------------

    def _live_log(self, name: str) -> _Log | None:
        log = self._logs.get(name)
        if log is not None and log.deadline <= self._clock():
            del self._logs[name]
            log.wake.set()
            return None
        return log

    async def append(self, log: str, data: bytes, *, max_len: int, ttl_s: float) -> int:
        check_value(data)
        if not 1 <= max_len <= MAX_LOG_LENGTH:
            raise ValueError(f"max_len must be 1..{MAX_LOG_LENGTH}")
        entry = self._live_log(log)
        if entry is None:
            if len(self._logs) >= self._max:
                now = self._clock()
                for name in [n for n, item in self._logs.items() if item.deadline <= now]:
                    del self._logs[name]
                if len(self._logs) >= self._max:
                    raise StoreUnavailable("the in-memory store holds too many event logs")
            entry = self._logs[log] = _Log(max_len)
        entry.last += 1
        entry.events.append((entry.last, bytes(data)))
        entry.deadline = self._clock() + ttl_s
        wake, entry.wake = entry.wake, asyncio.Event()
        wake.set()
        return entry.last

    async def read(
        self, log: str, after: int, *, block_s: float = 0.0, count: int = 1000
    ) -> list[tuple[int, bytes]]:
        entry = self._live_log(log)
        if entry is not None and entry.last > after:
            return [(position, data) for position, data in entry.events if position > after][:count]
        if block_s <= 0:
            return []
        if entry is None:  # a tail of a log that does not exist yet: poll for its creation
            deadline = self._clock() + block_s
            while entry is None:
                remaining = deadline - self._clock()
                if remaining <= 0:
                    return []
                await asyncio.sleep(min(0.05, remaining))
                entry = self._live_log(log)
            if entry.last > after:
                return [(position, data) for position, data in entry.events if position > after][:count]
            block_s = max(0.0, deadline - self._clock())
        try:
            await asyncio.wait_for(entry.wake.wait(), block_s)
        except TimeoutError:
            return []
        return [(position, data) for position, data in entry.events if position > after][:count]

    # ---- rate limits and single use -------------------------------------------------------------

    async def take_token(self, bucket: str, *, rate: float, burst: int, ttl_s: float) -> float:
        return self.take_token_now(bucket, rate=rate, burst=burst)

    def take_token_now(self, bucket: str, *, rate: float, burst: int) -> float:
        """`take_token` without a coroutine: the rate limiter's hot path when nothing is shared."""
        now = self._clock()
        buckets = self._buckets
        entry = buckets.get(bucket)
        if entry is None:
            if len(buckets) >= self._max:
                buckets.popitem(last=False)
            entry = buckets[bucket] = [float(burst), now]
        else:
            buckets.move_to_end(bucket)
            entry[0] = min(float(burst), entry[0] + (now - entry[1]) * rate)
            entry[1] = now
        if entry[0] >= 1.0:
            entry[0] -= 1.0
            return 0.0
        return (1.0 - entry[0]) / rate

    async def claim(self, key: str, ttl_s: float) -> bool:
        now = self._clock()
        claims = self._claims
        deadline = claims.get(key)
        if deadline is not None and deadline > now:
            return False
        if deadline is None and len(claims) >= self._max:
            for name in [k for k, d in claims.items() if d <= now]:
                del claims[name]
            if len(claims) >= self._max:
                raise StoreUnavailable("the in-memory store holds too many single-use claims")
        claims[key] = now + ttl_s
        return True

    # ---- shared values and fan-out -----------------------------------------------------------------

    async def get_shared(self, name: str) -> bytes | None:
        return self._shared.get(name)

    async def put_shared(self, name: str, value: bytes | None) -> None:
        if value is None:
            self._shared.pop(name, None)
        else:
            check_value(value)
            self._shared[name] = bytes(value)
        await self.publish(name, value or b"")

    async def publish(self, channel: str, message: bytes) -> None:
        for deliver in list(self._subscribers.get(channel, ())):
            deliver(message)

    async def subscribe(self, channel: str, deliver: Callable[[bytes], None]) -> Unsubscribe:
        self._subscribers.setdefault(channel, set()).add(deliver)

        def unsubscribe() -> None:
            subscribers = self._subscribers.get(channel)
            if subscribers is not None:
                subscribers.discard(deliver)
                if not subscribers:
                    del self._subscribers[channel]

        return unsubscribe

    # ---- life ------------------------------------------------------------------------------------------

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        self._subscribers.clear()
        for log in self._logs.values():
            log.wake.set()
