"""The client response cache: `server/discover` and `tools/list` pages (CACHE-03..17).

Rules first (the cache object, then `ClientCore` flows against scripted replies and a fake
clock), then real servers: our generated weather server counts what actually reaches it,
with public and private scopes and bearer tokens; the official SDK's caching hints are honoured.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from mcpgen_runtime.cache import (
    MAX_TTL_MS,
    CacheEntry,
    CacheStore,
    MemoryCacheStore,
    ResponseCache,
    StaleCacheWarning,
    auth_partition,
    ttl_ms,
)
from mcpgen_runtime.client import Client, ClientCore
from mcpgen_runtime.errors import ConnectError, InvalidParamsError
from mcpgen_runtime.server import BearerAuth, ServerConfig
from tests.runtime._client_drivers import driver
from tests.runtime._client_helpers import LiveServer, WeatherAsyncClient, WeatherClient, WeatherServer, drive
from tests.support import PYTHON, ROOT, free_port, running_server

pytestmark = pytest.mark.timeout(60)

V = "2026-07-28"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def cache(clock: Clock | None = None, store: CacheStore | None = None) -> ResponseCache:
    return ResponseCache(
        MemoryCacheStore() if store is None else store, server="http://s/mcp", clock=clock or Clock()
    )


def page(
    names: list[str], *, cursor: str | None = None, ttl: Any = 60_000, scope: str = "public"
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "resultType": "complete",
        "ttlMs": ttl,
        "cacheScope": scope,
        "tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names],
    }
    if cursor is not None:
        result["nextCursor"] = cursor
    return {"result": result}


# -- the cache object --------------------------------------------------------------------------


def test_key_is_method_plus_result_params_cache03() -> None:
    c = cache()
    keys = {c.key("tools/list", params, V, "") for params in ({}, {"cursor": ""}, {"cursor": "a"})}
    assert len(keys) == 3  # no cursor, the empty cursor and another cursor are three requests (PAGE-07)
    assert c.key("tools/list", {}, V, "") != c.key("server/discover", {}, V, "")
    assert c.key("tools/list", {}, V, "") != c.key("tools/list", {}, "2027-01-01", "")
    assert c.key("tools/list", {}, V, "") != c.key("tools/list", {}, V, "p")
    assert c.key("tools/list", {"cursor": "a", "_meta": {"x": 1}}, V, "") == c.key(
        "tools/list", {"cursor": "a"}, V, ""
    )
    assert c.key("tools/list", {}, V, "") != ResponseCache(MemoryCacheStore(), server="other").key(
        "tools/list", {}, V, ""
    )


@pytest.mark.parametrize(
    ("ttl", "expected"),
    [(None, 0), (-5, 0), (0, 0), (1.5, 0), (True, 0), ("100", 0), (250, 250), (10**12, MAX_TTL_MS)],
)
def test_ttl_missing_negative_or_odd_is_zero_cache05_cache08_cache09(ttl: Any, expected: int) -> None:
    assert ttl_ms({} if ttl is None else {"ttlMs": ttl}) == expected


def test_freshness_window_cache06_cache07() -> None:
    clock = Clock()
    c = cache(clock)
    c.save(
        "tools/list",
        {},
        V,
        "",
        {"resultType": "complete", "ttlMs": 1000, "cacheScope": "public", "tools": []},
    )
    entry = c.lookup("tools/list", {}, V, "")
    assert entry is not None and c.is_fresh(entry)
    clock.now += 0.999
    assert c.is_fresh(entry)
    clock.now += 0.001
    assert not c.is_fresh(entry)  # fresh only while now < received + ttl
    assert not CacheEntry({}, clock.now, 0).fresh(clock.now)  # ttl 0: stale at once


def test_private_entries_stay_in_their_partition_cache13() -> None:
    c = cache()
    private = {"resultType": "complete", "ttlMs": 1000, "cacheScope": "private", "tools": []}
    c.save("tools/list", {}, V, None, private)
    assert c.lookup("tools/list", {}, V, "alice") is None  # no partition known: a private result is not kept
    c.save("tools/list", {}, V, "alice", private)
    assert c.lookup("tools/list", {}, V, "alice") is not None
    assert c.lookup("tools/list", {}, V, "bob") is None
    assert c.lookup("tools/list", {}, V, None) is None
    unscoped = {"resultType": "complete", "ttlMs": 1000, "tools": []}  # no scope: treated as private
    c.save("server/discover", {}, V, "alice", unscoped)
    assert c.lookup("server/discover", {}, V, "bob") is None
    public = {**private, "cacheScope": "public"}
    c.save("tools/list", {"cursor": "p"}, V, "alice", public)
    assert c.lookup("tools/list", {"cursor": "p"}, V, "bob") is not None
    assert c.lookup("tools/list", {"cursor": "p"}, V, None) is not None


def test_mrtr_requests_and_interim_results_are_never_cached_cache02_cache04() -> None:
    c = cache()
    result = {"resultType": "complete", "ttlMs": 1000, "cacheScope": "public", "tools": []}
    for params in ({"inputResponses": {}}, {"requestState": "s"}):
        c.save("tools/list", params, V, "", result)
        assert c.lookup("tools/list", params, V, "") is None
    c.save("tools/list", {}, V, "", {**result, "resultType": "input_required"})
    assert c.lookup("tools/list", {}, V, "") is None


def test_invalidate_drops_only_what_this_cache_touched_and_store_is_bounded() -> None:
    store = MemoryCacheStore(max_entries=2)
    mine, theirs = cache(store=store), ResponseCache(store, server="other")
    result = {"resultType": "complete", "ttlMs": 1000, "cacheScope": "public", "tools": []}
    theirs.save("tools/list", {}, V, "", result)
    mine.save("tools/list", {}, V, "", result)
    mine.invalidate("tools/list")
    assert mine.lookup("tools/list", {}, V, "") is None
    assert theirs.lookup("tools/list", {}, V, "") is not None
    for cursor in "abc":
        mine.save("tools/list", {"cursor": cursor}, V, "", result)
    assert len(store) == 2


def test_partition_digest_depends_on_headers_and_token() -> None:
    base = auth_partition({"Authorization": "Bearer a"})
    assert base == auth_partition({"authorization": "Bearer a"})
    assert base != auth_partition({"Authorization": "Bearer b"})
    assert auth_partition({}, "t1") != auth_partition({}, "t2")


# -- ClientCore flows against scripted replies -----------------------------------------------


def cached_core(clock: Clock) -> ClientCore:
    return ClientCore(cache=cache(clock), partition="p")


def test_second_listing_within_ttl_sends_nothing_then_refetches_cache07_cache10() -> None:
    clock = Clock()
    core = cached_core(clock)
    _, sent = drive(core.list_all_flow(partition="p"), page(["a"], ttl=5000))
    assert len(sent) == 1
    definitions, sent = drive(core.list_all_flow(partition="p"))
    assert not sent and [d["name"] for d in definitions] == ["a"] and list(core.tools) == ["a"]
    clock.now += 5
    _, sent = drive(core.list_all_flow(partition="p"), page(["a", "b"]))
    assert len(sent) == 1 and list(core.tools) == ["a", "b"]
    _, sent = drive(core.list_all_flow(partition="p", refresh=True), page(["a"]))  # CACHE-16
    assert len(sent) == 1


def test_each_page_has_its_own_clock_cache15() -> None:
    clock = Clock()
    core = cached_core(clock)
    drive(core.list_all_flow(partition="p"), page(["a"], cursor="c2", ttl=60_000), page(["b"], ttl=0))
    _, sent = drive(core.list_all_flow(partition="p"), page(["b2"], ttl=0))
    assert [o.message["params"].get("cursor") for o in sent] == ["c2"]  # only the expired page, by its cursor
    assert list(core.tools) == ["a", "b2"]


def test_served_results_are_private_copies() -> None:
    core = cached_core(Clock())
    first, _ = drive(
        core.discover_flow(partition="p"),
        {
            "result": {
                "resultType": "complete",
                "ttlMs": 1000,
                "cacheScope": "public",
                "supportedVersions": [V],
            }
        },
    )
    first["supportedVersions"].append("mutated")
    second, sent = drive(core.discover_flow(partition="p"))
    assert not sent and second["supportedVersions"] == [V]


def test_stale_entry_served_when_refetch_fails_with_warning() -> None:
    clock = Clock()
    core = cached_core(clock)
    drive(core.list_all_flow(partition="p"), page(["a"], ttl=10))
    clock.now += 1
    with pytest.warns(StaleCacheWarning, match="refetch failed"):
        definitions, sent = drive(core.list_all_flow(partition="p"), ConnectError("server down"))
    assert len(sent) == 1 and [d["name"] for d in definitions] == ["a"]
    with pytest.raises(ConnectError):  # nothing cached: the error stands
        drive(cached_core(clock).list_all_flow(partition="p"), ConnectError("server down"))


def test_rejected_cursor_drops_every_page_and_starts_over_cache17() -> None:
    clock = Clock()
    core = cached_core(clock)
    drive(core.list_all_flow(partition="p"), page(["a"], cursor="old", ttl=60_000), page(["b"], ttl=0))
    invalid = InvalidParamsError(-32602, "Invalid cursor")
    definitions, sent = drive(
        core.list_all_flow(partition="p"), invalid, page(["a"], cursor="new"), page(["c"])
    )
    assert [o.message["params"].get("cursor") for o in sent] == ["old", None, "new"]
    assert [d["name"] for d in definitions] == ["a", "c"]
    drive(
        core.list_all_flow(partition="p"), page(["a"], cursor="old", ttl=60_000)
    )  # refill: page 1 cached anew
    with pytest.raises(InvalidParamsError):  # restarting happens once
        drive(core.list_all_flow(partition="p", refresh=True), page(["a"], cursor="x"), invalid)


def test_list_changed_notification_invalidates_cache14() -> None:
    core = cached_core(Clock())
    drive(core.list_all_flow(partition="p"), page(["a"]))
    core.notify({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    _, sent = drive(core.list_all_flow(partition="p"), page(["a", "b"]))
    assert len(sent) == 1


# -- real servers ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def weather() -> Iterator[LiveServer]:
    with LiveServer(WeatherServer(ServerConfig(page_size=2))) as live:
        yield live


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_generated_client_second_listing_sends_no_request(weather: LiveServer, mode: str) -> None:
    """Our generated server serves ttlMs=60000 (public): within it, the generated client
    answers listings and discover from its cache — counted at the server (CACHE-07)."""
    with (
        driver(mode, lambda: WeatherClient(weather.url), lambda: WeatherAsyncClient(weather.url)) as drv,
        weather.recording() as received,
    ):
        first = drv("list_all_tools")
        assert len(first) == 6 and weather.count("tools/list") == 3  # 2 tools per page
        assert drv("list_all_tools") == first
        assert drv("list_tools").cached
        drv("discover")
        drv("discover")
        assert [r.method for r in received] == ["tools/list"] * 3 + ["server/discover"]
        assert drv.run(lambda c: c.get_weather_data("Paris")).conditions  # calls are never cached
        assert drv.run(lambda c: c.get_weather_data("Paris")).conditions
        assert weather.count("tools/call") == 2
        drv("list_all_tools", refresh=True)
        assert weather.count("tools/list") == 6


def test_private_results_are_per_token_public_ones_shared_cache13() -> None:
    tokens = {"alice-token": "alice", "bob-token": "bob"}
    current = ["alice-token"]
    for scope in ("private", "public"):
        config = ServerConfig(page_size=None, list_cache_scope=scope, auth=BearerAuth(tokens.get))
        with (
            LiveServer(WeatherServer(config)) as live,
            Client(live.url, token_provider=lambda: current[0]) as client,
        ):
            current[0] = "alice-token"
            client.list_all_tools()
            client.list_all_tools()
            current[0] = "bob-token"
            client.list_all_tools()
            current[0] = "alice-token"
            client.list_all_tools()
            listings = [r.headers["authorization"] for r in live.requests if r.method == "tools/list"]
            if scope == "private":
                assert listings == ["Bearer alice-token", "Bearer bob-token"]
            else:
                assert listings == ["Bearer alice-token"]


def test_static_headers_partition_private_entries_across_clients_sharing_a_store() -> None:
    store = MemoryCacheStore()
    tokens = {"a": "alice", "b": "bob"}
    config = ServerConfig(page_size=None, list_cache_scope="private", auth=BearerAuth(tokens.get))
    with LiveServer(WeatherServer(config)) as live:
        for token in ("a", "a", "b"):
            with Client(live.url, headers={"Authorization": f"Bearer {token}"}, cache=store) as client:
                client.list_all_tools()
        assert [r.headers["authorization"] for r in live.requests] == ["Bearer a", "Bearer b"]


def test_stale_listing_served_when_the_server_is_gone() -> None:
    clock = Clock()
    live = LiveServer(WeatherServer(ServerConfig(page_size=None)))
    with live, Client(live.url) as client:
        assert client.cache is not None
        client.cache.clock = clock
        tools = client.list_all_tools()
        live.__exit__(None, None, None)  # the server goes away
        clock.now += 3600
        with pytest.warns(StaleCacheWarning):
            assert client.list_all_tools() == tools


def test_cache_can_be_turned_off(weather: LiveServer) -> None:
    with Client(weather.url, cache=False) as client, weather.recording():
        client.discover()
        client.discover()
        assert weather.count("server/discover") == 2 and client.cache is None


def test_custom_store_is_used(weather: LiveServer) -> None:
    class Recording(MemoryCacheStore):
        def __init__(self) -> None:
            super().__init__()
            self.sets: list[str] = []

        def set(self, key: str, entry: CacheEntry) -> None:
            self.sets.append(key)
            super().set(key, entry)

    store = Recording()
    with Client(weather.url, cache=store) as client:
        client.discover()
    assert len(store.sets) == 1 and "server/discover" in store.sets[0]
    with pytest.raises(TypeError, match="CacheStore"):
        Client(weather.url, cache=object())  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    port = free_port()
    with running_server(
        [PYTHON, str(ROOT / "tests" / "peers" / "sdk_server.py"), "--http", "--port", str(port)], port
    ):
        yield f"http://127.0.0.1:{port}/mcp"


def test_sdk_caching_hints_are_honoured(sdk_url: str) -> None:
    """The official SDK marks tools/list ttlMs=60000, public; pages are served from the cache."""
    with Client(sdk_url) as client, warnings.catch_warnings():
        warnings.simplefilter("error")
        first = client.list_tools()
        assert (first.ttl_ms, first.cache_scope, first.cached) == (60000, "public", False)
        again = client.list_tools()
        assert again.cached and again.tools == first.tools
        assert client.list_tools(first.next_cursor).cached is False  # page 2 ("" cursor) has its own entry
        assert client.list_tools(first.next_cursor).cached is True
        assert client.list_tools(refresh=True).cached is False
