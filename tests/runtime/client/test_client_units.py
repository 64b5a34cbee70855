"""Unit tests without I/O: SSE parsing, header value encoding, and ClientCore flows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, RootModel

from mcpgen_runtime.client import ClientCore, Flow, Outgoing
from mcpgen_runtime.content import ToolResult
from mcpgen_runtime.errors import HttpStatusError, ToolArgumentsError, ToolOutputError
from mcpgen_runtime.protocol.headers import encode_value
from mcpgen_runtime.tools import ToolSpec
from mcpgen_runtime.transport import SseDecoder, classify_body
from mcpgen_runtime.transport.base import Reply
from mcpgen_runtime.types import UNSET

# -- SSE ----------------------------------------------------------------------------------------

STREAM = (
    b": comment\r\n"
    b"event: message\r\nid: 1\r\nretry: 50\r\n"
    b"data: first\r\n\r\n"
    b"data:no-space\n\n"
    b"data: multi\ndata:  line\rdata\r\r"
    b"field-without-colon\n"
    b"data: last"
)
EVENTS = [b"first", b"no-space", b"multi\n line\n", b"last"]


def _decode(chunks: Iterator[bytes] | list[bytes]) -> list[bytes]:
    decoder = SseDecoder()
    events: list[bytes] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    return events + decoder.finish()


def test_sse_whole_stream_http19() -> None:
    """HTTP-19: comments ignored; `event`/`id`/`retry` ignored (HTTP-20); `data` lines joined
    with LF; CRLF, LF and CR all end lines; a bare `data` line adds an empty line."""
    assert _decode([STREAM]) == EVENTS


def test_sse_byte_by_byte_equals_whole() -> None:
    assert _decode([STREAM[i : i + 1] for i in range(len(STREAM))]) == EVENTS


@pytest.mark.parametrize("cut", range(1, 12))
def test_sse_crlf_split_across_chunks(cut: int) -> None:
    stream = b"data: a\r\n\r\ndata: b\r\n\r\n"
    assert _decode([stream[:cut], stream[cut:]]) == [b"a", b"b"]


def test_sse_no_event_without_data() -> None:
    assert _decode([b": ping\n\nevent: message\n\n"]) == []


def test_classify_body_non_2xx_with_and_without_jsonrpc() -> None:
    err = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"mismatch"}}'
    assert classify_body(400, err)["error"]["code"] == -32020
    with pytest.raises(HttpStatusError):
        classify_body(400, b'{"detail": "not JSON-RPC"}')


# -- header values (basic-transports-streamable-http.mdx, "Encoding examples" table) -------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("us west 1", "us west 1"),  # interior spaces stay plain
        ("\tindented", "=?base64?CWluZGVudGVk?="),  # any tab is encoded (XHDR-14)
        ("", ""),
    ],
)
def test_header_encoding_spec_examples_xhdr14_xhdr16(value: str, encoded: str) -> None:
    assert encode_value(value) == encoded


# -- ClientCore flows ---------------------------------------------------------------------------

SQL_TOOL = {
    "name": "execute_sql",
    "inputSchema": {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "query": {"type": "string"}},
        "required": ["region", "query"],
    },
}


def drive(flow: Flow[Any], *replies: dict[str, Any]) -> tuple[Any, list[Outgoing]]:
    """Run a flow, answering each request with the next reply (its id filled in)."""
    sent: list[Outgoing] = []
    answers = iter(replies)
    try:
        outgoing = next(flow)
        while True:
            sent.append(outgoing)
            reply: Reply = ({**next(answers), "jsonrpc": "2.0", "id": outgoing.message["id"]}, 200)
            outgoing = flow.send(reply)
    except StopIteration as done:
        return done.value, sent


CALL_OK = {"result": {"content": [{"type": "text", "text": "ok"}]}}


def test_request_meta_and_headers_base30_base33_hdr07_hdr08() -> None:
    core = ClientCore(
        tools=[SQL_TOOL], client_info={"name": "t", "version": "9"}, headers={"Authorization": "x"}
    )
    result, [out] = drive(
        core.call_flow("execute_sql", {"region": "eu", "query": "q"}, meta={"progressToken": 7}), CALL_OK
    )
    assert isinstance(result, ToolResult) and result.text == "ok"
    assert out.message["params"] == {
        "name": "execute_sql",
        "arguments": {"region": "eu", "query": "q"},
        "_meta": {
            "progressToken": 7,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            # tools/call lists the tasks extension (a server may answer it with a task)
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "9"},
        },
    }
    assert dict(out.headers) == {
        "Authorization": "x",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "execute_sql",
        "Mcp-Param-Region": "eu",
    }


def test_caller_meta_cannot_override_protocol_keys_hdr02() -> None:
    core = ClientCore()
    _, [out] = drive(
        core.call_flow("x", None, meta={"io.modelcontextprotocol/protocolVersion": "1999-01-01"}), CALL_OK
    )
    assert out.message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert out.headers["MCP-Protocol-Version"] == "2026-07-28"
    assert out.message["params"]["arguments"] == {}


def test_null_argument_omits_param_header_xhdr19() -> None:
    core = ClientCore(tools=[SQL_TOOL])
    _, [out] = drive(core.call_flow("execute_sql", {"region": None, "query": "q"}), CALL_OK)
    assert "Mcp-Param-Region" not in out.headers


def test_stdio_core_builds_no_headers_and_ids_never_repeat_base05() -> None:
    core = ClientCore(send_headers=False, tools=[SQL_TOOL])
    ids = []
    for _ in range(3):
        _, [out] = drive(core.call_flow("execute_sql", {"region": "eu", "query": "q"}), CALL_OK)
        assert not out.headers
        ids.append(out.message["id"])
    assert ids == [1, 2, 3]


class SqlInput(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    region: str
    query: str
    limit: int | None = None
    dry_run: bool | None = Field(default=None, alias="dry-run")


def test_prepare_arguments_drops_unset_optionals_and_sends_none_as_null() -> None:
    core = ClientCore()
    assert core.checks.prepare_arguments(
        "execute_sql", {"region": "eu", "query": "q", "limit": UNSET, "dry-run": True}, SqlInput
    ) == {"region": "eu", "query": "q", "dry-run": True}
    assert core.checks.prepare_arguments(
        "execute_sql", {"region": "eu", "query": "q", "limit": None}, SqlInput
    ) == {
        "region": "eu",
        "query": "q",
        "limit": None,
    }


def test_prepare_arguments_keeps_required_none_and_rejects_it() -> None:
    with pytest.raises(ToolArgumentsError) as info:
        ClientCore().checks.prepare_arguments("execute_sql", {"region": None, "query": "q"}, SqlInput)
    assert info.value.pointer == "/region"


class Point(BaseModel):
    x: int


class Points(RootModel[list[Point]]):
    pass


def test_structured_output_root_model_and_errors() -> None:
    core = ClientCore()
    good = ToolResult.model_validate({"content": [], "structuredContent": [{"x": 1}]})
    assert core.checks.structured("t", good, Points).root == [Point(x=1)]
    with pytest.raises(ToolOutputError, match="no structuredContent"):
        core.checks.structured("t", ToolResult.model_validate({"content": []}), Points)
    with pytest.raises(ToolOutputError) as info:
        core.checks.structured("t", ToolResult.model_validate({"structuredContent": [{"x": "no"}]}), Points)
    assert info.value.pointer == "/0/x"


POINTS_TOOL = {
    "name": "t",
    "inputSchema": {"type": "object"},
    "outputSchema": {
        "type": "array",
        "items": {"type": "object", "properties": {"x": {"type": "integer"}}, "additionalProperties": False},
    },
}


def test_structured_output_is_checked_against_output_schema_tools20() -> None:
    """What the model would let through (an extra member) still breaks the tool's outputSchema."""
    core = ClientCore(tools=[POINTS_TOOL])
    sneaky = ToolResult.model_validate({"structuredContent": [{"x": 1}, {"x": 2, "y": 3}]})
    assert Points.model_validate(sneaky.structured_content).root == [Point(x=1), Point(x=2)]
    with pytest.raises(ToolOutputError) as info:
        core.checks.structured("t", sneaky, Points)
    assert info.value.pointer == "/1"
    assert "'y'" in str(info.value)
    fine = ToolResult.model_validate({"structuredContent": [{"x": 1}]})
    assert core.checks.structured("t", fine, Points).root == [Point(x=1)]
    # A later listing (here: a server relaxing the schema) does not replace the declared one.
    relaxed = {**POINTS_TOOL, "outputSchema": {"type": "array"}}
    core.tools = {"t": ToolSpec.from_definition(relaxed)}
    with pytest.raises(ToolOutputError):
        core.checks.structured("t", sneaky, Points)
    # A client made without definitions has only the model to go by.
    assert ClientCore().checks.structured("t", sneaky, Points).root == [Point(x=1), Point(x=2)]


def test_version_retry_uses_new_id_and_version_ver02() -> None:
    core = ClientCore()
    unsupported = {"error": {"code": -32022, "message": "no", "data": {"supported": ["2026-07-28"]}}}
    result, sent = drive(core.discover_flow(), unsupported, {"result": {"supportedVersions": ["2026-07-28"]}})
    assert result == {"supportedVersions": ["2026-07-28"]}
    assert [o.message["id"] for o in sent] == [1, 2]


class Numbers(BaseModel):
    a: int | float
    items: list[int | float] = []


def test_argument_pointer_skips_union_members_and_points_into_the_input() -> None:
    """pydantic reports `('a', 'int')` for a union; the pointer is into the arguments: /a."""
    with pytest.raises(ToolArgumentsError) as info:
        ClientCore().checks.prepare_arguments("t", {"a": "two"}, Numbers)
    assert info.value.pointer == "/a"
    with pytest.raises(ToolArgumentsError) as info:
        ClientCore().checks.prepare_arguments("t", {"a": 1, "items": [1, "x"]}, Numbers)
    assert info.value.pointer == "/items/1"
    with pytest.raises(ToolArgumentsError) as info:
        ClientCore().checks.prepare_arguments("t", {}, Numbers)
    assert info.value.pointer == "/a"  # missing: where it belongs


def test_structured_output_nested_past_the_depth_limit_is_a_typed_error() -> None:
    deep: list[Any] = []
    inner = deep
    for _ in range(1000):
        inner.append([])
        inner = inner[0]
    core = ClientCore(
        tools=[
            {
                "name": "t",
                "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
            }
        ]
    )
    result = ToolResult.model_validate({"content": [], "structuredContent": {"x": deep}})
    with pytest.raises(ToolOutputError, match="nested more than 100 levels") as caught:
        core.checks.structured("t", result, RootModel[dict[str, Any]])
    assert caught.value.pointer.startswith("/x/0/0")
