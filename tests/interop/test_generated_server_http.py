"""Proof, scenario 3 (wire rules): raw HTTP with httpx against the generated server
(`python -m weather_server --http`), for the header and status rules the generated client
relies on. Each case changes one thing in an otherwise valid `execute_sql` call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.interop._support import b64_sentinel, rpc, standard_headers

pytestmark = pytest.mark.timeout(60)

Headers = dict[str, str]
Body = dict[str, Any]


@pytest.fixture(scope="module")
def http(our_http_url: str) -> Iterator[tuple[httpx.Client, str]]:
    with httpx.Client(timeout=10.0) as client:
        yield client, our_http_url


def sql_call(region: str = "us-west1", name: str = "execute_sql") -> tuple[Headers, Body]:
    body = rpc(7, "tools/call", {"name": name, "arguments": {"region": region, "query": "SELECT 1"}})
    headers = standard_headers(body)
    headers["Mcp-Param-Region"] = region
    return headers, body


def without(name: str) -> Callable[[Headers, Body], tuple[Headers, Body]]:
    return lambda headers, body: ({k: v for k, v in headers.items() if k != name}, body)


def with_header(name: str, value: str) -> Callable[[Headers, Body], tuple[Headers, Body]]:
    return lambda headers, body: ({**headers, name: value}, body)


def unknown_tool(headers: Headers, body: Body) -> tuple[Headers, Body]:
    body["params"]["name"] = "no_such_tool"
    return {**headers, "Mcp-Name": "no_such_tool"}, body


def unknown_method(headers: Headers, body: Body) -> tuple[Headers, Body]:
    body["method"] = "no/such/method"
    headers = {k: v for k, v in headers.items() if not k.startswith(("Mcp-Name", "Mcp-Param"))}
    return {**headers, "Mcp-Method": "no/such/method"}, body


def test_valid_call_is_answered(http: tuple[httpx.Client, str]) -> None:
    """The control case: every header right -> 200 JSON with the tool result (HTTP-12)."""
    client, url = http
    headers, body = sql_call()
    reply = client.post(url, json=body, headers=headers)
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    result = reply.json()["result"]
    assert reply.json()["id"] == 7
    assert result["content"] == [{"type": "text", "text": "Executed in us-west1: SELECT 1 (0 rows)"}]
    assert result["isError"] is False and result["resultType"] == "complete"


def test_base64_param_header_is_decoded(http: tuple[httpx.Client, str]) -> None:
    """XHDR-14/17: the server decodes a =?base64?…?= value before comparing it with the body."""
    client, url = http
    headers, body = sql_call("Zürich")
    headers["Mcp-Param-Region"] = b64_sentinel("Zürich")
    reply = client.post(url, json=body, headers=headers)
    assert reply.status_code == 200
    assert reply.json()["result"]["content"][0]["text"] == "Executed in Zürich: SELECT 1 (0 rows)"


@pytest.mark.parametrize(
    ("change", "status", "code", "message"),
    [
        pytest.param(
            without("Mcp-Param-Region"),
            400,
            -32020,
            "Missing Mcp-Param-Region header for argument 'region'",
            id="missing-param-header",
        ),
        pytest.param(
            with_header("Mcp-Param-Region", "eu-west1"),
            400,
            -32020,
            "Mcp-Param-Region header does not match argument 'region'",
            id="mismatched-param-header",
        ),
        pytest.param(
            with_header("Mcp-Param-Region", "=?base64?%%%?="),
            400,
            -32020,
            "Mcp-Param-Region header has a malformed =?base64?...?= value",
            id="malformed-base64",
        ),
        pytest.param(without("Mcp-Name"), 400, -32020, "Missing Mcp-Name header", id="missing-mcp-name"),
        pytest.param(
            without("MCP-Protocol-Version"),
            400,
            -32020,
            "Missing MCP-Protocol-Version header",
            id="missing-protocol-version",
        ),
        pytest.param(unknown_tool, 400, -32602, "Unknown tool: no_such_tool", id="unknown-tool"),
        pytest.param(unknown_method, 404, -32601, "Method not found: no/such/method", id="unknown-method"),
    ],
)
def test_header_and_method_rules(
    http: tuple[httpx.Client, str],
    change: Callable[[Headers, Body], tuple[Headers, Body]],
    status: int,
    code: int,
    message: str,
) -> None:
    """XHDR-22/23/24, HDR-05/06/11/12, TOOLS-22, ERR-08, BASE-12/13: each broken rule gets its
    status and JSON-RPC code, with the request id echoed."""
    client, url = http
    headers, body = change(*sql_call())
    reply = client.post(url, json=body, headers=headers)
    assert reply.status_code == status
    assert reply.headers["content-type"] == "application/json"
    assert reply.json() == {"jsonrpc": "2.0", "id": 7, "error": {"code": code, "message": message}}


@pytest.mark.parametrize("verb", ["GET", "DELETE"])
def test_get_and_delete_are_405(http: tuple[httpx.Client, str], verb: str) -> None:
    """HTTP-23: only POST is served on the MCP endpoint; GET/DELETE get 405 with `Allow: POST`."""
    client, url = http
    reply = client.request(
        verb, url, headers={"Accept": "text/event-stream", "MCP-Protocol-Version": "2026-07-28"}
    )
    assert reply.status_code == 405
    assert reply.headers["allow"] == "POST"
    assert reply.content == b""
