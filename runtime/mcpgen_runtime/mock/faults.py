"""Fault injection for every mock (`--latency`, `--error-rate`, `--drop-connection`, `--slow-stream`).

Faults apply to requests only (never to notifications or to the client's answers to server
requests), in front of whatever serves them: the schema-driven mock, a replayed cassette or the
recording proxy. Whether a request is delayed, failed or dropped is a function of `--seed`, the
request (era, method, params without `_meta`: cassette.py `request_key`) and how many times that
request was sent before, so the same run gives the same faults, and a retry (a new id, the same
request) draws again. Requests about tasks (`tasks/get`, `tasks/update`, `tasks/cancel`) count as
requests like any other — a poll may be delayed, failed or dropped — and their task id counts as
the order the injector first saw it (`task-1`, `task-2`, …: task_ids.py), not as the random id
the server drew, so that the same run fails the same polls.

- latency: `100ms` or `50-200ms` (`s` also works): the request waits that long before it is served;
- error rate P: that fraction of requests is answered HTTP 503 with a JSON-RPC error `-32603`
  whose `data.retryable` is true (on stdio: the same error). mcpgen's client treats both as
  retryable (`ServiceUnavailableError`), so `Client(retries=N)` sends the request again;
- drop-connection P (HTTP): that fraction gets a response head and then the connection is closed
  (the client sees the exchange cut: retryable, but resent by `retries` only for tools that may
  run twice: client/retry_policy.py); on stdio the mock process exits;
- slow stream `INTERVAL`: every response body (each SSE event, each stdio line) is sent in
  16-byte pieces, INTERVAL apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, Final

from .. import _json
from ..server.http.asgi_io import ASGIApp, Message, Receive, Scope, Send
from .canonical import unit_interval
from .cassette import is_request, request_key
from .task_ids import TaskIdNames

__all__ = [
    "PIECE_BYTES",
    "Decision",
    "FaultInjector",
    "Faults",
    "FaultyApp",
    "fault_error",
    "not_http",
    "parse_duration_ms",
    "parse_latency",
    "parse_rate",
    "pipe_reader",
    "protocol_stdout",
    "serve_stdio_with_faults",
    "with_faults",
]

PIECE_BYTES: Final = 16
INJECTED_ERROR_CODE: Final = -32603  # Internal error: what a server that cannot serve now answers
MAX_BODY_BYTES: Final = 64 * 1024 * 1024
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*\Z")


async def answer_lifespan(receive: Receive, send: Send) -> None:
    """An ASGI lifespan scope of an app with nothing to start or stop (the proxies of record.py
    and replay.py)."""
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


async def not_http(scope: Scope, receive: Receive, send: Send) -> bool:
    """For the proxies of record.py and replay.py: True (after answering a lifespan scope)
    when `scope` is no HTTP request, which they leave alone."""
    if scope["type"] == "lifespan":
        await answer_lifespan(receive, send)
    return bool(scope["type"] != "http")


def with_faults(app: ASGIApp, faults: Faults | None) -> ASGIApp:
    """`app`, behind a `FaultyApp` when `faults` has any to inject."""
    return FaultyApp(app, FaultInjector(faults)) if faults is not None and faults.active else app


async def pipe_reader(pipe: BinaryIO) -> asyncio.StreamReader:
    """An asyncio reader over `pipe` (a mock's stdin, a server's stdout) whose lines may be as
    long as a request body may be (`MAX_BODY_BYTES`)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_BODY_BYTES, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
    return reader


def parse_duration_ms(text: str) -> float:
    """`100ms`, `1.5s`, `20` (milliseconds) → milliseconds; `ValueError` saying what is expected."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"{text!r}: expected a duration such as 100ms or 1.5s")
    value = float(match.group(1))
    return value * 1000 if match.group(2) == "s" else value


def parse_latency(text: str) -> tuple[float, float]:
    """`100ms` → (100, 100); `50-200ms` → (50, 200)."""
    low, sep, high = text.partition("-")
    if not sep:
        value = parse_duration_ms(text)
        return value, value
    unit = re.sub(r"[\d.\s]", "", high)
    first, second = (
        parse_duration_ms(low + ("" if re.search(r"[a-z]", low) else unit)),
        parse_duration_ms(high),
    )
    if first > second:
        raise ValueError(f"{text!r}: the lower bound is above the upper one")
    return first, second


def parse_rate(text: str | float) -> float:
    """A fraction in [0, 1]: `0.5`, or `50%`."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"{text!r}: expected a fraction between 0 and 1, e.g. 0.25") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{text!r}: expected a fraction between 0 and 1")
    return value


@dataclass(frozen=True)
class Faults:
    """What to inject; all off by default."""

    seed: int = 0
    latency_ms: tuple[float, float] | None = None
    error_rate: float = 0.0
    drop_rate: float = 0.0
    slow_stream_ms: float | None = None

    @property
    def active(self) -> bool:
        return bool(self.latency_ms or self.error_rate or self.drop_rate or self.slow_stream_ms)

    def describe(self) -> str:
        parts = []
        if self.latency_ms:
            low, high = self.latency_ms
            parts.append(f"latency {low:g}-{high:g} ms" if low != high else f"latency {low:g} ms")
        if self.error_rate:
            parts.append(f"error rate {self.error_rate:g}")
        if self.drop_rate:
            parts.append(f"drop rate {self.drop_rate:g}")
        if self.slow_stream_ms:
            parts.append(f"slow stream {self.slow_stream_ms:g} ms per {PIECE_BYTES} bytes")
        return ", ".join(parts) or "no faults"


@dataclass(frozen=True)
class Decision:
    delay_s: float = 0.0
    error: bool = False
    drop: bool = False


class FaultInjector:
    """Decides, per request, what `faults` does to it (deterministic: see the module docstring)."""

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self._seen: dict[tuple[str, str, bytes], int] = {}
        self._task_ids = TaskIdNames()
        self._lock = threading.Lock()
        self.injected = {"error": 0, "drop": 0}  # how many of each were injected (tests read it)

    def decide(self, message: Any) -> Decision:
        faults = self.faults
        if not faults.active or not is_request(message):
            return Decision()
        with self._lock:
            method = message.get("method")
            key = request_key(self._task_ids.rename(message) if method.startswith("tasks/") else message)
            number = self._seen.get(key, 0)
            self._seen[key] = number + 1
        parts = (faults.seed, key[0], key[1], key[2].decode(), number)
        delay = 0.0
        if faults.latency_ms:
            low, high = faults.latency_ms
            delay = (low + (high - low) * unit_interval("latency", *parts)) / 1000
        error = faults.error_rate > 0 and unit_interval("error", *parts) < faults.error_rate
        drop = not error and faults.drop_rate > 0 and unit_interval("drop", *parts) < faults.drop_rate
        with self._lock:
            self.injected["error"] += error
            self.injected["drop"] += drop
        return Decision(delay, error, drop)

    def error_response(self, message: Mapping[str, Any]) -> dict[str, Any]:
        return fault_error(message.get("id"), self.faults.error_rate)

    async def trickle(self, data: bytes, write: Callable[[bytes], Awaitable[None]]) -> None:
        """Write `data` in pieces, `slow_stream_ms` apart (at once when no slow stream is set)."""
        interval = self.faults.slow_stream_ms
        if not interval or len(data) <= PIECE_BYTES:
            await write(data)
            return
        for start in range(0, len(data), PIECE_BYTES):
            if start:
                await asyncio.sleep(interval / 1000)
            await write(data[start : start + PIECE_BYTES])


def fault_error(request_id: Any, rate: float) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": INJECTED_ERROR_CODE,
            "message": f"Injected fault (--error-rate {rate:g}): the server cannot serve this now",
            "data": {"retryable": True},
        },
    }


_UNFINISHED = "ASGI callable returned without completing response."


class _QuietDrops(logging.Filter):
    """uvicorn logs every connection a drop cuts as an error; those are the point here."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _UNFINISHED


class FaultyApp:
    """An ASGI app with `faults` injected in front of `app` (POSTed JSON-RPC requests only; every
    response body trickled under a slow stream)."""

    def __init__(self, app: ASGIApp, injector: FaultInjector) -> None:
        self.app = app
        self.injector = injector
        if injector.faults.drop_rate:
            uvicorn_errors = logging.getLogger("uvicorn.error")
            if not any(isinstance(f, _QuietDrops) for f in uvicorn_errors.filters):
                uvicorn_errors.addFilter(_QuietDrops())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        injector = self.injector
        if injector.faults.slow_stream_ms:
            send = self._slow(send)
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            event = await receive()
            if event["type"] == "http.disconnect":
                return
            chunk = event.get("body", b"")
            size += len(chunk)
            chunks.append(chunk)
            more = event.get("more_body", False)
            if size > MAX_BODY_BYTES:
                break  # the app behind says how it refuses a body this large
        body = b"".join(chunks)
        try:
            message = _json.loads(body)
        except _json.JSONDecodeError:
            message = None
        decision = injector.decide(message)
        if decision.delay_s:
            await asyncio.sleep(decision.delay_s)
        if decision.error:
            assert isinstance(message, dict)
            payload = _json.dumps(injector.error_response(message))
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": payload})
            return
        if decision.drop:
            # A head promising a body that never comes; returning ends the connection mid-response.
            headers = [(b"content-type", b"application/json"), (b"content-length", b"64")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            return
        # Alike in shape only to server/auth/oauth.py's `_replaying`: this one keeps `more_body`.
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": more}
            return await receive()

        await self.app(scope, replay, send)

    def _slow(self, send: Send) -> Send:
        injector = self.injector

        async def slow_send(event: Message) -> None:
            if event["type"] != "http.response.body" or not event.get("body"):
                await send(event)
                return
            more = event.get("more_body", False)
            body = event["body"]

            async def piece(data: bytes) -> None:
                await send({"type": "http.response.body", "body": data, "more_body": True})

            await injector.trickle(body, piece)
            if not more:
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        return slow_send


def protocol_stdout() -> BinaryIO:
    """This process's stdout for protocol messages only (STDIO-03): file descriptor 1 and
    `sys.stdout` are pointed at stderr, so stray prints cannot corrupt the stream."""
    fd = os.dup(sys.stdout.fileno())
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return os.fdopen(fd, "wb", buffering=0)


def serve_stdio_with_faults(
    serve: Callable[[BinaryIO, BinaryIO], Coroutine[Any, Any, None]], injector: FaultInjector
) -> None:
    """Serve stdin/stdout through `serve` (a stdio server over two pipes, run in a thread of its
    own) with `injector`'s faults between it and the client; returns when stdin closes."""
    out = protocol_stdout()
    with out, contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_filter_stdio(serve, injector, sys.stdin.buffer, out))


async def _filter_stdio(
    serve: Callable[[BinaryIO, BinaryIO], Coroutine[Any, Any, None]],
    injector: FaultInjector,
    stdin: BinaryIO,
    stdout: BinaryIO,
) -> None:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()

    def inner() -> None:
        with os.fdopen(in_r, "rb", buffering=0) as inner_in, os.fdopen(out_w, "wb", buffering=0) as inner_out:
            asyncio.run(serve(inner_in, inner_out))

    thread = threading.Thread(target=inner, name="mcpgen-mock-stdio", daemon=True)
    thread.start()
    loop = asyncio.get_running_loop()
    to_server = os.fdopen(in_w, "wb", buffering=0)
    client = await pipe_reader(stdin)
    server = await pipe_reader(os.fdopen(out_r, "rb", buffering=0))
    write_lock = asyncio.Lock()

    async def to_client(line: bytes) -> None:
        async def raw(data: bytes) -> None:
            await loop.run_in_executor(None, stdout.write, data)

        async with write_lock:
            await injector.trickle(line, raw)

    forward_lock = asyncio.Lock()

    async def forward(line: bytes) -> None:
        async with forward_lock:  # whole lines: a long one is written in several pieces
            await loop.run_in_executor(None, to_server.write, line)

    async def request(line: bytes, message: dict[str, Any]) -> None:
        decision = injector.decide(message)
        if decision.delay_s:
            await asyncio.sleep(decision.delay_s)
        if decision.drop:  # on stdio a dropped connection is the server process going away
            stdout.flush()
            os._exit(1)
        if decision.error:
            await to_client(_json.dumps(injector.error_response(message)) + b"\n")
        else:
            await forward(line)

    async def answers() -> None:
        while line := await server.readline():
            await to_client(line)

    pumping = asyncio.ensure_future(answers())
    tasks: set[asyncio.Task[None]] = set()
    while line := await client.readline():
        try:
            message = _json.loads(line)
        except _json.JSONDecodeError:
            message = None
        if is_request(message):
            task = asyncio.ensure_future(request(line, message))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        else:
            await forward(line)
    if tasks:
        await asyncio.wait(tasks)
    to_server.close()  # the server sees the end of its input and finishes
    await pumping
    await loop.run_in_executor(None, thread.join, 10)
