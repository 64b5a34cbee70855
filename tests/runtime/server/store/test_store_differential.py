"""MemoryStore and RedisStore (against a real redis-server) give the same answers to the same
operations: records and expiry, event logs (bounded, read-after, blocking tail), token buckets,
single-use claims, shared values with fan-out, and key namespacing."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcpgen_runtime.server.store import MemoryStore, Store, StoreUnavailable, open_store
from tests.redis_server import RedisServer

_names = itertools.count()


def _both(redis_server: RedisServer, script: Callable[[Store], Awaitable[Any]]) -> tuple[Any, Any]:
    async def run(make: Callable[[], Store]) -> Any:
        store = make()
        try:
            return await script(store)
        finally:
            await store.close()

    namespace = f"t{next(_names)}-{time.time_ns()}"
    memory = asyncio.run(run(MemoryStore))
    shared = asyncio.run(run(lambda: open_store(redis_server.url, namespace)))
    return memory, shared


def test_records_expire_and_touch_extends(redis_server: RedisServer) -> None:
    async def script(store: Store) -> list[Any]:
        out: list[Any] = [await store.get("a")]
        await store.put("a", b"one", 0.3)
        await store.put("b", b"two", 5)
        out += [await store.get("a"), await store.touch("a", 5), await store.touch("missing", 5)]
        await asyncio.sleep(0.4)
        out += [await store.get("a"), await store.delete("b"), await store.delete("b"), await store.get("b")]
        await store.put("c", b"x", 0.2)
        await asyncio.sleep(0.3)
        out += [await store.get("c"), await store.touch("c", 5)]
        await store.put("d", b"y", 0.3)
        out.append(await store.get("d", touch_s=5))  # GETEX: read and extend in one step
        await asyncio.sleep(0.4)
        out.append(await store.get("d"))
        return out

    memory, shared = _both(redis_server, script)
    assert memory == shared == [None, b"one", True, False, b"one", True, False, None, None, False, b"y", b"y"]


def test_get_many_reads_records_in_order_absent_and_expired_as_none(redis_server: RedisServer) -> None:
    async def script(store: Store) -> list[Any]:
        await store.put("a", b"one", 5)
        await store.put("b", b"two", 0.2)
        await asyncio.sleep(0.3)
        await store.put("c", b"three", 5)
        return [await store.get_many(["c", "missing", "b", "a"]), await store.get_many([])]

    memory, shared = _both(redis_server, script)
    assert memory == shared == [[b"three", None, None, b"one"], []]


def test_event_logs_are_bounded_and_read_after_a_position(redis_server: RedisServer) -> None:
    async def script(store: Store) -> list[Any]:
        positions = [await store.append("log", b"e%d" % i, max_len=3, ttl_s=5) for i in range(1, 6)]
        return [
            positions,
            await store.read("log", 0),  # the first two fell out
            await store.read("log", 3),
            await store.read("log", 5),
            await store.read("log", 2, count=2),
            await store.read("nothing", 0),
        ]

    memory, shared = _both(redis_server, script)
    assert memory == shared
    assert memory[0] == [1, 2, 3, 4, 5]
    assert memory[1] == [(3, b"e3"), (4, b"e4"), (5, b"e5")]
    assert memory[2] == [(4, b"e4"), (5, b"e5")]
    assert memory[3] == []


def test_a_blocking_read_follows_appends_and_times_out(redis_server: RedisServer) -> None:
    async def script(store: Store) -> list[Any]:
        await store.append("tail", b"first", max_len=10, ttl_s=5)

        async def later(log: str) -> None:
            await asyncio.sleep(0.2)
            await store.append(log, b"second", max_len=10, ttl_s=5)

        writer = asyncio.create_task(later("tail"))
        started = time.monotonic()
        got = await store.read("tail", 1, block_s=3)
        waited = time.monotonic() - started
        await writer
        started = time.monotonic()
        nothing = await store.read("tail", 2, block_s=0.3)
        timed_out = time.monotonic() - started
        # A tail of a log that does not exist yet sees its first event.
        creator = asyncio.create_task(later("new"))
        fresh = await store.read("new", 0, block_s=3)
        await creator
        # worst on 2 loaded cores: waited 0.21 s, timed_out 0.37 s
        return [got, 0.15 < waited < 2, nothing, 0.25 < timed_out < 1.5, fresh]

    memory, shared = _both(redis_server, script)
    assert memory == shared == [[(2, b"second")], True, [], True, [(1, b"second")]]


def test_log_expires_after_its_last_append(redis_server: RedisServer) -> None:
    async def script(store: Store) -> list[Any]:
        await store.append("short", b"x", max_len=5, ttl_s=0.3)
        await asyncio.sleep(0.15)
        await store.append("short", b"y", max_len=5, ttl_s=0.3)
        await asyncio.sleep(0.2)
        kept = await store.read("short", 0)
        await asyncio.sleep(0.25)
        return [kept, await store.read("short", 0), await store.append("short", b"z", max_len=5, ttl_s=5)]

    memory, shared = _both(redis_server, script)
    assert memory == shared == [[(1, b"x"), (2, b"y")], [], 1]


def test_token_buckets_refill_at_their_rate(redis_server: RedisServer) -> None:
    async def script(store: Store) -> list[Any]:
        taken = [await store.take_token("caller", rate=5.0, burst=3, ttl_s=1) for _ in range(4)]
        other = await store.take_token("other", rate=5.0, burst=3, ttl_s=1)
        await asyncio.sleep(0.25)  # one token back (5/s)
        again = [await store.take_token("caller", rate=5.0, burst=3, ttl_s=1) for _ in range(2)]
        return [[w == 0.0 for w in taken], 0.1 < taken[3] <= 0.2, other, [w == 0.0 for w in again]]

    memory, shared = _both(redis_server, script)
    assert memory == shared == [[True, True, True, False], True, 0.0, [True, False]]


def test_claims_are_single_use_until_they_expire(redis_server: RedisServer) -> None:
    async def script(store: Store) -> list[bool]:
        out = [await store.claim("n1", 0.3), await store.claim("n1", 0.3), await store.claim("n2", 5)]
        await asyncio.sleep(0.4)
        out += [await store.claim("n1", 5), await store.claim("n2", 5)]
        return out

    memory, shared = _both(redis_server, script)
    assert memory == shared == [True, False, True, True, False]


def test_put_new_writes_only_when_absent_until_the_record_expires(redis_server: RedisServer) -> None:
    """A task's single-winner terminal write (core/tasks/ledger.py)."""

    async def script(store: Store) -> list[Any]:
        out: list[Any] = [await store.put_new("end", b"first", 0.3), await store.put_new("end", b"second", 5)]
        out.append(await store.get("end"))
        winners = await asyncio.gather(*(store.put_new("race", b"%d" % i, 5) for i in range(10)))
        out.append(sum(winners))
        await asyncio.sleep(0.4)
        out += [await store.get("end"), await store.put_new("end", b"third", 5), await store.get("end")]
        return out

    memory, shared = _both(redis_server, script)
    assert memory == shared == [True, False, b"first", 1, None, True, b"third"]


def test_shared_values_fan_out_to_subscribers(redis_server: RedisServer) -> None:
    async def script(store: Store) -> list[Any]:
        seen: list[bytes] = []
        tools: list[bytes] = []
        stop = await store.subscribe("tools", tools.append)
        await store.subscribe("events", seen.append)
        before = await store.get_shared("tools")
        await store.put_shared("tools", b'["a"]')
        await store.publish("events", b"hello")
        await asyncio.sleep(0.2)  # Redis delivers on its pub/sub connection
        stop()
        await store.put_shared("tools", None)
        await asyncio.sleep(0.2)
        return [before, await store.get_shared("tools"), tools, seen]

    memory, shared = _both(redis_server, script)
    assert memory == shared == [None, None, [b'["a"]'], [b"hello"]]


def test_two_redis_stores_share_state_and_fan_out(redis_server: RedisServer) -> None:
    """What one replica writes, another reads; a publish reaches the other's subscriber."""

    async def scenario() -> list[Any]:
        namespace = f"pair-{time.time_ns()}"
        a, b = open_store(redis_server.url, namespace), open_store(redis_server.url, namespace)
        other = open_store(redis_server.url, namespace + "x")
        try:
            heard: list[bytes] = []
            await b.subscribe("tools", heard.append)
            await a.put("session:1", b"record", 5)
            await a.append("events:1", b"e1", max_len=5, ttl_s=5)
            tail = asyncio.create_task(b.read("events:1", 1, block_s=3))
            await asyncio.sleep(0.1)
            await a.append("events:1", b"e2", max_len=5, ttl_s=5)
            await a.put_shared("tools", b"v2")
            claims = [await a.claim("once", 5), await b.claim("once", 5), await other.claim("once", 5)]
            await asyncio.sleep(0.2)
            return [await b.get("session:1"), await other.get("session:1"), await tail, claims, heard]
        finally:
            for store in (a, b, other):
                await store.close()

    assert asyncio.run(scenario()) == [b"record", None, [(2, b"e2")], [True, False, True], [b"v2"]]


def test_every_key_is_namespaced_and_bounded_in_lifetime(redis_server: RedisServer) -> None:
    import redis

    namespace = f"keys-{time.time_ns()}"

    async def scenario() -> None:
        store = open_store(redis_server.url, namespace)
        try:
            await store.put("session:1", b"r", 60)
            await store.append("events:1", b"e", max_len=5, ttl_s=60)
            await store.take_token("bucket:x", rate=1.0, burst=2, ttl_s=2)
            await store.claim("used:n", 60)
        finally:
            await store.close()

    asyncio.run(scenario())
    client = redis.Redis.from_url(redis_server.url)
    try:
        keys = sorted(client.scan_iter(match=f"mcpgen:{namespace}:*"))
        assert [k.decode().removeprefix(f"mcpgen:{namespace}:") for k in keys] == [
            "bucket:x",
            "events:1",
            "session:1",
            "used:n",
        ]
        assert all(0 < client.pttl(k) <= 60_000 for k in keys)
    finally:
        client.close()


def test_unreachable_redis_fails_fast_with_store_unavailable() -> None:
    from tests.support import free_port

    async def scenario() -> float:
        store = open_store(f"redis://:secret-password@127.0.0.1:{free_port()}/0", "down")
        started = time.monotonic()
        try:
            with pytest.raises(StoreUnavailable) as caught:
                await store.ping()
            assert "secret-password" not in str(caught.value) and "127.0.0.1" in str(caught.value)
            with pytest.raises(StoreUnavailable):
                await store.take_token("b", rate=1.0, burst=1, ttl_s=1)
        finally:
            await store.close()
        return time.monotonic() - started

    assert asyncio.run(scenario()) < 3.0  # 0.04 s at worst on 2 loaded cores


def test_pooled_connections_outlive_a_redis_restart() -> None:
    """Connections pooled before Redis restarted are stale; the one immediate retry reconnects, so
    no request fails once Redis is back (each stale connection used to cost a 503)."""
    redis = RedisServer()
    redis.start()

    async def scenario() -> None:
        store = open_store(redis.url, "restart")
        try:
            await asyncio.gather(
                *(store.put(f"k{i}", b"v", 10) for i in range(4))
            )  # several pooled connections
            redis.stop()
            redis.start()  # same port, empty
            for i in range(8):
                await store.put(f"k{i}", b"v", 10)
                assert await store.claim(f"c{i}", 10)
                assert await store.take_token("b", rate=1.0, burst=100, ttl_s=10) == 0.0
                await store.append("log", b"x", max_len=10, ttl_s=10)
        finally:
            await store.close()

    try:
        asyncio.run(scenario())
    finally:
        redis.close()


def test_a_subscription_made_as_redis_comes_back_succeeds_and_hears() -> None:
    """Redis restarted and answers again, while the pub/sub connection is still being replaced: a
    new subscription (a replica's first legacy session) succeeds, and hears what is published."""
    redis = RedisServer()
    redis.start()

    async def scenario() -> list[bytes]:
        store = open_store(redis.url, "resubscribe")
        heard: list[bytes] = []
        try:
            await store.subscribe("first", lambda _: None)
            await asyncio.to_thread(redis.stop)
            await asyncio.to_thread(redis.start)  # same port, answering again
            await store.ping()
            await store.subscribe("second", heard.append)  # used to fail: "pub/sub reconnecting"
            deadline = time.monotonic() + 10
            while not heard and time.monotonic() < deadline:  # the pump resubscribes within ~1 s
                await store.publish("second", b"hello")
                await asyncio.sleep(0.2)
        finally:
            await store.close()
        return heard

    try:
        assert asyncio.run(scenario())[:1] == [b"hello"]
    finally:
        redis.close()


def test_store_urls() -> None:
    assert isinstance(open_store(None, "x"), MemoryStore)
    assert isinstance(open_store("memory", "x"), MemoryStore)
    with pytest.raises(ValueError, match="unknown store 'postgres'"):
        open_store("postgres://db", "x")
    with pytest.raises(ValueError, match="namespace"):
        open_store("redis://127.0.0.1:1/0", "has space")
