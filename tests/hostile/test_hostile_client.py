"""A generated server survives any client (issue 11): the generated weather server, in a real
subprocess, against a real asyncio client that sends slowly, sends too little, or sends too much.

HTTP runs under uvicorn with each parser it offers (h11; httptools when installed, as
`mcpgen-runtime[fast]` or in bench/.venv-peers), with limits shortened through the CLI flags:

    header 1 s, body idle 1 s, body 2 s, 50 slow connections (deadlines checked every 0.25 s)

Each test asserts the answer (status, JSON-RPC error), the wall time (the deadline, plus the sweep
interval and a margin for a shared machine) and, where meaningful, the server's open file
descriptors (its connections) and peak RSS. stdio runs the same package as `--stdio`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import uvicorn

from mcpgen_runtime.server import ServerConfig
from mcpgen_runtime.server.auth.oauth import ProtectedResource, ProtectedResourceApp, TokenPrincipal
from mcpgen_runtime.server.core.limits import HttpLimits
from tests.runtime.server_helpers import call, mcp_headers, request
from tests.runtime.weather_server_app import WeatherServer
from tests.support import (
    PYTHON,
    ROOT,
    free_port,
    httptools_env,
    running_server,
    subprocess_env,
    wait_for_port,
)

if str(ROOT / "generated") not in sys.path:  # the checked-in bindings: weather_client
    sys.path.insert(0, str(ROOT / "generated"))
from weather_client import AsyncClient

HEADER_S, IDLE_S, BODY_S, CAP = 1.0, 1.0, 2.0, 50
SWEEP_S = HEADER_S / 4
MARGIN_S = 0.75  # a busy 2-core machine
LIMIT_FLAGS = [
    "--header-timeout",
    str(HEADER_S),
    "--body-idle-timeout",
    str(IDLE_S),
    "--body-timeout",
    str(BODY_S),
    "--max-slow-connections",
    str(CAP),
]
PARSERS = ["h11", "httptools"]
MAX_BODY = 4 * 1024 * 1024


class Server(NamedTuple):
    port: int
    pid: int


@pytest.fixture(scope="module", params=PARSERS)
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    env: dict[str, str] | None = {}
    if request.param == "httptools" and (env := httptools_env()) is None:
        pytest.skip("httptools is not installed (make test installs it into tests/peers/.site-fast)")
    port = free_port()
    args = [
        PYTHON,
        "-m",
        "weather_server",
        "--http",
        "--port",
        str(port),
        "--parser",
        request.param,
        *LIMIT_FLAGS,
    ]
    with running_server(args, port, env=env) as proc:
        yield Server(port, proc.pid)


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


class Answer(NamedTuple):
    status: int | None  # None: closed without a response
    body: bytes
    after_s: float  # from opening the connection to end of input


async def _answer(reader: asyncio.StreamReader, opened: float, timeout: float = 15.0) -> Answer:
    """Everything the server sends until it closes the connection."""
    try:
        data = await asyncio.wait_for(reader.read(-1), timeout)
    except (
        ConnectionError
    ):  # the server closed with some of what we sent unread (reset, or our write's broken pipe)
        data = b""
    after = time.monotonic() - opened
    if not data:
        return Answer(None, b"", after)
    head, _, body = data.partition(b"\r\n\r\n")
    return Answer(int(head.split(b" ", 2)[1]), body, after)


async def _trickle(writer: asyncio.StreamWriter, data: bytes, every_s: float) -> None:
    """Send `data` one byte at a time until it is all sent or the server closes the connection."""
    with contextlib.suppress(ConnectionError, RuntimeError):
        for i in range(len(data)):
            writer.write(data[i : i + 1])
            await writer.drain()
            await asyncio.sleep(every_s)


def _head(
    length: int | None = None, *, chunked: bool = False, message: dict[str, Any] | None = None
) -> bytes:
    """A request head as a conforming client sends it (for `message`: its Mcp-Method and Mcp-Name)."""
    message = message or call(1, "get_weather", {"location": "Oslo"})
    headers = {**mcp_headers(message), "Host": "127.0.0.1", "Connection": "keep-alive"}
    if chunked:
        headers["Transfer-Encoding"] = "chunked"
    elif length is not None:
        headers["Content-Length"] = str(length)
    return (
        b"POST /mcp HTTP/1.1\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in headers.items()) + b"\r\n"
    )


def _assert_408(answer: Answer, deadline_s: float, words: str) -> None:
    assert answer.status == 408, answer
    error = json.loads(answer.body)["error"]
    assert error["code"] == -32600 and words in error["message"], error
    assert deadline_s - 0.1 <= answer.after_s <= deadline_s + SWEEP_S + MARGIN_S, answer.after_s


def test_trickled_headers_get_408_at_the_header_deadline(server: Server) -> None:
    async def scenario() -> Answer:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        opened = time.monotonic()
        sender = asyncio.create_task(_trickle(writer, _head(10), 0.1))  # 10 bytes/s: headers take ~40 s
        try:
            return await _answer(reader, opened)
        finally:
            sender.cancel()
            writer.close()

    answer = asyncio.run(scenario())
    assert answer.status == 408, answer
    assert HEADER_S - 0.1 <= answer.after_s <= HEADER_S + SWEEP_S + MARGIN_S, answer.after_s


def test_a_silent_connection_is_closed_at_the_header_deadline(server: Server) -> None:
    async def scenario() -> Answer:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        try:
            return await _answer(reader, time.monotonic())
        finally:
            writer.close()

    answer = asyncio.run(scenario())
    assert answer.status is None  # nothing of a request came: nothing to answer
    assert HEADER_S - 0.1 <= answer.after_s <= HEADER_S + SWEEP_S + MARGIN_S, answer.after_s


def test_an_endless_header_block_is_refused_at_the_size_limit(
    server: Server, request: pytest.FixtureRequest
) -> None:
    """Headers sent fast but without end: refused at 64 KiB (h11 itself: 400; httptools: 431), at once."""

    async def scenario() -> tuple[Answer, int]:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        opened = time.monotonic()
        sent = 0
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        with contextlib.suppress(ConnectionError):
            for i in range(2000):  # 2,000 x 1 KiB header lines, far more than the limit; stops at the close
                writer.write(b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000))
                await writer.drain()
                sent += 1024
        try:
            return await _answer(reader, opened), sent
        finally:
            writer.close()

    answer, sent = asyncio.run(scenario())
    # The server closes with our unread headers in its buffer, so its answer may be lost to the reset.
    assert answer.status in ((431 if "httptools" in request.node.name else 400), None), answer
    assert answer.after_s < 1.0 and sent < 2000 * 1024, (answer.after_s, sent)


def test_a_trickled_body_gets_408_at_the_body_deadline(server: Server) -> None:
    async def scenario() -> Answer:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(_head(200))
        opened = time.monotonic()
        sender = asyncio.create_task(_trickle(writer, b" " * 200, IDLE_S / 4))  # never idle for long
        try:
            return await _answer(reader, opened)
        finally:
            sender.cancel()
            writer.close()

    _assert_408(asyncio.run(scenario()), BODY_S, f"not complete within {BODY_S:g} s")


@pytest.mark.parametrize("kind", ["short Content-Length", "unterminated chunked"])
def test_a_body_that_stops_gets_408_at_the_idle_deadline(server: Server, kind: str) -> None:
    async def scenario() -> Answer:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        if kind == "short Content-Length":
            writer.write(_head(100) + b'{"jsonrpc": "2.0", "id": 1, "method"')  # 37 of 100 bytes
        else:
            writer.write(_head(chunked=True) + b'5\r\n{"jso\r\n')  # one chunk, no terminating 0-chunk
        opened = time.monotonic()
        try:
            return await _answer(reader, opened)
        finally:
            writer.close()

    _assert_408(asyncio.run(scenario()), IDLE_S, f"no part of the request body for {IDLE_S:g} s")


def test_the_oauth_wrapper_reads_a_body_within_the_same_deadlines() -> None:
    """A valid token without a tool's scope makes the OAuth wrapper read the body itself (to find
    the tool): a body that stops there gets the same 408 at the idle deadline."""
    limits = HttpLimits(header_timeout_s=HEADER_S, body_idle_timeout_s=IDLE_S, body_timeout_s=BODY_S)

    def verify(token: str) -> TokenPrincipal:
        return TokenPrincipal(subject="alice", issuer="https://issuer.example")

    resource = ProtectedResource(
        verify=verify,
        resource="http://127.0.0.1/mcp",
        authorization_servers=("https://issuer.example",),
        tool_scopes={"execute_sql": ("mcp:admin",)},
    )
    inner = WeatherServer(ServerConfig(http_limits=limits)).asgi_app()
    port = free_port()
    config = uvicorn.Config(
        ProtectedResourceApp(inner, resource, limits=limits),
        host="127.0.0.1",
        port=port,
        log_level="error",
        lifespan="off",
    )
    served = uvicorn.Server(config)
    thread = threading.Thread(target=served.run, daemon=True)
    thread.start()
    try:
        wait_for_port(port)

        async def scenario() -> Answer:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            head = _head(100).replace(b"\r\n\r\n", b"\r\nAuthorization: Bearer t0ken\r\n\r\n")
            writer.write(head + b'{"jsonrpc": "2.0"')  # 17 of 100 bytes
            opened = time.monotonic()
            try:
                return await _answer(reader, opened)
            finally:
                writer.close()

        _assert_408(asyncio.run(scenario()), IDLE_S, f"no part of the request body for {IDLE_S:g} s")
    finally:
        served.should_exit = True
        thread.join(10)


def test_200_trickling_connections_do_not_keep_a_normal_client_out(server: Server) -> None:
    """200 clients trickle their headers (one byte per 0.2 s) while a generated client calls tools.

    The cap closes the oldest slow connections (50 stay), the header deadline the rest; the
    generated client is answered at normal speed throughout, and the server's connections and
    memory return to where they were."""
    fds_before = _open_fds(server.pid)
    rss_before = _status_kib(server.pid, "VmRSS")

    async def slow(opened_at: list[float]) -> Answer:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        opened = time.monotonic()
        opened_at.append(opened)
        sender = asyncio.create_task(_trickle(writer, _head(10), 0.2))
        try:
            return await _answer(reader, opened)
        finally:
            sender.cancel()
            writer.close()

    async def scenario() -> tuple[list[Answer], list[float], int]:
        opened_at: list[float] = []
        crowd = [asyncio.create_task(slow(opened_at)) for _ in range(200)]
        while len(opened_at) < 200:
            await asyncio.sleep(0.01)
        latencies: list[float] = []
        peak_fds = 0
        async with AsyncClient(f"http://127.0.0.1:{server.port}/mcp") as client:
            for i in range(20):
                peak_fds = max(peak_fds, _open_fds(server.pid))
                started = time.monotonic()
                reading = await client.get_weather_data(f"City {i}")
                latencies.append(time.monotonic() - started)
                assert reading.humidity >= 30
                await asyncio.sleep(0.03)
        return await asyncio.gather(*crowd), latencies, peak_fds

    answers, latencies, peak_fds = asyncio.run(scenario())
    # The normal client: every call answered at normal speed (about 2 ms here), none waiting on the
    # crowd (the first call, made while the server accepts and sheds 200 connections, may take longer).
    assert sorted(latencies)[len(latencies) // 2] < 0.05 and max(latencies) < 1.0, latencies
    # The cap: at most 50 slow connections open at once (plus the client's own and a few spare).
    assert peak_fds - fds_before <= CAP + 5, (peak_fds, fds_before)
    # Told apart by their answer, not by when it came: on a busy machine the cap may shed a
    # connection after the header deadline has passed but before the sweep reached it.
    timed_out = [a for a in answers if a.status == 408]
    evicted = [a for a in answers if a.status != 408]
    # Closed over the cap: silently when none of their request had come yet, else with 503.
    assert len(evicted) >= 200 - CAP and all(a.status in (None, 503) for a in evicted), [
        a.status for a in evicted
    ]
    # Closed at the header deadline with 408: never before it, and at most a sweep (and a margin) after.
    assert all(HEADER_S - 0.1 <= a.after_s <= HEADER_S + SWEEP_S + MARGIN_S for a in timed_out), timed_out[:5]
    # Nothing held afterwards, and memory did not grow with the crowd.
    deadline = time.monotonic() + 2
    while _open_fds(server.pid) > fds_before + 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _open_fds(server.pid) <= fds_before + 1
    assert _status_kib(server.pid, "VmRSS") - rss_before < 20 * 1024


def _deep_wrong_type_call(id_: int) -> bytes:
    """~1,000 levels of `[` where a string belongs, in a body of about 2 KB."""
    body = json.dumps(call(id_, "get_weather_data", {"location": "PLACEHOLDER"}))
    return body.replace('"PLACEHOLDER"', "[" * 975 + "]" * 975).encode()


def _assert_refused_deep(reply: dict[str, Any], id_: int) -> None:
    assert reply["id"] == id_
    if "error" in reply:
        assert reply["error"]["code"] == -32602, reply
        text = reply["error"]["message"]
    else:
        assert reply["result"]["isError"] is True, reply
        text = reply["result"]["content"][0]["text"]
    assert "nested more than 100 levels" in text, text


def test_a_deeply_nested_wrong_type_argument_over_http_is_refused_not_a_500(server: Server) -> None:
    async def scenario() -> Answer:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        body = _deep_wrong_type_call(3)
        head = _head(len(body), message=call(3, "get_weather_data", {"location": "?"}))
        writer.write(head.replace(b"keep-alive", b"close") + body)
        opened = time.monotonic()
        try:
            return await _answer(reader, opened)
        finally:
            writer.close()

    answer = asyncio.run(scenario())
    assert answer.status == 200, answer
    assert answer.after_s < 1.0
    _assert_refused_deep(json.loads(answer.body), 3)


# ---- stdio ---------------------------------------------------------------------------------


async def _stdio_exchange(lines: bytes, expect: int) -> tuple[list[dict[str, Any]], float, int]:
    """Write `lines` to `python -m weather_server --stdio`, read `expect` replies; also the time
    taken and the server's peak RSS (KiB)."""
    proc = await asyncio.create_subprocess_exec(
        PYTHON,
        "-m",
        "weather_server",
        "--stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=subprocess_env(),
        limit=MAX_BODY * 2,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        await asyncio.sleep(0)  # the child is running; its start-up is not part of the time
        started = time.monotonic()
        proc.stdin.write(lines)
        await proc.stdin.drain()
        replies = [json.loads(await asyncio.wait_for(proc.stdout.readline(), 20)) for _ in range(expect)]
        took = time.monotonic() - started
        peak = _status_kib(proc.pid, "VmHWM")
        proc.stdin.close()
        extra = await asyncio.wait_for(proc.stdout.read(), 10)  # nothing more: one answer per line
        assert extra == b"", extra[:300]
        return replies, took, peak
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


def _listing(id_: int) -> bytes:
    return json.dumps(request(id_, "tools/list")).encode() + b"\n"


def test_a_20_mb_stdio_line_is_answered_once_and_the_next_line_is_served() -> None:
    huge = json.dumps(call(7, "get_weather", {"location": "x" * 20_000_000})).encode() + b"\n"
    replies, took, peak_kib = asyncio.run(_stdio_exchange(huge + _listing(8), expect=2))
    assert replies[0] == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32600, "message": f"Message exceeds {MAX_BODY} bytes"},
    }
    assert replies[1]["id"] == 8 and replies[1]["result"]["tools"]
    assert took < 5.0, took
    # The line is dropped as it streams past: the server holds about two limits' worth, not 20 MB more.
    assert peak_kib < 120 * 1024, peak_kib


def test_an_over_long_line_without_a_leading_id_is_answered_with_id_null() -> None:
    huge = b'{"method": "tools/call", "id": 9, "params": {"x": "' + b"y" * (MAX_BODY + 10) + b'"}}\n'
    replies, _, _ = asyncio.run(_stdio_exchange(huge + _listing(10), expect=2))
    assert replies[0]["id"] is None and replies[0]["error"]["code"] == -32600
    assert replies[1]["id"] == 10


def test_a_deeply_nested_wrong_type_argument_over_stdio_is_refused() -> None:
    replies, took, _ = asyncio.run(_stdio_exchange(_deep_wrong_type_call(4) + b"\n" + _listing(5), expect=2))
    by_id = {reply["id"]: reply for reply in replies}
    _assert_refused_deep(by_id[4], 4)
    assert by_id[5]["result"]["tools"]
    assert took < 2.0, took
