"""Proof, scenarios 1 and 3: the generated `weather_client` against two real servers.

* `sdk`    — the official SDK (mcp==2.3.0) peer, tests/peers/sdk_server.py: 9 tools, 4 per page,
             page 2 addressed by the cursor "" (PAGE-07); on HTTP it answers a missing or wrong
             `Mcp-Param-*` header with -32020.
* `mcpgen` — our generated server, `python -m weather_server --page-size 2` (handlers.py demo data).

Every scenario is written once and runs 8 ways: {sdk, mcpgen} x {http, stdio} x {sync Client,
AsyncClient}; one client per way is reused by the whole module. The wire-level checks (what
the generated client put in the HTTP headers) go through a recording reverse proxy on loopback.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from mcpgen_runtime.errors import (
    HeaderMismatchError,
    InvalidParamsError,
    MethodNotFoundError,
    ToolArgumentsError,
    ToolError,
)
from tests.interop._support import (
    OUR_STDIO,
    PROTOCOL,
    SDK_NAMES,
    SDK_STDIO,
    WEATHER_NAMES,
    WEATHER_TOOLS,
    Driver,
    RecordingProxy,
    b64_sentinel,
    models,
    open_driver,
)

pytestmark = pytest.mark.timeout(60)


@dataclass(frozen=True)
class Expect:
    """What each server answers; the same calls go to both."""

    server_name: str
    tool_names: list[str]
    page_sizes: list[int]
    second_cursor_is_empty: bool  # the SDK peer's page 2 cursor is "" (PAGE-07)
    weather_berlin: str
    data_berlin: models.GetWeatherDataOutput
    users: list[models.ListUsersOutputItem]
    sql_us_west1: str
    sql_zurich: str
    sql_rejected: str
    unknown_tool_is_rpc_error: bool  # TOOLS-22 prefers -32602; the SDK answers with isError


SDK = Expect(
    server_name="mcpgen-sdk-peer",
    tool_names=SDK_NAMES,
    page_sizes=[4, 4, 1],
    second_cursor_is_empty=True,
    weather_berlin="Weather in Berlin: sunny, 22C",
    data_berlin=models.GetWeatherDataOutput(temperature=21.5, conditions="Sunny in Berlin", humidity=40.0),
    users=[
        models.ListUsersOutputItem(id="u1", name="Ada Lovelace", email="ada@example.com"),
        models.ListUsersOutputItem(id="u2", name="Alan Turing", email="alan@example.com"),
    ],
    sql_us_west1="Executed 'SELECT 1' in region us-west1: 2 rows",
    sql_zurich="Executed 'SELECT 2' in region Zürich: 2 rows",
    sql_rejected="Error executing tool execute_sql: only SELECT statements are allowed",
    unknown_tool_is_rpc_error=False,
)
OURS = Expect(
    server_name="weather_server",
    tool_names=WEATHER_NAMES,
    page_sizes=[2, 2, 2],
    second_cursor_is_empty=False,
    weather_berlin="Current weather in Berlin:\nTemperature: 20.4°C\nConditions: snow",
    data_berlin=models.GetWeatherDataOutput(temperature=20.4, conditions="snow", humidity=34.0),
    users=[
        models.ListUsersOutputItem(id="1", name="Alice", email="alice@example.com"),
        models.ListUsersOutputItem(id="2", name="Bob", email="bob@example.com"),
    ],
    sql_us_west1="Executed in us-west1: SELECT 1 (0 rows)",
    sql_zurich="Executed in Zürich: SELECT 2 (0 rows)",
    sql_rejected="only SELECT statements are allowed in this demo",
    unknown_tool_is_rpc_error=True,
)
EXPECT = {"sdk": SDK, "mcpgen": OURS}
URL_FIXTURE = {"sdk": "sdk_http_url", "mcpgen": "our_http_url"}
STDIO_COMMAND = {"sdk": SDK_STDIO, "mcpgen": OUR_STDIO}


@dataclass
class Target:
    server: str
    transport: str
    mode: str
    drv: Driver
    expect: Expect

    @property
    def http(self) -> bool:
        return self.transport == "http"


WAYS = [f"{s}-{t}-{m}" for s in ("sdk", "mcpgen") for t in ("http", "stdio") for m in ("sync", "async")]


@pytest.fixture(scope="module", params=WAYS)
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    server, transport, mode = request.param.split("-")
    if transport == "http":
        opened = open_driver(mode, url=request.getfixturevalue(URL_FIXTURE[server]))
    else:
        opened = open_driver(mode, command=STDIO_COMMAND[server])
    with opened as drv:
        yield Target(server, transport, mode, drv, EXPECT[server])


# -- discovery and listing --------------------------------------------------------------------


def test_discover(target: Target) -> None:
    """VER-03/VER-04, TOOLS-01, BASE-37: server/discover names the version, the tools capability
    and the server."""
    found = target.drv(lambda c: c.discover())
    assert PROTOCOL in found["supportedVersions"]
    assert "tools" in found["capabilities"]
    assert found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == target.expect.server_name


def test_lists_every_page(target: Target) -> None:
    """PAGE-04/06/07, TOOLS-02/04, CACHE-01: the listing spans several pages (cursor followed
    opaquely, "" included), `list_all_tools` returns the same full set, definitions verbatim."""
    pages: list[list[str]] = []
    cursors: list[str | None] = []
    cursor: str | None = None
    while True:
        page = target.drv(lambda c, cur=cursor: c.list_tools(cur))
        assert (page.ttl_ms, page.cache_scope) == (60000, "public")
        pages.append([tool["name"] for tool in page.tools])
        cursors.append(page.next_cursor)
        cursor = page.next_cursor
        if cursor is None:
            break
        assert len(pages) < 10
    assert [len(p) for p in pages] == target.expect.page_sizes  # pagination happened
    assert [name for p in pages for name in p] == target.expect.tool_names
    assert (cursors[0] == "") is target.expect.second_cursor_is_empty  # the cursor of page 2

    listed = target.drv(lambda c: c.list_all_tools())
    assert [tool["name"] for tool in listed] == target.expect.tool_names
    assert listed[: len(WEATHER_TOOLS)] == WEATHER_TOOLS  # x-mcp-header, draft-07 $schema kept
    assert list(target.drv.client.tools) == target.expect.tool_names  # the tool table was refreshed


# -- the six tools through the generated typed methods ---------------------------------------


def test_get_weather(target: Target) -> None:
    """TOOLS-22: a tool without outputSchema returns a ToolResult of content blocks."""
    result = target.drv(lambda c: c.get_weather("Berlin"))
    assert not result.is_error
    assert result.text == target.expect.weather_berlin


def test_get_weather_data_is_typed(target: Target) -> None:
    """TOOLS-19/20: structuredContent is parsed into the generated GetWeatherDataOutput."""
    data = target.drv(lambda c: c.get_weather_data("Berlin"))
    assert type(data) is models.GetWeatherDataOutput
    assert data == target.expect.data_berlin


def test_list_users_is_typed(target: Target) -> None:
    """TOOLS-18/19: an array outputSchema becomes list[ListUsersOutputItem]."""
    users = target.drv(lambda c: c.list_users())
    assert type(users) is list
    assert all(type(user) is models.ListUsersOutputItem for user in users)
    assert users == target.expect.users


def test_execute_sql(target: Target) -> None:
    """XHDR-01/13/14/18: on HTTP both servers refuse a tools/call whose Mcp-Param-Region is missing
    or wrong (-32020), so these answers need the mirrored header — plain and Base64-encoded."""
    assert (
        target.drv(lambda c: c.execute_sql(region="us-west1", query="SELECT 1")).text
        == target.expect.sql_us_west1
    )
    assert (
        target.drv(lambda c: c.execute_sql(region="Zürich", query="SELECT 2")).text
        == target.expect.sql_zurich
    )


def test_execute_sql_rejection_is_tool_error(target: Target) -> None:
    """TOOLS-22/23: isError: true raises ToolError carrying the tool name and the content;
    the raw `call_tool` returns the same result without raising."""
    with pytest.raises(ToolError) as info:
        target.drv(lambda c: c.execute_sql(region="us-west1", query="DROP TABLE users"))
    assert info.value.tool == "execute_sql"
    assert info.value.result.is_error is True
    assert info.value.result.text == target.expect.sql_rejected
    assert target.expect.sql_rejected in str(info.value)

    raw = target.drv(lambda c: c.call_tool("execute_sql", {"region": "us-west1", "query": "DELETE FROM t"}))
    assert raw.is_error is True and raw.text == target.expect.sql_rejected


def test_calculate_sum(target: Target) -> None:
    """SCHEMA-01/05: the draft-07 inputSchema tool works end to end."""
    assert target.drv(lambda c: c.calculate_sum(a=2, b=40.5)).text == "42.5"


def test_get_current_time(target: Target) -> None:
    """TOOLS-09: the parameterless tool (additionalProperties: false) answers with an ISO time."""
    stamp = datetime.fromisoformat(target.drv(lambda c: c.get_current_time()).text)
    assert abs((datetime.now(UTC) - stamp).total_seconds()) < 120


def test_invalid_arguments_are_rejected_locally(target: Target) -> None:
    """SEC-01 (client side): the tool's inputSchema rejects a bad argument before sending."""
    with pytest.raises(ToolArgumentsError) as info:
        target.drv(lambda c: c.calculate_sum(a="two", b=1))
    assert info.value.tool == "calculate_sum"
    assert info.value.pointer == "/a"


# -- JSON-RPC errors as typed RemoteError subclasses ------------------------------------------


def test_unknown_tool(target: Target) -> None:
    """TOOLS-22: an unknown tool is -32602 (InvalidParamsError; HTTP 400) from our server.
    The SDK peer answers with an isError result instead (the spec's SHOULD, not a MUST)."""
    if target.expect.unknown_tool_is_rpc_error:
        with pytest.raises(InvalidParamsError) as info:
            target.drv(lambda c: c.call_tool("no_such_tool", {}))
        assert (info.value.code, info.value.message) == (-32602, "Unknown tool: no_such_tool")
        assert info.value.http_status == (400 if target.http else None)
    else:
        result = target.drv(lambda c: c.call_tool("no_such_tool", {}))
        assert result.is_error is True and result.text == "Unknown tool: no_such_tool"


def test_invalid_cursor_is_invalid_params(target: Target) -> None:
    """PAGE-08: a cursor the server never issued is -32602, raised as InvalidParamsError."""
    with pytest.raises(InvalidParamsError) as info:
        target.drv(lambda c: c.list_tools("not-a-cursor"))
    assert (info.value.code, info.value.message) == (-32602, "Invalid cursor")
    assert info.value.http_status == (400 if target.http else None)


def test_unknown_method_is_method_not_found(target: Target) -> None:
    """HDR-05: -32601 raised as MethodNotFoundError, HTTP 404 on Streamable HTTP."""
    with pytest.raises(MethodNotFoundError) as info:
        target.drv(lambda c: c._run(c._core.request_flow("no/such/method", {})))
    assert info.value.code == -32601
    assert info.value.http_status == (404 if target.http else None)


# -- on the wire (HTTP only): a recording reverse proxy between client and server --------------


@pytest.fixture(scope="module", params=["sdk", "mcpgen"])
def proxy(request: pytest.FixtureRequest) -> Iterator[tuple[str, RecordingProxy]]:
    recorder = RecordingProxy(request.getfixturevalue(URL_FIXTURE[request.param]))
    try:
        yield request.param, recorder
    finally:
        recorder.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_param_header_on_the_wire(proxy: tuple[str, RecordingProxy], mode: str) -> None:
    """XHDR-01/13/14/18, HDR-01/02/07/08, HTTP-06/07: a fresh generated client mirrors `region`
    from its embedded definitions on the first try — one POST per call, no -32020 round trip."""
    server, recorder = proxy
    with recorder.recording() as seen, open_driver(mode, url=recorder.url) as drv:
        assert (
            drv(lambda c: c.execute_sql(region="us-west1", query="SELECT 1")).text
            == EXPECT[server].sql_us_west1
        )
        assert (
            drv(lambda c: c.execute_sql(region="Zürich", query="SELECT 2")).text == EXPECT[server].sql_zurich
        )
    # the drift check lists the tools once before the first call (issue 35); each call is one POST
    pages = len(EXPECT[server].page_sizes)
    assert [x.method for x in seen] == [*["tools/list"] * pages, "tools/call", "tools/call"]
    plain, encoded = calls = seen[pages:]
    for exchange in calls:
        assert exchange.status == 200
        assert exchange.headers["mcp-protocol-version"] == PROTOCOL
        assert exchange.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == PROTOCOL
        assert exchange.headers["mcp-method"] == "tools/call"
        assert exchange.headers["mcp-name"] == "execute_sql"
        assert "application/json" in exchange.headers["accept"]
        assert "text/event-stream" in exchange.headers["accept"]
    assert plain.headers["mcp-param-region"] == "us-west1"
    assert plain.body["params"]["arguments"] == {"region": "us-west1", "query": "SELECT 1"}
    assert encoded.headers["mcp-param-region"] == b64_sentinel("Zürich") == "=?base64?WsO8cmljaA==?="


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_missing_param_header_is_header_mismatch(proxy: tuple[str, RecordingProxy], mode: str) -> None:
    """XHDR-20/23/24, HDR-12, ERR-08: with Mcp-Param-Region stripped in transit the server answers
    400/-32020; the client re-lists once, retries once, then raises HeaderMismatchError."""
    server, recorder = proxy
    with (
        recorder.recording(drop=frozenset({"mcp-param-region"})) as seen,
        open_driver(mode, url=recorder.url) as drv,
        pytest.raises(HeaderMismatchError) as info,
    ):
        drv(lambda c: c.execute_sql(region="us-west1", query="SELECT 1"))
    assert info.value.code == -32020
    assert info.value.http_status == 400
    assert "Mcp-Param-Region" in info.value.message
    pages = len(EXPECT[server].page_sizes)
    listing = ["tools/list"] * pages  # the drift check's (issue 35), then XHDR-20's re-listing
    assert [x.method for x in seen] == [*listing, "tools/call", *listing, "tools/call"]
    calls = [x for x in seen if x.method == "tools/call"]
    assert all(x.headers["mcp-param-region"] == "us-west1" for x in calls)  # sent, then stripped
    assert [(x.status, x.reply["error"]["code"]) for x in calls] == [(400, -32020), (400, -32020)]
