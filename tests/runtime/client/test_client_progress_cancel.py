"""Progress callbacks (PROG-01/02), per-call options for generated methods, and cancellation
(HTTP-21, CANCEL-03/04/05/10) — against real servers: our test weather server (which reports
progress and counts the handlers it had to cancel) served in-process and over stdio, and the
official SDK.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.errors import RequestTimeoutError
from tests.runtime._client_drivers import driver
from tests.runtime._client_helpers import LiveServer, WeatherAsyncClient, WeatherClient
from tests.runtime.weather_server_app import WeatherServer
from tests.support import PYTHON, ROOT, free_port, running_server, subprocess_env

pytestmark = pytest.mark.timeout(60)

STDIO = [PYTHON, "-m", "tests.runtime.weather_server_app", "--stdio"]
STDIO_ENV = {"PYTHONPATH": subprocess_env()["PYTHONPATH"]}
SDK_PEER = ROOT / "tests" / "peers" / "sdk_server.py"
SLOW = {"location": "Slow"}  # progress 0, 50, 100 of 100, then the answer


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    with LiveServer(WeatherServer()) as server:
        yield server


def tokens_sent(live: LiveServer) -> list[Any]:
    return [r.body["params"]["_meta"].get("progressToken") for r in live.requests if r.method == "tools/call"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_progress_callback_per_call_and_per_client_prog01_prog02(live: LiveServer, mode: str) -> None:
    per_client: list[tuple[Any, ...]] = []
    per_call: list[tuple[Any, ...]] = []
    notes: list[dict[str, Any]] = []
    with (
        driver(
            mode,
            lambda: Client(
                live.url, on_progress=lambda *a: per_client.append(a), on_notification=notes.append
            ),
            lambda: AsyncClient(
                live.url, on_progress=lambda *a: per_client.append(a), on_notification=notes.append
            ),
        ) as drv,
        live.recording(),
    ):
        assert drv("call_tool", "get_weather", SLOW).text == "Weather in Slow: foggy"
        drv("call_tool", "get_weather", SLOW, on_progress=lambda *a: per_call.append(a))
        drv("call_tool", "get_weather", SLOW)
        tokens = tokens_sent(live)
    expected = [(0, 100, "step 0"), (50, 100, "step 50"), (100, 100, "step 100")]
    assert per_client == expected * 2 and per_call == expected
    assert all(isinstance(token, str) for token in tokens) and len(set(tokens)) == 3  # PROG-01, PROG-02
    assert (
        sum(1 for n in notes if n["method"] == "notifications/progress") == 9
    )  # on_notification still hears them


def test_no_progress_callback_sends_no_token(live: LiveServer) -> None:
    with Client(live.url) as client, live.recording():
        client.call_tool("get_weather", SLOW)
        client.call_tool("get_weather", SLOW, meta={"progressToken": 7})
        assert tokens_sent(live) == [None, 7]


def test_caller_token_is_kept_and_concurrent_calls_get_their_own_progress(live: LiveServer) -> None:
    seen: dict[int, list[float]] = {0: [], 1: [], 2: []}

    async def main(client: AsyncClient) -> None:
        await asyncio.gather(
            *(
                client.call_tool(
                    "get_weather",
                    SLOW,
                    on_progress=lambda p, t, m, i=i: seen[i].append(p),
                    meta={"progressToken": f"mine-{i}"} if i == 0 else None,
                )
                for i in range(3)
            )
        )

    with driver("async", lambda: Client(live.url), lambda: AsyncClient(live.url)) as drv, live.recording():
        drv.run(main)
        tokens = tokens_sent(live)
    assert seen == {0: [0, 50, 100], 1: [0, 50, 100], 2: [0, 50, 100]}
    assert "mine-0" in tokens and len(set(tokens)) == 3


def test_sdk_progress_over_every_transport() -> None:
    port = free_port()
    with running_server([PYTHON, str(SDK_PEER), "--http", "--port", str(port)], port):
        url = f"http://127.0.0.1:{port}/mcp"
        for make_sync, make_async in (
            (lambda: Client(url), lambda: AsyncClient(url)),
            (
                lambda: Client.stdio([PYTHON, str(SDK_PEER), "--stdio"]),
                lambda: AsyncClient.stdio([PYTHON, str(SDK_PEER), "--stdio"]),
            ),
        ):
            for mode in ("sync", "async"):
                seen: list[tuple[Any, ...]] = []
                with driver(mode, make_sync, make_async) as drv:
                    result = drv("call_tool", "count_progress", {"steps": 3}, on_progress=seen_by(seen))
                assert result.text == "counted 3"
                assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_generated_methods_take_options_through_a_view_cancel05(live: LiveServer, mode: str) -> None:
    seen: list[float] = []
    with driver(mode, lambda: WeatherClient(live.url), lambda: WeatherAsyncClient(live.url)) as drv:
        view = drv.client.with_options(on_progress=lambda p, t, m: seen.append(p), timeout=0.3)
        drv.run(lambda _: view.get_weather("Slow"))
        assert seen == [0, 50, 100]
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError):
            drv.run(lambda _: view.execute_sql(region="eu", query="SLEEP 5"))
        assert time.monotonic() - started < 2  # 0.34 s at worst on 2 loaded cores
        drv.run(
            lambda _: view.close() if mode == "sync" else view.aclose()
        )  # a view does not own the connection
        assert drv.run(lambda c: c.get_weather("Paris")).text.startswith("Weather in Paris")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_http_timeout_closes_the_stream_and_the_server_cancels_http21_cancel04(
    live: LiveServer, mode: str
) -> None:
    server: WeatherServer = live.server  # type: ignore[assignment]
    before = server.cancelled_sleeps
    with driver(mode, lambda: Client(live.url), lambda: AsyncClient(live.url)) as drv:
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError):
            drv("call_tool", "execute_sql", {"region": "eu", "query": "SLEEP 5"}, timeout=0.3)
        assert time.monotonic() - started < 2  # 0.34 s at worst on 2 loaded cores
        wait_for(lambda: server.cancelled_sleeps == before + 1)
        assert drv("call_tool", "get_weather", {"location": "Paris"}).text.startswith("Weather in Paris")


def test_http_task_cancellation_closes_the_stream_http21(live: LiveServer) -> None:
    server: WeatherServer = live.server  # type: ignore[assignment]
    before = server.cancelled_sleeps

    async def main(client: AsyncClient) -> None:
        task = asyncio.create_task(client.call_tool("execute_sql", {"region": "eu", "query": "SLEEP 5"}))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with driver("async", lambda: Client(live.url), lambda: AsyncClient(live.url)) as drv:
        drv.run(main)
        wait_for(lambda: server.cancelled_sleeps == before + 1)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_stdio_timeout_cancels_at_the_server_and_late_reply_is_ignored_cancel03_cancel10(mode: str) -> None:
    kwargs: dict[str, Any] = {"env": STDIO_ENV, "cwd": ROOT}
    with driver(
        mode, lambda: Client.stdio(STDIO, **kwargs), lambda: AsyncClient.stdio(STDIO, **kwargs)
    ) as drv:
        assert drv("call_tool", "execute_sql", {"region": "eu", "query": "CANCELLED"}).text == "0"  # warm
        with pytest.raises(RequestTimeoutError):
            drv("call_tool", "execute_sql", {"region": "eu", "query": "SLEEP 5"}, timeout=0.3)
        # The server got notifications/cancelled and stopped the handler.
        wait_for(lambda: drv("call_tool", "execute_sql", {"region": "eu", "query": "CANCELLED"}).text == "1")
        with pytest.raises(RequestTimeoutError):  # not cancellable in time? its reply must not leak either
            drv("call_tool", "get_weather", SLOW, timeout=0.001)
        time.sleep(0.3)
        assert drv("call_tool", "get_weather", {"location": "Paris"}).text.startswith("Weather in Paris")


def test_stdio_task_cancellation_cancels_at_the_server_cancel03() -> None:
    async def main(client: AsyncClient) -> str:
        await client.call_tool("execute_sql", {"region": "eu", "query": "CANCELLED"})  # warm
        task = asyncio.create_task(client.call_tool("execute_sql", {"region": "eu", "query": "SLEEP 5"}))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(50):
            count = (await client.call_tool("execute_sql", {"region": "eu", "query": "CANCELLED"})).text
            if count == "1":
                return count
            await asyncio.sleep(0.05)
        return count

    kwargs: dict[str, Any] = {"env": STDIO_ENV, "cwd": ROOT}
    with driver(
        "async", lambda: Client.stdio(STDIO, **kwargs), lambda: AsyncClient.stdio(STDIO, **kwargs)
    ) as drv:
        assert drv.run(main) == "1"


def seen_by(seen: list[tuple[Any, ...]]) -> Any:
    return lambda *args: seen.append(args)


def wait_for(condition: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)
