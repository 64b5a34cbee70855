"""Retryable errors and `Client(retries=N)` against a real HTTP server on loopback that answers
what a load balancer or a draining replica answers: 502/503/504 pages, JSON-RPC errors with 503,
a dropped connection. Both drivers. (tests/cluster/ runs the same through nginx.)"""

from __future__ import annotations

import socket
from typing import Any

import pytest

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.errors import (
    ConnectError,
    HttpStatusError,
    McpRuntimeError,
    RemoteError,
    ResponseLostError,
    ToolError,
    TransportError,
)
from tests.runtime._client_drivers import MODES, Recorded, Reply, ScriptedHttpServer, driver, error, result
from tests.support import free_port

pytestmark = [pytest.mark.timeout(30), pytest.mark.parametrize("mode", MODES)]

DONE = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}
BAD_GATEWAY = Reply(status=502, body=b"<html>502 Bad Gateway</html>", content_type="text/html")
# A 502 leaves open whether the call ran: retried only for a tool that may run twice (retry_policy.py).
IDEMPOTENT_T = [{"name": "t", "inputSchema": {"type": "object"}, "annotations": {"idempotentHint": True}}]


def failing_first(n: int, failure: Any) -> Any:
    """An app whose first `n` tools/call requests get `failure` (a Reply, or a function of the request)."""

    def app(rec: Recorded) -> Reply:
        calls = sum(1 for r in server_requests(app) if r.body["method"] == "tools/call")
        if calls <= n:
            return failure(rec.body) if callable(failure) else failure
        return result(rec.body, DONE)

    return app


def server_requests(app: Any) -> list[Recorded]:
    return app.server.requests  # type: ignore[no-any-return]


def run(mode: str, app: Any, **kwargs: Any) -> tuple[Any, list[Recorded]]:
    with ScriptedHttpServer(app) as server:
        app.server = server
        with driver(
            mode,
            lambda: Client(server.url, era="modern", **kwargs),
            lambda: AsyncClient(server.url, era="modern", **kwargs),
        ) as drv:
            try:
                return drv("call_tool", "t", {}), server.requests
            except McpRuntimeError as exc:
                return exc, server.requests


def test_gateway_errors_are_retryable_and_retried(mode: str) -> None:
    outcome, requests = run(mode, failing_first(1, BAD_GATEWAY))
    assert isinstance(outcome, HttpStatusError) and outcome.status_code == 502 and outcome.retryable
    assert len(requests) == 1  # retries=0: the caller decides
    outcome, requests = run(mode, failing_first(2, BAD_GATEWAY), retries=2, tools=IDEMPOTENT_T)
    assert outcome.content[0].text == "done"
    ids = [r.body["id"] for r in requests]
    assert len(ids) == 3 and len(set(ids)) == 3  # each attempt is a new request (BASE-05)


@pytest.mark.parametrize("status", [503, 504])
def test_unavailable_with_a_json_rpc_error_is_retried(mode: str, status: int) -> None:
    def unavailable(request: dict[str, Any]) -> Reply:
        return error(request, -32603, "store unavailable", status=status)

    outcome, _ = run(mode, failing_first(1, unavailable))
    assert isinstance(outcome, RemoteError) and outcome.http_status == status and outcome.retryable
    tools = IDEMPOTENT_T if status == 504 else None  # 503: nothing was done, so any tool
    outcome, requests = run(mode, failing_first(1, unavailable), retries=1, tools=tools)
    assert outcome.content[0].text == "done" and len(requests) == 2


def test_client_errors_are_not_retried(mode: str) -> None:
    def invalid(request: dict[str, Any]) -> Reply:
        return error(request, -32602, "bad params", status=400)

    outcome, requests = run(mode, failing_first(5, invalid), retries=3)
    assert isinstance(outcome, RemoteError) and not outcome.retryable and len(requests) == 1
    tool_error = {"resultType": "complete", "isError": True, "content": [{"type": "text", "text": "no"}]}
    outcome, requests = run(mode, failing_first(5, lambda request: result(request, tool_error)), retries=3)
    assert outcome.is_error and len(requests) == 1  # a tool's own error is an answer, not a failure
    assert not ToolError("t", outcome).retryable
    assert ResponseLostError("the reply stream ended").retryable  # as errors.py and the docs say
    outcome, requests = run(mode, failing_first(5, BAD_GATEWAY), retries=2, tools=IDEMPOTENT_T)
    assert isinstance(outcome, HttpStatusError) and len(requests) == 3  # gives up after retries


def test_a_cut_stream_and_a_refused_connection_are_retryable(mode: str) -> None:
    cut = Reply(
        content_type="text/event-stream",
        chunks=[b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n'],
    )
    outcome, _ = run(mode, failing_first(1, cut))
    assert isinstance(outcome, ResponseLostError) and outcome.retryable
    port = free_port()
    with socket.socket():  # nothing listens on `port`
        url = f"http://127.0.0.1:{port}/mcp"
        with (
            driver(
                mode,
                lambda: Client(url, era="modern", retries=1),
                lambda: AsyncClient(url, era="modern", retries=1),
            ) as drv,
            pytest.raises(ConnectError) as refused,
        ):
            drv("call_tool", "t", {})
    assert refused.value.retryable
    assert not TransportError("malformed").retryable and TransportError("cut", retryable=True).retryable
