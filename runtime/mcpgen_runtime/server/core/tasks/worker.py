"""`TaskEngine`: a tools/call promoted to a task, and the supervision of its detached handler.

`TaskEngine.run` starts the call's handler in an asyncio task of its own and waits for the first
of two things: the handler finishing (the call is answered inline, as without tasks) or the call
becoming a task — the handler called `ctx.run_as_task()`, or the tool is marked for tasks
(`execution.taskSupport`) and its handler first waited on something other than client input. Then
the task is written durably (a `tasks/get` on any replica resolves), the `CreateTaskResult` goes
back, and the handler goes on, detached from the request: a disconnect no longer cancels it.

The worker (this process) renews the task's lease every lease/3, cancels the handler when the
task's TTL ends or a `tasks/cancel` arrives (on any replica: the store's publish), and writes the
outcome with the single-winner terminal write: the CallToolResult as `completed` (isError results
too), an `RpcError` as `failed` with that error, anything else as `failed` -32603.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from typing import Any

from .... import _json
from ....protocol import jsonrpc
from ....protocol.tasks import MAX_STATUS_MESSAGE, TaskState, iso_now, mask_task_id
from ....telemetry import TaskSpan
from ...store import Store, StoreUnavailable, Unsubscribe
from ...store.base import MAX_VALUE_BYTES
from ..config import TaskOptions
from ..context import ToolContext
from ..handler_errors import RpcError
from .channel import TaskChannel
from .launch import CallBody, Launch, LegacyStart, TaskCreated
from .ledger import WORKER_STOPPED, TaskLedger
from .records import CANCEL_CHANNEL, CHANGED_CHANNEL, TaskRecord, new_task_id

__all__ = ["TaskCreated", "TaskEngine"]

_LOG = logging.getLogger("mcpgen.server")


class TaskEngine:
    """The tasks of one server: promotion (`run`), the workers of this process, cancellations."""

    __slots__ = ("_cancels", "_in_flight", "_running", "_supervisors", "ledger", "options", "store")

    def __init__(self, store: Store, options: TaskOptions) -> None:
        self.store = store
        self.options = options
        self.ledger = TaskLedger(store, options.lease_s)
        self._running: dict[str, Launch] = {}
        self._supervisors: set[asyncio.Task[None]] = (
            set()
        )  # one per task running here, until its outcome is written
        self._in_flight: Counter[str | None] = Counter()
        self._cancels: Unsubscribe | None = None

    def admit(self, owner: str | None) -> bool:
        return self._in_flight[owner] < self.options.max_in_flight

    async def run(
        self,
        body: CallBody,
        ctx: ToolContext,
        *,
        tool: str,
        owner: str | None,
        marked: bool,
        legacy: LegacyStart | None = None,
    ) -> dict[str, Any] | TaskCreated:
        """The call's result when it finishes inline, else `TaskCreated` (see the module docstring).
        `body` is the whole call (handler and result shaping); it raises what the call raises.
        `legacy`: a task from the start (RpcError -32603 past the in-flight limit)."""
        launch = Launch(self, ctx, tool, owner)
        ctx._task = launch
        loop = asyncio.get_running_loop()
        decision = launch.decision = loop.create_future()
        if legacy is not None:
            launch.legacy = True
            if not launch.mark(legacy.ttl_ms, None, None):
                body.close()
                raise RpcError(
                    jsonrpc.INTERNAL_ERROR, "Too many tasks of this client are running; retry later"
                )
        job = launch.job = loop.create_task(launch.drive(body))
        try:
            # One loop step: the job runs until its handler first waits (or ends: then the call is
            # answered without waiting on the decision, the common case).
            await asyncio.sleep(0)
            if marked:
                launch.mark(None, None, None)
            if not decision.done():
                await decision
        except asyncio.CancelledError:
            job.cancel()  # the request was cancelled (client disconnect) before any task existed
            raise
        if not launch.promoted:
            return job.result()
        try:
            record = await self._create(launch)
        except BaseException:
            job.cancel()
            assert launch.created is not None
            launch.created.cancel()
            raise
        return TaskCreated(record.state)

    async def _create(self, launch: Launch) -> TaskRecord:
        options = self.options
        ttl_ms, poll_ms, message = launch.settings
        ttl_ms = min(ttl_ms or options.ttl_ms, options.max_ttl_ms)
        now = iso_now()
        state = TaskState(
            task_id=new_task_id(),
            status="working",
            created_at=now,
            last_updated_at=now,
            ttl_ms=ttl_ms,
            poll_interval_ms=poll_ms or options.poll_interval_ms,
            status_message=message[:MAX_STATUS_MESSAGE] if message else None,
        )
        record = TaskRecord(launch.owner, launch.tool, state, time.time() + ttl_ms / 1000)
        await self._listen_for_cancels()
        await self.ledger.create(record)
        ctx = launch.ctx
        launch.channel = TaskChannel(
            self.ledger, state.task_id, ctx.protocol_version, launch.publish, asks=not launch.legacy
        )
        launch.record = record
        launch.span = TaskSpan.start(launch.tool)  # linked to the tools/call span, current here
        ctx._detach(launch.channel)
        self._running[state.task_id] = launch
        self._in_flight[launch.owner] += 1
        supervisor = asyncio.get_running_loop().create_task(self._supervise(launch))
        self._supervisors.add(supervisor)
        supervisor.add_done_callback(self._supervisors.discard)
        assert launch.created is not None
        launch.created.set_result(True)
        return record

    async def _listen_for_cancels(self) -> None:
        if self._cancels is None:
            self._cancels = await self.store.subscribe(CANCEL_CHANNEL, self._cancelled)

    def _cancelled(self, message: bytes) -> None:
        launch = self._running.get(message.decode(errors="replace"))
        if launch is not None and launch.job is not None:
            launch.cancelled = True
            launch.job.cancel()

    async def cancel(self, record: TaskRecord) -> None:
        """tasks/cancel: the record says `cancelled` at once; the worker, wherever it runs, cancels
        the handler (cooperatively: it sees CancelledError)."""
        ended = record.with_state(
            status="cancelled", last_updated_at=iso_now(), input_requests=None, status_message=None
        )
        if await self.ledger.settle(ended):
            await self.store.publish(CANCEL_CHANNEL, record.task_id.encode())
            await self.changed(record.task_id)

    async def changed(self, task_id: str) -> None:
        """Tell listen streams on every replica that a task changed (they read it again)."""
        await self.store.publish(CHANGED_CHANNEL, task_id.encode())

    async def _supervise(self, launch: Launch) -> None:
        assert launch.job is not None and launch.record is not None
        task_id = launch.record.task_id
        renewing = asyncio.get_running_loop().create_task(self._renew(task_id))
        try:
            try:
                async with asyncio.timeout(launch.record.ttl_left()):
                    result = await launch.job
            except TimeoutError:
                _LOG.info("task %s reached its TTL: cancelled and purged", mask_task_id(task_id))
                if launch.span is not None:
                    launch.span.outcome("expired")
                await self.ledger.purge(task_id)
                return
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # the server is stopping
                await self._settle(launch, status="cancelled")
                return
            except RpcError as exc:
                error: dict[str, Any] = {"code": exc.code, "message": exc.message}
                if exc.data is not None:
                    error["data"] = exc.data
                await self._settle(launch, status="failed", error=error)
                return
            except Exception as exc:
                _LOG.exception("task %s: its call raised", mask_task_id(task_id))
                error = {"code": jsonrpc.INTERNAL_ERROR, "message": f"Internal error ({type(exc).__name__})"}
                await self._settle(launch, status="failed", error=error)
                return
            if launch.legacy and result.get("isError") is True:  # 2025-11-25: a failed tool fails its task
                await self._settle(launch, status="failed", result=result, status_message=_text_of(result))
                return
            await self._settle(launch, status="completed", result=result)
        except StoreUnavailable as exc:
            _LOG.error("task %s: outcome not written: %s", mask_task_id(task_id), exc)
        finally:
            if launch.span is not None:
                launch.span.end()
            renewing.cancel()
            if launch.channel is not None:
                launch.channel.close()
            self._running.pop(task_id, None)
            self._in_flight[launch.owner] -= 1
            if self._in_flight[launch.owner] <= 0:
                del self._in_flight[launch.owner]

    async def _settle(self, launch: Launch, *, status: str, **outcome: Any) -> None:
        assert launch.record is not None
        result = outcome.get("result")
        size = len(_json.dumps(result)) if result is not None else 0
        if size > MAX_VALUE_BYTES - 4096:  # the record around it must fit too
            message = f"The task's result is too large to keep ({size} bytes)"
            status, outcome = "failed", {"error": {"code": jsonrpc.INTERNAL_ERROR, "message": message}}
        assert launch._write_lock is not None
        async with launch._write_lock:
            record = launch.record.with_state(
                status=status, last_updated_at=iso_now(), input_requests=None, **outcome
            )
            won = await self.ledger.settle(record)
            if launch.span is not None and (won or status == "cancelled"):  # a tasks/cancel wrote it
                launch.span.outcome(status, outcome.get("error"), result)
            if won:
                await self.changed(record.task_id)

    async def _renew(self, task_id: str) -> None:
        interval = self.options.lease_s / 3
        while True:
            await asyncio.sleep(interval)
            try:
                await self.ledger.renew(task_id)
            except StoreUnavailable as exc:
                _LOG.warning("task %s: lease not renewed: %s", mask_task_id(task_id), exc)

    async def finish(self, timeout: float) -> bool:
        """Server shutdown: wait up to `timeout` seconds for the tasks running here to end (their
        outcomes written, leases renewed meanwhile); True when none is left."""
        if self._supervisors and timeout > 0:
            await asyncio.wait(set(self._supervisors), timeout=timeout)
        return not self._supervisors

    async def close(self) -> None:
        """Server shutdown (after the drain and `finish`): the tasks still running here fail now —
        on every replica at once, not when their leases lapse — and their handlers are cancelled."""
        for launch in list(self._running.values()):
            record = launch.record
            if record is None or launch.job is None:
                continue
            failed = record.with_state(
                status="failed",
                last_updated_at=iso_now(),
                input_requests=None,
                status_message=WORKER_STOPPED,
                error={"code": jsonrpc.INTERNAL_ERROR, "message": WORKER_STOPPED},
            )
            with contextlib.suppress(StoreUnavailable):
                if await self.ledger.settle(failed):
                    if launch.span is not None:
                        launch.span.outcome("failed", failed.state.error)
                    await self.changed(record.task_id)
            launch.job.cancel()
        if self._cancels is not None:
            self._cancels()
            self._cancels = None


def _text_of(result: dict[str, Any]) -> str | None:
    """The first text block of a CallToolResult (a failed 2025-11-25 task's statusMessage)."""
    for block in result.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            return str(block["text"])[:MAX_STATUS_MESSAGE]
    return None
