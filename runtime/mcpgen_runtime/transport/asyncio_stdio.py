"""The asyncio stdio transport (`AsyncStdioTransport`): the blocking one's rules (stdio.py), with
replies demultiplexed by id in a reader task, so many requests may be in flight at once; a peer
request is answered in a task of its own, and the last replies nobody awaited are kept for a
request's `also` (a timed-out era probe answered late)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConnectError, ProtocolError, RequestTimeoutError, ServerExitedError
from ..protocol.jsonrpc import is_request, is_response
from .hooks import AsyncOnRequest, Message, OnNotification, Reply, hook_failed
from .limits import Deadline, Timeout, within_text
from .stdio import READ_SIZE, UNSOLICITED_LIMIT, Accepts
from .stdio_lines import (
    SHUTDOWN_GRACE,
    STDERR_LINE_LIMIT,
    STDERR_TAIL_LINES,
    LineSplitter,
    StdioTransportBase,
    cancel_line,
    copy_exit,
    encode,
    ends_stream,
    exited,
    tail_text,
)

__all__ = ["AsyncStdioTransport"]

LATE_REPLIES = 8  # late replies remembered for a request's `also`


@dataclass(slots=True)
class _Pending:
    future: asyncio.Future[Message]
    on_notification: OnNotification | None
    also: Accepts | None = None


class AsyncStdioTransport(StdioTransportBase[AsyncOnRequest]):
    """asyncio stdio transport: the process starts on `start()` or the first request
    (`StdioTransportBase` says what it is given)."""

    def _set_up(self) -> None:
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[Any, _Pending] = {}
        self._unsolicited: list[asyncio.Queue[Message | BaseException]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._answering: set[asyncio.Task[None]] = set()
        self._stderr: deque[bytes] = deque(maxlen=STDERR_TAIL_LINES)
        self._late: deque[Message] = deque(maxlen=LATE_REPLIES)  # the last replies nobody awaited
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
                self._proc = await asyncio.create_subprocess_exec(*self.command, **self._spawn)
            except OSError as exc:
                raise ConnectError(f"cannot start {self.command[0]!r}: {exc}") from exc
            self._tasks = [
                asyncio.create_task(self._read_stdout(), name="mcpgen-stdio-stdout"),
                asyncio.create_task(self._read_stderr(), name="mcpgen-stdio-stderr"),
            ]

    # The contract's signature and `also`, restated as every implementation of a Protocol must.
    async def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: Timeout,
        on_notification: OnNotification | None = None,
        also: Accepts | None = None,
    ) -> Reply:
        """The asyncio twin of `StdioTransport.request` (`also` hears the late replies read
        shortly before too: the reader task does not wait for this request to be sent)."""
        if self._proc is None:
            await self.start()
        if also is not None:
            for late in self._late:
                if also(late):
                    self._late.remove(late)
                    return late, None
        request_id = message.get("id")
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = _Pending(future, on_notification, also)
        try:
            await self._write(encode(message))
            if timeout is None:
                return await future, None
            if isinstance(timeout, Deadline):  # progress (read by the stdout task) moves it
                while not future.done():
                    left = timeout.remaining()
                    if left <= 0:
                        raise TimeoutError
                    await asyncio.wait((future,), timeout=left)
                return future.result(), None
            async with asyncio.timeout(timeout):
                return await future, None
        except TimeoutError:
            await self._try_write(cancel_line(request_id, "timeout"))
            raise RequestTimeoutError(
                f"no response to request {request_id!r} {within_text(timeout)}"
            ) from None
        except asyncio.CancelledError:
            # The caller gave up (task cancelled): tell the server to stop (CANCEL-01).
            await asyncio.shield(self._try_write(cancel_line(request_id, "cancelled by client")))
            raise
        finally:
            self._pending.pop(request_id, None)

    async def stream(self, message: Message, headers: Mapping[str, str]) -> AsyncIterator[Message]:
        """The asyncio twin of `StdioTransport.stream` (cancelling the task closes it too)."""
        if self._proc is None:
            await self.start()
        request_id = message["id"]
        queue: asyncio.Queue[Message | BaseException] = asyncio.Queue()
        self._streams.open(request_id, queue.put_nowait)
        ended = False
        try:
            await self._write(encode(message))
            while True:
                item = await self._next(queue)
                ended = ends_stream(item)
                yield item
                if ended:
                    return
        finally:
            self._streams.close(request_id)
            if not ended:
                await asyncio.shield(
                    self._try_write(cancel_line(request_id, "subscription closed by the client"))
                )

    async def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        if self._proc is None:
            await self.start()
        await self._write(encode(message))

    async def _write(self, data: bytes) -> None:
        if self._exited is not None:
            raise copy_exit(self._exited)
        assert self._proc is not None and self._proc.stdin is not None
        stdin = self._proc.stdin
        try:
            stdin.write(data)
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            await self._mark_exited()
            assert self._exited is not None
            raise copy_exit(self._exited) from exc

    async def _try_write(self, data: bytes) -> None:
        with contextlib.suppress(ServerExitedError):
            await self._write(data)

    async def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        splitter = LineSplitter(self._max_line, repr(self.command[0]))
        try:
            while chunk := await stdout.read(READ_SIZE):
                for line in splitter.feed(chunk):
                    if isinstance(line, ProtocolError):
                        self._fail_waiters(line)  # a line over the limit, skipped: whose it was is unknown
                    else:
                        self._dispatch(line)
        except OSError as exc:
            self._fail_waiters(ProtocolError(f"cannot read server stdout: {exc}"))
        finally:
            await self._mark_exited()

    def _dispatch(self, line: bytes) -> None:
        try:
            message = self._stray.parse(line)
        except ProtocolError as exc:
            # Too many lines that are not JSON, unattributable: every waiter learns the stream is broken.
            self._fail_waiters(exc)
            return
        if message is None:
            return  # a banner or stray print, skipped with a warning
        if is_response(message):
            reply_id = message["id"]
            entry = self._pending.get(reply_id)
            if entry is None and reply_id is None and "error" in message and len(self._pending) == 1:
                entry = next(iter(self._pending.values()))
            if entry is None:
                entry = next((p for p in self._pending.values() if p.also and p.also(message)), None)
            if entry is None:
                if not self._streams.route(message):
                    self._late.append(message)  # a late reply to a cancelled request: dropped (CANCEL-10)
            elif not entry.future.done():
                entry.future.set_result(message)
        elif is_request(message):
            if self.on_request is not None:
                task = asyncio.create_task(self._answer(message, self.on_request))
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)
        elif "method" in message and not self._streams.route(message):
            # Notifications on stdio name no request; each distinct callback hears them once.
            seen: set[int] = set()
            for pending in list(self._pending.values()):
                callback = pending.on_notification
                if callback is not None and id(callback) not in seen:
                    seen.add(id(callback))
                    callback(message)
            for queue in self._unsolicited:
                if not queue.full():  # a flood is dropped, never buffered without bound
                    queue.put_nowait(message)

    def unsolicited(self) -> AsyncIterator[Message]:
        """The asyncio twin of `StdioTransport.unsolicited` (the reader task fills it)."""
        queue: asyncio.Queue[Message | BaseException] = asyncio.Queue(UNSOLICITED_LIMIT)
        self._unsolicited.append(queue)
        return self._drain(queue)

    async def _next(self, queue: asyncio.Queue[Message | BaseException]) -> Message:
        """The queue's next message; the server's exit once it is gone and nothing is left."""
        if self._exited is not None and queue.empty():
            raise copy_exit(self._exited)
        item = await queue.get()
        if isinstance(item, BaseException):
            raise item
        return item

    async def _drain(self, queue: asyncio.Queue[Message | BaseException]) -> AsyncIterator[Message]:
        try:
            while True:
                yield await self._next(queue)
        finally:
            self._unsolicited.remove(queue)

    async def _answer(self, request: Message, on_request: AsyncOnRequest) -> None:
        try:
            answer = await on_request(request)
        except Exception as exc:
            answer = hook_failed(request, exc)
        await self._try_write(encode(answer))

    def _fail_waiters(self, error: Exception) -> None:
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(error)
        for deliver in self._streams.queues():
            deliver(error)

    async def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        stderr = self._proc.stderr
        with contextlib.suppress(OSError, ValueError):
            while line := await stderr.readline():
                self._stderr.append(line[-STDERR_LINE_LIMIT:])

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
        self._exited = exit_error = exited(self.command, returncode, tail_text(self._stderr))
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(copy_exit(exit_error))
        for deliver in self._streams.queues():
            deliver(copy_exit(exit_error))
        for queue in self._unsolicited:
            if not queue.full():
                queue.put_nowait(copy_exit(exit_error))

    async def aclose(self) -> None:
        proc = self._proc
        if proc is None:
            return
        for task in self._answering:
            task.cancel()
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
