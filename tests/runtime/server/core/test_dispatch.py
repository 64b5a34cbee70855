"""The sans-I/O core (`ToolServer.handle_message`) in-process: shapes, checks and construction rules."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, RootModel

from mcpgen_runtime.content import ImageContent, TextContent, ToolResult
from mcpgen_runtime.server import (
    IncomingRequest,
    Outcome,
    ServerConfig,
    ToolBinding,
    ToolContext,
    ToolServer,
)
from tests.runtime.server_helpers import VERSION, call, mcp_headers, meta, request
from tests.runtime.weather_server_app import WeatherServer


def handle(server: ToolServer, message: Any, request_: IncomingRequest | None = None) -> Outcome:
    return asyncio.run(server.handle_message(message, request_))


def http_request(message: dict[str, Any], **overrides: str) -> IncomingRequest:
    headers = {k.lower(): v for k, v in mcp_headers(message).items()}
    headers.update({k.lower(): v for k, v in overrides.items()})
    return IncomingRequest("http", headers)


# ---- a server exercising header types and result shapes ------------------------------------


class Args(BaseModel):
    region: str | None = None
    priority: int | None = None
    verbose: bool | None = None
    kind: str | None = None


class Report(BaseModel):
    title: str
    note: str | None = None


class People(RootModel[list[Report]]):
    root: list[Report]


TOOLS: list[dict[str, Any]] = [
    {
        "name": "headers",
        "description": "x-mcp-header of each primitive type",
        "inputSchema": {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "verbose": {"type": ["boolean", "null"], "x-mcp-header": "Verbose"},
            },
        },
    },
    {
        "name": "shapes",
        "description": "returns the shape named by `kind`",
        "inputSchema": {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]},
    },
    {
        "name": "report",
        "description": "structured output with an optional, non-nullable field",
        "inputSchema": {"type": "object", "properties": {"kind": {"type": "string"}}},
        "outputSchema": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "note": {"type": "string"}},
            "required": ["title"],
        },
    },
    {
        "name": "people",
        "description": "array output (a RootModel) whose items have an optional, non-nullable field",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "note": {"type": "string"}},
                "required": ["title"],
                "additionalProperties": False,
            },
        },
    },
]


class ShapesServer(ToolServer):
    _tool_definitions_: ClassVar[list[dict[str, Any]]] = TOOLS
    _tool_bindings_: ClassVar[tuple[ToolBinding, ...]] = (
        ToolBinding("headers", "headers", Args, None),
        ToolBinding("shapes", "shapes", Args, None),
        ToolBinding("report", "report", Args, Report),
        ToolBinding("people", "people", Args, People, output_is_root=True),
    )

    async def people(self, args: Args, ctx: ToolContext) -> list[Report]:
        if args.kind == "bad":
            return [{"title": 5}]  # type: ignore[list-item]
        return [Report(title="a", note=None), Report(title="b", note="n")]

    async def headers(self, args: Args, ctx: ToolContext) -> str:
        return f"{args.region}|{args.priority}|{args.verbose}"

    async def shapes(self, args: Args, ctx: ToolContext) -> Any:
        return {
            "none": None,
            "blocks": [TextContent(text="a"), ImageContent(data="aGk=", mimeType="image/png"), "b"],
            "block": {"type": "text", "text": "dict block"},
            "data": {"answer": 42},
            "result": ToolResult(content=[TextContent(text="passthrough")], _meta={"com.example/x": 1}),
        }[args.kind or ""]

    async def report(self, args: Args, ctx: ToolContext) -> Any:
        if args.kind == "dict":
            return {"title": "plain dict"}
        if args.kind == "result-ok":
            return ToolResult(content=[TextContent(text="t")], structuredContent={"title": "x"})
        if args.kind == "result-bad":
            return ToolResult(content=[TextContent(text="t")], structuredContent={"title": 1})
        if args.kind == "result-missing":
            return ToolResult(content=[TextContent(text="t")])
        return Report(title="weekly", note=None)  # note=None is not a string: dropped on retry


def result(outcome: Outcome) -> dict[str, Any]:
    assert outcome.status == 200 and outcome.response is not None, outcome
    return dict(outcome.response["result"])


def error(outcome: Outcome, status: int, code: int) -> dict[str, Any]:
    assert outcome.status == status and outcome.response is not None, outcome
    assert outcome.response["error"]["code"] == code, outcome.response
    return dict(outcome.response["error"])


@pytest.fixture(scope="module")
def shapes() -> ShapesServer:
    return ShapesServer(ServerConfig(name="shapes", version="9"))


# ---- x-mcp-header value comparison ---------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({"priority": 42}, {"Mcp-Param-Priority": "42"}),
        ({"priority": 42}, {"Mcp-Param-Priority": "42.0"}),  # XHDR-25: numeric comparison
        ({"priority": -7}, {"Mcp-Param-Priority": "-7"}),
        ({"priority": 42.0}, {"Mcp-Param-Priority": "42"}),
        ({"verbose": False}, {"Mcp-Param-Verbose": "false"}),
        ({"verbose": True}, {"Mcp-Param-Verbose": "true"}),
        ({"verbose": None}, {}),  # XHDR-24: null -> no header expected
        ({"region": ""}, {"Mcp-Param-Region": ""}),
        ({"region": "us west 1"}, {"mcp-param-region": "us west 1"}),  # HDR-10: names are case-insensitive
    ],
)
def test_param_headers_accepted_xhdr23_xhdr25(
    shapes: ShapesServer, arguments: dict[str, Any], headers: dict[str, str]
) -> None:
    message = call(1, "headers", arguments)
    outcome = handle(shapes, message, http_request(message, **headers))
    assert result(outcome)["isError"] is False


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({"priority": 42}, {"Mcp-Param-Priority": "43"}),
        ({"priority": 42}, {"Mcp-Param-Priority": "forty-two"}),
        ({"priority": 42}, {"Mcp-Param-Priority": "0x2a"}),
        ({"verbose": False}, {"Mcp-Param-Verbose": "False"}),
        ({"verbose": True}, {"Mcp-Param-Verbose": "1"}),
        ({"verbose": True}, {}),
        ({"region": "a"}, {"Mcp-Param-Region": "a\x00"}),  # XHDR-22: invalid characters
        ({"region": "é"}, {"Mcp-Param-Region": "Ã©"}),  # raw non-ASCII bytes (latin-1 in ASGI)
        ({"region": "x"}, {"Mcp-Param-Region": "=?base64?eA==?=, x"}),  # a repeated header is combined
    ],
)
def test_param_headers_rejected_xhdr22_xhdr23(
    shapes: ShapesServer, arguments: dict[str, Any], headers: dict[str, str]
) -> None:
    message = call(2, "headers", arguments)
    error(handle(shapes, message, http_request(message, **headers)), 400, -32020)


def test_header_values_are_trimmed() -> None:
    """RULES.md conformance §4.9: optional whitespace around header values is not part of the value."""
    server = WeatherServer()
    message = call(3, "get_weather", {"location": "Paris"})
    req = http_request(
        message,
        **{"Mcp-Name": " get_weather\t", "Mcp-Method": "tools/call ", "MCP-Protocol-Version": f" {VERSION}"},
    )
    assert result(handle(server, message, req))["isError"] is False


def test_integer_outside_safe_range_is_rejected_xhdr07(shapes: ShapesServer) -> None:
    message = call(4, "headers", {"priority": 2**53})
    outcome = handle(shapes, message, http_request(message, **{"Mcp-Param-Priority": str(2**53)}))
    assert result(outcome)["isError"] is True


# ---- result shapes --------------------------------------------------------------------------


def test_result_shapes(shapes: ShapesServer) -> None:
    def shaped(kind: str) -> dict[str, Any]:
        res = result(handle(shapes, call(1, "shapes", {"kind": kind})))
        assert res["resultType"] == "complete"
        assert res["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "shapes", "version": "9"}
        return res

    assert shaped("none")["content"] == []
    assert shaped("blocks")["content"] == [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "aGk=", "mimeType": "image/png"},
        {"type": "text", "text": "b"},
    ]
    assert shaped("block")["content"] == [{"type": "text", "text": "dict block"}]
    data = shaped("data")  # TOOLS-18: structured data without an outputSchema is allowed too
    assert data["structuredContent"] == {"answer": 42} and data["content"][0]["text"] == '{"answer":42}'
    passthrough = shaped("result")
    assert passthrough["content"] == [{"type": "text", "text": "passthrough"}]
    assert passthrough["_meta"]["com.example/x"] == 1 and passthrough["isError"] is False


def test_root_output_drops_nones_and_rejects_bad_items_tools19(shapes: ShapesServer) -> None:
    res = result(handle(shapes, call(1, "people", {})))
    assert res["structuredContent"] == [{"title": "a"}, {"title": "b", "note": "n"}]
    assert result(handle(shapes, call(2, "people", {"kind": "bad"})))["isError"] is True


@pytest.mark.parametrize(
    ("kind", "structured"),
    [
        ("model", {"title": "weekly"}),  # None dropped so the optional string property validates
        ("dict", {"title": "plain dict"}),
        ("result-ok", {"title": "x"}),
        ("result-bad", None),
        ("result-missing", None),
    ],
)
def test_output_schema_enforced_tools19(shapes: ShapesServer, kind: str, structured: Any) -> None:
    res = result(handle(shapes, call(1, "report", {"kind": kind})))
    if structured is None:
        assert res["isError"] is True and "structuredContent" not in res
    else:
        assert res["structuredContent"] == structured and res["isError"] is False


# ---- envelope and _meta, without a transport ----------------------------------------------------


@pytest.mark.parametrize(
    ("message", "status", "code"),
    [
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, 400, -32600),  # clients never send responses
        ({"jsonrpc": "2.0", "id": 1}, 400, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, 400, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}, 400, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": meta()}}, 400, -32602),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "get_weather", "arguments": [], "_meta": meta()},
            },
            400,
            -32602,
        ),
        ({"jsonrpc": "2.0", "id": 1, "method": "no/such", "params": {"_meta": meta()}}, 404, -32601),
    ],
)
def test_envelope_errors(message: dict[str, Any], status: int, code: int) -> None:
    error(handle(WeatherServer(), message), status, code)


def test_direct_calls_skip_header_checks() -> None:
    """Without headers (stdio, in-process) nothing HTTP-specific is required."""
    outcome = handle(WeatherServer(), call(1, "execute_sql", {"region": "eu", "query": "SELECT 1"}))
    assert result(outcome)["content"][0]["text"] == "eu: SELECT 1 -> 0 rows"


def test_notification_outcome_is_202_without_response() -> None:
    assert handle(WeatherServer(), {"jsonrpc": "2.0", "method": "notifications/x"}) == Outcome(202, None)


def test_no_pagination_and_no_server_info() -> None:
    config = dataclasses.replace(
        WeatherServer.default_config(),
        page_size=None,
        include_server_info=False,
        list_cache_scope="private",
        list_ttl_ms=0,
    )
    server = WeatherServer(config)
    page = result(handle(server, request(1, "tools/list")))
    assert len(page["tools"]) == 6 and "nextCursor" not in page and "_meta" not in page
    assert page["ttlMs"] == 0 and page["cacheScope"] == "private"
    error(handle(server, request(2, "tools/list", {"cursor": "x"})), 400, -32602)


# ---- construction -------------------------------------------------------------------------------


def _server_class(definitions: list[dict[str, Any]], bindings: tuple[ToolBinding, ...]) -> type[ToolServer]:
    class Custom(ToolServer):
        _tool_definitions_ = definitions
        _tool_bindings_ = bindings

        async def run(self, args: Args, ctx: ToolContext) -> str:
            return "ok"

        def sync_run(self, args: Args, ctx: ToolContext) -> str:
            return "no"

    return Custom


def _tool(name: str = "t", **schema: Any) -> dict[str, Any]:
    return {"name": name, "description": "d", "inputSchema": {"type": "object", **schema}}


def test_default_identity_is_the_defining_package() -> None:
    server = _server_class([_tool()], (ToolBinding("t", "run", Args, None),))()
    assert server.config.name == "tests" and server.config.version == "0.0.0"
    assert list(server.tools) == ["t"]


@pytest.mark.parametrize(
    ("definitions", "bindings", "match"),
    [
        ([_tool()], (), "no ToolBinding"),
        ([], (ToolBinding("t", "run", Args, None),), "not listed"),
        ([_tool()], (ToolBinding("t", "missing", Args, None),), "async method"),
        ([_tool()], (ToolBinding("t", "sync_run", Args, None),), "async method"),
        ([_tool()], (ToolBinding("t", "run", Args, Report),), "no outputSchema"),
        ([_tool(), _tool()], (ToolBinding("t", "run", Args, None),), "duplicate"),
        (
            [_tool(properties={"p": {"$ref": "https://example.com/p.json"}})],
            (ToolBinding("t", "run", Args, None),),
            "never fetched",
        ),  # SCHEMA-08/10
        (
            [_tool(**{"$schema": "http://json-schema.org/draft-04/schema#"})],
            (ToolBinding("t", "run", Args, None),),
            "unsupported JSON Schema dialect",
        ),  # SCHEMA-06
        (
            [_tool(properties={"p": {"type": "object", "x-mcp-header": "P"}})],
            (ToolBinding("t", "run", Args, None),),
            "XHDR-06",
        ),
    ],
)
def test_construction_rejects_inconsistent_definitions(
    definitions: list[dict[str, Any]], bindings: tuple[ToolBinding, ...], match: str
) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        _server_class(definitions, bindings)()


@pytest.mark.parametrize(
    "change",
    [{"page_size": 0}, {"list_ttl_ms": -1}, {"discover_cache_scope": "shared"}, {"max_body_bytes": 0}],
)
def test_config_validation_cache05(change: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ServerConfig(**change)


# ---- ToolContext ----------------------------------------------------------------------------------


def test_progress_rules_prog03_prog05_prog08() -> None:
    sent: list[dict[str, Any]] = []

    async def notify(message: dict[str, Any]) -> None:
        sent.append(message)

    async def scenario() -> None:
        ctx = ToolContext(
            request_id=1,
            tool_name="t",
            meta=meta(progressToken="p"),
            protocol_version=VERSION,
            client_capabilities={"sampling": {}},
            notify=notify,
        )
        await ctx.report_progress(1)
        await ctx.report_progress(1)  # not increasing: dropped (PROG-03)
        await ctx.report_progress(0.5)
        await ctx.report_progress(float("nan"))
        await ctx.report_progress(2, total=3, message="two of three")
        ctx.close()
        await ctx.report_progress(3)  # after completion: dropped (PROG-08)
        assert ctx.has_capability("sampling") and not ctx.has_capability("elicitation")
        silent = ToolContext(
            request_id=2,
            tool_name="t",
            meta=meta(progressToken=True),
            protocol_version=VERSION,
            client_capabilities={},
            notify=notify,
        )
        await silent.report_progress(1)  # a boolean is no token (PROG-01, PROG-05)

    asyncio.run(scenario())
    assert [m["params"] for m in sent] == [
        {"progressToken": "p", "progress": 1},
        {"progressToken": "p", "progress": 2, "total": 3, "message": "two of three"},
    ]


class Deferred(BaseModel):
    """Like a generated model: pydantic builds the validator on first use."""

    model_config = ConfigDict(defer_build=True)
    n: int


def test_input_model_checks_every_call_sec01() -> None:
    """The first call builds a deferred validator, later calls use it directly: both parse and
    refuse alike."""
    seen: list[Any] = []

    class Server(_server_class([_tool(properties={"n": {}})], (ToolBinding("t", "run", Deferred, None),))):
        async def run(self, args: Deferred, ctx: ToolContext) -> str:  # type: ignore[override]
            seen.append(args)
            return "ok"

    server = Server()
    for n in (1, 2):  # the first call and a later one
        assert result(handle(server, call(n, "t", {"n": n})))["isError"] is False
    assert seen == [Deferred(n=1), Deferred(n=2)]
    fresh = Server()
    for id_ in (1, 2):  # the schema allows anything, the model wants an integer
        refused = result(handle(fresh if id_ == 1 else server, call(id_, "t", {"n": "many"})))
        assert refused["isError"] is True
        assert "at /n" in refused["content"][0]["text"]
    assert len(seen) == 2
