"""The tasks extension (`io.modelcontextprotocol/tasks`) without I/O: what both sides speak.

Modern (2026-07-28, shared/spec/extensions/tasks.mdx): a client that lists the extension under
`_meta["io.modelcontextprotocol/clientCapabilities"].extensions` on a `tools/call` may get a
`CreateTaskResult` (`resultType: "task"`, the task's fields at the top level) instead of the tool's
result; it then polls `tasks/get` (the `DetailedTask`: `result` once `completed`, `error` once
`failed`, `inputRequests` while `input_required`), answers input with `tasks/update`
(`inputResponses`) and cancels with `tasks/cancel`. `tasks/get`, `tasks/update` and `tasks/cancel`
carry `Mcp-Name: <taskId>` on HTTP. Nothing task-related is a capability except the extension.

Legacy (2025-11-25, shared/spec/2025-11-25/basic-utilities-tasks.mdx): the `tasks` capability
(`tasks.requests.tools.call`), a `task: {ttl}` request parameter, a `CreateTaskResult` holding
`{"task": {...}}` with `ttl` / `pollInterval`, `tasks/result` (blocks until terminal, then the
request's own result or error), `tasks/list`, and tools' `execution.taskSupport`. Revisions before
2025-11-25 have no tasks.

`TaskState` is one snapshot of a task in either spelling; `parse_task` reads (and bounds) one from a
peer, `TaskState.wire` writes one. Task ids are bearer secrets of their principal: `mask_task_id`
is how any message shows one.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..errors import ProtocolError

__all__ = [
    "CANCEL",
    "CREATE_TASK_RESULT",
    "EXTENSION",
    "GET",
    "LEGACY_LIST",
    "LEGACY_RELATED_TASK_KEY",
    "LEGACY_RESULT",
    "LEGACY_STATUS_NOTIFICATION",
    "MAX_STATUS_MESSAGE",
    "MAX_TASK_ID_LENGTH",
    "NOTIFICATION",
    "STATUSES",
    "TASK_METHODS",
    "TERMINAL",
    "UPDATE",
    "TaskState",
    "TaskStatus",
    "declares_tasks",
    "iso_now",
    "mask_task_id",
    "missing_tasks_capability",
    "parse_task",
    "with_tasks_extension",
]

EXTENSION: Final = "io.modelcontextprotocol/tasks"
CREATE_TASK_RESULT: Final = "task"  # the resultType of a CreateTaskResult

GET: Final = "tasks/get"
UPDATE: Final = "tasks/update"
CANCEL: Final = "tasks/cancel"
NOTIFICATION: Final = "notifications/tasks"
TASK_METHODS: Final = frozenset({GET, UPDATE, CANCEL})
# 2025-11-25 only (removed by the extension: a modern server answers them -32601).
LEGACY_RESULT: Final = "tasks/result"
LEGACY_LIST: Final = "tasks/list"
LEGACY_STATUS_NOTIFICATION: Final = "notifications/tasks/status"
LEGACY_RELATED_TASK_KEY: Final = "io.modelcontextprotocol/related-task"

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
STATUSES: Final = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})

# What either side accepts from its peer (longer is a protocol error, never truncated silently).
MAX_TASK_ID_LENGTH: Final = 256
MAX_STATUS_MESSAGE: Final = 4096  # characters; longer messages are cut (they are display text)
_MAX_TIMESTAMP = 64
_MAX_MS = 10 * 365 * 24 * 3600 * 1000  # ten years: any ttlMs / pollIntervalMs beyond is nonsense


def declares_tasks(capabilities: Mapping[str, Any] | None) -> bool:
    """Whether a (per-request or session) capabilities object lists the extension."""
    if not isinstance(capabilities, Mapping):
        return False
    extensions = capabilities.get("extensions")
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)


def with_tasks_extension(capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """`capabilities` with the extension added under `extensions` (a new dict; the input is kept)."""
    merged = dict(capabilities)
    extensions = merged.get("extensions")
    merged["extensions"] = {**(extensions if isinstance(extensions, Mapping) else {}), EXTENSION: {}}
    return merged


def missing_tasks_capability() -> dict[str, Any]:
    """The `data` of the -32021 error a server sends when it needs the extension."""
    return {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


def mask_task_id(task_id: str | None) -> str:
    """How a task id appears in any message or log line: its first 4 characters and its length
    (ids are bearer secrets; 4 characters of ≥ 128 random bits leave the rest unguessable)."""
    if task_id is None:
        return "<no task>"
    return f"{task_id[:4]}…({len(task_id)} chars)"


def iso_now() -> str:
    """The current UTC time as the ISO 8601 string tasks carry (milliseconds, `Z`)."""
    now = datetime.datetime.now(datetime.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class TaskState:
    """One snapshot of a task (a `DetailedTask`), in either era's spelling on the wire."""

    task_id: str
    status: TaskStatus
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    result: dict[str, Any] | None = None  # completed: the request's own result
    error: dict[str, Any] | None = None  # failed: the JSON-RPC error (code, message, data)
    input_requests: dict[str, Any] | None = field(default=None)  # input_required: key -> request

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def wire(self, *, result_type: str | None = None, legacy: bool = False) -> dict[str, Any]:
        """The task as a result or notification body.

        Modern: the `DetailedTask` fields flat (with `resultType` when given: "task" for a
        CreateTaskResult, "complete" for tasks/get). Legacy: the 2025-11-25 `Task` (`ttl`,
        `pollInterval`; never `result`/`error`/`inputRequests`, which travel elsewhere there)."""
        body: dict[str, Any] = {}
        if result_type is not None:
            body["resultType"] = result_type
        body["taskId"] = self.task_id
        body["status"] = self.status
        if self.status_message is not None:
            body["statusMessage"] = self.status_message
        body["createdAt"] = self.created_at
        body["lastUpdatedAt"] = self.last_updated_at
        if legacy:
            body["ttl"] = self.ttl_ms
            if self.poll_interval_ms is not None:
                body["pollInterval"] = self.poll_interval_ms
            return body
        body["ttlMs"] = self.ttl_ms
        if self.poll_interval_ms is not None:
            body["pollIntervalMs"] = self.poll_interval_ms
        if self.status == "completed" and self.result is not None:
            body["result"] = self.result
        elif self.status == "failed" and self.error is not None:
            body["error"] = self.error
        elif self.status == "input_required" and self.input_requests:
            body["inputRequests"] = self.input_requests
        return body


def _milliseconds(body: Mapping[str, Any], name: str, *, nullable: bool) -> int | None:
    value = body.get(name)
    if value is None:
        if nullable or name not in body:
            return None
        raise ProtocolError(f"task {name} must be an integer, not null")
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is not int or not 0 <= value <= _MAX_MS:
        raise ProtocolError(f"task {name} must be a non-negative integer of milliseconds: {value!r:.40}")
    return value


def _text(body: Mapping[str, Any], name: str, limit: int, *, required: bool) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"task {name} must be a string: {value!r:.40}")
    if len(value) > limit:
        if name == "statusMessage":
            return value[:limit]
        raise ProtocolError(f"task {name} is longer than {limit} characters")
    return value


def parse_task(body: Any, *, legacy: bool = False) -> TaskState:
    """A task from a peer's CreateTaskResult, tasks/get result or task notification.

    Modern bodies are flat; a legacy CreateTaskResult nests the task under `task` (accepted here
    too). Bounded: an id over `MAX_TASK_ID_LENGTH`, an unknown status, a non-object `result`,
    `error` or `inputRequests`, or a negative or absurd duration is a `ProtocolError`."""
    if not isinstance(body, Mapping):
        raise ProtocolError(f"a task must be an object: {body!r:.100}")
    if legacy and isinstance(body.get("task"), Mapping):
        body = body["task"]
    task_id = _text(body, "taskId", MAX_TASK_ID_LENGTH, required=True)
    assert task_id is not None
    if not task_id:
        raise ProtocolError("task taskId is empty")
    status = body.get("status")
    if status not in STATUSES:
        raise ProtocolError(f"unknown task status {status!r:.40}")
    created = _text(body, "createdAt", _MAX_TIMESTAMP, required=False) or ""
    updated = _text(body, "lastUpdatedAt", _MAX_TIMESTAMP, required=False) or created
    ttl_name, poll_name = ("ttl", "pollInterval") if legacy else ("ttlMs", "pollIntervalMs")
    objects: dict[str, dict[str, Any] | None] = {}
    for name in ("result", "error", "inputRequests"):
        value = body.get(name)
        if value is not None and not isinstance(value, dict):
            raise ProtocolError(f"task {name} must be an object")
        objects[name] = value
    return TaskState(
        task_id=task_id,
        status=status,
        created_at=created,
        last_updated_at=updated,
        ttl_ms=_milliseconds(body, ttl_name, nullable=True),
        poll_interval_ms=_milliseconds(body, poll_name, nullable=True),
        status_message=_text(body, "statusMessage", MAX_STATUS_MESSAGE, required=False),
        result=objects["result"],
        error=objects["error"],
        input_requests=objects["inputRequests"],
    )
