"""A generated client survives any server (issue 11, client half).

Every misbehaviour the issue found, performed by a real asyncio server on loopback
(`hostile_peer.py`) writing the bad bytes itself, against `Client` and `AsyncClient` on both
HTTP engines (the lean one; httpx, chosen by credentials in the URL), in the modern era and
over the legacy era's SSE streams (a Streamable HTTP session's reply, the HTTP+SSE fallback's
one stream), and on stdio. Each test asserts the typed error, the wall time (the call's
timeout plus a small margin) and the peak of traced memory (well under twice the limit): the
numbers, not just "no crash". Small limits and short timeouts keep the module fast.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx  # noqa: F401  imported here, not within the measured calls (its import allocates megabytes)
import orjson
import pytest
from pydantic import BaseModel

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.client.core import ClientCore
from mcpgen_runtime.content import ToolResult
from mcpgen_runtime.errors import (
    McpRuntimeError,
    ProtocolError,
    RequestTimeoutError,
    ResponseLostError,
    ResponseTooLargeError,
    ToolOutputError,
)
from mcpgen_runtime.transport.http1_wire import BodyDecoder, parse_head
from mcpgen_runtime.transport.sse_reader import SseDecoder
from mcpgen_runtime.transport.stdio_lines import LineSplitter
from tests.runtime.hostile_peer import Behaviour, endless, head, json_reply, serving, trickle

CAP = 1 << 20  # max_response_bytes in these tests: 1 MiB
TIMEOUT = 2.0  # seconds: each call's timeout
# Bounds on the wall time, 3x the worst seen on 2 loaded cores (the full suite and two busy loops):
MARGIN = 1.4  # past TIMEOUT: a flood's typed error came 1.13 s after the start at worst
FAIL_FAST = 1.5  # an error that needs no waiting: 0.48 s at worst
STDIO_EXIT = 3.5  # past TIMEOUT + MARGIN, for the process's start and exit: a stdio call took 2.3 s at worst
TRICKLE_TIMEOUT = 0.5  # seconds: the timeout of the calls a trickling server keeps waiting
TRICKLE_STEP = 0.1  # seconds between two trickled bytes: within the timeout, so only the deadline ends it
TRICKLE_MARGIN = 2.4  # past TRICKLE_TIMEOUT: 0.78 s at worst
MEMORY_CEILING = 2 * CAP  # peak traced memory of a call that the server tries to flood
SECRET = "s3cret-pw"

MODES = ("sync", "async")
ENGINES = ("http11", "httpx")

TOOL = {"name": "t", "inputSchema": {"type": "object"}}
DEEP_TOOL = {
    "name": "deep",
    "inputSchema": {"type": "object"},
    "outputSchema": {
        "$ref": "#/$defs/node",
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"child": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "integer"}]}},
                "required": ["child"],
            }
        },
    },
}
LEGACY_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "h", "version": "1"},
}


class Empty(BaseModel):
    pass


class Node(BaseModel):
    child: Node | int


@dataclass
class Outcome:
    error: BaseException | None
    seconds: float
    peak: int  # bytes of traced memory above the start, at the worst moment


def measured(call: Callable[[], Any]) -> Outcome:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start_memory = tracemalloc.get_traced_memory()[0]
        start = time.monotonic()
        error: BaseException | None = None
        try:
            call()
        except McpRuntimeError as exc:
            error = exc
        seconds = time.monotonic() - start
        peak = tracemalloc.get_traced_memory()[1] - start_memory
    finally:
        tracemalloc.stop()
    return Outcome(error, seconds, peak)


def client_url(url: str, engine: str) -> str:
    # Userinfo in the URL is what sends a client to the httpx engine.
    return url.replace("http://", f"http://user:{SECRET}@") if engine == "httpx" else url


def run(
    mode: str,
    engine: str,
    url: str,
    *,
    era: str = "modern",
    call: Callable[[Any], Any] = lambda client: client.call_tool("t", {}),
    timeout: float = TIMEOUT,
) -> Outcome:
    options: dict[str, Any] = {
        "era": era,
        "cache": False,
        "tools": [TOOL, DEEP_TOOL],
        "timeout": timeout,
        "max_response_bytes": CAP,
    }
    target = client_url(url, engine)
    if mode == "sync":

        def blocking() -> None:
            with Client(target, **options) as client:
                assert client.transport.engine == engine  # type: ignore[attr-defined]
                call(client)

        return measured(blocking)

    async def main() -> None:
        async with AsyncClient(target, **options) as client:
            assert client.transport.engine == engine  # type: ignore[attr-defined]
            await call(client)

    return measured(lambda: asyncio.run(main()))


def check(
    outcome: Outcome,
    error: type[BaseException],
    *,
    within: float = TIMEOUT + MARGIN,
    memory: int = MEMORY_CEILING,
) -> BaseException:
    assert isinstance(outcome.error, error), f"expected {error.__name__}, got {outcome.error!r}"
    assert outcome.seconds < within, f"took {outcome.seconds:.2f}s"
    assert outcome.peak < memory, f"peak traced memory {outcome.peak / 2**20:.1f} MiB"
    assert SECRET not in str(outcome.error)
    return outcome.error


# -- the misbehaviours, as answers to a tools/call ------------------------------------------------


async def huge_content_length(message: Any, writer: Any) -> None:
    writer.write(head(Content_Type="application/json", Content_Length=str(1 << 30)))
    await endless(writer)


async def huge_chunk(message: Any, writer: Any) -> None:
    writer.write(head(Content_Type="application/json", Transfer_Encoding="chunked") + b"ffffffffffffffff\r\n")
    await endless(writer)


async def endless_sse_event(message: Any, writer: Any) -> None:
    start = b'data: {"jsonrpc": "2.0", "x": "'
    writer.write(
        head(Content_Type="text/event-stream", Transfer_Encoding="chunked")
        + b"%x\r\n%s\r\n" % (len(start), start)
    )
    await endless(writer, b"10000\r\n" + b"x" * 0x10000 + b"\r\n")


async def endless_body(message: Any, writer: Any) -> None:
    writer.write(head(Content_Type="application/json", Connection="close") + b'{"jsonrpc": "2.0", "x": "')
    await endless(writer)


async def trickled_body(message: Any, writer: Any) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [], "pad": "p" * 200}}
    ).encode()
    writer.write(head(Content_Type="application/json", Content_Length=str(len(body))))
    await trickle(writer, body, TRICKLE_STEP)


BOMB = gzip.compress(b" " * (64 * CAP))  # 64 MiB of JSON whitespace in ~64 KiB


async def gzip_bomb(message: Any, writer: Any) -> None:
    writer.write(
        head(Content_Type="application/json", Content_Encoding="gzip", Content_Length=str(len(BOMB))) + BOMB
    )
    await writer.drain()


async def wrong_id_error(message: Any, writer: Any) -> None:
    writer.write(json_reply({"jsonrpc": "2.0", "id": 999, "error": {"code": -32603, "message": "not yours"}}))
    await writer.drain()


async def wrong_id_error_on_sse(message: Any, writer: Any) -> None:
    event = json.dumps({"jsonrpc": "2.0", "id": 999, "error": {"code": -32603, "message": "not yours"}})
    body = f"data: {event}\n\n".encode()
    writer.write(head(Content_Type="text/event-stream", Content_Length=str(len(body))) + body)
    await writer.drain()


DEPTH = 1000  # the issue's bare RecursionError came at ~1,000 levels


async def deep_structured_content(message: Any, writer: Any) -> None:
    deep = '{"child": ' * DEPTH + '"not an integer"' + "}" * DEPTH  # written out: json.dumps would recurse
    body = (
        f'{{"jsonrpc": "2.0", "id": {message["id"]}, '
        f'"result": {{"content": [], "structuredContent": {deep}}}}}'
    )
    writer.write(head(Content_Type="application/json", Content_Length=str(len(body))) + body.encode())
    await writer.drain()


def legacy(answer: Behaviour) -> Behaviour:
    """A 2025-11-25 server: a session on `initialize`, 202 for notifications, no GET stream;
    `answer` answers the tools/call."""

    async def behave(message: Any, writer: Any) -> None:
        if message is None:  # GET (standalone stream) or DELETE (end of session)
            writer.write(head("405 Method Not Allowed", Content_Length="0"))
        elif message.get("method") == "initialize":
            writer.write(
                json_reply(
                    {"jsonrpc": "2.0", "id": message["id"], "result": LEGACY_INIT},
                    Mcp_Session_Id="hostile-session",
                )
            )
        elif "id" not in message:
            writer.write(head("202 Accepted", Content_Length="0"))
        else:
            await answer(message, writer)
            return
        await writer.drain()

    return behave


def http_sse_endless_event() -> Behaviour:
    """The 2024-11-05 HTTP+SSE transport: no Streamable HTTP endpoint (the first POST: 404), and
    the GET stream's first event names the endpoint (where later POSTs are accepted); then one
    event that never ends."""
    posts: list[Any] = []

    async def behave(message: Any, writer: Any) -> None:
        if message is not None:
            posts.append(message)
            writer.write(head("404 Not Found" if len(posts) == 1 else "202 Accepted", Content_Length="0"))
            await writer.drain()
            return
        await endless_stream(writer)

    return behave


async def endless_stream(writer: Any) -> None:
    writer.write(
        head(Content_Type="text/event-stream", Connection="close")
        + b"event: endpoint\ndata: /messages\n\n"
        + b"event: message\ndata: {"
    )
    await endless(writer)


# -- the tests -------------------------------------------------------------------------------------

TOO_LARGE = [
    pytest.param(huge_content_length, id="content-length-1GiB"),
    pytest.param(huge_chunk, id="chunk-size-0xffffffffffffffff"),
    pytest.param(endless_sse_event, id="endless-sse-event"),
    pytest.param(endless_body, id="endless-close-delimited-body"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("behave", TOO_LARGE)
def test_flood_ends_in_response_too_large(behave: Behaviour, mode: str, engine: str) -> None:
    with serving(behave) as server:
        error = check(run(mode, engine, server.url), ResponseTooLargeError)
    assert f"{CAP} bytes" in str(error) and "127.0.0.1" in str(error)
    assert isinstance(error, ResponseTooLargeError) and error.limit == CAP


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("behave", TOO_LARGE)
def test_flood_on_a_legacy_session_sse_reply(behave: Behaviour, mode: str, engine: str) -> None:
    with serving(legacy(behave)) as server:
        check(run(mode, engine, server.url, era="legacy"), ResponseTooLargeError)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", MODES)
def test_endless_event_on_the_http_sse_stream(mode: str, engine: str) -> None:
    with serving(http_sse_endless_event()) as server:
        error = check(run(mode, engine, server.url, era="legacy"), ResponseTooLargeError)
    assert "SSE event" in str(error)
    assert server.methods[:2] == ["initialize", "GET"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", MODES)
def test_trickled_body_ends_at_the_deadline(mode: str, engine: str) -> None:
    with serving(trickled_body) as server:
        outcome = run(mode, engine, server.url, timeout=TRICKLE_TIMEOUT)
    check(outcome, RequestTimeoutError, within=TRICKLE_TIMEOUT + TRICKLE_MARGIN)
    assert outcome.seconds > TRICKLE_TIMEOUT - 0.05  # it was the deadline, not something else


async def trickled_head(message: Any, writer: Any) -> None:
    await trickle(writer, head(Content_Type="application/json", X_Padding="p" * 200), TRICKLE_STEP)


@pytest.mark.parametrize(
    ("mode", "engine"),
    [
        ("sync", "http11"),
        ("async", "http11"),
        ("async", "httpx"),
        pytest.param(
            "sync",
            "httpx",
            marks=pytest.mark.skip(
                reason=(
                    "blocking httpx bounds each read of the head, not the whole head "
                    "(docs/explanation/trust-model.md: Client limits)"
                )
            ),
        ),
    ],
)
def test_trickled_head_ends_at_the_deadline(mode: str, engine: str) -> None:
    with serving(trickled_head) as server:
        outcome = run(mode, engine, server.url, timeout=TRICKLE_TIMEOUT)
    check(outcome, RequestTimeoutError, within=TRICKLE_TIMEOUT + TRICKLE_MARGIN)
    assert outcome.seconds > TRICKLE_TIMEOUT - 0.05


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", MODES)
def test_gzip_bomb_is_refused(mode: str, engine: str) -> None:
    with serving(gzip_bomb) as server:
        error = check(run(mode, engine, server.url), ProtocolError, within=FAIL_FAST)
    assert "gzip" in str(error) and not isinstance(error, ResponseTooLargeError)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize(
    ("answer", "error"),
    [
        pytest.param(wrong_id_error, ProtocolError, id="json"),
        # The stream ends without the response: the request is lost (HTTP-26), never answered.
        pytest.param(wrong_id_error_on_sse, ResponseLostError, id="sse"),
    ],
)
def test_error_with_a_wrong_id_is_no_answer(
    answer: Behaviour, error: type[McpRuntimeError], era: str, mode: str, engine: str
) -> None:
    with serving(answer if era == "modern" else legacy(answer)) as server:
        raised = check(run(mode, engine, server.url, era=era), error, within=FAIL_FAST)
    assert error is ResponseLostError or "does not match" in str(raised)


# The first of these calls in a process compiles the tool's output schema and pydantic's validator
# for Node under tracemalloc: 4.2 s at worst on 2 loaded cores (0.6 s once compiled).
DEEP_WITHIN = 12.5


def _structured(client: Any) -> Any:
    return client._call_structured("deep", {}, Empty, Node)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mode", MODES)
def test_deep_structured_content_is_a_tool_output_error(mode: str, engine: str) -> None:
    with serving(deep_structured_content) as server:
        # A 22 KB reply: the memory bound only rules out a runaway (compiling the tool's schema
        # and pydantic's validator for Node take a few MiB once).
        outcome = run(mode, engine, server.url, call=_structured)
        error = check(outcome, ToolOutputError, within=DEEP_WITHIN, memory=8 * CAP)
    assert isinstance(error, ToolOutputError)
    assert error.pointer.startswith("/child/child/") and "nested more than" in str(error)


def test_deep_structured_content_without_an_output_schema() -> None:
    """A client without the tool's definition has only the model: pydantic's own depth limit,
    still a ToolOutputError (never a RecursionError)."""
    deep = orjson.loads('{"child": ' * DEPTH + '"not an integer"' + "}" * DEPTH)
    result = ToolResult.model_validate({"content": [], "structuredContent": deep})
    with pytest.raises(ToolOutputError) as info:
        ClientCore().checks.structured("deep", result, Node)
    assert info.value.pointer.startswith("/child")


# -- stdio ------------------------------------------------------------------------------------------

ENDLESS_LINE = """
import sys
sys.stdin.buffer.readline()
block = b"x" * 65536
out = sys.stdout.buffer
out.write(b'{"jsonrpc": "2.0", "id": 1, "result": {"pad": "')
try:
    for _ in range(4000):
        out.write(block)
        out.flush()
except BrokenPipeError:
    pass
"""

HUGE_LINE_THEN_ANSWER = """
import json, sys
request = json.loads(sys.stdin.buffer.readline())
sys.stdout.buffer.write(b'{"pad": "' + b"x" * (3 << 20) + b'"}\\n')
answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"content": []}}
sys.stdout.buffer.write(json.dumps(answer).encode() + b"\\n")
sys.stdout.buffer.flush()
sys.stdin.buffer.readline()
"""


WRONG_ID_ERROR = """
import json, sys
request = json.loads(sys.stdin.buffer.readline())
error = {"jsonrpc": "2.0", "id": request["id"] + 1000, "error": {"code": -32603, "message": "not yours"}}
sys.stdout.buffer.write(json.dumps(error).encode() + b"\\n")
sys.stdout.buffer.flush()
sys.stdin.buffer.read()
"""


def run_stdio(mode: str, script: str) -> Outcome:
    command = [sys.executable, "-c", script]
    options: dict[str, Any] = {
        "era": "modern",
        "cache": False,
        "tools": [TOOL],
        "timeout": TIMEOUT,
        "max_response_bytes": CAP,
    }
    if mode == "sync":

        def blocking() -> None:
            with Client.stdio(command, **options) as client:
                client.call_tool("t", {})

        return measured(blocking)

    async def main() -> None:
        async with AsyncClient.stdio(command, **options) as client:
            await client.call_tool("t", {})

    return measured(lambda: asyncio.run(main()))


@pytest.mark.parametrize("mode", MODES)
def test_stdio_line_that_never_ends(mode: str) -> None:
    outcome = run_stdio(mode, ENDLESS_LINE)
    error = check(outcome, ResponseTooLargeError, within=TIMEOUT + MARGIN + STDIO_EXIT)
    assert "stdout line" in str(error) and f"{CAP} bytes" in str(error)


@pytest.mark.parametrize("mode", MODES)
def test_stdio_huge_line_is_a_typed_error_and_skipped(mode: str) -> None:
    """A 3 MiB line, then the answer: the call fails with the typed error (the line cannot be
    attributed), memory stays under the limit, and nothing hangs."""
    outcome = run_stdio(mode, HUGE_LINE_THEN_ANSWER)
    error = check(outcome, ResponseTooLargeError, within=TIMEOUT + MARGIN + STDIO_EXIT)
    assert "stdout line" in str(error)


@pytest.mark.parametrize("mode", MODES)
def test_stdio_error_with_a_wrong_id_is_no_answer(mode: str) -> None:
    outcome = run_stdio(mode, WRONG_ID_ERROR)
    check(outcome, RequestTimeoutError, within=TIMEOUT + MARGIN + STDIO_EXIT)
    assert outcome.seconds > TIMEOUT - 0.1  # the call waited for its own answer; the other was dropped


# -- the limits without I/O ------------------------------------------------------------------------


def test_body_decoder_budget() -> None:
    chunked = parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked")
    decoder = BodyDecoder(chunked, 10, "http://h/mcp")
    assert decoder.feed(b"5\r\nhello\r\n") == [b"hello"]
    with pytest.raises(ResponseTooLargeError, match="10 bytes"):
        decoder.feed(b"6\r\n")  # refused at the size line: 5 + 6 > 10, before any of its data
    with pytest.raises(ResponseTooLargeError):
        BodyDecoder(chunked, CAP).feed(b"ffffffffffffffff\r\n")
    with pytest.raises(ProtocolError, match="bad chunk size"):
        BodyDecoder(chunked, CAP).feed(b"1ffffffffffffffff\r\n")  # 17 hex digits
    closing = BodyDecoder(parse_head(b"HTTP/1.1 200 OK"), 10)
    assert closing.feed(b"x" * 10) == [b"x" * 10]
    with pytest.raises(ResponseTooLargeError):
        closing.feed(b"y")
    unbounded = BodyDecoder(chunked, 10)
    unbounded.budget = None  # what forever() does: a long-lived stream is bounded per event
    assert unbounded.feed(b"b\r\nhello world\r\n") == [b"hello world"]


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64])
def test_sse_decoder_long_line_in_pieces(step: int) -> None:
    """A line held across many chunks (CRLF split included) comes out whole, once."""
    wire = b"data: " + b"a" * 100 + b"\r\n" + b"data: b\r\r\ndata: c\n\n"
    decoder = SseDecoder(limit=1000)
    events = [event for i in range(0, len(wire), step) for event in decoder.feed(wire[i : i + step])]
    assert events == [b"a" * 100 + b"\nb", b"c"]


@pytest.mark.parametrize("step", [1, 5, 4096])
def test_sse_decoder_cuts_an_event_at_the_limit(step: int) -> None:
    decoder = SseDecoder(limit=100, source="http://h/mcp")
    assert decoder.feed(b"data: " + b"x" * 90 + b"\n\n") == [b"x" * 90]  # one event at the limit is fine
    wire = (b"data: " + b"y" * 60 + b"\n") * 2  # two lines of one event: over it together
    with pytest.raises(ResponseTooLargeError, match="SSE event from http://h/mcp"):
        for i in range(0, len(wire), step):
            decoder.feed(wire[i : i + step])
    with pytest.raises(ResponseTooLargeError):
        endless = SseDecoder(limit=100)
        for _ in range(100):
            endless.feed(b"data: zzzzzzzzzz")


def test_stdio_line_splitter_skips_a_line_over_the_limit() -> None:
    splitter = LineSplitter(10, "'server'")
    assert splitter.feed(b'{"a": 1}\n{"b"') == [b'{"a": 1}']
    out = splitter.feed(b": 2}\n" + b"x" * 20)
    assert out[0] == b'{"b": 2}' and isinstance(out[1], ResponseTooLargeError) and len(out) == 2
    assert splitter.feed(b"x" * 1000) == []  # the rest of the long line: skipped, not kept
    assert splitter.feed(b"xx\n{}\n") == [b"{}"]
    (error,) = splitter.feed(b"y" * 11 + b"\n")  # a complete line over the limit
    assert isinstance(error, ResponseTooLargeError) and "'server'" in str(error)
