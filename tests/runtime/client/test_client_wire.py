"""Client wire behaviour against scripted peers: exact headers, retries, SSE framing, errors.

A real HTTP server (tests.runtime._client_drivers.ScriptedHttpServer) or a small stdio
process answers exactly as each test scripts it, so conditions a real server does not
produce on demand (a -32022 on the first POST, a broken tool definition, an SSE reply split
mid-line) are reproducible. Every scenario runs with Client and AsyncClient.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime._version import __version__
from mcpgen_runtime.client import AsyncClient, Client, InvalidToolWarning
from mcpgen_runtime.errors import (
    ConnectError,
    HttpStatusError,
    InputRequiredError,
    MethodNotFoundError,
    PaginationError,
    ProtocolError,
    RequestTimeoutError,
    ServerExitedError,
    TransportError,
    UnsupportedProtocolVersionError,
)
from tests.runtime._client_drivers import (
    MODES,
    STDIO_SCRIPT,
    Driver,
    Recorded,
    Reply,
    ScriptedHttpServer,
    driver,
    error,
    result,
)
from tests.support import PYTHON, free_port

pytestmark = [pytest.mark.timeout(30), pytest.mark.parametrize("mode", MODES)]

META = "io.modelcontextprotocol/"
CALL_RESULT = {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}


@contextmanager
def http_client(mode: str, url: str, **kwargs: Any) -> Iterator[Driver]:
    with driver(mode, lambda: Client(url, **kwargs), lambda: AsyncClient(url, **kwargs)) as drv:
        yield drv


@contextmanager
def scripted(
    mode: str, app: Callable[[Recorded], Reply], **kwargs: Any
) -> Iterator[tuple[Driver, ScriptedHttpServer]]:
    with ScriptedHttpServer(app) as server, http_client(mode, server.url, **kwargs) as drv:
        yield drv, server


def answer_by_method(answers: dict[str, Any]) -> Callable[[Recorded], Reply]:
    def app(rec: Recorded) -> Reply:
        value = answers[rec.body["method"]]
        return value(rec.body) if callable(value) else result(rec.body, value)

    return app


def tools_listing(*tools: dict[str, Any]) -> dict[str, Any]:
    return {"resultType": "complete", "tools": list(tools), "ttlMs": 0, "cacheScope": "public"}


# -- request metadata and version negotiation -------------------------------------------------


def test_first_post_rejected_with_32022_is_retried_ver02_hdr01_hdr02(mode: str) -> None:
    """Conformance `request-metadata`: the first POST gets 400 + -32022 although we asked for a
    supported version; the client retries with a version from `supported`, a new id, and the
    header equal to `_meta` (HDR-01/02, BASE-30/33, HTTP-07)."""

    def app(rec: Recorded) -> Reply:
        if len(server.requests) == 1:
            requested = rec.body["params"]["_meta"][META + "protocolVersion"]
            return error(
                rec.body,
                -32022,
                "Unsupported protocol version",
                {"supported": ["2026-07-28"], "requested": requested},
            )
        return result(
            rec.body, {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}}
        )

    with ScriptedHttpServer(app) as server, http_client(mode, server.url) as drv:
        assert drv("discover")["supportedVersions"] == ["2026-07-28"]
    first, retry = server.requests
    assert first.body["id"] != retry.body["id"]
    for rec in (first, retry):
        meta = rec.body["params"]["_meta"]
        assert rec.headers["mcp-protocol-version"] == meta[META + "protocolVersion"] == "2026-07-28"
        assert rec.headers["mcp-method"] == rec.body["method"] == "server/discover"
        assert rec.headers["accept"] == "application/json, text/event-stream"
        assert rec.headers["content-type"] == "application/json"
        assert meta[META + "clientCapabilities"] == {}
        assert meta[META + "clientInfo"] == {"name": "mcpgen", "version": __version__}
        assert "mcp-name" not in rec.headers


def test_no_mutual_version_raises_typed_error_ver02(mode: str) -> None:
    app = answer_by_method(
        {
            "server/discover": lambda req: error(
                req,
                -32022,
                "Unsupported protocol version",
                {"supported": ["1999-01-01"], "requested": "2026-07-28"},
            )
        }
    )
    with scripted(mode, app) as (drv, server), pytest.raises(UnsupportedProtocolVersionError) as info:
        drv("discover")
    assert info.value.code == -32022
    assert info.value.data == {"supported": ["1999-01-01"], "requested": "2026-07-28"}
    assert info.value.http_status == 400
    assert len(server.requests) == 1


def test_version_retry_happens_once_ver02(mode: str) -> None:
    app = answer_by_method(
        {
            "tools/list": lambda req: error(
                req,
                -32022,
                "Unsupported protocol version",
                {"supported": ["2026-07-28"], "requested": "2026-07-28"},
            )
        }
    )
    with scripted(mode, app) as (drv, server), pytest.raises(UnsupportedProtocolVersionError):
        drv("list_tools")
    assert len(server.requests) == 2


def test_request_ids_are_fresh_integers_base05(mode: str) -> None:
    app = answer_by_method({"tools/call": CALL_RESULT, "server/discover": {"supportedVersions": []}})
    with scripted(mode, app, headers={"Authorization": "Bearer s3cret"}) as (drv, server):
        for _ in range(3):
            drv("call_tool", "x")
        drv("discover")
    ids = [rec.body["id"] for rec in server.requests]
    assert all(type(i) is int for i in ids) and ids == sorted(set(ids))
    assert all(rec.headers["authorization"] == "Bearer s3cret" for rec in server.requests)


# -- results -----------------------------------------------------------------------------------


def test_unknown_result_type_is_protocol_error_base10(mode: str) -> None:
    app = answer_by_method({"tools/call": {"resultType": "task_created", "content": []}})
    with scripted(mode, app) as (drv, _), pytest.raises(ProtocolError, match="task_created"):
        drv("call_tool", "x")


def test_missing_result_type_means_complete_base11(mode: str) -> None:
    app = answer_by_method({"tools/call": {"content": [{"type": "text", "text": "old server"}]}})
    with scripted(mode, app) as (drv, _):
        assert drv("call_tool", "x").text == "old server"


def test_input_required_raises_with_requests_and_state_mrtr(mode: str) -> None:
    requests = {
        "confirm": {
            "method": "elicitation/create",
            "params": {
                "message": "Sure?",
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            },
        }
    }
    app = answer_by_method(
        {
            "tools/call": {
                "resultType": "input_required",
                "inputRequests": requests,
                "requestState": "opaque-state",
            }
        }
    )
    with scripted(mode, app) as (drv, _), pytest.raises(InputRequiredError) as info:
        drv("call_tool", "confirm_delete", {"path": "x"})
    assert info.value.input_requests == requests
    assert info.value.request_state == "opaque-state"


# -- x-mcp-header mirroring and tool-definition checks ------------------------------------------

CUSTOM_HEADER_PROPS = {
    "region": ("string", "Region"),
    "priority": ("integer", "Priority"),
    "verbose": ("boolean", "Verbose"),
    "debug": ("boolean", "Debug"),
    "empty_val": ("string", "EmptyVal"),
    "method_val": ("string", "Method"),
    "non_ascii_val": ("string", "NonAscii"),
    "whitespace_val": ("string", "Whitespace"),
    "leading_space_val": ("string", "LeadingSpace"),
    "trailing_space_val": ("string", "TrailingSpace"),
    "internal_space_val": ("string", "InternalSpace"),
    "control_char_val": ("string", "ControlChar"),
    "crlf_val": ("string", "CrLf"),
    "tab_val": ("string", "Tab"),
}


def _custom_header_tool(name: str) -> dict[str, Any]:
    properties: dict[str, Any] = {
        key: {"type": kind, "x-mcp-header": header} for key, (kind, header) in CUSTOM_HEADER_PROPS.items()
    }
    properties["float_val"] = {"type": "number"}
    properties["query"] = {"type": "string"}
    return {"name": name, "inputSchema": {"type": "object", "properties": properties}}


def test_custom_headers_conformance_xhdr13_to_19(mode: str) -> None:
    """Conformance `http-custom-headers`: plain values as-is, integers in decimal, booleans
    lower-case, unsafe strings as =?base64?…?=, no header for unannotated or null values."""
    app = answer_by_method(
        {
            "tools/list": tools_listing(
                _custom_header_tool("test_custom_headers"), _custom_header_tool("test_custom_headers_null")
            ),
            "tools/call": CALL_RESULT,
        }
    )
    with scripted(mode, app) as (drv, server):
        drv("list_all_tools")
        drv(
            "call_tool",
            "test_custom_headers",
            {
                "region": "us-west1",
                "priority": 42,
                "verbose": False,
                "debug": True,
                "empty_val": "",
                "method_val": "test-method",
                "float_val": 3.14159,
                "non_ascii_val": "Hello, 世界",
                "whitespace_val": " padded ",
                "leading_space_val": " us-west1",
                "trailing_space_val": "us-west1 ",
                "internal_space_val": "us west 1",
                "control_char_val": "line1\nline2",
                "crlf_val": "line1\r\nline2",
                "tab_val": "\tindented",
                "query": "SELECT * FROM users",
            },
        )
        drv(
            "call_tool",
            "test_custom_headers_null",
            {"region": "us-east1", "priority": 1, "verbose": None, "query": "SELECT 1"},
        )
    full, null = server.requests[-2:]
    params = {k: v for k, v in full.headers.items() if k.startswith("mcp-param-")}
    assert params == {
        "mcp-param-region": "us-west1",
        "mcp-param-priority": "42",
        "mcp-param-verbose": "false",
        "mcp-param-debug": "true",
        "mcp-param-emptyval": "",
        "mcp-param-method": "test-method",
        "mcp-param-nonascii": "=?base64?SGVsbG8sIOS4lueVjA==?=",
        "mcp-param-whitespace": "=?base64?IHBhZGRlZCA=?=",
        "mcp-param-leadingspace": "=?base64?IHVzLXdlc3Qx?=",
        "mcp-param-trailingspace": "=?base64?dXMtd2VzdDEg?=",
        "mcp-param-internalspace": "us west 1",
        "mcp-param-controlchar": "=?base64?bGluZTEKbGluZTI=?=",
        "mcp-param-crlf": "=?base64?bGluZTENCmxpbmUy?=",
        "mcp-param-tab": "=?base64?CWluZGVudGVk?=",
    }
    assert full.headers["mcp-method"] == "tools/call" and full.headers["mcp-name"] == "test_custom_headers"
    assert {k: v for k, v in null.headers.items() if k.startswith("mcp-param-")} == {
        "mcp-param-region": "us-east1",
        "mcp-param-priority": "1",
    }


def _tool(name: str, **properties: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties}}


INVALID_TOOLS = {
    "invalid_empty_header": (
        "XHDR-02",
        _tool("invalid_empty_header", region={"type": "string", "x-mcp-header": ""}),
    ),
    "invalid_object_header": (
        "XHDR-06",
        _tool("invalid_object_header", o={"type": "object", "x-mcp-header": "Obj"}),
    ),
    "invalid_array_header": (
        "XHDR-06",
        _tool("invalid_array_header", a={"type": "array", "x-mcp-header": "Arr"}),
    ),
    "invalid_null_header": (
        "XHDR-06",
        _tool("invalid_null_header", n={"type": "null", "x-mcp-header": "Nul"}),
    ),
    "invalid_number_header": (
        "XHDR-06",
        _tool("invalid_number_header", n={"type": "number", "x-mcp-header": "Num"}),
    ),
    "invalid_duplicate_same_case": (
        "XHDR-05",
        _tool(
            "invalid_duplicate_same_case",
            a={"type": "string", "x-mcp-header": "Region"},
            b={"type": "string", "x-mcp-header": "Region"},
        ),
    ),
    "invalid_duplicate_diff_case": (
        "XHDR-05",
        _tool(
            "invalid_duplicate_diff_case",
            a={"type": "string", "x-mcp-header": "MyField"},
            b={"type": "string", "x-mcp-header": "myfield"},
        ),
    ),
    "invalid_space_in_name": (
        "XHDR-03",
        _tool("invalid_space_in_name", r={"type": "string", "x-mcp-header": "My Region"}),
    ),
    "invalid_colon_in_name": (
        "XHDR-03",
        _tool("invalid_colon_in_name", r={"type": "string", "x-mcp-header": "Region:Primary"}),
    ),
    "invalid_non_ascii_name": (
        "XHDR-03",
        _tool("invalid_non_ascii_name", r={"type": "string", "x-mcp-header": "Région"}),
    ),
    "invalid_control_char_name": (
        "XHDR-04",
        _tool("invalid_control_char_name", r={"type": "string", "x-mcp-header": "Region\t1"}),
    ),
    "invalid_under_items": (
        "XHDR-08",
        _tool(
            "invalid_under_items",
            xs={
                "type": "array",
                "items": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}},
            },
        ),
    ),
}


def test_invalid_tool_definitions_are_dropped_with_warning_xhdr10_xhdr11(mode: str) -> None:
    """Conformance `http-invalid-tool-headers`: broken annotations exclude the tool (with a warning
    naming tool and rule); the valid tool stays usable and gets its header."""
    valid = _tool("valid_tool", region={"type": "string", "x-mcp-header": "Region"})
    listing = tools_listing(valid, *(definition for _, definition in INVALID_TOOLS.values()))
    app = answer_by_method({"tools/list": listing, "tools/call": CALL_RESULT})
    with scripted(mode, app) as (drv, server), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [t["name"] for t in drv("list_all_tools")] == ["valid_tool"]
        assert list(drv.client.tools) == ["valid_tool"]
        drv("call_tool", "valid_tool", {"region": "us-west1"})
    messages = [str(w.message) for w in caught if issubclass(w.category, InvalidToolWarning)]
    for name, (rule, _) in INVALID_TOOLS.items():
        assert any(f"{name!r}" in m and rule in m for m in messages), (name, rule, messages)
    assert server.requests[-1].headers["mcp-param-region"] == "us-west1"
    assert [r.body["params"]["name"] for r in server.requests if r.body["method"] == "tools/call"] == [
        "valid_tool"
    ]


def test_mcp_name_is_base64_when_unsafe_hdr09(mode: str) -> None:
    app = answer_by_method({"tools/call": CALL_RESULT})
    with scripted(mode, app) as (drv, server):
        drv("call_tool", "wetter für heute")
        drv("call_tool", "my-hyphenated-tool")
    assert [r.headers["mcp-name"] for r in server.requests] == [
        "=?base64?d2V0dGVyIGbDvHIgaGV1dGU=?=",
        "my-hyphenated-tool",
    ]


# -- pagination ----------------------------------------------------------------------------------


def test_repeated_cursor_is_pagination_error_page06(mode: str) -> None:
    def app(rec: Recorded) -> Reply:
        return result(rec.body, {**tools_listing(_tool(f"t{len(server.requests)}")), "nextCursor": "same"})

    with (
        ScriptedHttpServer(app) as server,
        http_client(mode, server.url) as drv,
        pytest.raises(PaginationError, match="twice"),
    ):
        drv("list_all_tools")
    assert [r.body["params"].get("cursor") for r in server.requests] == [None, "same"]


def test_page_cap_is_pagination_error(mode: str) -> None:
    def app(rec: Recorded) -> Reply:
        return result(rec.body, {**tools_listing(), "nextCursor": f"c{len(server.requests)}"})

    with (
        ScriptedHttpServer(app) as server,
        http_client(mode, server.url) as drv,
        pytest.raises(PaginationError, match="3 pages"),
    ):
        drv("list_all_tools", max_pages=3)
    assert len(server.requests) == 3


def test_cache_hints_defaults_cache08_cache09(mode: str) -> None:
    app = answer_by_method({"tools/list": {"resultType": "complete", "tools": [], "ttlMs": -5}})
    with scripted(mode, app) as (drv, _):
        page = drv("list_tools")
    assert (page.tools, page.next_cursor, page.ttl_ms, page.cache_scope) == ([], None, 0, None)


# -- SSE replies and HTTP errors ----------------------------------------------------------------


def _sse_reply(request: dict[str, Any], chunks: Callable[[int], list[bytes]], **kwargs: Any) -> Reply:
    return Reply(content_type="text/event-stream", chunks=chunks(request["id"]), **kwargs)


def test_sse_reply_framing_http13_http19(mode: str) -> None:
    """HTTP-13/14/19: comments, event/id/retry fields, CRLF split between chunks, a reply for
    another id, multi-line data; notifications before the response reach on_notification."""
    progress = (
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}'
    )

    def chunks(rid: int) -> list[bytes]:
        return [
            b": keep-alive\r\n\r\n",
            b"event: message\r\nid: 7\r\nretry: 100\r\ndata: " + progress + b"\r\n\r",
            b"\n",
            b'data: {"jsonrpc":"2.0","id":999999,"result":{"content":[]}}\n\n',
            b'event: message\ndata: {"jsonrpc":"2.0",\ndata:  "id": %d,\nda' % rid,
            b'ta: "result": {"resultType":"complete","content":[{"type":"text","text":"streamed"}]}}\n',
            b"\n",
        ]

    notes: list[dict[str, Any]] = []
    app = answer_by_method({"tools/call": lambda req: _sse_reply(req, chunks)})
    with scripted(mode, app, on_notification=notes.append) as (drv, _):
        assert drv("call_tool", "x").text == "streamed"
    assert [n["params"]["progress"] for n in notes] == [1]


def test_sse_stream_ending_without_response_is_transport_error_http26(mode: str) -> None:
    app = answer_by_method({"tools/call": lambda req: _sse_reply(req, lambda rid: [b": nothing here\n\n"])})
    with scripted(mode, app) as (drv, _), pytest.raises(TransportError, match="ended before the response"):
        drv("call_tool", "x")


def test_sse_total_timeout_with_trickling_stream_cancel04(mode: str) -> None:
    app = answer_by_method(
        {"tools/call": lambda req: _sse_reply(req, lambda rid: [b": tick\n\n"] * 20, chunk_delay=0.05)}
    )
    with scripted(mode, app) as (drv, _), pytest.raises(RequestTimeoutError):
        drv("call_tool", "x", timeout=0.3)


def test_http_status_without_jsonrpc_body(mode: str) -> None:
    app = answer_by_method(
        {"tools/call": lambda req: Reply(status=502, body=b"bad gateway", content_type="text/plain")}
    )
    with scripted(mode, app) as (drv, _), pytest.raises(HttpStatusError) as info:
        drv("call_tool", "x")
    assert (info.value.status_code, info.value.body) == (502, b"bad gateway")


def test_jsonrpc_error_with_http_status_is_typed_hdr05(mode: str) -> None:
    app = answer_by_method(
        {"tools/call": lambda req: error(req, -32601, "Method not found", "tools/call", 404)}
    )
    with scripted(mode, app) as (drv, _), pytest.raises(MethodNotFoundError) as info:
        drv("call_tool", "x")
    assert (info.value.code, info.value.data, info.value.http_status) == (-32601, "tools/call", 404)


def test_slow_json_reply_is_request_timeout(mode: str) -> None:
    app = answer_by_method({"tools/call": lambda req: Reply(body=result(req, CALL_RESULT).body, delay=1.0)})
    with scripted(mode, app, timeout=0.2) as (drv, _), pytest.raises(RequestTimeoutError):
        drv("call_tool", "x")


def test_nothing_listening_is_connect_error(mode: str) -> None:
    with http_client(mode, f"http://127.0.0.1:{free_port()}/mcp") as drv, pytest.raises(ConnectError):
        drv("discover")


# -- stdio ----------------------------------------------------------------------------------------


@contextmanager
def stdio_client(mode: str, script_mode: str, record: Path, **kwargs: Any) -> Iterator[Driver]:
    command = [PYTHON, "-c", STDIO_SCRIPT, script_mode, str(record)]
    with driver(
        mode, lambda: Client.stdio(command, **kwargs), lambda: AsyncClient.stdio(command, **kwargs)
    ) as drv:
        yield drv


def _recorded_lines(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


def test_stdio_timeout_sends_cancelled_cancel03_stdio01(mode: str, tmp_path: Path) -> None:
    """CANCEL-03/STDIO-08: a timed-out request is cancelled by id; STDIO-01: one message per line,
    even when a value contains a newline."""
    record = tmp_path / "stdin.log"
    with stdio_client(mode, "silent", record) as drv:
        assert drv("discover")["resultType"] == "complete"  # the scripted peer answers everything but calls
        with pytest.raises(RequestTimeoutError):
            drv("call_tool", "slow", {"text": "two\nlines"}, timeout=0.3)
    lines = _recorded_lines(record)
    call = next(m for m in lines if m.get("method") == "tools/call")
    assert call["params"]["arguments"] == {"text": "two\nlines"}
    cancelled = [m for m in lines if m.get("method") == "notifications/cancelled"]
    assert cancelled == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": call["id"], "reason": "timeout"},
        }
    ]


def test_stdio_task_cancellation_sends_cancelled_cancel01(mode: str, tmp_path: Path) -> None:
    if mode == "sync":
        pytest.skip("task cancellation is the async driver's")
    record = tmp_path / "stdin.log"

    async def cancel_midway(client: AsyncClient) -> None:
        task = asyncio.ensure_future(client.call_tool("slow"))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with stdio_client(mode, "silent", record) as drv:
        drv.run(cancel_midway)
    lines = _recorded_lines(record)
    call = next(m for m in lines if m.get("method") == "tools/call")
    assert {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": call["id"], "reason": "cancelled by client"},
    } in lines


def test_stdio_server_exit_is_server_exited_error(mode: str, tmp_path: Path) -> None:
    with stdio_client(mode, "die", tmp_path / "stdin.log") as drv:
        with pytest.raises(ServerExitedError) as info:
            drv("discover")
        assert info.value.returncode == 3
        assert "fatal: the scripted peer gives up" in info.value.stderr_tail
        with pytest.raises(ServerExitedError):  # and it stays dead
            drv("discover")


def test_stdio_non_json_line_is_protocol_error_stdio03(mode: str, tmp_path: Path) -> None:
    with (
        stdio_client(mode, "garbage", tmp_path / "stdin.log", timeout=5) as drv,
        pytest.raises(ProtocolError, match="non-JSON"),
    ):
        drv("discover")


def test_stdio_missing_program_is_connect_error(mode: str, tmp_path: Path) -> None:
    command = [str(tmp_path / "no-such-server")]
    with pytest.raises(ConnectError):
        if mode == "sync":
            Client.stdio(command)
        else:

            async def enter() -> None:
                async with AsyncClient.stdio(command):
                    pass

            asyncio.run(enter())
