"""stdio transport: the server is a subprocess; one JSON-RPC message per line each way.

Rules (the framing ones are in `stdio_lines.py`): STDIO-08 / CANCEL-03 (a timed-out or
abandoned request is cancelled with `notifications/cancelled`), CANCEL-10 (late responses are
dropped, unless the request awaited takes one: `also`, for a timed-out era probe), STDIO-10
(shutdown: close stdin, wait, then SIGTERM, then SIGKILL), SUB-06 (`stream()` yields the
messages of one subscription), SUB-10 (closing a stream that has not ended sends
`notifications/cancelled` for its id).

Two hand-written transports, because the two I/O models really differ: this blocking one
reads stdout in the calling thread (selectors, no reader thread, so a call costs no thread
hand-off) and serialises requests with a lock; it needs a POSIX pipe that `select` accepts.
The asyncio one (`asyncio_stdio.py`) demultiplexes replies by id in a reader task, so many
requests may be in flight at once. What a line means and where it goes is shared
(`stdio_lines.py`). A peer request is answered through `on_request` with one line (`hooks.py`),
here while the transport reads (so in the thread of the call that read it). `unsolicited()`
yields the notifications that belong to no request or stream (a legacy server's list changes),
from a bounded buffer.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import IO

from ..errors import ConnectError, ProtocolError, RequestTimeoutError, ServerExitedError
from ..protocol.jsonrpc import is_request, is_response
from .hooks import Message, OnNotification, OnRequest, Reply, hook_failed
from .limits import Timeout, expiry, start_deadline, within_text
from .stdio_lines import (
    SHUTDOWN_GRACE,
    STDERR_LINE_LIMIT,
    STDERR_TAIL_LINES,
    LineSplitter,
    StdioTransportBase,
    answers,
    cancel_line,
    copy_exit,
    encode,
    ends_stream,
    exited,
    tail_text,
)

__all__ = ["SHUTDOWN_GRACE", "STDERR_TAIL_LINES", "StdioTransport"]

READ_SIZE = 1 << 16
_STREAM_SLICE = 0.05  # seconds a blocking stream() reader holds the pipe before letting requests in
UNSOLICITED_LIMIT = 1024  # notifications an `unsolicited()` reader may fall behind by (then: dropped)
Accepts = Callable[[Message], bool]


class _StderrTail:
    """Drains a child's stderr on a daemon thread (so the pipe never fills and blocks the
    child) and keeps the last lines for error reports."""

    def __init__(self, stream: IO[bytes], max_lines: int = STDERR_TAIL_LINES) -> None:
        self._lines: deque[bytes] = deque(maxlen=max_lines)
        self._thread = threading.Thread(
            target=self._drain, args=(stream,), name="mcpgen-stdio-stderr", daemon=True
        )
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in iter(lambda: stream.readline(STDERR_LINE_LIMIT), b""):
                self._lines.append(line)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def text(self) -> str:
        return tail_text(self._lines)


class StdioTransport(StdioTransportBase[OnRequest]):
    """Blocking stdio transport: starts `command` at construction (`StdioTransportBase` says
    what it is given)."""

    def _set_up(self) -> None:
        try:
            self._proc: subprocess.Popen[bytes] = subprocess.Popen(self.command, **self._spawn)
        except OSError as exc:
            raise ConnectError(f"cannot start {self.command[0]!r}: {exc}") from exc
        assert (
            self._proc.stdin is not None and self._proc.stdout is not None and self._proc.stderr is not None
        )
        self._stdin = self._proc.stdin
        self._stdout = self._proc.stdout
        self._fd = self._stdout.fileno()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)
        self._stderr = _StderrTail(self._proc.stderr)
        self._lines: deque[bytes | ProtocolError] = deque()
        self._splitter = LineSplitter(self._max_line, repr(self.command[0]))
        self._lock = threading.Lock()
        self._unsolicited: list[deque[Message]] = []
        self._closed = False

    @property
    def pid(self) -> int:
        return self._proc.pid

    def start(self) -> None:
        """Nothing to do: the process started with the transport."""

    # The contract's signature and `also`, restated as every implementation of a Protocol must.
    def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: Timeout,
        on_notification: OnNotification | None = None,
        also: Accepts | None = None,
    ) -> Reply:
        """`also`: a response to another id (a request given up on) that it accepts is the reply too."""
        request_id = message.get("id")
        with self._lock:
            self._write(encode(message))
            deadline = start_deadline(timeout, time.monotonic)
            while True:
                reply = self._next_message(expiry(deadline, time.monotonic))  # progress may move it
                if reply is None:
                    self._try_write(cancel_line(request_id, "timeout"))
                    raise RequestTimeoutError(f"no response to request {request_id!r} {within_text(timeout)}")
                if answers(reply, request_id) or (also is not None and is_response(reply) and also(reply)):
                    return reply, None
                self._other(reply, on_notification)

    def _other(self, message: Message, on_notification: OnNotification | None) -> None:
        """A message read that is not the response awaited: a peer request, a stream's message,
        a notification, or a late reply to a request given up on (dropped: CANCEL-10)."""
        if is_request(message):
            if self.on_request is not None:
                self._answer(message, self.on_request)
        elif not self._streams.route(message) and "method" in message:
            if on_notification is not None:
                on_notification(message)
            for buffer in self._unsolicited:
                buffer.append(message)  # bounded: the oldest goes first

    def unsolicited(self) -> Iterator[Message]:
        """Notifications that belong to no request or stream, from this call on (read while
        nothing else reads, in slices like `stream()`); closing the iterator stops it."""
        buffer: deque[Message] = deque(maxlen=UNSOLICITED_LIMIT)
        self._unsolicited.append(buffer)
        return self._drain(buffer)

    def _drain(self, buffer: deque[Message]) -> Iterator[Message]:
        try:
            while True:
                if not buffer:
                    self._read_slice(buffer)
                    continue
                yield buffer.popleft()
        finally:
            self._unsolicited.remove(buffer)

    def _read_slice(self, pending: deque[Message]) -> None:
        """For a reader whose `pending` is empty: read from the pipe for a slice of time
        unless another thread filled it meanwhile (no request waits: its notifications are
        routed to streams and `unsolicited()` readers only)."""
        with self._lock:
            if not pending:
                reply = self._next_message(time.monotonic() + _STREAM_SLICE)
                if reply is not None:
                    self._other(reply, None)

    def _answer(self, request: Message, on_request: OnRequest) -> None:
        try:
            answer = on_request(request)
        except Exception as exc:
            answer = hook_failed(request, exc)
        self._try_write(encode(answer))

    def stream(self, message: Message, headers: Mapping[str, str]) -> Iterator[Message]:
        """Send a request whose reply is a stream (`subscriptions/listen`) and yield its
        messages as they arrive: the notifications tagged with its id, then its response or the
        server's `notifications/cancelled` for it. Requests may be made between two `next()`s
        (their replies are read in turn); closing the iterator before the end cancels (SUB-10)."""
        request_id = message["id"]
        queue: deque[Message] = deque()
        with self._lock:
            self._streams.open(request_id, queue.append)
            try:
                self._write(encode(message))
            except BaseException:
                self._streams.close(request_id)
                raise
        ended = False
        try:
            while True:
                if not queue:
                    self._read_slice(queue)
                    continue
                item = queue.popleft()
                ended = ends_stream(item)
                yield item
                if ended:
                    return
        finally:
            with self._lock:
                self._streams.close(request_id)
                if not ended:
                    self._try_write(cancel_line(request_id, "subscription closed by the client"))

    def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        with self._lock:
            self._write(encode(message))

    def _write(self, data: bytes) -> None:
        if self._exited is not None:
            raise self._exit_error()
        try:
            self._stdin.write(data)
            self._stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError) as exc:
            raise self._exit_error() from exc

    def _try_write(self, data: bytes) -> None:
        with contextlib.suppress(ServerExitedError):
            self._write(data)

    def _next_message(self, deadline: float | None) -> Message | None:
        """The next message from stdout, or None when `deadline` passes first."""
        lines = self._lines
        while True:
            while not lines:
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or not self._selector.select(remaining):
                        return None
                try:
                    chunk = os.read(self._fd, READ_SIZE)
                except OSError as exc:
                    raise self._exit_error() from exc
                if not chunk:
                    raise self._exit_error()
                lines.extend(self._splitter.feed(chunk))
            line = lines.popleft()
            if isinstance(line, ProtocolError):
                raise line  # a line over the limit, skipped: the request waiting now learns of it
            message = self._stray.parse(line)  # None: a banner or stray print, skipped
            if message is not None:
                return message

    def _exit_error(self) -> ServerExitedError:
        if self._exited is None:
            try:
                returncode: int | None = self._proc.wait(timeout=SHUTDOWN_GRACE)
            except subprocess.TimeoutExpired:
                returncode = None  # stdout closed but the process lingers
            self._stderr.join(SHUTDOWN_GRACE)
            self._exited = exited(self.command, returncode, self._stderr.text())
        return copy_exit(self._exited)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        proc = self._proc
        with contextlib.suppress(OSError, ValueError):
            self._stdin.close()
        try:
            proc.wait(timeout=SHUTDOWN_GRACE)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=SHUTDOWN_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._selector.close()
        self._stdout.close()
        self._stderr.join(SHUTDOWN_GRACE)
        if proc.stderr is not None:
            proc.stderr.close()
