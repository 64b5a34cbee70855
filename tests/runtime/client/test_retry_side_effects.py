"""`Client(retries=N)` resends a tool call only when that cannot run it twice by surprise
(client/retry_policy.py): against a raw HTTP/1.1 server on loopback that reads each request and
then does what the test scripts — drops the connection, answers 502/504, 503 with `Retry-After`,
or the result — and counts what it received. Both drivers; the modern and the legacy era."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from typing import Any

import httpx
import pytest

from bench.proxy import Nginx, find_binary
from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.client.retry_policy import MAX_RETRY_WAIT_S, SAFE_TO_REPEAT, repeatable_tool, retry_wait
from mcpgen_runtime.errors import (
    MAX_RETRY_AFTER_S,
    ConnectError,
    HttpStatusError,
    McpRuntimeError,
    RemoteError,
    ServerExitedError,
    ServiceUnavailableError,
    TransportError,
)
from mcpgen_runtime.tools import ToolSpec
from mcpgen_runtime.transport import AsyncHttpTransport, HttpTransport
from mcpgen_runtime.transport.failures import retry_after_seconds
from mcpgen_runtime.transport.limits import Deadline
from tests.runtime._client_drivers import MODES, driver
from tests.support import free_port

pytestmark = [pytest.mark.timeout(30), pytest.mark.peer]  # servers on loopback, nginx, stdio processes

OBJECT = {"type": "object"}
TOOLS = [
    {"name": "read", "inputSchema": OBJECT, "annotations": {"readOnlyHint": True}},
    {"name": "put", "inputSchema": OBJECT, "annotations": {"idempotentHint": True}},
    {"name": "send", "inputSchema": OBJECT, "annotations": {"destructiveHint": True}},
    {"name": "plain", "inputSchema": OBJECT},
]
DONE = {"content": [{"type": "text", "text": "done"}]}
LEGACY_VERSION = "2025-06-18"

# What the server does with one tools/call, after reading all of it.
DROP = "drop"  # close the connection without a byte of reply


def gateway(status: int, headers: str = "") -> bytes:
    body = f"<html>{status}</html>".encode()
    return (
        f"HTTP/1.1 {status} Gateway\r\nContent-Type: text/html\r\n{headers}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


def json_reply(message: dict[str, Any], status: int = 200, headers: str = "") -> bytes:
    body = json.dumps(message).encode()
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{headers}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


class RawServer:
    """HTTP/1.1 on loopback, one request per connection read to its end; each tools/call takes
    the next scripted action (DROP, or raw response bytes); when the script is spent, the result.
    `initialize` opens a legacy session; notifications get 202."""

    def __init__(self, script: list[Any], *, listen_after: float = 0.0) -> None:
        self.script = list(script)
        self.calls: list[dict[str, Any]] = []  # every tools/call received, in order
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", self.port))  # bound, not listening: connecting is refused
        self._listen_after = listen_after
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._stop = threading.Event()

    def __enter__(self) -> RawServer:
        if not self._listen_after:
            self._sock.listen(16)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sock.close()

    def _serve(self) -> None:
        if self._listen_after:
            if self._stop.wait(self._listen_after):  # the refused attempts happen meanwhile
                return
            self._sock.listen(16)
        self._sock.settimeout(0.05)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                self._one(conn)

    def _one(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        if not head.startswith(b"POST "):  # a legacy session's GET stream, its DELETE: none here
            conn.sendall(b"HTTP/1.1 405 No\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += conn.recv(65536)
        message = json.loads(body)
        method = message.get("method")
        if "id" not in message:
            conn.sendall(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        if method == "initialize":
            result = {
                "protocolVersion": LEGACY_VERSION,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
            conn.sendall(json_reply({"jsonrpc": "2.0", "id": message["id"], "result": result}))
            return
        self.calls.append(message)
        action = self.script.pop(0) if self.script else None
        if action == DROP:
            conn.shutdown(socket.SHUT_RDWR)  # the request was read in full: it may have run
            return
        if callable(action):
            action = action(message)
        if action is None:
            result = DONE if method == "tools/call" else {"tools": TOOLS}
            action = json_reply({"jsonrpc": "2.0", "id": message["id"], "result": result})
        conn.sendall(action)


def call(
    mode: str, url: str, tool: str, *, era: str = "modern", retry_unsafe: bool | None = None, **kwargs: Any
) -> Any:
    """Call `tool` with retries=2 (unless given); the outcome, or the error raised."""
    options: dict[str, Any] = {"era": era, "tools": TOOLS, "retries": 2, "timeout": 5, **kwargs}
    with driver(mode, lambda: Client(url, **options), lambda: AsyncClient(url, **options)) as drv:
        client = drv.client if retry_unsafe is None else drv.client.with_options(retry_unsafe=retry_unsafe)
        try:
            return drv.run(lambda _: client.call_tool(tool, {}))
        except McpRuntimeError as exc:
            return exc


CUTS = {
    "drop": DROP,
    "502": gateway(502),
    "504": gateway(504),
    "504+json": lambda m: json_reply(
        {"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32603, "message": "upstream"}}, status=504
    ),
}


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("cut", list(CUTS))
@pytest.mark.parametrize("mode", MODES)
def test_a_call_that_may_have_run_is_resent_only_when_the_tool_or_the_caller_allows(
    mode: str, era: str, cut: str
) -> None:
    failure = CUTS[cut]
    for tool in ("send", "plain"):  # no annotation that allows it: sent once, the error raised
        with RawServer([failure]) as server:
            outcome = call(mode, server.url, tool, era=era)
        assert isinstance(outcome, TransportError | RemoteError) and outcome.retryable, outcome
        assert not outcome.unprocessed
        assert [m["params"]["name"] for m in server.calls] == [tool]
    for tool in ("read", "put"):  # readOnlyHint, idempotentHint: sent again
        with RawServer([failure]) as server:
            outcome = call(mode, server.url, tool, era=era)
        assert outcome.content[0].text == "done", outcome
        assert len(server.calls) == 2 and server.calls[0]["id"] != server.calls[1]["id"]
    with RawServer([failure]) as server:  # the caller allows it for this view's calls
        outcome = call(mode, server.url, "send", era=era, retry_unsafe=True)
    assert outcome.content[0].text == "done" and len(server.calls) == 2
    with RawServer([failure, failure, failure]) as server:  # retries=2: three attempts, then the error
        outcome = call(mode, server.url, "read", era=era)
    assert isinstance(outcome, McpRuntimeError) and len(server.calls) == 3


@pytest.mark.parametrize("mode", MODES)
def test_the_httpx_engine_classifies_a_cut_connection_alike(mode: str) -> None:
    def outcome(tool: str) -> tuple[Any, int]:
        with RawServer([DROP]) as server:

            def sync() -> Client:
                return Client(
                    transport=HttpTransport(server.url, client=httpx.Client()), tools=TOOLS, retries=1
                )

            def asyncio_() -> AsyncClient:
                transport = AsyncHttpTransport(server.url, client=httpx.AsyncClient())
                return AsyncClient(transport=transport, tools=TOOLS, retries=1)

            with driver(mode, sync, asyncio_) as drv:
                assert drv.client.transport.engine == "httpx"  # type: ignore[union-attr]
                try:
                    return drv("call_tool", tool, {}), len(server.calls)
                except McpRuntimeError as exc:
                    return exc, len(server.calls)

    done, received = outcome("read")
    assert done.content[0].text == "done" and received == 2
    cut, received = outcome("send")
    assert isinstance(cut, TransportError) and cut.retryable and not cut.unprocessed and received == 1


def test_through_nginx_a_502_for_a_cut_upstream_is_resent_only_for_a_read() -> None:
    nginx_bin = find_binary("nginx")
    if nginx_bin is None:
        pytest.skip(
            "nginx is not installed (`make services` installs it from Debian packages when run as root)"
        )
    with RawServer([DROP, DROP]) as server:
        proxy = Nginx(nginx_bin, [f"127.0.0.1:{server.port}"], package="raw", port=free_port(), workers=1)
        proxy.start()
        try:
            url = f"http://127.0.0.1:{proxy.port}/mcp"
            with Client(url, tools=TOOLS, retries=2, era="modern", timeout=5) as client:
                with pytest.raises(HttpStatusError) as cut:
                    client.call_tool("send", {})  # the upstream read it and died: nginx answers 502
                assert cut.value.status_code == 502 and not cut.value.unprocessed
                assert len(server.calls) == 1  # nginx does not resend a POST either
                assert client.call_tool("read", {}).content[0].text == "done"
            assert [m["params"]["name"] for m in server.calls] == ["send", "read", "read"]
        finally:
            proxy.stop()


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("mode", MODES)
def test_an_answer_that_says_nothing_was_done_is_retried_for_any_tool(mode: str, era: str) -> None:
    unavailable = gateway(503, "Retry-After: 0\r\n")
    store_down = lambda m: json_reply(  # noqa: E731 - the shared store's answer (server/core/replicas.py)
        {
            "jsonrpc": "2.0",
            "id": m["id"],
            "error": {"code": -32603, "message": "store", "data": {"retryable": True, "retryAfterMs": 10}},
        },
        status=503,
    )
    limited = gateway(429, "Retry-After: 0\r\n")
    with RawServer([unavailable, store_down, limited]) as server:
        outcome = call(mode, server.url, "send", era=era, retries=3)
    assert outcome.content[0].text == "done", outcome
    assert len(server.calls) == 4


@pytest.mark.parametrize("mode", MODES)
def test_retry_after_is_waited_for_and_a_wait_past_the_bound_is_not(mode: str) -> None:
    with RawServer([gateway(503, "Retry-After: 1\r\n")]) as server:
        started = time.monotonic()
        outcome = call(mode, server.url, "send")
        elapsed = time.monotonic() - started
    assert outcome.content[0].text == "done" and len(server.calls) == 2
    assert 0.95 <= elapsed < 5, elapsed
    too_long = int(MAX_RETRY_WAIT_S) + 1
    with RawServer([gateway(503, f"Retry-After: {too_long}\r\n")]) as server:
        started = time.monotonic()
        outcome = call(mode, server.url, "read")
        assert time.monotonic() - started < 2
    assert isinstance(outcome, HttpStatusError) and outcome.retry_after_s == too_long
    assert outcome.unprocessed and len(server.calls) == 1  # raised: the caller decides when


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("mode", MODES)
def test_a_refused_connection_is_retried_for_any_tool(mode: str, era: str) -> None:
    with RawServer([], listen_after=0.3) as server:  # legacy: the `initialize` is refused first
        started = time.monotonic()
        outcome = call(mode, server.url, "send", era=era, retries=8)
        assert time.monotonic() - started >= 0.3  # the first attempts were refused
    assert outcome.content[0].text == "done", outcome
    assert len(server.calls) == 1
    with RawServer([], listen_after=10) as server:
        outcome = call(mode, server.url, "send", era=era, retries=1)
    assert isinstance(outcome, ConnectError) and outcome.unprocessed and server.calls == []


@pytest.mark.parametrize("mode", MODES)
def test_requests_other_than_tool_calls_keep_their_rules(mode: str) -> None:
    options: dict[str, Any] = {"era": "modern", "retries": 1, "timeout": 5}
    with RawServer([gateway(502)]) as server:
        with driver(
            mode, lambda: Client(server.url, **options), lambda: AsyncClient(server.url, **options)
        ) as drv:
            listed = drv("list_all_tools")
        assert [t["name"] for t in listed] == [t["name"] for t in TOOLS]
        assert [m["method"] for m in server.calls] == ["tools/list", "tools/list"]
    # A listing fills the table a client without definitions decides by.
    with RawServer([None, DROP]) as server:
        with driver(
            mode, lambda: Client(server.url, **options), lambda: AsyncClient(server.url, **options)
        ) as drv:
            drv("list_all_tools")
            assert drv("call_tool", "read", {}).content[0].text == "done"
        assert [m["method"] for m in server.calls] == ["tools/list", "tools/call", "tools/call"]


def test_the_policy_in_numbers() -> None:
    def spec(annotations: Any) -> ToolSpec:
        return ToolSpec.from_definition({"name": "t", "inputSchema": OBJECT, "annotations": annotations})

    assert repeatable_tool(spec({"readOnlyHint": True})) and repeatable_tool(spec({"idempotentHint": True}))
    assert not repeatable_tool(spec({"readOnlyHint": "yes"})) and not repeatable_tool(spec(None))
    assert not repeatable_tool(None) and "tools/call" not in SAFE_TO_REPEAT
    cut = TransportError("cut", retryable=True)
    assert retry_wait(cut, 0, repeatable=False, timeout=5) is None
    waits = [retry_wait(cut, attempt, repeatable=True, timeout=5) for attempt in range(12)]
    assert all(w is not None and 0 < w <= 2.0 for w in waits)  # bounded backoff
    assert retry_wait(TransportError("malformed"), 0, repeatable=True, timeout=5) is None
    unavailable = ServiceUnavailableError(-32603, "x", {"retryable": True, "retryAfterMs": 1500})
    assert retry_wait(unavailable, 0, repeatable=False, timeout=5) == 1.5
    spent = Deadline(5, 1.0)  # a call's max_time ends before the wait would
    assert retry_wait(unavailable, 0, repeatable=False, timeout=spent) is None
    now = 1_000_000_000.0
    assert retry_after_seconds("7") == 7 and retry_after_seconds(" 0 ") == 0
    assert retry_after_seconds("Sun, 09 Sep 2001 01:46:50 GMT", now=now) == 10
    assert retry_after_seconds("Sun, 09 Sep 2001 01:46:00 GMT", now=now) == 0  # in the past
    assert retry_after_seconds("99999999999999999") == MAX_RETRY_AFTER_S
    for bad in (None, "", "-1", "soon", "1.5", "Sun, 09 Sep 2001 01:46:50", "x" * 10_000):
        assert retry_after_seconds(bad, now=now) is None, bad


# argv: MODE RECORD_PATH. Every tools/call line is appended to RECORD_PATH; the first one is
# answered with the shared store's error (MODE unavailable) or ends the process (MODE exit).
STDIO_SERVER = r"""
import json, sys
mode, record = sys.argv[1], sys.argv[2]
calls = 0
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "raw", "version": "1"}}
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
    elif msg["method"] == "tools/call":
        with open(record, "a") as log:
            log.write(line)
        calls += 1
        if calls == 1 and mode == "exit":
            sys.exit(3)
        if calls == 1:
            data = {"retryable": True, "retryAfterMs": 10}
            reply = {"jsonrpc": "2.0", "id": msg["id"],
                     "error": {"code": -32603, "message": "store", "data": data}}
        else:
            done = {"content": [{"type": "text", "text": "done"}]}
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": done}
    else:
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {}}
    sys.stdout.write(json.dumps(reply) + "\n"); sys.stdout.flush()
"""


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("mode", MODES)
def test_on_stdio_an_answer_that_nothing_was_done_is_retried_and_an_exit_is_not(
    mode: str, era: str, tmp_path: Any
) -> None:
    def run(behaviour: str, tool: str) -> tuple[Any, int]:
        record = tmp_path / f"{behaviour}-{tool}.jsonl"
        command = [sys.executable, "-c", STDIO_SERVER, behaviour, str(record)]
        options: dict[str, Any] = {"era": era, "tools": TOOLS, "retries": 2, "timeout": 5}
        with driver(
            mode, lambda: Client.stdio(command, **options), lambda: AsyncClient.stdio(command, **options)
        ) as drv:
            try:
                outcome = drv("call_tool", tool, {})
            except McpRuntimeError as exc:
                outcome = exc
        return outcome, len(record.read_text().splitlines()) if record.exists() else 0

    outcome, received = run("unavailable", "send")
    assert outcome.content[0].text == "done" and received == 2
    outcome, received = run("exit", "read")  # it may have run: no one can tell on stdio
    assert isinstance(outcome, ServerExitedError) and not outcome.retryable and received == 1
