"""Client and AsyncClient against the official SDK (mcp==2.3.0) serving specs/weather.json.

Every scenario runs four ways: {sync, async} x {Streamable HTTP, stdio}. The peer is
tests/peers/sdk_server.py: real tool behaviour, 4 tools per tools/list page (the second
page's cursor is ""), and on HTTP it rejects a missing or wrong `Mcp-Param-*` with -32020,
so a successful `execute_sql` over HTTP proves the header was mirrored.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, RootModel

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.errors import (
    HeaderMismatchError,
    InvalidParamsError,
    MethodNotFoundError,
    RequestTimeoutError,
    ToolArgumentsError,
    ToolError,
)
from mcpgen_runtime.transport import AsyncHttpTransport, HttpTransport
from mcpgen_runtime.transport.base import Message, OnNotification, Reply
from tests.runtime._client_drivers import Driver, driver
from tests.support import PYTHON, ROOT, free_port, running_server

PEER = ROOT / "tests" / "peers" / "sdk_server.py"
STDIO_COMMAND = [PYTHON, str(PEER), "--stdio"]
WEATHER_TOOLS: list[dict[str, Any]] = json.loads((ROOT / "specs" / "weather.json").read_text())["tools"]
ALL_TOOL_NAMES = [t["name"] for t in WEATHER_TOOLS] + ["report_error", "slow_echo", "count_progress"]

pytestmark = pytest.mark.timeout(60)


class GetWeatherInput(BaseModel):
    location: str


class WeatherData(BaseModel):
    temperature: float
    conditions: str
    humidity: float


class User(BaseModel):
    id: str
    name: str
    email: str


class Users(RootModel[list[User]]):
    pass


class ExecuteSqlInput(BaseModel):
    region: str
    query: str


class CalculateSumInput(BaseModel):
    a: float
    b: float
    note: str | None = None  # not in the schema: shows that an omitted optional is not sent


class NoInput(BaseModel):
    pass


class Peer:
    """One way of reaching the SDK server: a shared client plus a factory for fresh ones."""

    def __init__(self, mode: str, kind: str, url: str, runner: asyncio.Runner | None) -> None:
        self.mode, self.kind, self.url, self.runner = mode, kind, url, runner
        self._shared: Driver | None = None
        self._shared_cm: Any = None

    @property
    def is_http(self) -> bool:
        return self.kind == "http"

    @contextmanager
    def new(self, **kwargs: Any) -> Iterator[Driver]:
        def make_sync() -> Client:
            return Client(self.url, **kwargs) if self.is_http else Client.stdio(STDIO_COMMAND, **kwargs)

        def make_async() -> AsyncClient:
            return (
                AsyncClient(self.url, **kwargs)
                if self.is_http
                else AsyncClient.stdio(STDIO_COMMAND, **kwargs)
            )

        with driver(self.mode, make_sync, make_async, self.runner) as drv:
            yield drv

    @contextmanager
    def configured(self, **kwargs: Any) -> Iterator[Driver]:
        """A fresh client on HTTP (cheap); on stdio the shared one (a new process costs a second),
        with `tools` loaded and `on_notification` set for the duration."""
        if self.is_http:
            with self.new(**kwargs) as drv:
                yield drv
            return
        drv = self.client
        if "tools" in kwargs:
            drv("list_all_tools")
        drv.client.on_notification = kwargs.get("on_notification")
        try:
            yield drv
        finally:
            drv.client.on_notification = None

    @property
    def client(self) -> Driver:
        if self._shared is None:
            self._shared_cm = self.new()
            self._shared = self._shared_cm.__enter__()
        return self._shared

    def close(self) -> None:
        if self._shared_cm is not None:
            self._shared_cm.__exit__(None, None, None)
        if self.runner is not None:
            self.runner.close()


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, str(PEER), "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module", params=["sync-http", "async-http", "sync-stdio", "async-stdio"])
def peer(request: pytest.FixtureRequest, http_url: str) -> Iterator[Peer]:
    mode, kind = request.param.split("-")
    p = Peer(mode, kind, http_url, asyncio.Runner() if mode == "async" else None)
    try:
        yield p
    finally:
        p.close()


def http_only(peer: Peer) -> None:
    if not peer.is_http:
        pytest.skip("headers exist on Streamable HTTP only")


# -- discovery and listing ----------------------------------------------------------------


def test_discover_ver03(peer: Peer) -> None:
    """VER-03: server/discover answers with supportedVersions and capabilities."""
    discovered = peer.client("discover")
    assert "2026-07-28" in discovered["supportedVersions"]
    assert "tools" in discovered["capabilities"]
    assert discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpgen-sdk-peer"


def test_list_tools_pages_and_empty_cursor_page06_page07(peer: Peer) -> None:
    """PAGE-06/07: "" is a cursor like any other; CACHE-07 hints are passed through."""
    first = peer.client("list_tools")
    assert [t["name"] for t in first.tools] == ALL_TOOL_NAMES[:4]
    assert first.next_cursor == ""
    assert (first.ttl_ms, first.cache_scope) == (60000, "public")
    second = peer.client("list_tools", first.next_cursor)
    assert [t["name"] for t in second.tools] == ALL_TOOL_NAMES[4:8]
    third = peer.client("list_tools", second.next_cursor)
    assert [t["name"] for t in third.tools] == ALL_TOOL_NAMES[8:]
    assert third.next_cursor is None


def test_list_all_tools_follows_every_page_page04(peer: Peer) -> None:
    """PAGE-04: only a missing nextCursor ends the listing; the tool table is refreshed."""
    with peer.configured() as drv:
        tools = drv("list_all_tools")
        assert [t["name"] for t in tools] == ALL_TOOL_NAMES
        assert tools[: len(WEATHER_TOOLS)] == WEATHER_TOOLS  # definitions kept verbatim
        assert list(drv.client.tools) == ALL_TOOL_NAMES
        assert drv.client.tools["execute_sql"].header_params[0].header == "Mcp-Param-Region"


def test_invalid_cursor_is_typed_remote_error_page08(peer: Peer) -> None:
    """PAGE-08: an unknown cursor is -32602, raised as InvalidParamsError with code and HTTP status."""
    with pytest.raises(InvalidParamsError) as info:
        peer.client("list_tools", "no-such-cursor")
    assert info.value.code == -32602
    assert info.value.message == "Invalid cursor"
    assert info.value.http_status == (400 if peer.is_http else None)


def test_unknown_method_is_method_not_found_hdr05(peer: Peer) -> None:
    """HDR-05: -32601 carries its data; on HTTP the status is 404."""
    with pytest.raises(MethodNotFoundError) as info:
        peer.client.run(lambda c: c._run(c._core.request_flow("no/such/method", {})))
    assert info.value.code == -32601
    assert info.value.data == "no/such/method"
    assert info.value.http_status == (404 if peer.is_http else None)


# -- calling tools -------------------------------------------------------------------------


def test_get_weather_text(peer: Peer) -> None:
    result = peer.client("call_tool", "get_weather", {"location": "Paris"})
    assert result.text == "Weather in Paris: sunny, 22C"
    assert not result.is_error
    typed = peer.client("_call", "get_weather", {"location": "Oslo"}, GetWeatherInput)
    assert typed.text == "Weather in Oslo: sunny, 22C"


def test_get_weather_data_structured(peer: Peer) -> None:
    data = peer.client(
        "_call_structured", "get_weather_data", {"location": "Lima"}, GetWeatherInput, WeatherData
    )
    assert data == WeatherData(temperature=21.5, conditions="Sunny in Lima", humidity=40.0)


def test_list_users_array_output_root_model(peer: Peer) -> None:
    """TOOLS-18: structuredContent may be an array; a RootModel output is returned as the model."""
    users = peer.client("_call_structured", "list_users", {}, NoInput, Users)
    assert isinstance(users, Users)
    assert [u.name for u in users.root] == ["Ada Lovelace", "Alan Turing"]


def test_calculate_sum(peer: Peer) -> None:
    assert peer.client("call_tool", "calculate_sum", {"a": 2, "b": 40.5}).text == "42.5"
    # `note=None` is an omitted optional: dropped, never sent as null.
    assert (
        peer.client("_call", "calculate_sum", {"a": 2, "b": 3, "note": None}, CalculateSumInput).text == "5"
    )


def test_get_current_time(peer: Peer) -> None:
    stamp = datetime.fromisoformat(peer.client("call_tool", "get_current_time").text)
    assert abs((datetime.now(UTC) - stamp).total_seconds()) < 60


def test_execute_sql_mirrors_region_header_xhdr01_xhdr18(peer: Peer) -> None:
    """XHDR-01/18: with the tool's definition known, Mcp-Param-Region is sent (the SDK server
    rejects a call without it with -32020), plain or Base64-encoded (XHDR-14)."""
    with peer.configured(tools=WEATHER_TOOLS) as drv:
        result = drv("_call", "execute_sql", {"region": "us-west1", "query": "SELECT 1"}, ExecuteSqlInput)
        assert result.text == "Executed 'SELECT 1' in region us-west1: 2 rows"
        result = drv("call_tool", "execute_sql", {"region": "Zürich ", "query": "SELECT 2"})
        assert result.text == "Executed 'SELECT 2' in region Zürich : 2 rows"


def test_execute_sql_learns_header_from_listing_xhdr20(peer: Peer) -> None:
    """XHDR-20: a client that does not know the tool is told -32020, lists tools, retries."""
    http_only(peer)
    with peer.new() as drv:
        assert not drv.client.tools
        result = drv("call_tool", "execute_sql", {"region": "eu-north1", "query": "SELECT 3"})
        assert result.text == "Executed 'SELECT 3' in region eu-north1: 2 rows"
        assert "execute_sql" in drv.client.tools


def _tampering(peer: Peer, seen: list[str]) -> HttpTransport | AsyncHttpTransport:
    """A real HTTP transport that records methods and overwrites Mcp-Param-Region on the way out."""

    def tamper(message: Message, headers: Mapping[str, str]) -> dict[str, str]:
        seen.append(message["method"])
        changed = dict(headers)
        if "Mcp-Param-Region" in changed:
            changed["Mcp-Param-Region"] = "mars-central1"
        return changed

    class Sync(HttpTransport):
        def request(
            self,
            message: Message,
            headers: Mapping[str, str],
            *,
            timeout: float | None,
            on_notification: OnNotification | None = None,
        ) -> Reply:
            return super().request(message, tamper(message, headers), timeout=timeout)

    class Async(AsyncHttpTransport):
        async def request(
            self,
            message: Message,
            headers: Mapping[str, str],
            *,
            timeout: float | None,
            on_notification: OnNotification | None = None,
        ) -> Reply:
            return await super().request(message, tamper(message, headers), timeout=timeout)

    return Sync(peer.url) if peer.mode == "sync" else Async(peer.url)


def test_wrong_header_value_is_header_mismatch_xhdr23(peer: Peer) -> None:
    """XHDR-23/XHDR-20: a header that disagrees with the body is -32020 (HTTP 400); the client
    refreshes the listing once, retries once, then raises HeaderMismatchError."""
    http_only(peer)
    seen: list[str] = []
    transport: Any = _tampering(peer, seen)
    make = (
        lambda: Client(transport=transport, tools=WEATHER_TOOLS),
        lambda: AsyncClient(transport=transport, tools=WEATHER_TOOLS),
    )
    with driver(peer.mode, *make) as drv, pytest.raises(HeaderMismatchError) as info:
        drv("call_tool", "execute_sql", {"region": "us-west1", "query": "SELECT 1"})
    assert info.value.code == -32020
    assert info.value.http_status == 400
    assert "Mcp-Param-Region" in info.value.message
    assert seen == ["tools/call", "tools/list", "tools/list", "tools/list", "tools/call"]


def test_stale_header_annotation_is_fixed_by_refresh_xhdr20(peer: Peer) -> None:
    """XHDR-20: a stale definition (annotation on the wrong property) mirrors the wrong value;
    after -32020 the client re-lists and the retry carries the right header."""
    http_only(peer)
    stale = copy.deepcopy(WEATHER_TOOLS)
    sql = next(t for t in stale if t["name"] == "execute_sql")["inputSchema"]["properties"]
    sql["query"]["x-mcp-header"] = sql["region"].pop("x-mcp-header")
    with peer.new(tools=stale) as drv:
        result = drv("call_tool", "execute_sql", {"region": "ap-south1", "query": "SELECT 4"})
        assert result.text == "Executed 'SELECT 4' in region ap-south1: 2 rows"
        assert drv.client.tools["execute_sql"].header_params[0].path == ("region",)


def test_is_error_result_raw_and_typed_tools22(peer: Peer) -> None:
    """TOOLS-22/23: call_tool returns an isError result; generated methods raise ToolError."""
    raw = peer.client("call_tool", "report_error", {"message": "disk on fire"})
    assert raw.is_error and raw.text.endswith("disk on fire")

    class ReportErrorInput(BaseModel):
        message: str

    with pytest.raises(ToolError) as info:
        peer.client("_call", "report_error", {"message": "disk on fire"}, ReportErrorInput)
    assert info.value.tool == "report_error"
    assert info.value.result.text.endswith("disk on fire")


def test_unknown_tool_is_error_result(peer: Peer) -> None:
    """The SDK reports an unknown tool as an isError result (the spec prefers -32602)."""
    with pytest.raises((ToolError, InvalidParamsError)):
        peer.client("_call", "no_such_tool", {}, NoInput)


def test_arguments_rejected_before_sending(peer: Peer) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        peer.client("_call", "calculate_sum", {"a": "two", "b": 1}, CalculateSumInput)
    assert info.value.pointer == "/a"


def test_progress_notifications_reach_on_notification_http14(peer: Peer) -> None:
    """HTTP-14: notifications before the response (SSE on HTTP, lines on stdio) are delivered."""
    notes: list[dict[str, Any]] = []
    with peer.configured(on_notification=notes.append) as drv:
        result = drv("call_tool", "count_progress", {"steps": 3}, meta={"progressToken": "tok-1"})
    assert result.text == "counted 3"
    progress = [n["params"] for n in notes if n["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2, 3]
    assert all(p["progressToken"] == "tok-1" for p in progress)


def test_timeout_then_client_still_works_cancel04(peer: Peer) -> None:
    """CANCEL-04/10: a timed-out call raises RequestTimeoutError; a late reply never leaks into
    the next call on the same client (on stdio the call is also cancelled: CANCEL-03)."""
    assert peer.client("call_tool", "slow_echo", {"text": "up", "seconds": 0}).text == "up"  # started first
    started = time.monotonic()
    with pytest.raises(RequestTimeoutError):
        peer.client("call_tool", "slow_echo", {"text": "late", "seconds": 0.8}, timeout=0.2)
    assert time.monotonic() - started < 0.7  # 3x the worst on 2 loaded cores: 0.23 s
    assert peer.client("call_tool", "slow_echo", {"text": "prompt", "seconds": 0}).text == "prompt"
    if not peer.is_http:
        time.sleep(0.7)  # a reply to the first call, were one sent, would be on the pipe now
    assert peer.client("call_tool", "get_weather", {"location": "Rome"}).text == "Weather in Rome: sunny, 22C"


def test_concurrent_async_calls_are_matched_by_id(peer: Peer) -> None:
    if not peer.client.is_async:
        pytest.skip("concurrency is the async driver's")

    async def many(client: AsyncClient) -> list[str]:
        calls = [client.call_tool("slow_echo", {"text": str(i), "seconds": 0.05 * (i % 3)}) for i in range(8)]
        return [r.text for r in await asyncio.gather(*calls)]

    assert peer.client.run(many) == [str(i) for i in range(8)]


def test_stdio_close_stops_the_server_stdio10(peer: Peer) -> None:
    """STDIO-10: close() ends the child (stdin EOF first, signals only if needed)."""
    if peer.is_http:
        pytest.skip("stdio only")
    with peer.new() as drv:
        drv("discover")
        transport: Any = drv.client.transport
    proc = transport._proc
    assert proc.returncode is not None
