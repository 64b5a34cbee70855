"""stdio server side: one JSON-RPC message per line on stdin/stdout (STDIO-01).

Each request runs as its own task, so a slow tool does not hold up others; responses and
notifications are written whole, one line each, under a lock. `notifications/cancelled`
cancels the matching task and nothing more is written for it (STDIO-09, CANCEL-09); for a
`subscriptions/listen` request that ends the subscription (SUB-10).

Listen notifications share stdout with everything else and carry their subscription id in
`_meta` (SUB-05, STDIO-07). When the server ends a subscription itself it answers the listen
request (SUB-07) and then sends `notifications/cancelled` for it (SUB-08).

End of input ends the loop (STDIO-11): subscriptions are closed, and requests in flight get
a short grace. An empty stdin (`/dev/null`, which the event loop cannot watch: read in a thread)
or a closed one (no file descriptor 0) is end of input at once. Under `run_stdio`, SIGTERM or
SIGINT stops reading and lets requests in flight finish and be answered for up to
`ServerConfig.shutdown_grace_s` (a second signal cancels them at once); then the process ends as
after end of input.

A client of the initialize-based revisions opens with `initialize` (without modern `_meta`): the
process then holds one legacy session (legacy/session_dispatch.py). Its requests run the same handlers, its
asks become requests written to stdout whose answers come back on stdin, and list-changed
notifications go to stdout. Messages that carry modern `_meta` are still served statelessly.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import selectors
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from .. import _json
from ..protocol import jsonrpc
from ..protocol.legacy.serving import carries_modern_meta
from .core.config import IncomingRequest
from .core.dispatch import Dispatcher
from .legacy.session_dispatch import LegacyDispatcher, SessionChannel
from .legacy.sessions import Session

__all__ = ["run_stdio", "serve_stdio"]

_LOG = logging.getLogger("mcpgen.server")

ReadLine = Callable[[], Awaitable[bytes]]


class _LineWriter:
    """Writes whole messages as single lines; the lock keeps concurrent tasks from interleaving."""

    def __init__(self, write: Callable[[bytes], Awaitable[None]]) -> None:
        self._write = write
        self._lock = asyncio.Lock()
        self.broken = False  # the client stopped reading: nothing more can be delivered

    async def send(self, message: dict[str, Any]) -> None:
        line = _json.dumps(message) + b"\n"  # orjson escapes control characters: no embedded newlines
        async with self._lock:
            if self.broken:
                return
            try:
                await self._write(line)
            except (OSError, RuntimeError) as exc:  # broken pipe, closed transport
                _LOG.debug("stdout closed: %s", exc)
                self.broken = True


class _LineTooLong(Exception):
    """A line over the limit was read and dropped; `head` is its start (for the request id)."""

    def __init__(self, head: bytes) -> None:
        self.head = head


async def _open_reader(stream: BinaryIO, limit: int) -> ReadLine:
    """`read_line()`: the next line (b"" at end of input); a line over `limit` bytes is skipped
    whole and raises `_LineTooLong` once."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    try:
        if not _pollable(stream):
            raise ValueError("not a pipe, socket or terminal")
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except (ValueError, OSError, NotImplementedError):
        # Regular files and /dev/null cannot be watched by the event loop; read them in a thread.
        async def read_file_line() -> bytes:
            line: bytes = await loop.run_in_executor(None, stream.readline, limit + 1)
            if len(line) <= limit:
                return line
            head = line[:_HEAD_BYTES]
            while line and not line.endswith(b"\n"):  # drop the rest of it
                line = await loop.run_in_executor(None, stream.readline, limit + 1)
            raise _LineTooLong(head)

        return read_file_line

    async def read_line() -> bytes:
        try:
            return await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:  # end of input; a last line without its newline
            return end.partial
        except asyncio.LimitOverrunError as over:
            # StreamReader.readline would drop one buffer of it per call and fail again on the rest
            # (one error per `limit` bytes): drop everything up to and including the newline instead.
            head = bytes(await reader.read(min(over.consumed, _HEAD_BYTES)))
            await _skip_line(reader, over.consumed - len(head))
            raise _LineTooLong(head) from None

    return read_line


_HEAD_BYTES = 256  # the start of an over-long line kept to recover its id


def _pollable(stream: BinaryIO) -> bool:
    """Whether the event loop's selector can watch `stream`: connect_read_pipe accepts any character
    device, but /dev/null fails later, in a callback (a PermissionError logged, and no end of input)."""
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(stream.fileno(), selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


class _Stop:
    """SIGTERM and SIGINT while serving: the first stops reading (the read in progress is
    cancelled) and drains, a second cuts the drain short."""

    _SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.requested = False
        self.reading: asyncio.Task[Any] | None = None  # the serving task, while it waits for a line
        self.forced: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._installed: list[signal.Signals] = []

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._SIGNALS:
            try:
                loop.add_signal_handler(sig, self.signalled)
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread; Windows
                continue
            self._installed.append(sig)

    def remove(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed.clear()

    def signalled(self) -> None:
        if not self.requested:
            self.requested = True
            _LOG.info("shutting down: draining requests in flight")
            if self.reading is not None:
                self.reading.cancel()
        elif not self.forced.done():
            self.forced.set_result(None)


async def _skip_line(reader: asyncio.StreamReader, known: int) -> None:
    """Drop bytes up to and including the next newline; `known` bytes are known to precede it."""
    while True:
        if known:
            await reader.readexactly(known)
        try:
            await reader.readuntil(b"\n")
            return
        except asyncio.IncompleteReadError:  # end of input inside the line
            return
        except asyncio.LimitOverrunError as over:
            known = over.consumed


async def _open_writer(stream: BinaryIO) -> Callable[[bytes], Awaitable[None]]:
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stream)
    except (ValueError, OSError, NotImplementedError):

        async def write_blocking(data: bytes) -> None:
            stream.write(data)
            stream.flush()

        return write_blocking
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def write(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    return write


async def serve_stdio(
    server: Dispatcher,
    stdin: BinaryIO,
    stdout: BinaryIO,
    *,
    shutdown_grace: float = 2.0,
    handle_signals: bool = False,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Answer messages from `stdin` on `stdout` until end of input (requests in flight then get
    `shutdown_grace`) or, with `handle_signals`, until SIGTERM or SIGINT (they get
    `ServerConfig.shutdown_grace_s`). `on_ready` is called once the signals are handled here."""
    stop = _Stop()
    if handle_signals:
        stop.install()
    if on_ready is not None:
        on_ready()
    try:
        await _serve_lines(server, stdin, stdout, shutdown_grace, stop)
    finally:
        stop.remove()


async def _serve_lines(
    server: Dispatcher, stdin: BinaryIO, stdout: BinaryIO, shutdown_grace: float, stop: _Stop
) -> None:
    limit = server.config.max_body_bytes
    read_line = await _open_reader(stdin, limit)
    writer = _LineWriter(await _open_writer(stdout))
    request = IncomingRequest(transport="stdio", notify=writer.send)
    in_flight: dict[Any, asyncio.Task[None]] = {}
    legacy = None if server.config.modern_only else LegacyDispatcher(server)
    session: Session | None = None  # set by initialize: this process then serves a legacy client

    async def answer(message: Any, in_session: IncomingRequest | None = None) -> None:
        try:
            if in_session is None:
                outcome = await server.handle_message(message, request)
            else:
                assert legacy is not None and session is not None
                outcome = await legacy.handle(session, message, in_session)
        except asyncio.CancelledError:
            return  # cancelled by the client: no response (CANCEL-09)
        except Exception:  # a bug in the server itself; the client still gets an answer
            _LOG.exception("internal error handling a message")
            msg_id = message.get("id") if isinstance(message, dict) else None
            await writer.send(jsonrpc.error(msg_id, jsonrpc.INTERNAL_ERROR, "Internal error"))
            return
        if outcome.response is not None:
            await writer.send(outcome.response)
            if (
                type(message) is dict
                and message.get("method") == "subscriptions/listen"
                and "result" in outcome.response
            ):
                # The server ended this subscription (SUB-07 answered above); SUB-08: say so.
                await writer.send(
                    jsonrpc.notification(
                        "notifications/cancelled",
                        {"requestId": message["id"], "reason": "subscription closed by the server"},
                    )
                )

    serving = asyncio.current_task()
    while not writer.broken and not stop.requested:
        stop.reading = serving
        try:
            line = await read_line()
        except asyncio.CancelledError:
            if not stop.requested or serving is None:
                raise
            serving.uncancel()  # the signal's cancellation of this read: drain below
            break
        except _LineTooLong as skipped:  # answered once, then the next line is served
            stop.reading = None
            await writer.send(
                jsonrpc.error(
                    _leading_id(skipped.head), jsonrpc.INVALID_REQUEST, f"Message exceeds {limit} bytes"
                )
            )
            continue
        stop.reading = None
        if not line:
            break
        if not line.strip():
            continue
        try:
            message = _json.loads(line)
        except _json.JSONDecodeError:
            await writer.send(jsonrpc.error(None, jsonrpc.PARSE_ERROR, "Parse error"))
            continue
        if (
            type(message) is dict
            and "id" not in message
            and message.get("method") == "notifications/cancelled"
        ):
            _cancel(in_flight, message.get("params"))
            continue
        in_session: IncomingRequest | None = None
        if legacy is not None and type(message) is dict and not carries_modern_meta(message.get("params")):
            if session is None:
                if message.get("method") == "initialize" and "id" in message:
                    outcome, handshake = legacy.initialize(message, "stdio")
                    await writer.send(outcome.response or {})
                    if handshake is not None:
                        session = legacy.open_session(handshake, None, None)
                        legacy.add_listener(writer.send, session)
                    continue
            else:
                method = message.get("method")
                if method is None and jsonrpc.is_response(message):  # the answer to a request we sent
                    session.answer(message)
                    continue
                if type(method) is str and "id" not in message:
                    await legacy.notification(session, method, message.get("params"))
                    continue
                if method == "initialize":
                    await writer.send(
                        jsonrpc.error(
                            message.get("id"),
                            jsonrpc.INVALID_REQUEST,
                            "This connection is already initialized",
                        )
                    )
                    continue
                in_session = IncomingRequest(
                    "stdio",
                    None,
                    writer.send,
                    None,
                    None,
                    None,
                    None,
                    SessionChannel(legacy.options, session, writer.send),
                )
        task = asyncio.create_task(answer(message, in_session))
        msg_id = message.get("id") if type(message) is dict else None
        if isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool):
            in_flight[msg_id] = task
            task.add_done_callback(functools.partial(_forget, in_flight, msg_id))
        else:
            # Keep a reference so the task is not garbage-collected mid-flight.
            in_flight[object()] = task
            task.add_done_callback(lambda done: _forget_task(in_flight, done))

    server.close_subscriptions()  # STDIO-11: nobody is listening any more
    if session is not None:
        session.end()  # answers still awaited fail; their handlers finish or are cancelled below
    if in_flight:
        pending = set(in_flight.values())
        grace = server.config.shutdown_grace_s if stop.requested else shutdown_grace
        finished: asyncio.Future[Any] = asyncio.ensure_future(asyncio.wait(pending))
        ends: set[asyncio.Future[Any]] = {finished, stop.forced}  # all done, or a second signal
        await asyncio.wait(ends, timeout=grace, return_when=asyncio.FIRST_COMPLETED)
        finished.cancel()
        still = {task for task in pending if not task.done()}
        for task in still:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*still, return_exceptions=True)


# `{"jsonrpc": "2.0", "id": ...` or `{"id": ...` at the very start of a line: the top-level id,
# since no other object can have opened before it.
_LEADING_ID = re.compile(
    rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,100}")\s*[,}]'
)


def _leading_id(head: bytes) -> str | int | None:
    """The id of a message from the first bytes of its line when it leads the line, else None."""
    found = _LEADING_ID.match(head)
    if found is None:
        return None
    try:
        value = _json.loads(found.group(1))
    except _json.JSONDecodeError:  # not valid UTF-8
        return None
    return value if isinstance(value, (str, int)) else None


def _forget(in_flight: dict[Any, asyncio.Task[None]], key: str | int, task: asyncio.Task[None]) -> None:
    if in_flight.get(key) is task:
        del in_flight[key]


def _forget_task(in_flight: dict[Any, asyncio.Task[None]], task: asyncio.Task[None]) -> None:
    for key, value in list(in_flight.items()):
        if value is task:
            del in_flight[key]


def _cancel(in_flight: dict[Any, asyncio.Task[None]], params: Any) -> None:
    # CANCEL-13: unknown ids, finished requests and malformed notifications are ignored.
    if type(params) is not dict:
        return
    request_id = params.get("requestId")
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        return
    task = in_flight.get(request_id)
    if task is not None and not task.done():
        _LOG.info(
            "request %r cancelled by the client: %s", request_id, params.get("reason", "no reason given")
        )
        task.cancel()


def run_stdio(server: Dispatcher, on_ready: Callable[[], None] | None = None) -> None:
    """Serve on this process's stdin/stdout; `on_ready` is called once SIGINT and SIGTERM stop the
    server cleanly (a start line printed then: a Ctrl-C right after it is a clean stop).

    STDIO-03: the real stdout is kept for protocol messages only; file descriptor 1 and
    `sys.stdout` are pointed at stderr, so stray prints in handlers cannot corrupt the stream.
    A closed stdin or stdout (no file descriptor 0 or 1) is nothing to serve: it returns at once.
    """
    if sys.stdin is None or sys.stdout is None:
        _LOG.warning("stdin or stdout is closed: nothing to serve on stdio")
        return
    protocol_fd = os.dup(sys.stdout.fileno())
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    with os.fdopen(protocol_fd, "wb", buffering=0) as out, contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(server, out, on_ready))


async def _serve(server: Dispatcher, out: BinaryIO, on_ready: Callable[[], None] | None) -> None:
    await server.open_shared_state()  # a shared store: join the replicas' change fan-out
    try:
        await serve_stdio(server, sys.stdin.buffer, out, handle_signals=True, on_ready=on_ready)
    finally:
        await server.close_shared_state()
