"""`tasks/get`, `tasks/update` and `tasks/cancel` (the router sends them here).

Each needs the extension in the request's client capabilities (-32021 otherwise, before anything
else) and a `taskId` the caller's principal owns: an unknown, expired or another principal's id is
-32602 alike. `Mcp-Name` equals `params.taskId` (header_checks.py, -32020). `tasks/update` and
`tasks/cancel` answer with an empty acknowledgement (`tasks/cancel` also on a finished task).
"""

from __future__ import annotations

from typing import Any

from .... import _json
from ....protocol import jsonrpc
from ....protocol.tasks import (
    CANCEL,
    GET,
    UPDATE,
    declares_tasks,
    mask_task_id,
)
from ..handler_errors import RpcError, tasks_extension_required
from ..input_requests import check_input_responses
from .records import TaskRecord, task_id_param
from .worker import TaskEngine

__all__ = ["answer_task_method"]


async def answer_task_method(
    engine: TaskEngine,
    method: str,
    params: dict[str, Any],
    capabilities: dict[str, Any],
    owner: str | None,
) -> dict[str, Any]:
    """The result of one tasks/* request (`resultType` included; the caller adds `_meta`)."""
    if not declares_tasks(capabilities):
        raise tasks_extension_required(method)
    task_id = task_id_param(params)
    responses: dict[str, Any] | None = None
    if method == UPDATE:
        responses = dict(check_input_responses(params.get("inputResponses")))
        size = len(_json.dumps(responses))
        limit = engine.options.max_input_bytes
        if size > limit:
            raise RpcError(
                jsonrpc.INVALID_PARAMS, f"params.inputResponses is {size} bytes; at most {limit} are accepted"
            )
    record = await engine.ledger.read(task_id, owner)
    if record is None:
        raise RpcError(jsonrpc.INVALID_PARAMS, f"Unknown task {mask_task_id(task_id)} (or it expired)")
    if method == GET:
        return record.state.wire(result_type=jsonrpc.RESULT_COMPLETE)
    if method == CANCEL:
        if not record.state.terminal:
            await engine.cancel(record)
    elif responses is not None:
        await _deliver(engine, record, responses)
    return {"resultType": jsonrpc.RESULT_COMPLETE}


async def _deliver(engine: TaskEngine, record: TaskRecord, responses: dict[str, Any]) -> None:
    """Answers to the requests outstanding now; others (never asked, already answered) are ignored."""
    outstanding = record.state.input_requests if record.state.status == "input_required" else None
    if not outstanding:
        return
    chosen = {key: value for key, value in responses.items() if key in outstanding}
    if chosen:
        await engine.ledger.answer(record, chosen)
        await engine.changed(record.task_id)
