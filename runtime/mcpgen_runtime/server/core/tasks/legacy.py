"""The 2025-11-25 experimental tasks, for legacy sessions of that revision
(shared/spec/2025-11-25/basic-utilities-tasks.mdx): the same tasks, records and workers as the
extension's, spoken the older way.

- `initialize` declares `tasks: {requests: {tools: {call: {}}}, cancel: {}}` (no `list`: tasks are
  found by id only), and `tools/list` shows each tool's `execution.taskSupport`.
- A `tools/call` carrying `task: {ttl}` runs its tool as a task from the start and answers
  `{"task": Task}`; a tool that supports no task refuses it, a `required` one refuses a call
  without it (both -32601: `task_parameter`).
- `tasks/get` answers the Task (`ttl`, `pollInterval`); `tasks/result` waits until the task ends and
  answers what the call would have (the CallToolResult, or its JSON-RPC error); `tasks/cancel`
  refuses an ended task (-32602) and answers the cancelled Task; `tasks/list` is not served.
- A tool result with `isError` makes the task `failed` (worker.py). Such a task cannot ask its
  client for input (channel.py): these revisions deliver input beside a pending `tasks/result`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final

from ....protocol import jsonrpc
from ....protocol.tasks import (
    CANCEL,
    GET,
    LEGACY_RELATED_TASK_KEY,
    LEGACY_RESULT,
    mask_task_id,
)
from ..handler_errors import RpcError
from .launch import LegacyStart
from .records import TaskRecord, task_id_param
from .worker import TaskEngine

__all__ = [
    "LEGACY_TASKS_SINCE",
    "LEGACY_TASK_METHODS",
    "answer_legacy_task_method",
    "legacy_task_capability",
    "task_parameter",
]

LEGACY_TASKS_SINCE: Final = "2025-11-25"
LEGACY_TASK_METHODS: Final = frozenset({GET, LEGACY_RESULT, CANCEL})
_WAIT_MAX_S = 1.0  # tasks/result re-reads the task at most this far apart


def legacy_task_capability() -> dict[str, Any]:
    """The server's `tasks` capability in a 2025-11-25 `initialize` result."""
    return {"requests": {"tools": {"call": {}}}, "cancel": {}}


def task_parameter(name: str, support: str | None, params: Mapping[str, Any]) -> LegacyStart | None:
    """How a 2025-11-25 `tools/call` runs: as a task (its `task` parameter), or inline (None);
    -32601 when the tool and the call disagree, -32602 for a malformed `task`."""
    task = params.get("task")
    if task is None:
        if support == "required":
            raise RpcError(jsonrpc.METHOD_NOT_FOUND, f"Tool {name!r} runs only as a task: send params.task")
        return None
    if support is None:
        raise RpcError(
            jsonrpc.METHOD_NOT_FOUND, f"Tool {name!r} does not run as a task: leave params.task out"
        )
    if not isinstance(task, dict):
        raise RpcError(jsonrpc.INVALID_PARAMS, "params.task must be an object")
    ttl = task.get("ttl")
    if ttl is not None and (type(ttl) is not int or ttl < 1):
        raise RpcError(jsonrpc.INVALID_PARAMS, "params.task.ttl must be a positive integer of milliseconds")
    return LegacyStart(max(ttl, 1000) if ttl is not None else None)


async def answer_legacy_task_method(
    engine: TaskEngine, method: str, params: Mapping[str, Any], owner: str | None
) -> dict[str, Any]:
    """The result of a 2025-11-25 tasks/get, tasks/result or tasks/cancel."""
    task_id = task_id_param(params)
    record = await _read(engine, task_id, owner)
    if method == GET:
        return record.state.wire(legacy=True)
    if method == CANCEL:
        if record.state.terminal:
            raise RpcError(
                jsonrpc.INVALID_PARAMS,
                f"Cannot cancel task: already in terminal status {record.state.status!r}",
            )
        await engine.cancel(record)
        return (await _read(engine, task_id, owner)).state.wire(legacy=True)
    return await _outcome(engine, record, owner)


async def _read(engine: TaskEngine, task_id: str, owner: str | None) -> TaskRecord:
    record = await engine.ledger.read(task_id, owner)
    if record is None:
        raise RpcError(jsonrpc.INVALID_PARAMS, f"Unknown task {mask_task_id(task_id)} (or it expired)")
    return record


async def _outcome(engine: TaskEngine, record: TaskRecord, owner: str | None) -> dict[str, Any]:
    """tasks/result: once the task ended, what its call would have answered."""
    delay = 0.05
    while not record.state.terminal:  # any replica may end it: read the store again, backing off
        await asyncio.sleep(delay)
        delay = min(delay * 2, _WAIT_MAX_S)
        record = await _read(engine, record.task_id, owner)
    state = record.state
    if state.result is not None:
        result = dict(state.result)
        result["_meta"] = {**result.get("_meta", {}), LEGACY_RELATED_TASK_KEY: {"taskId": state.task_id}}
        return result
    error = state.error or {"code": jsonrpc.INTERNAL_ERROR, "message": "The task was cancelled"}
    raise RpcError(
        int(error.get("code", jsonrpc.INTERNAL_ERROR)), str(error.get("message")), error.get("data")
    )
