"""stdio transport: the server is a subprocess; one JSON-RPC message per line each way.

Rules: STDIO-01 (newline-delimited, no embedded newlines — orjson never emits raw
newlines), STDIO-02 (stderr is a log, not an error signal: drained into a bounded tail that
only `ServerExitedError` reports), STDIO-08 / CANCEL-03 (a timed-out or abandoned request is
cancelled with `notifications/cancelled`), CANCEL-10 (late responses are dropped),
STDIO-10 (shutdown: close stdin, wait, then SIGTERM, then SIGKILL), SUB-06 (listen streams
are demultiplexed by the subscription id in `_meta`: `stream()` yields the messages of one
subscription, and no request's `on_notification` sees them), SUB-10 (closing a stream that
has not ended sends `notifications/cancelled` for its id).

The blocking transport reads stdout in the calling thread (selectors, no reader thread,
so a call costs no thread hand-off) and serialises requests with a lock; it needs a POSIX
pipe that `select` accepts. The asyncio transport demultiplexes replies by id in a reader
task, so many requests may be in flight at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from .. import _json
from ..errors import ConnectError, ProtocolError, RequestTimeoutError, ServerExitedError
from ..protocol.meta import SUBSCRIPTION_ID_KEY
from .base import Message, OnNotification, Reply

SHUTDOWN_GRACE = 2.0  # seconds to wait at each shutdown step (stdin EOF, SIGTERM)
STDERR_TAIL_LINES = 200
_STDERR_LINE_LIMIT = 8192  # bytes kept per stderr line: the tail stays bounded
_READ_SIZE = 1 << 16
_LINE_LIMIT = 1 << 26  # asyncio line limit: a tools/list page can be large
_STREAM_SLICE = 0.05  # seconds a blocking stream() reader holds the pipe before letting requests in


def _child_env(env: Mapping[str, str] | None) -> dict[str, str] | None:
    # Extra variables on top of ours: a server without PATH or HOME is rarely what anyone wants.
    return None if env is None else {**os.environ, **env}


def _encode(message: Message) -> bytes:
    return _json.dumps(message) + b"\n"


def _cancel_message(request_id: Any, reason: str) -> bytes:
    return _encode({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": request_id, "reason": reason}})


def _parse_line(line: bytes) -> Message:
    try:
        message = _json.loads(line)
    except _json.JSONDecodeError as exc:
        raise ProtocolError(f"server wrote a non-JSON line to stdout: {line[:200]!r}") from exc
    if not isinstance(message, dict):
        raise ProtocolError(f"server wrote a non-object JSON line to stdout: {line[:200]!r}")
    return message


def _exited(command: list[str], returncode: int | None, stderr_tail: str) -> ServerExitedError:
    status = f"exited with code {returncode}" if returncode is not None else "closed its stdout"
    last = next((line.strip() for line in reversed(stderr_tail.splitlines()) if line.strip()), "")
    return ServerExitedError(f"server process {command[0]!r} {status}" + (f"; stderr: {last[:300]}" if last else ""),
                             returncode=returncode, stderr_tail=stderr_tail)


def _is_response(message: Message) -> bool:
    return "id" in message and ("result" in message or "error" in message)


def _stream_key(message: Message) -> Any:
    """The request id a notification belongs to as part of a stream: the subscription id in
    `_meta` (SUB-05), or the `requestId` of a server's `notifications/cancelled` (SUB-08)."""
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if isinstance(meta, dict) and SUBSCRIPTION_ID_KEY in meta:
        return meta[SUBSCRIPTION_ID_KEY]
    if message.get("method") == "notifications/cancelled":
        return params.get("requestId")
    return None


def _ends_stream(message: Message) -> bool:
    return _is_response(message) or message.get("method") == "notifications/cancelled"


class _StderrTail:
    """Drains a child's stderr on a daemon thread (so the pipe never fills and blocks the
    child) and keeps the last lines for error reports."""

    def __init__(self, stream: IO[bytes], max_lines: int = STDERR_TAIL_LINES) -> None:
        self._lines: deque[bytes] = deque(maxlen=max_lines)
        self._thread = threading.Thread(target=self._drain, args=(stream,), name="mcpgen-stdio-stderr", daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for line in iter(lambda: stream.readline(_STDERR_LINE_LIMIT), b""):
                self._lines.append(line)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def text(self) -> str:
        return b"".join(self._lines).decode("utf-8", "replace")


class StdioTransport:
    """Blocking stdio transport: starts `command` at construction."""

    sends_headers = False

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | os.PathLike[str] | None = None) -> None:
        if not command:
            raise ValueError("command must name a program")
        self.command = list(command)
        try:
            self._proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, env=_child_env(env), cwd=cwd)
        except OSError as exc:
            raise ConnectError(f"cannot start {self.command[0]!r}: {exc}") from exc
        assert self._proc.stdin is not None and self._proc.stdout is not None and self._proc.stderr is not None
        self._stdin = self._proc.stdin
        self._stdout = self._proc.stdout
        self._fd = self._stdout.fileno()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._fd, selectors.EVENT_READ)
        self._stderr = _StderrTail(self._proc.stderr)
        self._lines: deque[bytes] = deque()
        self._partial = b""
        self._lock = threading.Lock()
        self._streams: dict[Any, deque[Message]] = {}  # open stream() ids -> their undelivered messages
        self._exited: ServerExitedError | None = None
        self._closed = False

    @property
    def pid(self) -> int:
        return self._proc.pid

    def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: float | None,
        on_notification: OnNotification | None = None,
    ) -> Reply:
        request_id = message.get("id")
        with self._lock:
            self._write(_encode(message))
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                reply = self._next_message(deadline)
                if reply is None:
                    self._try_write(_cancel_message(request_id, "timeout"))
                    raise RequestTimeoutError(f"no response to request {request_id!r} within {timeout}s")
                if _is_response(reply):
                    reply_id = reply["id"]
                    if reply_id == request_id or (reply_id is None and "error" in reply):
                        return reply, None
                    if self._streams:
                        self._route(reply)
                    continue  # a late reply to a request we gave up on (CANCEL-10)
                if "method" in reply and "id" not in reply:
                    if self._route(reply):
                        continue  # a subscription's, not this request's (SUB-06)
                    if on_notification is not None:
                        on_notification(reply)

    def _route(self, message: Message) -> bool:
        """Queue a stream's message for its `stream()` reader. True when `message` belongs to a
        stream (a notification tagged for a subscription that is closed by now is dropped)."""
        if _is_response(message):
            queue = self._streams.get(message["id"])
            if queue is None:
                return False
        else:
            key = _stream_key(message)
            if key is None:
                return False
            queue = self._streams.get(key)
            if queue is None:
                return True
        queue.append(message)
        return True

    def stream(self, message: Message, headers: Mapping[str, str]) -> Iterator[Message]:
        """Send a request whose reply is a stream (`subscriptions/listen`) and yield its
        messages as they arrive: the notifications tagged with its id, then its response or the
        server's `notifications/cancelled` for it. Requests may be made between two `next()`s
        (their replies are read in turn); closing the iterator before the end cancels (SUB-10)."""
        request_id = message["id"]
        queue: deque[Message] = deque()
        with self._lock:
            self._streams[request_id] = queue
            try:
                self._write(_encode(message))
            except BaseException:
                del self._streams[request_id]
                raise
        ended = False
        try:
            while True:
                if not queue:
                    with self._lock:
                        if not queue:
                            reply = self._next_message(time.monotonic() + _STREAM_SLICE)
                            if reply is not None and not self._route(reply):
                                continue  # a late reply, or a notification with no request waiting
                    continue
                item = queue.popleft()
                ended = _ends_stream(item)
                yield item
                if ended:
                    return
        finally:
            with self._lock:
                self._streams.pop(request_id, None)
                if not ended:
                    self._try_write(_cancel_message(request_id, "subscription closed by the client"))

    def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        with self._lock:
            self._write(_encode(message))

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
        while not lines:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._selector.select(remaining):
                    return None
            try:
                chunk = os.read(self._fd, _READ_SIZE)
            except OSError as exc:
                raise self._exit_error() from exc
            if not chunk:
                raise self._exit_error()
            data = self._partial + chunk if self._partial else chunk
            *complete, self._partial = data.split(b"\n")
            lines.extend(line for line in complete if line.strip())
        return _parse_line(lines.popleft())

    def _exit_error(self) -> ServerExitedError:
        if self._exited is None:
            try:
                returncode: int | None = self._proc.wait(timeout=SHUTDOWN_GRACE)
            except subprocess.TimeoutExpired:
                returncode = None  # stdout closed but the process lingers
            self._stderr.join(SHUTDOWN_GRACE)
            self._exited = _exited(self.command, returncode, self._stderr.text())
        exited = self._exited
        return ServerExitedError(str(exited), returncode=exited.returncode, stderr_tail=exited.stderr_tail)

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


@dataclass(slots=True)
class _Pending:
    future: asyncio.Future[Message]
    on_notification: OnNotification | None


class AsyncStdioTransport:
    """asyncio stdio transport: the process starts on `start()` or the first request."""

    sends_headers = False

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | os.PathLike[str] | None = None) -> None:
        if not command:
            raise ValueError("command must name a program")
        self.command = list(command)
        self._env = _child_env(env)
        self._cwd = cwd
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[Any, _Pending] = {}
        self._streams: dict[Any, asyncio.Queue[Message | BaseException]] = {}  # open stream() ids
        self._tasks: list[asyncio.Task[None]] = []
        self._stderr: deque[bytes] = deque(maxlen=STDERR_TAIL_LINES)
        self._exited: ServerExitedError | None = None
        self._exit_task: asyncio.Future[None] | None = None
        self._start_lock = asyncio.Lock()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    async def start(self) -> None:
        async with self._start_lock:
            if self._proc is not None:
                return
            try:
                self._proc = await asyncio.create_subprocess_exec(
                    *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE, env=self._env, cwd=self._cwd, limit=_LINE_LIMIT,
                )
            except OSError as exc:
                raise ConnectError(f"cannot start {self.command[0]!r}: {exc}") from exc
            self._tasks = [
                asyncio.create_task(self._read_stdout(), name="mcpgen-stdio-stdout"),
                asyncio.create_task(self._read_stderr(), name="mcpgen-stdio-stderr"),
            ]

    async def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: float | None,
        on_notification: OnNotification | None = None,
    ) -> Reply:
        if self._proc is None:
            await self.start()
        request_id = message.get("id")
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = _Pending(future, on_notification)
        try:
            await self._write(_encode(message))
            if timeout is None:
                return await future, None
            async with asyncio.timeout(timeout):
                return await future, None
        except TimeoutError:
            await self._try_write(_cancel_message(request_id, "timeout"))
            raise RequestTimeoutError(f"no response to request {request_id!r} within {timeout}s") from None
        except asyncio.CancelledError:
            # The caller gave up (task cancelled): tell the server to stop (CANCEL-01).
            await asyncio.shield(self._try_write(_cancel_message(request_id, "cancelled by client")))
            raise
        finally:
            self._pending.pop(request_id, None)

    async def stream(self, message: Message, headers: Mapping[str, str]) -> AsyncIterator[Message]:
        """The asyncio twin of `StdioTransport.stream` (cancelling the task closes it too)."""
        if self._proc is None:
            await self.start()
        request_id = message["id"]
        queue: asyncio.Queue[Message | BaseException] = asyncio.Queue()
        self._streams[request_id] = queue
        ended = False
        try:
            await self._write(_encode(message))
            while True:
                if self._exited is not None and queue.empty():
                    raise self._copy_exit()
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise item
                ended = _ends_stream(item)
                yield item
                if ended:
                    return
        finally:
            self._streams.pop(request_id, None)
            if not ended:
                await asyncio.shield(self._try_write(_cancel_message(request_id, "subscription closed by the client")))

    async def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        if self._proc is None:
            await self.start()
        await self._write(_encode(message))

    async def _write(self, data: bytes) -> None:
        if self._exited is not None:
            raise self._copy_exit()
        assert self._proc is not None and self._proc.stdin is not None
        stdin = self._proc.stdin
        try:
            stdin.write(data)
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            await self._mark_exited()
            raise self._copy_exit() from exc

    async def _try_write(self, data: bytes) -> None:
        with contextlib.suppress(ServerExitedError):
            await self._write(data)

    async def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        try:
            while True:
                line = await stdout.readline()
                if not line:
                    break
                if line.strip():
                    self._dispatch(line)
        except (OSError, ValueError) as exc:  # ValueError: a line beyond the limit
            self._fail_pending(ProtocolError(f"cannot read server stdout: {exc}"))
        finally:
            await self._mark_exited()

    def _dispatch(self, line: bytes) -> None:
        try:
            message = _parse_line(line)
        except ProtocolError as exc:
            # Unattributable garbage: every waiter learns the stream is broken.
            self._fail_pending(exc)
            return
        if _is_response(message):
            reply_id = message["id"]
            entry = self._pending.get(reply_id)
            if entry is None and reply_id is None and "error" in message and len(self._pending) == 1:
                entry = next(iter(self._pending.values()))
            if entry is not None and not entry.future.done():
                entry.future.set_result(message)
            elif entry is None and reply_id in self._streams:
                self._streams[reply_id].put_nowait(message)
            return  # unknown ids: late replies to cancelled requests (CANCEL-10)
        if "method" in message and "id" not in message:
            key = _stream_key(message)
            if key is not None:  # a subscription's, never a request's (SUB-06)
                queue = self._streams.get(key)
                if queue is not None:
                    queue.put_nowait(message)
                return
            # Notifications on stdio name no request; each distinct handler hears them once.
            seen: set[int] = set()
            for entry in list(self._pending.values()):
                handler = entry.on_notification
                if handler is not None and id(handler) not in seen:
                    seen.add(id(handler))
                    handler(message)

    def _fail_pending(self, error: Exception) -> None:
        for entry in self._pending.values():
            if not entry.future.done():
                entry.future.set_exception(error)
        for queue in self._streams.values():
            queue.put_nowait(error)

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        stderr = self._proc.stderr
        with contextlib.suppress(OSError, ValueError):
            while line := await stderr.readline():
                self._stderr.append(line[-_STDERR_LINE_LIMIT:])

    async def _mark_exited(self) -> None:
        # The reader (at EOF) and a writer (broken pipe) may both notice; one records it.
        if self._exit_task is None:
            self._exit_task = asyncio.ensure_future(self._record_exit())
        await asyncio.shield(self._exit_task)

    async def _record_exit(self) -> None:
        assert self._proc is not None
        try:
            returncode: int | None = await asyncio.wait_for(self._proc.wait(), SHUTDOWN_GRACE)
        except TimeoutError:
            returncode = None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._tasks[1]), SHUTDOWN_GRACE)
        self._exited = _exited(self.command, returncode, b"".join(self._stderr).decode("utf-8", "replace"))
        for entry in self._pending.values():
            if not entry.future.done():
                entry.future.set_exception(self._copy_exit())
        for queue in self._streams.values():
            queue.put_nowait(self._copy_exit())

    def _copy_exit(self) -> ServerExitedError:
        exited = self._exited
        assert exited is not None
        return ServerExitedError(str(exited), returncode=exited.returncode, stderr_tail=exited.stderr_tail)

    async def aclose(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.returncode is None:
            if proc.stdin is not None:
                with contextlib.suppress(OSError, RuntimeError):
                    proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), SHUTDOWN_GRACE)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), SHUTDOWN_GRACE)
                except TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    await proc.wait()
        for task in self._tasks:
            if not task.done():
                try:
                    await asyncio.wait_for(task, SHUTDOWN_GRACE)
                except TimeoutError:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
