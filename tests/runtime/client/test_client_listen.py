"""`subscriptions/listen` (SUB-02..10, CACHE-14): the official SDK over HTTP and stdio, our own
server in-process (list changes and graceful closure), and scripted peers for the edges (a
partial acknowledgment, a notification before it, errors, a stream that just stops, the
cancellation a closed stdio subscription sends).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.errors import MethodNotFoundError, ProtocolError, ResponseLostError
from mcpgen_runtime.protocol.subscriptions import SubscriptionFilter, SubscriptionWarning
from mcpgen_runtime.server import ServerConfig
from tests.runtime._client_drivers import Driver, Recorded, Reply, ScriptedHttpServer, driver, result
from tests.runtime._client_helpers import LiveServer, WeatherServer
from tests.support import PYTHON, ROOT, free_port, running_server

pytestmark = pytest.mark.timeout(60)

SDK_PEER = ROOT / "tests" / "peers" / "sdk_server.py"
SDK_STDIO = [PYTHON, str(SDK_PEER), "--stdio"]
SUB = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, str(SDK_PEER), "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(params=["sync-http", "async-http", "sync-stdio", "async-stdio"])
def sdk(request: pytest.FixtureRequest, sdk_url: str) -> Iterator[Driver]:
    mode, kind = request.param.split("-")
    if kind == "http":
        makers = (lambda: Client(sdk_url), lambda: AsyncClient(sdk_url))
    else:
        makers = (lambda: Client.stdio(SDK_STDIO), lambda: AsyncClient.stdio(SDK_STDIO))
    with driver(mode, *makers) as drv:
        yield drv


def open_sub(drv: Driver, **kwargs: Any) -> Any:
    sub = drv.client.listen(**kwargs)
    drv.run(lambda _: sub.open())
    return sub


def next_note(drv: Driver, sub: Any) -> dict[str, Any]:
    return drv.run(lambda _: anext(sub)) if drv.is_async else next(sub)  # type: ignore[no-any-return]


def close_sub(drv: Driver, sub: Any) -> None:
    drv.run(lambda _: sub.aclose() if drv.is_async else sub.close())


def test_sdk_listen_acknowledges_and_delivers_list_changed_sub02_sub05_cache14(sdk: Driver) -> None:
    before = sdk("list_tools")
    assert not before.cached and sdk("list_tools").cached
    sub = open_sub(sdk, tools_list_changed=True)
    try:
        assert sub.acknowledged == SubscriptionFilter(tools_list_changed=True) and not sub.unsupported
        assert sdk("call_tool", "change_tools").text == "changed"
        note = next_note(sdk, sub)
        assert note["method"] == "notifications/tools/list_changed"
        assert note["params"]["_meta"][SUB] == sub.id
        assert not sdk("list_tools").cached  # the notification made the cached pages stale (CACHE-14)
        # Requests between notifications still work, and the next change arrives too.
        assert sdk("call_tool", "get_weather", {"location": "Rome"}).text == "Weather in Rome: sunny, 22C"
        sdk("call_tool", "change_tools")
        assert next_note(sdk, sub)["method"] == "notifications/tools/list_changed"
    finally:
        close_sub(sdk, sub)
    assert sdk("call_tool", "get_weather", {"location": "Oslo"}).text == "Weather in Oslo: sunny, 22C"


def test_sdk_two_subscriptions_are_demultiplexed_sub06(sdk: Driver) -> None:
    first, second = open_sub(sdk), open_sub(sdk)
    assert first.id != second.id
    try:
        sdk("call_tool", "change_tools")
        assert next_note(sdk, first)["params"]["_meta"][SUB] == first.id
        assert next_note(sdk, second)["params"]["_meta"][SUB] == second.id
        close_sub(sdk, first)  # HTTP: the stream closes; stdio: notifications/cancelled for its id
        sdk("call_tool", "change_tools")
        assert next_note(sdk, second)["params"]["_meta"][SUB] == second.id
        assert sdk("call_tool", "get_weather", {"location": "Rome"}).text.startswith("Weather in Rome")
    finally:
        close_sub(sdk, second)


# -- our own server ------------------------------------------------------------------------


class ChangingServer(WeatherServer):
    """The generated weather server plus two tools that act on its listen streams."""

    def __init__(self) -> None:
        super().__init__(ServerConfig(page_size=None))
        empty = {"type": "object", "properties": {}}
        self.add_tool({"name": "announce", "inputSchema": empty}, self._announce, notify=False)
        self.add_tool({"name": "shut_streams", "inputSchema": empty}, self._shut, notify=False)

    async def _announce(self, args: Any, ctx: Any) -> str:
        return str(self.notify_list_changed())

    async def _shut(self, args: Any, ctx: Any) -> str:
        self.close_subscriptions()
        return "closed"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_our_server_list_changed_then_graceful_end_sub07(mode: str) -> None:
    with (
        LiveServer(ChangingServer()) as live,
        driver(mode, lambda: Client(live.url), lambda: AsyncClient(live.url)) as drv,
    ):
        sub = open_sub(drv, tools_list_changed=True)
        assert sub.acknowledged.tools_list_changed
        assert drv("call_tool", "announce").text == "1"
        assert next_note(drv, sub)["method"] == "notifications/tools/list_changed"
        drv("call_tool", "shut_streams")
        with pytest.raises(StopAsyncIteration if drv.is_async else StopIteration):
            next_note(drv, sub)  # the server answered the listen request: a clean end
        close_sub(drv, sub)


# -- scripted edges -------------------------------------------------------------------------


def sse(*messages: dict[str, Any]) -> list[bytes]:
    return [b"event: message\ndata: " + json.dumps(m).encode() + b"\n\n" for m in messages]


def ack(rec: Recorded, notifications: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUB: rec.body["id"]}, "notifications": notifications},
    }


def changed(rec: Recorded) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {SUB: rec.body["id"]}},
    }


def listen_app(stream: Any) -> Any:
    def app(rec: Recorded) -> Reply:
        if rec.body["method"] != "subscriptions/listen":
            return result(rec.body, {"resultType": "complete", "content": []})
        return Reply(content_type="text/event-stream", chunks=stream(rec))

    return app


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_partial_acknowledgment_is_reported_sub04(mode: str) -> None:
    def stream(rec: Recorded) -> list[bytes]:
        final = {
            "jsonrpc": "2.0",
            "id": rec.body["id"],
            "result": {"resultType": "complete", "_meta": {SUB: rec.body["id"]}},
        }
        return sse(ack(rec, {"toolsListChanged": True}), changed(rec), final)

    with (
        ScriptedHttpServer(listen_app(stream)) as server,
        driver(mode, lambda: Client(server.url), lambda: AsyncClient(server.url)) as drv,
    ):
        sub = drv.client.listen(
            tools_list_changed=True, prompts_list_changed=True, resource_subscriptions=["file:///a"]
        )
        with pytest.warns(SubscriptionWarning, match="promptsListChanged, file:///a"):
            drv.run(lambda _: sub.open())
        assert sub.unsupported == ["promptsListChanged", "file:///a"]
        assert next_note(drv, sub)["method"] == "notifications/tools/list_changed"
        with pytest.raises(StopAsyncIteration if drv.is_async else StopIteration):
            next_note(drv, sub)
        body = server.bodies("subscriptions/listen")[0]
        assert body["params"]["notifications"] == {
            "toolsListChanged": True,
            "promptsListChanged": True,
            "resourceSubscriptions": ["file:///a"],
        }
        headers = server.requests[0].headers
        assert headers["mcp-method"] == "subscriptions/listen" and "text/event-stream" in headers["accept"]


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    ("case", "error"),
    [("before-ack", ProtocolError), ("error", MethodNotFoundError), ("cut", ResponseLostError)],
)
def test_broken_streams(mode: str, case: str, error: type[Exception]) -> None:
    def stream(rec: Recorded) -> list[bytes]:
        if case == "before-ack":
            return sse(changed(rec), ack(rec, {"toolsListChanged": True}))
        if case == "error":
            return sse(
                {"jsonrpc": "2.0", "id": rec.body["id"], "error": {"code": -32601, "message": "no listen"}}
            )
        return sse(ack(rec, {"toolsListChanged": True}))  # then the stream just ends

    with (
        ScriptedHttpServer(listen_app(stream)) as server,
        driver(mode, lambda: Client(server.url), lambda: AsyncClient(server.url)) as drv,
    ):
        sub = drv.client.listen()
        with pytest.raises(error):
            drv.run(lambda _: sub.open())  # the first two fail here, "cut" after its acknowledgment
            next_note(drv, sub)


STDIO_LISTENER = r"""
import json, sys
record = sys.argv[1]
with open(record, "a") as log:
    for line in sys.stdin:
        log.write(line); log.flush()
        msg = json.loads(line)
        if msg.get("method") == "subscriptions/listen":
            sid = msg["id"]
            for note in ({"method": "notifications/subscriptions/acknowledged",
                          "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": sid},
                                     "notifications": {"toolsListChanged": True}}},
                         {"method": "notifications/tools/list_changed",
                          "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": sid}}}):
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", **note}) + "\n")
        elif "id" in msg:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "resultType": "complete", "content": [{"type": "text", "text": "ok"}]}}) + "\n")
        sys.stdout.flush()
"""


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_closing_a_stdio_subscription_sends_cancelled_sub10(mode: str, tmp_path: Path) -> None:
    script, record = tmp_path / "listener.py", tmp_path / "stdin.log"
    script.write_text(STDIO_LISTENER)
    command = [sys.executable, str(script), str(record)]
    notes: list[dict[str, Any]] = []
    with driver(
        mode,
        lambda: Client.stdio(command, on_notification=notes.append),
        lambda: AsyncClient.stdio(command, on_notification=notes.append),
    ) as drv:
        sub = open_sub(drv)
        assert drv("call_tool", "x").text == "ok"  # the subscription's notification waits in its queue
        assert next_note(drv, sub)["method"] == "notifications/tools/list_changed"
        close_sub(drv, sub)
        drv("call_tool", "x")
    assert not notes  # subscription traffic never reaches a request's on_notification (SUB-06)
    sent = [json.loads(line) for line in record.read_text().splitlines()]
    cancels = [m for m in sent if m.get("method") == "notifications/cancelled"]
    assert cancels == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": sub.id, "reason": "subscription closed by the client"},
        }
    ]


def test_listen_needs_a_streaming_transport() -> None:
    class Plain:
        sends_headers = False

        def request(self, *a: Any, **k: Any) -> Any: ...

        def notify(self, *a: Any) -> None: ...

        def close(self) -> None: ...

    with pytest.raises(TypeError, match="stream"):
        Client(transport=Plain()).listen().open()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_listen_on_the_httpx_engine(sdk_url: str, mode: str) -> None:
    """A transport built on a caller's httpx client (custom TLS, proxies) streams the same way."""
    import httpx

    from mcpgen_runtime.transport import BASE_HEADERS, AsyncHttpTransport, HttpTransport

    # request() on a caller's httpx client sends only the MCP headers (no Accept/Content-Type),
    # so the client carries them here; stream() adds them itself.
    def make_sync() -> Client:
        return Client(transport=HttpTransport(sdk_url, client=httpx.Client(headers=dict(BASE_HEADERS))))

    def make_async() -> AsyncClient:
        return AsyncClient(
            transport=AsyncHttpTransport(sdk_url, client=httpx.AsyncClient(headers=dict(BASE_HEADERS)))
        )

    with driver(mode, make_sync, make_async) as drv:
        assert drv.client.transport.engine == "httpx"
        sub = open_sub(drv)
        try:
            drv("call_tool", "change_tools")
            assert next_note(drv, sub)["params"]["_meta"][SUB] == sub.id
        finally:
            close_sub(drv, sub)
