"""A call whose server reports progress keeps its deadline alive (CANCEL-06): with `max_time`,
`timeout` bounds the silence (each progress notification restarts it) and `max_time` the whole
call. Against a real server (tests/runtime/progress_server_app.py) in both eras, over HTTP (the
lean engine and httpx) and stdio, with both drivers; and the official SDK 1.x over the deprecated
HTTP+SSE transport. Without `max_time` nothing changes: `timeout` stays one deadline over the
request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.errors import RequestTimeoutError
from mcpgen_runtime.transport import AsyncHttpTransport, HttpTransport
from mcpgen_runtime.transport.limits import Deadline
from tests.runtime._client_drivers import driver
from tests.runtime._client_helpers import LiveServer
from tests.runtime.progress_server_app import ProgressServer
from tests.support import PYTHON, ROOT, SDK1_PYTHON, free_port, needs_peer, running_server, subprocess_env

pytestmark = pytest.mark.timeout(120)

STDIO = [PYTHON, "-m", "tests.runtime.progress_server_app", "--stdio"]
SDK1_PEER = ROOT / "tests" / "peers" / "sdk1_server.py"
STDIO_OPTIONS: dict[str, Any] = {"env": {"PYTHONPATH": subprocess_env()["PYTHONPATH"]}, "cwd": ROOT}
SILENCE = 1.1  # the calls' timeout; worst progress gap on 2 loaded cores: 0.27 s (tick), 0.35 s (resume)
START = 60.0  # the clients' own timeout: a stdio server's start and a handshake count against it
TICKS = {"steps": 15, "interval": 0.1}  # 1.5 s in all, past the timeout: only progress keeps it alive
MAX_TIME = 1.5  # past SILENCE; 3 progress notifications arrived within 0.36 s at worst on 2 loaded cores


@pytest.fixture(scope="module")
def live() -> Iterator[LiveServer]:
    with LiveServer(ProgressServer()) as server:
        yield server


def clients(
    live: LiveServer, connection: str, era: str
) -> tuple[Callable[[], Client], Callable[[], AsyncClient]]:
    options: dict[str, Any] = {"timeout": START, "era": era}
    if connection == "stdio":
        return (
            lambda: Client.stdio(STDIO, **STDIO_OPTIONS, **options),
            lambda: AsyncClient.stdio(STDIO, **STDIO_OPTIONS, **options),
        )
    if connection == "httpx":
        return (
            lambda: Client(
                transport=HttpTransport(live.url, timeout=START, client=httpx.Client()), **options
            ),
            lambda: AsyncClient(
                transport=AsyncHttpTransport(live.url, timeout=START, client=httpx.AsyncClient()),
                **options,
            ),
        )
    return lambda: Client(live.url, **options), lambda: AsyncClient(live.url, **options)


@pytest.mark.parametrize(
    ("connection", "era", "mode"),
    [
        ("http", "modern", "sync"),
        ("http", "modern", "async"),
        ("http", "legacy", "sync"),
        ("httpx", "modern", "sync"),
        ("httpx", "legacy", "async"),
        ("stdio", "modern", "sync"),
        ("stdio", "legacy", "sync"),
        ("stdio", "legacy", "async"),
    ],
)
def test_progress_restarts_the_timeout_and_max_time_ends_the_call_cancel06(
    live: LiveServer, connection: str, era: str, mode: str
) -> None:
    seen: list[float] = []
    with driver(mode, *clients(live, connection, era)) as drv:
        # started, and the era settled, within the client's own generous timeout
        assert drv("call_tool", "tick", {"steps": 1, "interval": 0}).text == "ticked 1"
        # no on_progress: with max_time the call still asks for progress, which keeps it alive
        assert drv("call_tool", "tick", TICKS, timeout=SILENCE, max_time=30).text == "ticked 15"

        view = drv.client.with_options(
            timeout=SILENCE, max_time=MAX_TIME, on_progress=lambda p, t, m: seen.append(p)
        )
        with pytest.raises(RequestTimeoutError, match=r"within the max time of 1\.5s"):
            drv.run(lambda _: view.call_tool("tick", {"steps": 100, "interval": 0.1}))
        assert 3 <= len(seen) < 100  # it heard progress until max_time ended it (~14 unloaded)

        with pytest.raises(RequestTimeoutError, match=r"within 1\.1s without progress"):
            drv("call_tool", "silent", {"seconds": 10}, timeout=SILENCE, max_time=30)  # silence ends it

        with pytest.raises(RequestTimeoutError, match=r"within 1\.1s$"):  # without max_time: as before
            drv("call_tool", "tick", TICKS, timeout=SILENCE)

        assert drv("call_tool", "tick", {"steps": 1, "interval": 0}).text == "ticked 1"  # still usable


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_progress_on_a_resumed_legacy_stream_keeps_the_call_alive(live: LiveServer, mode: str) -> None:
    """2025-11-25 polling: the server ends the SSE reply, the client resumes with `Last-Event-ID`
    (a GET under the same deadline), and the progress that arrives there pushes it back too."""
    seen: list[float] = []
    make = (lambda: Client(live.url, era="legacy"), lambda: AsyncClient(live.url, era="legacy"))
    with driver(mode, *make) as drv, live.recording() as received:
        view = drv.client.with_options(
            timeout=SILENCE, max_time=30, on_progress=lambda p, t, m: seen.append(p)
        )
        assert drv.run(lambda _: view.call_tool("resume", TICKS)).text == "resumed after 15"
    assert seen == list(range(16))
    assert any("last-event-id" in request.headers for request in received)  # it did resume


def test_a_client_wide_max_time_and_generated_style_calls(live: LiveServer) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    with Client(live.url, timeout=SILENCE, max_time=30, on_progress=lambda *a: seen.append(a)) as client:
        assert client.call_tool("tick", {**TICKS, "total": False}).text == "ticked 15"
    assert seen == [(step, None, f"step {step}") for step in range(1, 16)]


@pytest.mark.parametrize("value", [0, -1, float("inf"), float("nan"), True, "5"])
def test_max_time_must_be_a_positive_finite_number(value: Any) -> None:
    with pytest.raises(ValueError, match="max_time"):
        Client("http://127.0.0.1:9/mcp", max_time=value)
    with Client("http://127.0.0.1:9/mcp") as client, pytest.raises(ValueError, match="max_time"):
        client.with_options(max_time=value)


def test_deadline_extends_up_to_its_end() -> None:
    deadline = Deadline(1.0, 5.0, started=0.0)  # started long ago: its end has passed
    assert deadline.expired() and str(deadline) == "the max time of 5s"
    deadline.extend()
    assert deadline.expired()  # progress never moves it past the end
    fresh = Deadline(1.0, 3600.0)
    assert not fresh.expired() and 0 < fresh.remaining() <= 1.0 and str(fresh) == "1s without progress"
    silent_only = Deadline(None, 3600.0)
    assert silent_only.remaining() > 3000 and str(silent_only) == "the max time of 3600s"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_deprecated_http_sse_transport_takes_the_deadline_too(mode: str) -> None:
    """The official SDK 1.x over HTTP+SSE (2024-11-05): replies come on the GET stream."""
    needs_peer(SDK1_PYTHON, "the official SDK 1.30.0 venv")
    port = free_port()
    with running_server([str(SDK1_PYTHON), str(SDK1_PEER), "--sse", "--port", str(port)], port):
        url = f"http://127.0.0.1:{port}/sse"
        seen: list[float] = []
        with driver(mode, lambda: Client(url, timeout=START), lambda: AsyncClient(url, timeout=START)) as drv:
            view = drv.client.with_options(
                timeout=SILENCE, max_time=30, on_progress=lambda p, t, m: seen.append(p)
            )
            assert drv.run(lambda _: view.call_tool("count_progress", {"steps": 3})).text == "counted 3"
            assert seen == [1, 2, 3]
            with pytest.raises(RequestTimeoutError, match=r"within 1\.1s without progress"):
                drv.run(lambda _: view.call_tool("slow_echo", {"text": "hi", "seconds": 10}))
            with pytest.raises(RequestTimeoutError, match=r"within the max time of 0\.5s"):
                drv("call_tool", "slow_echo", {"text": "hi", "seconds": 10}, timeout=5, max_time=0.5)
