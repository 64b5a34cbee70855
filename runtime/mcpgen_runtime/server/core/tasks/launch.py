"""`Launch`: one tools/call that may become a task — the hooks its `ToolContext` calls
(`run_as_task`, `set_status`: context.py's `TaskHooks`), the decision the dispatcher waits for (the
call finished, or it was promoted), and, once it is a task, its record and serialised writes.

`TaskEngine` (worker.py) makes one per call from a client that declared the extension and does
the rest: the durable creation, supervision, cancellation and the outcome.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, NamedTuple, Protocol

from ....protocol.tasks import MAX_STATUS_MESSAGE, TaskState, iso_now, mask_task_id
from ....telemetry import TaskSpan
from ...store import StoreUnavailable
from ..context import ToolContext
from .channel import TaskChannel
from .ledger import TaskLedger
from .records import TaskRecord

__all__ = ["CallBody", "Engine", "Launch", "LegacyStart", "TaskCreated", "decide"]

_LOG = logging.getLogger("mcpgen.server")

CallBody = Coroutine[Any, Any, dict[str, Any]]


class Engine(Protocol):
    """What a launch needs of its `TaskEngine`."""

    ledger: TaskLedger

    def admit(self, owner: str | None) -> bool:
        """Whether `owner` may start one more task in this process."""

    async def changed(self, task_id: str) -> None:
        """Announce a change of the task to listen streams on every replica."""


class TaskCreated(NamedTuple):
    """What `TaskEngine.run` returns when the call became a task: its first state (the
    CreateTaskResult's body in either era's spelling)."""

    state: TaskState


class LegacyStart(NamedTuple):
    """A 2025-11-25 `tools/call` with a `task` parameter: a task from the start, which cannot ask
    its client for input (those revisions' input travels beside tasks/result)."""

    ttl_ms: int | None


class Launch:
    """One call that may become a task: the context's `TaskHooks` (context.py) and the worker's
    view of it once it is one."""

    __slots__ = (
        "_write_lock",
        "cancelled",
        "channel",
        "created",
        "ctx",
        "decision",
        "engine",
        "job",
        "legacy",
        "owner",
        "promoted",
        "record",
        "settings",
        "span",
        "tool",
    )

    def __init__(self, engine: Engine, ctx: ToolContext, tool: str, owner: str | None) -> None:
        # Made for every call from a client that declared the extension: futures and the lock only
        # once the call becomes a task.
        self.engine = engine
        self.ctx = ctx
        self.tool = tool
        self.owner = owner
        self.decision: asyncio.Future[None] | None = None  # the call finished, or was promoted
        self.created: asyncio.Future[bool] | None = None  # the task's record is durable
        self.promoted = False
        self.cancelled = False  # a tasks/cancel ended it
        self.settings: tuple[int | None, int | None, str | None] = (None, None, None)
        self.job: asyncio.Task[dict[str, Any]] | None = None
        self.record: TaskRecord | None = None
        self.channel: TaskChannel | None = None
        self.legacy = False  # a 2025-11-25 task: an isError result makes it failed
        self.span: TaskSpan | None = None  # its run in the background, when tracing
        self._write_lock: asyncio.Lock | None = None

    async def drive(self, body: CallBody) -> dict[str, Any]:
        """The job: the whole call; its end decides the request unless a promotion did first."""
        try:
            return await body
        finally:
            decide(self.decision)

    # ---- TaskHooks (what ToolContext calls) ----------------------------------------------------

    @property
    def detached(self) -> bool:
        return self.record is not None

    async def promote(
        self, ttl_ms: int | None, poll_interval_ms: int | None, status_message: str | None
    ) -> bool:
        if not self.promoted and not self.mark(ttl_ms, poll_interval_ms, status_message):
            return False
        assert self.created is not None
        created = await asyncio.shield(self.created)
        if created and self.span is not None and asyncio.current_task() is self.job:
            # The handler asked: its own spans from here on are the task's (the job's context is
            # its own and ends with it). A marked tool's promotion happens outside the handler.
            self.span.enter()
        return created

    def mark(self, ttl_ms: int | None, poll_interval_ms: int | None, status_message: str | None) -> bool:
        """Decide that the call becomes a task (False past the in-flight limit: it stays inline)."""
        decision = self.decision
        if decision is None or decision.done() or not self.engine.admit(self.owner):
            return False
        self.promoted = True
        self.settings = (ttl_ms, poll_interval_ms, status_message or self.settings[2])
        self.created = asyncio.get_running_loop().create_future()
        self._write_lock = asyncio.Lock()
        decision.set_result(None)
        return True

    async def set_status(self, message: str) -> None:
        message = message[:MAX_STATUS_MESSAGE]
        record = self.record
        if record is None:  # not a task (yet): the first statusMessage if it becomes one
            ttl_ms, poll_ms, _ = self.settings
            self.settings = (ttl_ms, poll_ms, message)
            return
        self.record = record.with_state(status_message=message)
        await self.publish()

    # ---- the record ------------------------------------------------------------------------

    async def publish(self) -> None:
        """Write the task's current state (status message, pending input) as one snapshot; writes
        are serialised so that a later state never lands before an earlier one."""
        record = self.record
        if record is None or self._write_lock is None:
            return
        async with self._write_lock:
            record = self.record
            assert record is not None
            pending = dict(self.channel.pending) if self.channel is not None else {}
            record = self.record = record.with_state(
                status="input_required" if pending else "working",
                input_requests=pending or None,
                last_updated_at=iso_now(),
            )
            try:
                await self.engine.ledger.write(record)
            except StoreUnavailable as exc:
                _LOG.warning("task %s: state not written: %s", mask_task_id(record.task_id), exc)
                return
            await self.engine.changed(record.task_id)


def decide(decision: asyncio.Future[None] | None) -> None:
    if decision is not None and not decision.done():
        decision.set_result(None)
