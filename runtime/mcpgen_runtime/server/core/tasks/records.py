"""One task as the store keeps it (`TaskRecord`), the keys it lives under, and its encoding.

A task is four keys of the server's store, all expiring with the task's TTL:

    task:<id>          the live record: owner, tool, the state the worker last wrote
    task:<id>:end      the terminal record, written once (`Store.put_new`): the first of complete,
                       fail, cancel and lease lapse wins, and nothing changes it afterwards
    task:<id>:lease    the worker's proof of life, renewed every lease/3
    task:<id>:input    the log of `tasks/update` input responses the worker reads

Cancellations travel on the channel `CANCEL_CHANNEL` (the task id), task changes on
`CHANGED_CHANNEL` (listen streams on any replica read the record again).
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .... import _json
from ....protocol import jsonrpc
from ....protocol.tasks import MAX_TASK_ID_LENGTH, TaskState, parse_task
from ..handler_errors import RpcError

__all__ = [
    "CANCEL_CHANNEL",
    "CHANGED_CHANNEL",
    "TaskRecord",
    "end_key",
    "input_log",
    "lease_key",
    "live_key",
    "new_task_id",
    "task_id_param",
]

CANCEL_CHANNEL: Final = "tasks:cancel"
CHANGED_CHANNEL: Final = "tasks:changed"


def new_task_id() -> str:
    """192 random bits, URL-safe: a bearer secret. Never starting with "-", which a command line
    would take for an option (`python -m PKG task status ID`)."""
    while True:
        task_id = secrets.token_urlsafe(24)
        if not task_id.startswith("-"):
            return task_id


def live_key(task_id: str) -> str:
    return "task:" + task_id


def end_key(task_id: str) -> str:
    return f"task:{task_id}:end"


def lease_key(task_id: str) -> str:
    return f"task:{task_id}:lease"


def input_log(task_id: str) -> str:
    return f"task:{task_id}:input"


def task_id_param(params: Mapping[str, Any]) -> str:
    """`params.taskId` of a tasks/* request (-32602 unless 1 to MAX_TASK_ID_LENGTH characters)."""
    task_id = params.get("taskId")
    if type(task_id) is not str or not task_id or len(task_id) > MAX_TASK_ID_LENGTH:
        raise RpcError(
            jsonrpc.INVALID_PARAMS, f"params.taskId must be a task id (1-{MAX_TASK_ID_LENGTH} characters)"
        )
    return task_id


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """A task's owner (the principal's id; None when anonymous), tool, state and expiry."""

    owner: str | None
    tool: str
    state: TaskState
    expires_at: float  # epoch seconds: createdAt + ttlMs

    @property
    def task_id(self) -> str:
        return self.state.task_id

    def ttl_left(self) -> float:
        """Seconds until the task expires (at least a millisecond: a store TTL must be > 0)."""
        return max(0.001, self.expires_at - time.time())

    def with_state(self, **changes: Any) -> TaskRecord:
        return dataclasses.replace(self, state=dataclasses.replace(self.state, **changes))

    def encode(self) -> bytes:
        state = self.state.wire()
        # Kept whatever the status (a 2025-11-25 task fails with its isError result): wire() shows
        # each only with the status that inlines it.
        for name, value in (("result", self.state.result), ("error", self.state.error)):
            if value is not None:
                state[name] = value
        return _json.dumps({"o": self.owner, "t": self.tool, "x": self.expires_at, "s": state})

    @classmethod
    def decode(cls, raw: bytes) -> TaskRecord:
        body = _json.loads(raw)
        return cls(body["o"], body["t"], parse_task(body["s"]), float(body["x"]))
