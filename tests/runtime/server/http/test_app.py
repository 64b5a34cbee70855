"""Raw Streamable HTTP against the weather server in a real uvicorn subprocess.

Statuses, JSON-RPC codes, ids and headers per docs/RULES.md (the rule ids and conformance §4).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.runtime.server_helpers import (
    SERVER_MODULE,
    SPEC_TOOL_NAMES,
    VERSION,
    call,
    mcp_headers,
    meta,
    request,
    sse_events,
)
from tests.support import PYTHON, free_port, running_server

SERVER_INFO = {"name": "weather-test", "version": "1.2.3"}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    port = free_port()
    args = [PYTHON, "-m", SERVER_MODULE, "--http", "--port", str(port), "--page-size", "2"]
    with running_server(args, port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=10) as client:
        yield client


def post(
    http: httpx.Client, message: Any, *, headers: dict[str, str] | None = None, drop: tuple[str, ...] = ()
) -> httpx.Response:
    """POST `message` with the standard headers, `headers` overriding and `drop` removing some."""
    sent = (
        mcp_headers(message)
        if isinstance(message, dict) and "method" in message
        else {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSION,
        }
    )
    lowered = {k.lower(): (k, v) for k, v in sent.items()}
    for key, value in (headers or {}).items():
        lowered[key.lower()] = (key, value)
    for key in drop:
        lowered.pop(key.lower(), None)
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return http.post("", content=body, headers=dict(lowered.values()))


def error_of(response: httpx.Response, status: int, code: int, id_: Any) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == id_  # BASE-12
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return dict(body["error"])


def result_of(response: httpx.Response, id_: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["id"] == id_ and "error" not in body, body  # BASE-06
    result = body["result"]
    assert result["resultType"] == "complete"  # BASE-08
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO  # BASE-37
    return dict(result)


# ---- discover, list, caching ------------------------------------------------------------


def test_discover_ver03_ver04_cache01(http: httpx.Client) -> None:
    """VER-03/04, TOOLS-01, CACHE-01/05, HTTP-24: discover result, and no session id even when sent one."""
    response = post(http, request("d1", "server/discover"), headers={"Mcp-Session-Id": "abc"})
    result = result_of(response, "d1")
    assert result["supportedVersions"] == [VERSION]
    assert result["capabilities"] == {
        "tools": {"listChanged": True},  # subscriptions/listen is served (TOOLS-05)
        "extensions": {"io.modelcontextprotocol/tasks": {}},  # tasks: the extension only (issue 34)
    }
    assert result["instructions"] == "Weather tools for tests."
    assert result["ttlMs"] == 60000 and result["cacheScope"] == "public"
    assert "mcp-session-id" not in response.headers


def test_discover_without_client_info_base33(http: httpx.Client) -> None:
    """BASE-33: clientInfo is optional."""
    message = request(
        1,
        "server/discover",
        {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    )
    result_of(post(http, message), 1)


def test_tools_list_all_pages_page02_tools04_cache18(http: httpx.Client) -> None:
    """PAGE-02, TOOLS-04, CACHE-01, CACHE-18: page size 2 gives three pages in definition order."""
    names: list[str] = []
    cursors: list[str] = []
    cursor = None
    for page_no in range(10):
        params = {"cursor": cursor} if cursor is not None else {}
        result = result_of(post(http, request(page_no, "tools/list", params)), page_no)
        assert len(result["tools"]) <= 2
        assert result["ttlMs"] == 60000 and result["cacheScope"] == "public"
        names.extend(tool["name"] for tool in result["tools"])
        cursor = result.get("nextCursor")
        if cursor is None:
            break
        assert isinstance(cursor, str)
        cursors.append(cursor)
    assert names == SPEC_TOOL_NAMES
    assert len(cursors) == 2
    # Stable cursors: the same request gives the same page and cursor again.
    again = result_of(post(http, request(99, "tools/list", {"cursor": cursors[0]})), 99)
    assert [t["name"] for t in again["tools"]] == SPEC_TOOL_NAMES[2:4]
    assert again["nextCursor"] == cursors[1]


def test_tools_list_keeps_definitions_intact(http: httpx.Client) -> None:
    """TOOLS-07/SCHEMA-12: listed definitions are the spec's, keywords and all."""
    spec = json.loads((__import__("pathlib").Path(__file__).parents[4] / "specs/weather.json").read_text())
    result = result_of(post(http, request(1, "tools/list")), 1)
    assert result["tools"] == spec["tools"][:2]


@pytest.mark.parametrize(
    "cursor", ["not-a-cursor", "", base64.urlsafe_b64encode(b"2.000000000000").decode(), 7]
)
def test_invalid_cursor_page08(http: httpx.Client, cursor: Any) -> None:
    """PAGE-08: a cursor the server did not issue is -32602."""
    error_of(post(http, request("c", "tools/list", {"cursor": cursor})), 400, -32602, "c")


# ---- tools/call results -----------------------------------------------------------------


def test_text_result(http: httpx.Client) -> None:
    result = result_of(post(http, call(1, "get_weather", {"location": "Paris"})), 1)
    assert result["content"] == [{"type": "text", "text": "Weather in Paris: partly cloudy, 22.5C"}]
    assert result["isError"] is False and "structuredContent" not in result


def test_structured_output_tools18_tools19(http: httpx.Client) -> None:
    """TOOLS-18/19: structuredContent conforming to outputSchema, plus the same JSON as text."""
    result = result_of(post(http, call(2, "get_weather_data", {"location": "Zürich"})), 2)
    assert result["structuredContent"] == {"temperature": 18.0, "conditions": "Sunny", "humidity": 40.0}
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_root_array_output_tools18(http: httpx.Client) -> None:
    """TOOLS-18: an array outputSchema (RootModel) gives an array structuredContent."""
    result = result_of(post(http, call(3, "list_users", {})), 3)
    assert result["structuredContent"] == [
        {"id": "1", "name": "Alice", "email": "alice@example.com"},
        {"id": "2", "name": "Bob", "email": "bob@example.com"},
    ]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_invalid_output_is_error_tools19(http: httpx.Client) -> None:
    """TOOLS-19: output breaking outputSchema is never sent; the call is an isError result."""
    result = result_of(post(http, call(4, "get_weather_data", {"location": "Mars"})), 4)
    assert result["isError"] is True and "structuredContent" not in result
    assert "invalid output" in result["content"][0]["text"]


@pytest.mark.parametrize(
    ("name", "arguments", "expect"),
    [
        ("calculate_sum", {"a": "two", "b": 1}, "at /a: 'two' is not of type 'number'"),  # draft-07 schema
        ("get_weather", {}, "'location' is a required property"),
        ("get_weather", {"location": 5}, "at /location"),
        ("get_current_time", {"x": 1}, "Additional properties are not allowed"),
    ],
)
def test_invalid_arguments_are_is_error_sec01_tools22(
    http: httpx.Client, name: str, arguments: dict[str, Any], expect: str
) -> None:
    """SEC-01, TOOLS-22: arguments failing inputSchema give an isError result naming where and why."""
    result = result_of(post(http, call(5, name, arguments)), 5)
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert expect in text and name in text


def test_missing_arguments_member_is_empty_object(http: httpx.Client) -> None:
    """`arguments` may be omitted; get_current_time then reaches its (unimplemented) handler."""
    result = result_of(post(http, call(6, "get_current_time")), 6)
    assert (
        result["isError"] is True
        and result["content"][0]["text"] == "Tool 'get_current_time' is not implemented"
    )


def test_tool_execution_error_tools22(http: httpx.Client) -> None:
    result = result_of(post(http, call(7, "get_weather", {"location": "Atlantis"})), 7)
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Unknown location 'Atlantis'; try a real city such as 'Paris'."


def test_internal_failure_is_short_is_error_sec04(http: httpx.Client) -> None:
    """An unexpected exception is an isError result without details or traceback."""
    result = result_of(post(http, call(8, "get_weather", {"location": "Crash"})), 8)
    text = result["content"][0]["text"]
    assert result["isError"] is True and "internal error" in text
    assert "secret" not in text and "Traceback" not in text


def test_unknown_tool_is_invalid_params_tools22(http: httpx.Client) -> None:
    """TOOLS-22: unknown tool -> JSON-RPC -32602, not a result."""
    error_of(post(http, call("u", "no_such_tool", {})), 400, -32602, "u")


def test_capability_gate_base35_base36(http: httpx.Client) -> None:
    """BASE-35/36: an undeclared capability the tool needs -> 400, -32021, data.requiredCapabilities."""
    args = {"region": "eu", "query": "NEEDS SAMPLING"}
    error = error_of(post(http, call(9, "execute_sql", args)), 400, -32021, 9)
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}
    message = call(10, "execute_sql", args, capabilities={"sampling": {}})
    assert result_of(post(http, message), 10)["content"][0]["text"] == "sampling available"


# ---- JSON-RPC envelope --------------------------------------------------------------------


def test_parse_error_has_null_id(http: httpx.Client) -> None:
    error_of(post(http, b'{"jsonrpc":"2.0","id":14,'), 400, -32700, None)


def test_batch_is_invalid_request_http09(http: httpx.Client) -> None:
    error_of(post(http, [request(25, "tools/list")]), 400, -32600, None)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": None, "method": "tools/list", "params": {"_meta": meta()}},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list", "params": {"_meta": meta()}},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list", "params": {"_meta": meta()}},
        "just a string",
    ],
)
def test_bad_ids_are_invalid_request_base03(http: httpx.Client, message: Any) -> None:
    error_of(post(http, message), 400, -32600, None)


def test_wrong_jsonrpc_version_echoes_id(http: httpx.Client) -> None:
    message = {"jsonrpc": "1.0", "id": 31, "method": "tools/list", "params": {"_meta": meta()}}
    error_of(post(http, message, headers={"Mcp-Method": "tools/list"}), 400, -32600, 31)


def test_notification_is_202_empty_http10_base16(http: httpx.Client) -> None:
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 1, "_meta": meta()},
    }
    response = post(http, message)
    assert response.status_code == 202 and response.content == b""


# ---- version and _meta --------------------------------------------------------------------


def test_missing_protocol_version_header_hdr06(http: httpx.Client) -> None:
    error_of(
        post(http, call(10, "get_weather", {"location": "x"}), drop=("MCP-Protocol-Version",)),
        400,
        -32020,
        10,
    )


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
        {"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}},
        {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": [],
            }
        },
        {"_meta": "nope"},
    ],
)
def test_missing_meta_fields_base31_base32(http: httpx.Client, params: dict[str, Any]) -> None:
    """BASE-31/32: checked before the header/_meta version comparison (RULES.md conformance §4.6)."""
    message = {"jsonrpc": "2.0", "id": 20, "method": "server/discover", "params": params}
    error_of(post(http, message), 400, -32602, 20)


def test_header_meta_version_mismatch_hdr03(http: httpx.Client) -> None:
    message = request(21, "server/discover")
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v999.0.0"
    error_of(post(http, message), 400, -32020, 21)


def test_unsupported_version_ver01_hdr04(http: httpx.Client) -> None:
    message = request(12, "server/discover")
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v999.0.0"
    error = error_of(post(http, message, headers={"MCP-Protocol-Version": "v999.0.0"}), 400, -32022, 12)
    assert error["data"] == {"supported": [VERSION], "requested": "v999.0.0"}


# ---- standard headers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "drop"),
    [
        ({}, ("Mcp-Method",)),
        ({"Mcp-Method": "tools/list"}, ()),
        ({"Mcp-Method": "TOOLS/CALL"}, ()),  # values are case-sensitive (HDR-10)
        ({}, ("Mcp-Name",)),
        ({"Mcp-Name": "get_weather_data"}, ()),
        ({"Mcp-Name": "=?base64?Z2V0X3dlYXRoZXI?="}, ()),  # bad padding
        ({"Mcp-Name": "=?base64?Z2V0!!!X3dlYXRoZXI=?="}, ()),  # bad alphabet
    ],
)
def test_standard_header_mismatch_hdr07_hdr08_hdr12(
    http: httpx.Client, headers: dict[str, str], drop: tuple[str, ...]
) -> None:
    error_of(
        post(http, call(11, "get_weather", {"location": "x"}), headers=headers, drop=drop), 400, -32020, 11
    )


@pytest.mark.parametrize(
    "name_header",
    [
        "get_weather",
        "=?base64?" + base64.b64encode(b"get_weather").decode() + "?=",  # XHDR-17: decoded before comparing
    ],
)
def test_mcp_name_accepted_forms_xhdr17(http: httpx.Client, name_header: str) -> None:
    response = post(
        http,
        call(12, "get_weather", {"location": "Paris"}),
        headers={"mcp-name": name_header, "mcp-method": "tools/call"},
    )
    assert result_of(response, 12)["isError"] is False


def test_header_blocks_are_checked_per_request_hdr08(http: httpx.Client) -> None:
    """The server memoizes decoded header blocks; a block seen before is still checked against each body."""
    good = call(13, "get_weather", {"location": "Paris"})
    other = call(14, "get_weather_data", {"location": "Paris"})  # same headers, another tool in the body
    for _ in range(2):
        assert result_of(post(http, good, headers={"mcp-name": "get_weather"}), 13)["isError"] is False
        error_of(post(http, other, headers={"mcp-name": "get_weather"}), 400, -32020, 14)


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
        "prompts/list",
        "resources/list",
    ],
)
def test_unknown_and_removed_methods_are_404_hdr05(http: httpx.Client, method: str) -> None:
    error = error_of(post(http, request(101, method)), 404, -32601, 101)
    if method == "initialize":
        assert error["data"]["supported"] == [VERSION]  # VER-08


def test_legacy_initialize_opens_a_session(http: httpx.Client) -> None:
    """A legacy-shaped initialize (no header, no _meta) opens a session of the dual-era server
    (tests/runtime/server/legacy/test_http.py covers sessions; modern_only answers VER-08 instead)."""
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    response = post(http, message, drop=("MCP-Protocol-Version",))
    assert response.status_code == 200, response.text
    assert response.json()["result"]["protocolVersion"] == "2025-11-25"
    assert response.headers["mcp-session-id"]


# ---- Mcp-Param-* ----------------------------------------------------------------------------


SQL = {"region": "us-west1", "query": "SELECT 1"}


@pytest.mark.parametrize(
    ("arguments", "header"),
    [
        (SQL, "us-west1"),
        ({"region": "Zürich", "query": "q"}, "=?base64?WsO8cmljaA==?="),
        ({"region": " padded ", "query": "q"}, "=?base64?IHBhZGRlZCA=?="),
        ({"region": "SGVsbG8=", "query": "q"}, "SGVsbG8="),  # no sentinel: a literal
        ({"region": "=?base64?SGVsbG8=", "query": "q"}, "=?base64?SGVsbG8="),  # no suffix: a literal
    ],
)
def test_param_header_matches_xhdr23(http: httpx.Client, arguments: dict[str, Any], header: str) -> None:
    response = post(http, call(13, "execute_sql", arguments), headers={"mcp-param-region": header})
    result = result_of(response, 13)
    assert result["content"][0]["text"].startswith(arguments["region"] + ":")


@pytest.mark.parametrize(
    ("arguments", "headers", "drop"),
    [
        (SQL, {}, ("Mcp-Param-Region",)),  # XHDR-24: value in body, header missing
        (SQL, {"Mcp-Param-Region": "eu-west1"}, ()),  # mismatch
        (SQL, {"Mcp-Param-Region": "US-WEST1"}, ()),  # values are case-sensitive
        (
            {"region": "Hello", "query": "q"},
            {"Mcp-Param-Region": "=?base64?SGVsbG8?="},
            (),
        ),  # bad padding (XHDR-22)
        (
            {"region": "Hello", "query": "q"},
            {"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="},
            (),
        ),  # bad characters
        (
            {"region": None, "query": "q"},
            {"Mcp-Param-Region": "us-west1"},
            (),
        ),  # header claims an absent value
    ],
)
def test_param_header_mismatch_xhdr22_xhdr23_xhdr24(
    http: httpx.Client, arguments: dict[str, Any], headers: dict[str, str], drop: tuple[str, ...]
) -> None:
    error_of(post(http, call(14, "execute_sql", arguments), headers=headers, drop=drop), 400, -32020, 14)


def test_null_param_needs_no_header_xhdr24(http: httpx.Client) -> None:
    """XHDR-24: a null value expects no header; the call proceeds to input validation."""
    result = result_of(post(http, call(15, "execute_sql", {"region": None, "query": "q"})), 15)
    assert result["isError"] is True and "/region" in result["content"][0]["text"]


# ---- HTTP mechanics -----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_non_post_is_405_http23(http: httpx.Client, method: str) -> None:
    response = http.request(
        method, "", headers={"Accept": "text/event-stream", "MCP-Protocol-Version": VERSION}
    )
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    assert "mcp-session-id" not in response.headers


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/jsonx"])
def test_content_type_must_be_json(http: httpx.Client, content_type: str | None) -> None:
    drop = ("Content-Type",) if content_type is None else ()
    headers = {"Content-Type": content_type} if content_type else {}
    error_of(post(http, request(1, "tools/list"), headers=headers, drop=drop), 415, -32600, None)


def test_content_type_with_charset_is_fine(http: httpx.Client) -> None:
    response = post(
        http, request(1, "tools/list"), headers={"Content-Type": "application/json; charset=utf-8"}
    )
    result_of(response, 1)


def test_accept_must_allow_json_or_sse(http: httpx.Client) -> None:
    error_of(post(http, request(1, "tools/list"), headers={"Accept": "text/html"}), 406, -32600, None)
    # Either one alone is acceptable; reversed order too (RULES.md conformance §3).
    result_of(post(http, request(2, "tools/list"), headers={"Accept": "application/json"}), 2)
    result_of(
        post(http, request(3, "tools/list"), headers={"Accept": "text/event-stream, application/json"}), 3
    )


def test_sse_only_client_gets_a_stream_http12(http: httpx.Client) -> None:
    response = post(http, request(4, "tools/list"), headers={"Accept": "text/event-stream"})
    assert response.status_code == 200 and response.headers["content-type"] == "text/event-stream"
    [event] = sse_events(response.text)
    assert event["id"] == 4 and event["result"]["tools"]


def test_body_over_limit_is_413(http: httpx.Client) -> None:
    big = json.dumps(call(1, "get_weather", {"location": "x" * (4 * 1024 * 1024)})).encode()
    response = post(http, big, headers={"Mcp-Method": "tools/call", "Mcp-Name": "get_weather"})
    assert response.status_code == 413
    # The server closed that connection; the next request still works.
    result_of(post(http, request(2, "tools/list")), 2)


def _chunked(body: bytes, size: int = 1000) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


def test_chunked_bodies_are_read_whole_and_limited(http: httpx.Client, base_url: str) -> None:
    """No Content-Length: the body arrives in several ASGI messages; the size limit still holds."""
    message = call(5, "get_weather", {"location": "Paris " * 500})
    headers = {k: v for k, v in mcp_headers(message).items()}
    response = http.post("", content=_chunked(json.dumps(message).encode()), headers=headers)
    assert "content-length" not in response.request.headers
    assert result_of(response, 5)["isError"] is False
    big = json.dumps(call(6, "get_weather", {"location": "x" * (4 * 1024 * 1024)})).encode()
    with httpx.Client(base_url=base_url, timeout=10) as fresh:  # the server closes this connection
        try:
            refused = fresh.post("", content=_chunked(big, 64 * 1024), headers=headers)
        except httpx.WriteError:  # closed while we were still sending: refused all the same
            refused = None
        assert refused is None or refused.status_code == 413
    result_of(post(http, request(7, "tools/list")), 7)  # the server is fine


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "http://localhost.evil.example:80", "https://127.0.0.1.nip.io"]
)
def test_foreign_origin_is_403_http02_http03(http: httpx.Client, origin: str) -> None:
    response = post(http, request(1, "tools/list"), headers={"Origin": origin})
    assert response.status_code == 403
    assert response.json()["id"] is None


@pytest.mark.parametrize("origin", ["http://localhost:3000", "http://127.0.0.1", "https://[::1]:8443"])
def test_local_origin_is_allowed_http02(http: httpx.Client, origin: str) -> None:
    result_of(post(http, request(1, "tools/list"), headers={"Origin": origin}), 1)


def test_foreign_host_is_rejected(http: httpx.Client) -> None:
    """DNS rebinding: a localhost-bound server refuses requests addressed to another name."""
    assert post(http, request(1, "tools/list"), headers={"Host": "evil.example"}).status_code == 421
    result_of(post(http, request(2, "tools/list"), headers={"Host": "localhost:1234"}), 2)


# ---- progress over SSE and cancellation -----------------------------------------------------


def test_progress_streams_as_sse_prog01_prog03_http14_http18(http: httpx.Client) -> None:
    message = call(30, "get_weather", {"location": "Slow"}, progressToken="progress-test-1")
    response = post(http, message)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    assert "event: message\ndata: " in response.text
    *progress, final = sse_events(response.text)
    assert [p["method"] for p in progress] == ["notifications/progress"] * 3
    assert all(p["params"]["progressToken"] == "progress-test-1" and "id" not in p for p in progress)
    values = [p["params"]["progress"] for p in progress]
    assert values == sorted(values) and len(set(values)) == 3  # PROG-03
    assert final["id"] == 30 and final["result"]["content"][0]["text"] == "Weather in Slow: foggy"


def test_progress_token_without_progress_stays_json(http: httpx.Client) -> None:
    """The SSE stream starts only when a notification precedes the result."""
    response = post(http, call(31, "get_weather", {"location": "Paris"}, progressToken=7))
    result_of(response, 31)


def test_no_token_no_progress_prog05(http: httpx.Client) -> None:
    result = result_of(post(http, call(32, "get_weather", {"location": "Slow"})), 32)
    assert result["content"][0]["text"] == "Weather in Slow: foggy"


def _cancelled_count(http: httpx.Client) -> int:
    result = result_of(post(http, call(40, "execute_sql", {"region": "eu", "query": "CANCELLED"})), 40)
    return int(result["content"][0]["text"])


def test_disconnect_cancels_handler_http21(http: httpx.Client, base_url: str) -> None:
    """HTTP-21: closing the SSE response stream cancels the request's handler."""
    before = _cancelled_count(http)
    message = call(41, "execute_sql", {"region": "eu", "query": "SLEEP 30"}, progressToken="p")
    with (
        httpx.Client(timeout=10) as other,
        other.stream(
            "POST", base_url, content=json.dumps(message).encode(), headers=mcp_headers(message)
        ) as response,
    ):
        assert response.headers["content-type"] == "text/event-stream"
        first = next(response.iter_lines())
        assert first.startswith("event: message")
    deadline = time.monotonic() + 5
    while _cancelled_count(http) != before + 1:
        assert time.monotonic() < deadline, "handler was not cancelled"
        time.sleep(0.05)


def test_a_deeply_nested_wrong_type_argument_is_refused_not_a_500(http: httpx.Client) -> None:
    """~1,000 levels of `[` in a 2 KB body: the explanation must not recurse past Python's limit."""
    message = call(1, "get_weather_data", {"city": "PLACEHOLDER"})
    body = json.dumps(message).replace('"PLACEHOLDER"', "[" * 975 + "]" * 975).encode()
    assert len(body) < 3000
    response = post(http, body, headers=mcp_headers(message))
    assert response.status_code == 200, response.text[:300]
    reply = response.json()
    assert reply["id"] == 1
    if "error" in reply:
        assert reply["error"]["code"] == -32602
        text = reply["error"]["message"]
    else:
        assert reply["result"]["isError"] is True
        text = reply["result"]["content"][0]["text"]
    assert "nested more than 100 levels" in text
