"""`TaskLedger`: tasks read and written in the server's store (records.py names the keys).

Reads resolve what a task is now: the terminal record when there is one, else the live record,
whose pending input requests lose the keys already answered in the input log (a `tasks/update`
shows at once, before the worker reads it), and which turns `failed` — by the same single-winner
write as every terminal state — when the worker's lease has lapsed (its replica stopped).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .... import _json
from ....protocol import jsonrpc
from ....protocol.tasks import iso_now, mask_task_id
from ...store import Store
from ...store.base import MAX_LOG_LENGTH
from .records import TaskRecord, end_key, input_log, lease_key, live_key

__all__ = ["WORKER_STOPPED", "TaskLedger"]

_LOG = logging.getLogger("mcpgen.server")

WORKER_STOPPED = "the server running this task stopped before it finished"
_MAX_ANSWERS = 1000  # tasks/update entries kept per task (MAX_LOG_LENGTH bounds any log)


class TaskLedger:
    """The task records of one server in its store; `lease_s` is how long a worker's lease lasts."""

    __slots__ = ("lease_s", "store")

    def __init__(self, store: Store, lease_s: float) -> None:
        self.store = store
        self.lease_s = lease_s

    async def create(self, record: TaskRecord) -> None:
        """Durable before it returns: the lease first, so no reader ever sees a task without one."""
        await self.renew(record.task_id)
        await self.store.put(live_key(record.task_id), record.encode(), record.ttl_left())

    async def renew(self, task_id: str) -> None:
        await self.store.put(lease_key(task_id), b"1", self.lease_s)

    async def write(self, record: TaskRecord) -> None:
        """A non-terminal state (status message, input requests); readers prefer the end record."""
        await self.store.put(live_key(record.task_id), record.encode(), record.ttl_left())

    async def settle(self, record: TaskRecord) -> bool:
        """Write the terminal state; True when this write won (nothing had ended the task before)."""
        return await self.store.put_new(end_key(record.task_id), record.encode(), record.ttl_left())

    async def read(self, task_id: str, owner: str | None) -> TaskRecord | None:
        """The task as it is now, or None when unknown, expired or another principal's. Its three
        keys are read in one step (a `tasks/get` poll costs one store round trip)."""
        keys = (end_key(task_id), live_key(task_id), lease_key(task_id))
        raw, live, lease = await self.store.get_many(keys)
        if raw is None:
            if live is None:
                return None
            record = TaskRecord.decode(live)
            if record.owner != owner:
                return None
            if lease is None:
                return await self._lapsed(record)
            if record.state.status == "input_required":
                return await self._without_answered(record)
            return record
        record = TaskRecord.decode(raw)
        return record if record.owner == owner else None

    async def _lapsed(self, record: TaskRecord) -> TaskRecord | None:
        failed = record.with_state(
            status="failed",
            last_updated_at=iso_now(),
            status_message=WORKER_STOPPED,
            error={"code": jsonrpc.INTERNAL_ERROR, "message": WORKER_STOPPED},
            input_requests=None,
        )
        if await self.settle(failed):
            _LOG.warning("task %s failed: its worker's lease lapsed", mask_task_id(record.task_id))
            return failed
        raw = await self.store.get(end_key(record.task_id))  # another writer ended it first
        return TaskRecord.decode(raw) if raw is not None else None

    async def _without_answered(self, record: TaskRecord) -> TaskRecord:
        pending = dict(record.state.input_requests or {})
        for key in await self.answered(record.task_id):
            pending.pop(key, None)
        if len(pending) == len(record.state.input_requests or {}):
            return record
        if pending:
            return record.with_state(input_requests=pending)
        return record.with_state(status="working", input_requests=None)

    async def answered(self, task_id: str) -> set[str]:
        """The input request keys some `tasks/update` has answered."""
        keys: set[str] = set()
        for _, data in await self.store.read(input_log(task_id), 0, count=MAX_LOG_LENGTH):
            keys.update(_json.loads(data))
        return keys

    async def answer(self, record: TaskRecord, responses: Mapping[str, Any]) -> None:
        await self.store.append(
            input_log(record.task_id), _json.dumps(responses), max_len=_MAX_ANSWERS, ttl_s=record.ttl_left()
        )

    async def answers(self, task_id: str, after: int, block_s: float) -> list[tuple[int, dict[str, Any]]]:
        """Input responses appended after position `after`, waiting up to `block_s` for the next."""
        entries = await self.store.read(input_log(task_id), after, block_s=block_s)
        return [(position, _json.loads(data)) for position, data in entries]

    async def purge(self, task_id: str) -> None:
        for key in (end_key(task_id), live_key(task_id), lease_key(task_id), input_log(task_id)):
            await self.store.delete(key)
