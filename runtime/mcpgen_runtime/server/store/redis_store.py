"""`RedisStore`: the `Store` several replicas share, on Redis through redis-py's asyncio client
(the `mcpgen-runtime[redis]` extra).

Redis primitives for what they are made for: records are strings with `PX` expiry; event logs
are streams (`XADD … MAXLEN = n 0-*`, so a position is the entry's sequence number, read with
`XREAD [BLOCK]`) whose key expires after the last append; a token bucket is a hash updated by one
Lua script on Redis's own clock (atomic, no skew between replicas); a claim is `SET NX PX`;
shared values are strings whose changes are `PUBLISH`ed, and one pub/sub connection per store
fans messages out to local subscribers.

Failures are quick and loud: short connect and socket timeouts, one immediate retry (a pooled
connection that died with a restarted Redis), then `StoreUnavailable`. Pub/sub reconnects by
itself and re-subscribes, with the channels subscribed meanwhile (a subscription never fails
because the pub/sub connection is being replaced); messages published while it was away are lost
(list-changed notifications are idempotent; a client re-lists on the next one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .base import MAX_LOG_LENGTH, Store, StoreUnavailable, Unsubscribe, check_value, namespace_prefix

try:
    import redis.asyncio as aioredis
    from redis.asyncio.retry import Retry  # the asyncio one: the sync Retry never retries an awaited command
    from redis.backoff import NoBackoff
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError
except ImportError as exc:  # pragma: no cover - exercised by test_store_selection in a venv without redis
    raise ImportError(
        "a redis:// store needs the redis package: pip install 'mcpgen-runtime[redis]' (or pip install redis)"
    ) from exc

__all__ = ["RedisStore"]

_LOG = logging.getLogger("mcpgen.server")

_FAILURES = (RedisConnectionError, RedisTimeoutError, OSError, TimeoutError)

# KEYS[1] bucket; ARGV rate, burst, ttl ms. Returns the wait in seconds as a string (0 = taken).
_TAKE_TOKEN = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(state[1])
local updated = tonumber(state[2])
if tokens == nil or updated == nil then
  tokens = burst
else
  tokens = math.min(burst, tokens + math.max(0, now - updated) * rate)
end
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'u', string.format('%.17g', now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return string.format('%.17g', wait)
"""


def redacted(url: str) -> str:
    """The URL without its password (for messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}:***@" if parts.username else "***@"
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class RedisStore(Store):
    """Shared state in Redis under `mcpgen:<namespace>:` (see the module docstring)."""

    shared = True

    def __init__(self, url: str, namespace: str, *, timeout_s: float = 1.0) -> None:
        self._url = redacted(url)
        self._prefix = namespace_prefix(namespace)
        self._timeout = timeout_s
        options: dict[str, Any] = {
            "socket_connect_timeout": timeout_s,
            "retry": Retry(NoBackoff(), 1),
            "health_check_interval": 0,
        }
        self._redis = aioredis.Redis.from_url(url, socket_timeout=timeout_s, **options)
        # Blocking reads wait longer than a socket timeout: their own pool, bounded by asyncio.timeout.
        self._blocking = aioredis.Redis.from_url(url, socket_timeout=None, **options)
        self._take = self._redis.register_script(_TAKE_TOKEN)
        self._pubsub: Any = None
        self._pump: asyncio.Task[None] | None = None
        self._subscribers: dict[str, set[Callable[[bytes], None]]] = {}

    @property
    def description(self) -> str:
        return f"redis ({self._url})"

    def _key(self, key: str) -> str:
        return self._prefix + key

    async def _call(self, what: Awaitable[Any]) -> Any:  # redis-py's replies are loosely typed
        try:
            return await what
        except _FAILURES as exc:
            raise StoreUnavailable(
                f"the shared store {self._url} is unavailable ({type(exc).__name__})"
            ) from None

    # ---- records -----------------------------------------------------------------------------

    async def get(self, key: str, *, touch_s: float | None = None) -> bytes | None:
        if touch_s is None:
            value: bytes | None = await self._call(self._redis.get(self._key(key)))
        else:
            value = await self._call(self._redis.getex(self._key(key), px=_ms(touch_s)))
        return value

    async def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        values: list[bytes | None] = await self._call(self._redis.mget([self._key(key) for key in keys]))
        return values

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        check_value(value)
        await self._call(self._redis.set(self._key(key), value, px=_ms(ttl_s)))

    async def put_new(self, key: str, value: bytes, ttl_s: float) -> bool:
        check_value(value)
        return bool(await self._call(self._redis.set(self._key(key), value, nx=True, px=_ms(ttl_s))))

    async def touch(self, key: str, ttl_s: float) -> bool:
        return bool(await self._call(self._redis.pexpire(self._key(key), _ms(ttl_s))))

    async def delete(self, key: str) -> bool:
        return bool(await self._call(self._redis.delete(self._key(key))))

    # ---- event logs ----------------------------------------------------------------------------

    async def append(self, log: str, data: bytes, *, max_len: int, ttl_s: float) -> int:
        check_value(data)
        if not 1 <= max_len <= MAX_LOG_LENGTH:
            raise ValueError(f"max_len must be 1..{MAX_LOG_LENGTH}")
        key = self._key(log)
        pipe = self._redis.pipeline(transaction=True)
        pipe.xadd(key, {"d": data}, id="0-*", maxlen=max_len, approximate=False)
        pipe.pexpire(key, _ms(ttl_s))
        entry_id, _ = await self._call(pipe.execute())
        return int(entry_id.rpartition(b"-")[2])

    async def read(
        self, log: str, after: int, *, block_s: float = 0.0, count: int = 1000
    ) -> list[tuple[int, bytes]]:
        key = self._key(log)
        if block_s > 0:
            try:
                async with asyncio.timeout(block_s + self._timeout):
                    reply = await self._call(
                        self._blocking.xread({key: f"0-{after}"}, count=count, block=_ms(block_s))
                    )
            except TimeoutError:
                raise StoreUnavailable(f"the shared store {self._url} did not answer in time") from None
        else:
            reply = await self._call(self._redis.xread({key: f"0-{after}"}, count=count))
        out: list[tuple[int, bytes]] = []
        for _, entries in reply or ():
            for entry_id, fields in entries:
                out.append((int(entry_id.rpartition(b"-")[2]), fields[b"d"]))
        return out

    # ---- rate limits and single use --------------------------------------------------------------

    async def take_token(self, bucket: str, *, rate: float, burst: int, ttl_s: float) -> float:
        wait = await self._call(self._take(keys=[self._key(bucket)], args=[repr(rate), burst, _ms(ttl_s)]))
        return float(wait)

    async def claim(self, key: str, ttl_s: float) -> bool:
        return bool(await self._call(self._redis.set(self._key(key), b"1", nx=True, px=_ms(ttl_s))))

    # ---- shared values and fan-out -------------------------------------------------------------------

    async def get_shared(self, name: str) -> bytes | None:
        value: bytes | None = await self._call(self._redis.get(self._key("shared:" + name)))
        return value

    async def put_shared(self, name: str, value: bytes | None) -> None:
        pipe = self._redis.pipeline(transaction=True)
        if value is None:
            pipe.delete(self._key("shared:" + name))
        else:
            check_value(value)
            pipe.set(self._key("shared:" + name), value)
        pipe.publish(self._key("channel:" + name), value or b"")
        await self._call(pipe.execute())

    async def publish(self, channel: str, message: bytes) -> None:
        check_value(message)
        await self._call(self._redis.publish(self._key("channel:" + channel), message))

    async def subscribe(self, channel: str, deliver: Callable[[bytes], None]) -> Unsubscribe:
        subscribers = self._subscribers.get(channel)
        if subscribers is None:
            if self._pump is None and self._pubsub is None:
                self._pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            if self._pubsub is not None:
                await self._call(self._pubsub.subscribe(self._key("channel:" + channel)))
            # Else the pump is reconnecting (Redis restarted, and may answer again already): it
            # subscribes to every channel listed here once it is back, this one included.
            subscribers = self._subscribers.setdefault(channel, set())
            if self._pump is None:
                self._pump = asyncio.get_running_loop().create_task(self._run_pubsub())
        subscribers.add(deliver)

        def unsubscribe() -> None:
            # The Redis subscription stays until close(): channels are few (one per kind of change).
            self._subscribers.get(channel, set()).discard(deliver)

        return unsubscribe

    async def _run_pubsub(self) -> None:
        """Deliver published messages to local subscribers. After a failure the pub/sub connection
        is replaced by a new one subscribed to every channel (retried until Redis answers)."""
        prefix = self._key("channel:").encode()
        pubsub = self._pubsub
        while True:
            if pubsub is None:
                fresh: Any = self._redis.pubsub(ignore_subscribe_messages=True)
                names = list(self._subscribers)
                try:
                    await fresh.subscribe(*(self._key("channel:" + name) for name in names))
                    self._pubsub = fresh
                    # Channels `subscribe` listed while this one was connecting (it saw no pub/sub).
                    late = [self._key("channel:" + name) for name in self._subscribers if name not in names]
                    if late:
                        await fresh.subscribe(*late)
                except Exception:
                    self._pubsub = None
                    with contextlib.suppress(Exception):
                        await fresh.aclose()
                    await asyncio.sleep(0.5)
                    continue
                pubsub = fresh
                _LOG.info("shared store %s: pub/sub reconnected", self._url)
            try:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except Exception as exc:  # never let fan-out die: replace the connection
                _LOG.warning(
                    "shared store %s: pub/sub connection lost (%s); reconnecting",
                    self._url,
                    type(exc).__name__,
                )
                self._pubsub = None
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                pubsub = None
                await asyncio.sleep(0.5)
                continue
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"]
            if not channel.startswith(prefix):
                continue
            for deliver in list(self._subscribers.get(channel[len(prefix) :].decode(), ())):
                try:
                    deliver(message["data"])
                except Exception:
                    _LOG.exception("a subscriber of %s failed", channel[len(prefix) :].decode())

    # ---- life -----------------------------------------------------------------------------------------

    async def ping(self) -> None:
        await self._call(self._redis.ping())

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(BaseException):
                await self._pump
            self._pump = None
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            self._pubsub = None
        self._subscribers.clear()
        await self._redis.aclose()
        await self._blocking.aclose()
