"""What a server behind a load balancer needs: liveness and readiness probes, and a graceful
SIGTERM (in-flight calls finish, listen streams end with their final response, the process exits
within `--shutdown-grace`). Real uvicorn subprocesses and the runtime client."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import h11
import httpx
import orjson
import pytest

from mcpgen_runtime.client import Client
from mcpgen_runtime.errors import McpRuntimeError
from mcpgen_runtime.server import ServerConfig
from tests.runtime._client_helpers import LiveServer, WeatherServer
from tests.runtime.legacy_helpers import LegacySession
from tests.runtime.server_helpers import SERVER_MODULE, call, mcp_headers
from tests.support import PYTHON, free_port, httptools_env, running_server


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, "-m", SERVER_MODULE, "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}"


def test_liveness_and_readiness(server_url: str) -> None:
    with httpx.Client(base_url=server_url, timeout=5) as http:
        live = http.get("/healthz")
        assert (live.status_code, live.json()) == (200, {"status": "ok"})
        assert live.headers["cache-control"] == "no-store"
        ready = http.get("/readyz")
        assert (ready.status_code, ready.json()) == (200, {"status": "ready", "checks": []})
        head = http.head("/readyz")
        assert head.status_code == 200 and head.content == b""
        # Orchestrators probe by address: no Host check (the MCP endpoint keeps its own: 421).
        assert http.get("/healthz", headers={"Host": "10.1.2.3:8000"}).status_code == 200
        assert http.post("/mcp", content=b"{}", headers={"Host": "10.1.2.3:8000"}).status_code == 421
        # The Origin check still applies (HTTP-02/03).
        assert http.get("/readyz", headers={"Origin": "https://evil.example"}).status_code == 403
        assert http.delete("/healthz").status_code == 405


def test_readiness_checks_from_config_and_added_later() -> None:
    state = {"store": True}

    async def store_ping() -> bool:
        return state["store"]

    async def hangs() -> None:
        await asyncio.sleep(10)

    server = WeatherServer(ServerConfig(readiness_checks=(("store", store_ping),), ready_timeout_s=0.3))
    with LiveServer(server) as live, httpx.Client(timeout=5) as http:
        ready = f"http://127.0.0.1:{live.port}/readyz"
        assert http.get(ready).json() == {"status": "ready", "checks": ["store"]}
        state["store"] = False
        unready = http.get(ready)
        assert (unready.status_code, unready.json()) == (503, {"status": "unready", "failed": ["store"]})
        state["store"] = True
        server.add_readiness_check("slow", hangs)
        started = time.monotonic()
        unready = http.get(ready)
        assert (unready.status_code, unready.json()["failed"]) == (503, ["slow"])
        assert time.monotonic() - started < 2  # bounded by ready_timeout_s; 0.34 s at worst on 2 loaded cores
        with pytest.raises(ValueError, match="already registered"):
            server.add_readiness_check("store", store_ping)
        # Liveness never runs the checks.
        assert http.get(f"http://127.0.0.1:{live.port}/healthz").status_code == 200


def test_probe_paths_are_configurable() -> None:
    with pytest.raises(ValueError, match="start with '/'"):
        ServerConfig(health_path="healthz")
    server = WeatherServer(ServerConfig(health_path="/live", ready_path=None))
    with (
        LiveServer(server) as live,
        httpx.Client(base_url=f"http://127.0.0.1:{live.port}", timeout=5) as http,
    ):
        assert http.get("/live").status_code == 200
        assert http.get("/readyz").status_code == 404  # not a probe any more, and not the MCP endpoint


def _call_in_thread(url: str, query: str, outcome: dict[str, Any]) -> threading.Thread:
    def run() -> None:
        try:
            with Client(url, timeout=30) as client:
                outcome["result"] = client.call_tool("execute_sql", {"region": "eu", "query": query})
        except McpRuntimeError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _listen_in_thread(url: str, outcome: dict[str, Any]) -> threading.Thread:
    def run() -> None:
        try:
            with Client(url, timeout=30) as client, client.listen() as subscription:
                outcome["acknowledged"] = True
                outcome["notifications"] = list(subscription)  # ends at the final response (SUB-07)
                outcome["ended"] = True
        except McpRuntimeError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_sigterm_finishes_calls_in_flight_and_ends_streams() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = [PYTHON, "-m", SERVER_MODULE, "--http", "--port", str(port), "--shutdown-grace", "15"]
    with running_server(args, port) as proc:
        call: dict[str, Any] = {}
        stream: dict[str, Any] = {}
        listener = _listen_in_thread(url, stream)
        caller = _call_in_thread(url, "SLEEP 1.0", call)
        time.sleep(0.4)  # both requests are in the server now
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        caller.join(10)
        listener.join(10)
        assert proc.wait(10) == 0  # drained: a clean exit, as on Ctrl-C
        elapsed = time.monotonic() - started
    assert "error" not in call, call
    assert call["result"].content[0].text == "slept 1s in eu"  # finished, not cut off
    assert stream.get("ended") and "error" not in stream, stream  # a final response, not a broken stream
    # waited for the call, not for the 15 s grace period: 1.52 s at worst on 2 loaded cores
    assert 0.4 < elapsed < 5, elapsed


def test_sigterm_cancels_what_outlasts_the_grace_period() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = [PYTHON, "-m", SERVER_MODULE, "--http", "--port", str(port), "--shutdown-grace", "0.5"]
    with running_server(args, port) as proc:
        call: dict[str, Any] = {}
        caller = _call_in_thread(url, "SLEEP 20", call)
        time.sleep(0.4)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        elapsed = time.monotonic() - started
        caller.join(10)
    assert elapsed < 6, elapsed  # the 0.5 s grace, not the 20 s call: 1.88 s at worst on 2 loaded cores
    assert proc.returncode == 0
    assert "error" in call and call["error"].retryable, call  # a 503: the caller may try another replica
    assert "shutting down" in str(call["error"]), call


def test_sigterm_ends_a_legacy_sessions_get_stream() -> None:
    """A 2025-11-25 session's standalone GET stream ends cleanly on SIGTERM (its client reconnects,
    to another replica), instead of holding the shutdown up until the grace period is over."""
    port = free_port()
    args = [PYTHON, "-m", SERVER_MODULE, "--http", "--port", str(port), "--shutdown-grace", "8"]
    with (
        running_server(args, port) as proc,
        httpx.Client(base_url=f"http://127.0.0.1:{port}/mcp", timeout=15) as http,
    ):
        session = LegacySession(http)
        session.initialize()
        headers = {k: v for k, v in session.headers().items() if k != "Content-Type"}
        with http.stream("GET", "", headers=headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            for _ in stream.iter_lines():  # priming event, keep-alives; ends when the server closes it
                pass
            ended = time.monotonic() - started
        assert proc.wait(10) == 0
    assert ended < 4, ended  # closed by the drain, not cut at the 8 s grace period (0.04 s at worst, loaded)


def _get(sock: socket.socket, path: str) -> bytes:
    """One keep-alive GET on `sock`; its whole response (the probes answer with Content-Length)."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < _content_length(data):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _content_length(data: bytes) -> int:
    for line in data.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


@pytest.mark.parametrize("parser", ["h11", "httptools"])
def test_sigterm_answers_a_request_on_an_idle_keepalive_connection(parser: str) -> None:
    """A proxy may write its next request on a pooled connection just as the replica begins to
    drain. uvicorn alone closes idle connections at once, so that request is lost (nginx answers
    502 and never resends a POST); drained, it is answered with `Connection: close`."""
    env = {} if parser == "h11" else httptools_env()
    if env is None:
        pytest.skip("httptools is not installed (make test installs it into tests/peers/.site-fast)")
    port = free_port()
    args = [PYTHON, "-m", SERVER_MODULE, "--http", "--port", str(port), "--parser", parser]
    with (
        running_server(args, port, env=env) as proc,
        socket.create_connection(("127.0.0.1", port), timeout=5) as pooled,
        socket.create_connection(("127.0.0.1", port), timeout=5) as unused,
    ):
        assert _get(pooled, "/healthz").startswith(b"HTTP/1.1 200")
        assert _get(unused, "/healthz").startswith(b"HTTP/1.1 200")
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)  # uvicorn has asked every connection to shut down
        last = _get(pooled, "/healthz")
        assert last.startswith(b"HTTP/1.1 200"), last
        assert b"connection: close" in last.partition(b"\r\n\r\n")[0].lower()
        assert pooled.recv(1) == b""  # closed after that answer
        # A connection that stays idle is closed after the keep-alive timeout (5 s), then the process exits.
        started = time.monotonic()
        assert unused.recv(1) == b""
        proc.wait(10)
        assert time.monotonic() - started < 7  # the 5 s keep-alive: 5.26 s at worst on 2 loaded cores


def _send_call(sock: socket.socket, client: h11.Connection, query: str, **meta: Any) -> None:
    """A raw keep-alive POST of `execute_sql(query)` (2026-07-28 headers) on `sock`."""
    message = call(1, "execute_sql", {"region": "eu", "query": query}, **meta)
    body = orjson.dumps(message)
    headers = [("Host", "127.0.0.1"), ("Content-Length", str(len(body))), *mcp_headers(message).items()]
    sock.sendall(client.send(h11.Request(method="POST", target="/mcp", headers=headers)))
    sock.sendall(client.send(h11.Data(data=body)) + client.send(h11.EndOfMessage()))


def _next_event(sock: socket.socket, client: h11.Connection) -> Any:
    while (event := client.next_event()) is h11.NEED_DATA:
        client.receive_data(sock.recv(65536))
    return event


def _response(sock: socket.socket, client: h11.Connection) -> tuple[h11.Response, bytes]:
    """The rest of the current response: its head (unless already read) and its body."""
    head = _next_event(sock, client)
    assert isinstance(head, h11.Response), head
    body = b""
    while not isinstance(event := _next_event(sock, client), h11.EndOfMessage):
        body += event.data
    return head, body


def _says_close(head: h11.Response) -> bool:
    return any(name == b"connection" and value.lower() == b"close" for name, value in head.headers)


@pytest.mark.parametrize("parser", ["h11", "httptools"])
def test_sigterm_during_a_call_never_closes_a_connection_the_proxy_thinks_is_kept(parser: str) -> None:
    """A call in flight when the drain begins: if its response has not started, that response says
    `Connection: close` (so a proxy does not pool the connection the replica is about to close); if
    its head already went out promising keep-alive (a streamed reply), the connection is not closed
    right after it (a proxy reusing it would lose a POST and answer 502) but answers once more."""
    env = {} if parser == "h11" else httptools_env()
    if env is None:
        pytest.skip("httptools is not installed (make test installs it into tests/peers/.site-fast)")
    port = free_port()
    args = [PYTHON, "-m", SERVER_MODULE, "--http", "--port", str(port), "--parser", parser]
    with (
        running_server(args, port, env=env) as proc,
        socket.create_connection(("127.0.0.1", port), timeout=10) as plain,
        socket.create_connection(("127.0.0.1", port), timeout=10) as streamed,
    ):
        plain_client, streamed_client = h11.Connection(h11.CLIENT), h11.Connection(h11.CLIENT)
        _send_call(plain, plain_client, "SLEEP 1.0")  # no progress token: one JSON answer at the end
        _send_call(streamed, streamed_client, "SLEEP 1.0", progressToken="p")  # an SSE stream at once
        stream_head = _next_event(streamed, streamed_client)
        assert isinstance(stream_head, h11.Response) and stream_head.status_code == 200
        assert dict(stream_head.headers)[b"content-type"].startswith(b"text/event-stream")
        time.sleep(0.2)  # both calls are in their handlers
        proc.send_signal(signal.SIGTERM)

        head, body = _response(plain, plain_client)
        assert (head.status_code, _says_close(head)) == (200, True)
        assert b"slept 1s in eu" in body
        assert plain.recv(1) == b""  # closed after the answer it announced as the last

        body = b""
        while not isinstance(event := _next_event(streamed, streamed_client), h11.EndOfMessage):
            body += event.data
        assert b"slept 1s in eu" in body and not _says_close(stream_head)
        streamed_client.start_next_cycle()
        streamed.sendall(
            streamed_client.send(h11.Request(method="GET", target="/healthz", headers=[("Host", "x")]))
            + streamed_client.send(h11.EndOfMessage())
        )
        head, _ = _response(streamed, streamed_client)
        assert (head.status_code, _says_close(head)) == (200, True)  # answered, and told it is the last
        assert proc.wait(10) == 0
