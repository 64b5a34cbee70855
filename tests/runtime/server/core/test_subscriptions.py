"""`subscriptions/listen` (SUB-*, TOOLS-05, HTTP-19), run-time tool changes, and the
`add_method` hook with caching hints (CACHE-01/13), in-process and over HTTP and stdio."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen_runtime.server import IncomingRequest, RequestContext, ServerConfig, ToolServer
from tests.runtime.dynamic_server_app import DynamicServer
from tests.runtime.server_helpers import call, mcp_headers, meta, request
from tests.support import PYTHON, ROOT, free_port, subprocess_env, wait_for_port

SUB_ID = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def listen(id_: Any, **filter_: Any) -> dict[str, Any]:
    return request(id_, "subscriptions/listen", {"notifications": filter_})


class Listener:
    """A subscriptions/listen request running in-process, its notifications collected."""

    def __init__(self, server: ToolServer, message: dict[str, Any], *, keepalive: bool = False) -> None:
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.keepalives = 0

        async def notify(m: dict[str, Any]) -> None:
            self.messages.put_nowait(m)

        async def ping() -> None:
            self.keepalives += 1

        req = IncomingRequest("stdio", None, notify, keepalive=ping if keepalive else None)
        self.task = asyncio.ensure_future(server.handle_message(message, req))

    async def next(self, timeout: float = 2.0) -> dict[str, Any]:
        return await asyncio.wait_for(self.messages.get(), timeout)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# ---- in-process ------------------------------------------------------------------------------


def test_ack_first_then_tagged_notifications_sub01_sub02_sub03_sub05() -> None:
    async def scenario() -> None:
        server = DynamicServer(ServerConfig())
        sub = Listener(
            server, listen(7, toolsListChanged=True, promptsListChanged=True, resourcesListChanged=False)
        )
        ack = await sub.next()
        # prompts are not served: not honoured, so not echoed (SUB-03)
        assert ack == {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": {"toolsListChanged": True}, "_meta": {SUB_ID: 7}},
        }
        assert server.notify_list_changed("tools") == 1
        assert server.notify_list_changed("prompts") == 0
        changed = await sub.next()
        assert changed == {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {SUB_ID: 7}},
        }
        sub.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sub.task
        assert len(server._hub) == 0  # cancellation frees the subscription

    run(scenario())


def test_filter_is_honoured_per_subscription_sub01() -> None:
    async def scenario() -> None:
        server = DynamicServer(ServerConfig())
        server.declare_capability("prompts", {"listChanged": True})
        tools = Listener(server, listen("t", toolsListChanged=True))
        prompts = Listener(server, listen("p", promptsListChanged=True))
        assert (await tools.next())["params"]["notifications"] == {"toolsListChanged": True}
        assert (await prompts.next())["params"]["notifications"] == {"promptsListChanged": True}
        server.notify_list_changed("tools")
        server.notify_list_changed("prompts")
        assert (await tools.next())["method"] == "notifications/tools/list_changed"
        assert (await prompts.next())["method"] == "notifications/prompts/list_changed"
        await asyncio.sleep(0.05)
        assert tools.messages.empty() and prompts.messages.empty()
        server.close_subscriptions()
        await asyncio.gather(tools.task, prompts.task)

    run(scenario())


def test_repeated_changes_coalesce_for_a_slow_listener() -> None:
    async def scenario() -> None:
        server = DynamicServer(ServerConfig())
        sub = Listener(server, listen(1, toolsListChanged=True))
        await sub.next()
        for _ in range(5):
            server.notify_list_changed("tools")
        assert (await sub.next())["method"] == "notifications/tools/list_changed"
        await asyncio.sleep(0.05)
        assert sub.messages.empty()
        sub.task.cancel()

    run(scenario())


def test_server_close_answers_the_listen_request_sub07() -> None:
    async def scenario() -> None:
        server = DynamicServer(ServerConfig())
        sub = Listener(server, listen("s1", toolsListChanged=True))
        await sub.next()
        server.close_subscriptions()
        outcome = await asyncio.wait_for(sub.task, 2)
        assert outcome.status == 200
        assert outcome.response == {
            "jsonrpc": "2.0",
            "id": "s1",
            "result": {
                "resultType": "complete",
                "_meta": {SERVER_INFO: {"name": "mcpgen-server", "version": "0.0.0"}, SUB_ID: "s1"},
            },
        }

    run(scenario())


def test_keepalive_on_idle_streams_http19() -> None:
    async def scenario() -> None:
        server = DynamicServer(ServerConfig(keepalive_s=0.02))
        sub = Listener(server, listen(1, toolsListChanged=True), keepalive=True)
        await sub.next()
        await asyncio.sleep(0.15)
        assert sub.keepalives >= 2
        sub.task.cancel()

    run(scenario())


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"notifications": []},
        {"notifications": {"toolsListChanged": "yes"}},
        {"notifications": {"resourceSubscriptions": "file:///x"}},
    ],
)
def test_malformed_filters_are_invalid_params(params: dict[str, Any]) -> None:
    server = DynamicServer(ServerConfig())

    async def notify(m: dict[str, Any]) -> None:
        raise AssertionError("nothing may be sent")

    outcome = run(
        server.handle_message(request(1, "subscriptions/listen", params), IncomingRequest(notify=notify))
    )
    assert outcome.response is not None and outcome.response["error"]["code"] == -32602


def test_listen_needs_a_streaming_transport() -> None:
    outcome = run(DynamicServer(ServerConfig()).handle_message(listen(1, toolsListChanged=True)))
    assert outcome.response is not None and outcome.response["error"]["code"] == -32600


def test_resource_subscriptions_are_per_uri() -> None:
    async def scenario() -> None:
        server = DynamicServer(ServerConfig())
        assert server.notify_resource_updated("file:///a") == 0  # not declared: nothing sent

        async def read(uri: str, ctx: RequestContext) -> str:
            return "a"

        server.add_resource({"uri": "file:///a", "name": "a"}, read, notify=False)
        sub = Listener(
            server,
            listen(
                1, resourceSubscriptions=["file:///a", "file:///unserved", "file:///a"], toolsListChanged=True
            ),
        )
        assert (await sub.next())["params"]["notifications"] == {
            "toolsListChanged": True,
            "resourceSubscriptions": ["file:///a"],
        }
        assert server.notify_resource_updated("file:///b") == 0
        assert server.notify_resource_updated("file:///a") == 1
        assert (await sub.next())["params"] == {"uri": "file:///a", "_meta": {SUB_ID: 1}}
        sub.task.cancel()

    run(scenario())


def test_tools_changed_at_run_time_tools02_tools05() -> None:
    async def scenario() -> None:
        server = DynamicServer(ServerConfig())
        sub = Listener(server, listen(1, toolsListChanged=True))
        await sub.next()

        def names(outcome: Any) -> list[str]:
            return [t["name"] for t in outcome.response["result"]["tools"]]

        before = names(await server.handle_message(request(1, "tools/list")))
        assert "extra" not in before
        added = await server.handle_message(call(2, "mutate", {"op": "add"}))
        assert added.response is not None and added.response["result"]["content"][0]["text"] == "add done"
        assert (await sub.next())["method"] == "notifications/tools/list_changed"
        assert names(await server.handle_message(request(3, "tools/list"))) == [*before, "extra"]
        extra = await server.handle_message(call(4, "extra", {"x": 1}))
        assert (
            extra.response is not None and extra.response["result"]["content"][0]["text"] == "extra got ['x']"
        )
        invalid = await server.handle_message(call(5, "extra", {"x": "one"}))
        assert (
            invalid.response is not None and invalid.response["result"]["isError"] is True
        )  # schema-checked
        await server.handle_message(call(6, "mutate", {"op": "remove"}))
        assert (await sub.next())["method"] == "notifications/tools/list_changed"
        gone = await server.handle_message(call(7, "extra", {}))
        assert gone.response is not None and gone.response["error"]["code"] == -32602
        assert names(await server.handle_message(request(8, "tools/list"))) == before
        sub.task.cancel()

    run(scenario())


def test_add_tool_replaces_in_place_and_rejects_bad_input() -> None:
    server = DynamicServer(ServerConfig())

    async def handler(arguments: dict[str, Any], ctx: Any) -> str:
        return "replaced"

    order = list(server.tools)
    server.add_tool(
        {"name": "whoami", "description": "new", "inputSchema": {"type": "object"}}, handler, notify=False
    )
    assert list(server.tools) == order
    outcome = run(server.handle_message(call(1, "whoami", {})))
    assert outcome.response is not None and outcome.response["result"]["content"][0]["text"] == "replaced"
    with pytest.raises(TypeError):
        server.add_tool({"name": "sync", "inputSchema": {"type": "object"}}, lambda a, c: "x")  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError):
        server.add_tool(
            {
                "name": "bad",
                "inputSchema": {
                    "type": "object",
                    "properties": {"p": {"type": "number", "x-mcp-header": "P"}},
                },
            },
            handler,
        )  # XHDR-06
    with pytest.raises(KeyError):
        server.remove_tool("nope")


# ---- add_method and caching hints ---------------------------------------------------------------


class Extras(DynamicServer):
    def __init__(self, config: ServerConfig | None = None) -> None:
        super().__init__(config)
        self.declare_capability("resources", {})
        self.add_method("resources/list", self.resources)
        self.add_method("resources/read", self.read)
        self.add_method("x-example/echo", self.echo, ttl_ms=5, cache_scope="public")
        self.add_method("x-example/plain", self.echo)

    async def resources(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return {"resources": []}

    async def read(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return {"contents": [], "ttlMs": 0, "cacheScope": "private"}

    async def echo(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return {"echo": params.get("value"), "method": ctx.method}


def _result(
    server: ToolServer, message: dict[str, Any], req: IncomingRequest | None = None
) -> dict[str, Any]:
    outcome = run(server.handle_message(message, req))
    assert outcome.status == 200 and outcome.response is not None and "result" in outcome.response, outcome
    return dict(outcome.response["result"])


def test_extra_methods_get_caching_hints_cache01_cache13() -> None:
    server = Extras(ServerConfig(list_ttl_ms=1234))
    listed = _result(server, request(1, "resources/list"))
    assert listed == {
        "resources": [],
        "ttlMs": 1234,
        "cacheScope": "public",
        "resultType": "complete",
        "_meta": {SERVER_INFO: {"name": "mcpgen-server", "version": "0.0.0"}},
    }
    # The handler's own hints win; an authenticated caller's results default to private.
    assert _result(server, request(2, "resources/read", {"uri": "u"}))["cacheScope"] == "private"
    assert (
        _result(server, request(3, "resources/list"), IncomingRequest(principal="alice"))["cacheScope"]
        == "private"
    )
    echoed = _result(server, request(4, "x-example/echo", {"value": 3}))
    assert (echoed["echo"], echoed["ttlMs"], echoed["cacheScope"]) == (3, 5, "public")
    assert "ttlMs" not in _result(server, request(5, "x-example/plain"))
    discover = _result(server, request(6, "server/discover"))
    assert discover["capabilities"] == {
        "tools": {"listChanged": True},
        "resources": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }


def test_unregistered_and_reserved_methods() -> None:
    server = Extras(ServerConfig())
    outcome = run(server.handle_message(request(1, "prompts/list")))
    assert (
        outcome.status == 404 and outcome.response is not None and outcome.response["error"]["code"] == -32601
    )
    for method in ("tools/call", "initialize", "subscriptions/listen", "notifications/x"):
        with pytest.raises(ValueError):
            server.add_method(method, server.echo)
    with pytest.raises(ValueError):
        server.add_method("x/y", server.echo, ttl_ms=-1)


# ---- over HTTP --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dynamic_http() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    env = {**subprocess_env(), "MCPGEN_TEST_KEEPALIVE": "0.2"}
    proc = subprocess.Popen(
        [PYTHON, "-m", "tests.runtime.dynamic_server_app", "--http", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)
        assert proc.stderr is not None
        proc.stderr.close()


def _post(client: httpx.Client, url: str, message: dict[str, Any]) -> httpx.Response:
    return client.post(url, content=json.dumps(message).encode(), headers=mcp_headers(message))


def _text(client: httpx.Client, url: str, message: dict[str, Any]) -> str:
    response = _post(client, url, message)
    assert response.status_code == 200, response.text
    return str(response.json()["result"]["content"][0]["text"])


class SseReader:
    """Opens a streamed POST on its own thread and records events and comment lines in order.

    The thread owns the connection, so `close()` really closes it (a response closed from
    another thread while this one is blocked reading would not be).
    """

    def __init__(self, url: str, message: dict[str, Any]) -> None:
        self.items: list[tuple[str, Any]] = []
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.cond = threading.Condition()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._pump, args=(url, message), daemon=True)
        self.thread.start()

    def _pump(self, url: str, message: dict[str, Any]) -> None:
        try:
            with (
                httpx.Client(timeout=10) as client,
                client.stream(
                    "POST", url, content=json.dumps(message).encode(), headers=mcp_headers(message)
                ) as response,
            ):
                with self.cond:
                    self.status, self.headers = response.status_code, dict(response.headers)
                for line in response.iter_lines():
                    with self.cond:
                        if line.startswith("data:"):
                            self.items.append(("event", json.loads(line[5:])))
                        elif line.startswith(":"):
                            self.items.append(("comment", line))
                        self.cond.notify_all()
                    if self.stop.is_set():
                        break
        except httpx.HTTPError:
            pass
        with self.cond:
            self.items.append(("end", None))
            self.cond.notify_all()

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> tuple[str, Any]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for item in self.items:
                    if predicate(item):
                        return item
                remaining = deadline - time.monotonic()
                assert remaining > 0, f"not seen; got {self.items}"
                self.cond.wait(remaining)

    def close(self) -> None:
        """Stop reading and drop the connection (at the next line: keep-alives keep them coming)."""
        self.stop.set()
        self.thread.join(timeout=5)
        assert not self.thread.is_alive()


def test_listen_over_http_streams_sse_http18_http19(dynamic_http: tuple[str, Any]) -> None:
    url, _ = dynamic_http
    reader = SseReader(url, listen(99, toolsListChanged=True))
    with httpx.Client(timeout=10) as client:
        _, ack = reader.wait_for(lambda item: item[0] == "event")
        assert reader.status == 200
        assert reader.headers["content-type"] == "text/event-stream"
        assert reader.headers["x-accel-buffering"] == "no"
        assert (
            ack["method"] == "notifications/subscriptions/acknowledged"
            and ack["params"]["_meta"][SUB_ID] == 99
        )
        reader.wait_for(lambda item: item[0] == "comment")  # keep-alive after 0.2 s idle
        assert _text(client, url, call(1, "subscribers")) == "1"
        assert _text(client, url, call(2, "mutate", {"op": "touch"})) == "touch done"
        _, changed = reader.wait_for(
            lambda item: item[0] == "event" and item[1]["method"].endswith("list_changed")
        )
        assert changed["params"]["_meta"][SUB_ID] == 99
        # Closing the stream ends the subscription (SUB-10, HTTP-21).
        reader.close()
        deadline = time.monotonic() + 5
        while _text(client, url, call(3, "subscribers")) != "0":
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_listen_needs_sse_accept(dynamic_http: tuple[str, Any]) -> None:
    url, _ = dynamic_http
    message = listen(1, toolsListChanged=True)
    headers = {**mcp_headers(message), "Accept": "application/json"}
    with httpx.Client(timeout=10) as client:
        assert client.post(url, content=json.dumps(message).encode(), headers=headers).status_code == 406


def test_disconnect_cancels_any_handler_http21_cancel02(dynamic_http: tuple[str, Any]) -> None:
    """No progress token, a JSON reply pending: dropping the connection still cancels the handler."""
    url, _ = dynamic_http
    with httpx.Client(timeout=10) as client:
        before = int(_text(client, url, call(1, "cancelled")))
        with pytest.raises(httpx.ReadTimeout), httpx.Client(timeout=httpx.Timeout(10, read=0.3)) as impatient:
            _post(impatient, url, call(2, "sleep", {"seconds": 30}))
        deadline = time.monotonic() + 5
        while int(_text(client, url, call(3, "cancelled"))) != before + 1:
            assert time.monotonic() < deadline, "handler was not cancelled"
            time.sleep(0.05)


def test_shutdown_ends_listen_streams_gracefully_sub07() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [PYTHON, "-m", "tests.runtime.dynamic_server_app", "--http", "--port", str(port)],
        cwd=ROOT,
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, proc)
        reader = SseReader(f"http://127.0.0.1:{port}/mcp", listen("bye", toolsListChanged=True))
        reader.wait_for(lambda item: item[0] == "event")
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, final = reader.wait_for(lambda item: item[0] == "event" and "id" in item[1])
        assert final["id"] == "bye" and final["result"]["_meta"][SUB_ID] == "bye"
        reader.wait_for(lambda item: item[0] == "end")
        assert proc.wait(timeout=10) == 0  # drained: a clean exit
        assert time.monotonic() - started < 4  # not held up by uvicorn's graceful timeout (0.75 s, loaded)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()


# ---- over stdio -------------------------------------------------------------------------------


class Peer:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, "-m", "tests.runtime.dynamic_server_app", "--stdio"],
            cwd=ROOT,
            env=subprocess_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "server closed stdout"
        return dict(json.loads(line))


def test_listen_over_stdio_tags_and_cancels_stdio07_sub08_sub10() -> None:
    peer = Peer()
    try:
        peer.send(listen("a", toolsListChanged=True))
        peer.send(listen("b", toolsListChanged=True))
        acks = {peer.recv()["params"]["_meta"][SUB_ID] for _ in range(2)}
        assert acks == {"a", "b"}
        peer.send(call(1, "mutate", {"op": "touch"}))
        got = [peer.recv() for _ in range(3)]
        changed = sorted(
            m["params"]["_meta"][SUB_ID] for m in got if m.get("method") == "notifications/tools/list_changed"
        )
        assert changed == ["a", "b"] and any(m.get("id") == 1 for m in got)
        # The client ends "a" (SUB-10): no answer, and no more notifications for it.
        peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "a"}})
        peer.send(call(2, "subscribers"))
        assert peer.recv()["result"]["content"][0]["text"] == "1"
        peer.send(call(3, "mutate", {"op": "touch"}))
        got = [peer.recv() for _ in range(2)]
        assert sorted(str(m.get("id") or m["params"]["_meta"][SUB_ID]) for m in got) == ["3", "b"]
        # End of input: the server ends "b" itself: a final response, then notifications/cancelled
        # (SUB-07/08).
        assert peer.proc.stdin is not None
        peer.proc.stdin.close()
        final = peer.recv()
        assert final["id"] == "b" and final["result"]["_meta"][SUB_ID] == "b"
        assert peer.recv() == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "b", "reason": "subscription closed by the server"},
        }
        assert peer.proc.wait(timeout=10) == 0
    finally:
        if peer.proc.poll() is None:
            peer.proc.kill()
            peer.proc.wait()


def test_meta_helper_still_builds_valid_requests() -> None:
    assert meta()["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_stdio_batch_is_an_error_and_the_loop_goes_on() -> None:
    peer = Peer()
    try:
        assert peer.proc.stdin is not None
        peer.proc.stdin.write(b"[]\n")
        peer.proc.stdin.flush()
        assert peer.recv()["error"]["code"] == -32600
        peer.send(request(1, "server/discover"))
        assert peer.recv()["id"] == 1
    finally:
        assert peer.proc.stdin is not None
        peer.proc.stdin.close()
        peer.proc.wait(timeout=10)
