"""Requests the peer initiates mid-reply, answered through the transports' `on_request` hook
(transport/hooks.py): stdio writes the answer as a line, HTTP POSTs it to the same URL with the
headers of the request whose SSE stream carried the question. Without a hook they are dropped
(HTTP-15). The peer is real: tests/peers/asking_peer.py as a stdio process and as an ASGI app
under uvicorn, which asks `elicitation/create` before answering anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from mcpgen_runtime.transport import AsyncHttpTransport, AsyncStdioTransport, HttpTransport, StdioTransport
from mcpgen_runtime.transport.base import AsyncTransport, SyncTransport
from tests.support import PYTHON, ROOT, free_port, running_server

pytestmark = pytest.mark.timeout(60)

PEER = str(ROOT / "tests" / "peers" / "asking_peer.py")
MODES = ("sync", "async")
KINDS = ("stdio", "http11", "httpx")
CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "greet", "arguments": {}}}
ACCEPT = {"action": "accept", "content": {"name": "Ada"}}


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, PEER, "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


class Peer:
    """A transport of `kind` to the asking peer, called the same way in both modes."""

    def __init__(self, mode: str, kind: str, url: str, on_request: Callable[..., Any] | None) -> None:
        self.runner = asyncio.Runner() if mode == "async" else None
        self.http: httpx.Client | httpx.AsyncClient | None = None
        if kind == "stdio":
            command = [PYTHON, PEER, "--stdio"]
            self.transport: Any = (
                StdioTransport(command, on_request=on_request)
                if mode == "sync"
                else AsyncStdioTransport(command, on_request=on_request)
            )
        else:
            if kind == "httpx":
                self.http = httpx.Client() if mode == "sync" else httpx.AsyncClient()
            self.transport = (
                HttpTransport(url, client=self.http, on_request=on_request)
                if mode == "sync"
                else AsyncHttpTransport(url, client=self.http, on_request=on_request)
            )
            assert self.transport.engine == kind
        assert isinstance(self.transport, SyncTransport if mode == "sync" else AsyncTransport)

    def run(self, result: Any) -> Any:
        return self.runner.run(result) if self.runner is not None else result

    def request(self, headers: dict[str, str] | None = None) -> dict[str, Any]:
        reply, _ = self.run(self.transport.request(CALL, headers or {}, timeout=10))
        assert reply["id"] == CALL["id"]
        return reply["result"]  # type: ignore[no-any-return]

    def stream(self, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
        if self.runner is None:
            return list(self.transport.stream(CALL, headers or {}))

        async def collect() -> list[dict[str, Any]]:
            return [item async for item in self.transport.stream(CALL, headers or {})]

        return self.run(collect())  # type: ignore[no-any-return]

    def close(self) -> None:
        if self.runner is None:
            self.transport.close()
            if self.http is not None:
                self.http.close()
            return
        self.runner.run(self.transport.aclose())
        if isinstance(self.http, httpx.AsyncClient):
            self.runner.run(self.http.aclose())
        self.runner.close()


def hook(mode: str, answer: Callable[[dict[str, Any]], dict[str, Any]], seen: list[dict[str, Any]]) -> Any:
    """`answer` as the `on_request` hook of `mode` (a coroutine function for asyncio)."""

    def sync_hook(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return answer(request)

    async def async_hook(request: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return sync_hook(request)

    return sync_hook if mode == "sync" else async_hook


def accept(request: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": ACCEPT}


def peer(mode: str, kind: str, http_url: str | None, on_request: Any) -> Peer:
    return Peer(mode, kind, http_url or "", on_request)


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def url(kind: str, request: pytest.FixtureRequest) -> str | None:
    return None if kind == "stdio" else str(request.getfixturevalue("http_url"))


@pytest.mark.parametrize("mode", MODES)
def test_hook_answers_a_request_that_arrives_mid_reply(mode: str, kind: str, url: str | None) -> None:
    seen: list[dict[str, Any]] = []
    client = peer(mode, kind, url, hook(mode, accept, seen))
    try:
        result = client.request({"X-Trace": "t1"})
    finally:
        client.close()
    assert [r["method"] for r in seen] == ["elicitation/create"] and seen[0]["id"] == "ask-7"
    assert result["answer"] == {"jsonrpc": "2.0", "id": "ask-7", "result": ACCEPT}
    if kind != "stdio":  # POSTed to the same URL with the request's headers
        assert result["answerHeaders"]["x-trace"] == "t1"
        assert result["answerHeaders"]["content-type"] == "application/json"


@pytest.mark.parametrize("mode", MODES)
def test_without_a_hook_peer_requests_are_dropped(mode: str, kind: str, url: str | None) -> None:
    client = peer(mode, kind, url, None)
    try:
        assert client.request()["answer"] is None  # the peer waited in vain, then answered anyway
    finally:
        client.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_hook_answers_internal_error(mode: str, kind: str, url: str | None) -> None:
    def fail(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("no one at the keyboard")

    client = peer(mode, kind, url, hook(mode, fail, []))
    try:
        answer = client.request()["answer"]
    finally:
        client.close()
    assert answer["id"] == "ask-7" and answer["error"]["code"] == -32603
    assert "no one at the keyboard" in answer["error"]["message"]


@pytest.mark.parametrize("mode", MODES)
def test_stream_answers_peer_requests_and_yields_the_rest(mode: str, kind: str, url: str | None) -> None:
    seen: list[dict[str, Any]] = []
    client = peer(mode, kind, url, hook(mode, accept, seen))
    try:
        items = client.stream({"X-Trace": "t2"})
    finally:
        client.close()
    assert len(seen) == 1
    [response] = items  # the question was answered, not yielded
    assert response["id"] == 7 and response["result"]["answer"]["result"] == ACCEPT


@pytest.mark.parametrize("mode", MODES)
def test_http_stream_without_a_hook_yields_the_peer_request(mode: str, http_url: str) -> None:
    client = peer(mode, "http11", http_url, None)
    try:
        items = client.stream()
    finally:
        client.close()
    assert [item.get("method") for item in items] == ["elicitation/create", None]
    assert items[1]["result"]["answer"] is None
