"""Per-principal token buckets for `tools/call` (SEC-03).

Each caller (the principal an authentication layer established, else the peer address,
else one shared anonymous bucket) holds up to `burst` tokens, refilled at `rate` tokens per
second; a call takes one. A refused call becomes an `isError: true` result telling the model
when to retry (see `results.rate_limited_result` for why it is not a JSON-RPC error).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

__all__ = ["RETRY_AFTER_KEY", "RateLimit", "RateLimiter"]

# Where a rate-limited result says how long to wait, in milliseconds.
RETRY_AFTER_KEY = "dev.mcpgen/retryAfterMs"


@dataclass(frozen=True)
class RateLimit:
    """`rate` calls per second sustained, bursts of up to `burst` calls, per caller."""

    rate: float
    burst: int = 10
    max_callers: int = 10_000  # buckets kept; the least recently seen are dropped (memory bound)

    def __post_init__(self) -> None:
        if not self.rate > 0:
            raise ValueError("rate must be positive")
        if self.burst < 1:
            raise ValueError("burst must be >= 1")
        if self.max_callers < 1:
            raise ValueError("max_callers must be >= 1")


class RateLimiter:
    """Token buckets keyed by caller; `take` returns 0.0 when allowed, else seconds to wait."""

    __slots__ = ("_buckets", "_burst", "_clock", "_max", "_rate")

    def __init__(self, limit: RateLimit, clock: Callable[[], float] = time.monotonic) -> None:
        self._rate = limit.rate
        self._burst = float(limit.burst)
        self._max = limit.max_callers
        self._clock = clock
        self._buckets: OrderedDict[Hashable, list[float]] = OrderedDict()  # key -> [tokens, updated]

    def take(self, key: Hashable) -> float:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._max:
                self._buckets.popitem(last=False)
            bucket = self._buckets[key] = [self._burst, now]
        else:
            self._buckets.move_to_end(key)
            bucket[0] = min(self._burst, bucket[0] + (now - bucket[1]) * self._rate)
            bucket[1] = now
        if bucket[0] >= 1.0:
            bucket[0] -= 1.0
            return 0.0
        return (1.0 - bucket[0]) / self._rate
