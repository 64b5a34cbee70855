"""The lean HTTP/1.1 engine against real servers under uvicorn: ours (tests/runtime/weather_server_app.py)
and the official SDK's (tests/peers/sdk_server.py) — keep-alive, JSON and SSE replies, a server
closing idle connections, timeouts and the disconnect that cancels (HTTP-21).
"""

from __future__ import annotations

import select
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.errors import RequestTimeoutError
from mcpgen_runtime.transport import sync_backend
from tests.runtime._client_drivers import Driver, driver
from tests.support import PYTHON, ROOT, free_port, running_server

pytestmark = [pytest.mark.timeout(60), pytest.mark.parametrize("mode", ["sync", "async"])]

# Our server under uvicorn with a 1 s keep-alive, so "the server closed my idle connection" takes 1 s.
OURS = (
    "import sys, uvicorn\n"
    "from tests.runtime.weather_server_app import WeatherServer\n"
    "uvicorn.run(WeatherServer().asgi_app(), host='127.0.0.1', port=int(sys.argv[1]), log_level='warning',\n"
    "            lifespan='off', timeout_keep_alive=1)\n"
)


@pytest.fixture(scope="module")
def ours() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, "-c", OURS, str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def sdk() -> Iterator[str]:
    port = free_port()
    with running_server(
        [PYTHON, str(ROOT / "tests" / "peers" / "sdk_server.py"), "--http", "--port", str(port)], port
    ):
        yield f"http://127.0.0.1:{port}/mcp"


def client(mode: str, url: str, **kwargs: Any) -> Any:
    return driver(mode, lambda: Client(url, **kwargs), lambda: AsyncClient(url, **kwargs))


def pool_of(drv: Driver) -> Any:
    transport = drv.client.transport
    assert transport.engine == "http11"  # the default for a plain http:// URL
    return transport._engine.pool


def idle_sockets(drv: Driver) -> list[Any]:
    return list(pool_of(drv)._idle)


def test_ours_keep_alive_and_json_replies(mode: str, ours: str) -> None:
    with client(mode, ours) as drv:
        assert drv("call_tool", "calculate_sum", {"a": 1, "b": 2}).text == "3"
        [conn] = idle_sockets(drv)
        for i in range(20):
            assert drv("call_tool", "calculate_sum", {"a": i, "b": 1}).text == f"{i + 1}"
        assert idle_sockets(drv) == [conn]  # one connection served every call
        assert len(drv("list_all_tools")) == 6


def test_ours_sse_progress_reaches_on_notification(mode: str, ours: str) -> None:
    notes: list[dict[str, Any]] = []
    with client(mode, ours, on_notification=notes.append) as drv:
        result = drv("call_tool", "get_weather", {"location": "Slow"}, meta={"progressToken": "p1"})
        assert result.text == "Weather in Slow: foggy"
        assert [n["params"]["progress"] for n in notes if n["method"] == "notifications/progress"] == [
            0,
            50,
            100,
        ]
        assert drv("call_tool", "calculate_sum", {"a": 2, "b": 2}).text == "4"  # the client goes on


def wait_closed_by_server(conn: Any) -> None:
    """Until the server's close of an idle pooled connection has arrived (its EOF is readable)."""
    blocking = isinstance(conn, sync_backend.Connection)
    sock = conn.sock if blocking else conn.transport.get_extra_info("socket")
    readable, _, _ = select.select([sock], [], [], 10)
    assert readable, "the server kept the idle connection open"


def test_ours_closed_idle_connection_is_replaced(
    mode: str, ours: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with client(mode, ours) as drv:
        assert drv("call_tool", "calculate_sum", {"a": 1, "b": 1}).text == "2"
        [before] = idle_sockets(drv)
        wait_closed_by_server(before)  # uvicorn closes it after 1 s idle
        # The blocking pool polls a connection idle for IDLE_CHECK_AFTER: moved past that on its clock
        # rather than slept, so the close is found by that check, not by the retry of a lost request.
        monkeypatch.setattr(sync_backend, "now", lambda: time.monotonic() + sync_backend.IDLE_CHECK_AFTER)
        assert drv("call_tool", "calculate_sum", {"a": 1, "b": 2}).text == "3"
        [after] = idle_sockets(drv)
        assert after is not before


def test_ours_timeout_disconnect_cancels_the_handler_http21(mode: str, ours: str) -> None:
    with client(mode, ours) as drv:
        before = int(drv("call_tool", "execute_sql", {"region": "eu", "query": "CANCELLED"}).text)
        with pytest.raises(RequestTimeoutError):
            drv(
                "call_tool",
                "execute_sql",
                {"region": "eu", "query": "SLEEP 5"},
                meta={"progressToken": "t"},
                timeout=0.5,
            )
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            after = int(drv("call_tool", "execute_sql", {"region": "eu", "query": "CANCELLED"}).text)
            if after > before:
                break
            time.sleep(0.05)
        assert after == before + 1


def test_sdk_server_keep_alive_and_sse(mode: str, sdk: str) -> None:
    notes: list[dict[str, Any]] = []
    with client(mode, sdk, on_notification=notes.append) as drv:
        for i in range(5):
            assert drv("call_tool", "calculate_sum", {"a": i, "b": 1}).text == f"{i + 1}"
        assert len(idle_sockets(drv)) == 1
        result = drv("call_tool", "count_progress", {"steps": 3}, meta={"progressToken": "s"})
        assert result.text == "counted 3"
        assert [n["params"]["progress"] for n in notes if n["method"] == "notifications/progress"] == [
            1,
            2,
            3,
        ]
        assert drv("call_tool", "calculate_sum", {"a": 1, "b": 1}).text == "2"
