"""tools/call's check chain, from the tool's name to its shaped result (the router has
checked the envelope, `_meta` and the standard headers: router.py).

     tool known (-32602, TOOLS-22) -> rate limit (isError, SEC-03) -> Mcp-Param-* (-32020, XHDR-22..25)
  -> arguments (isError, SEC-01; XHDR-07 integers) -> input model -> inputResponses / requestState
  (rounds.py; only when present) -> handler -> result shaped (results.py)

A client that declared the tasks extension may get a `CreateTaskResult` instead (tasks/worker.py):
a tool whose `execution.taskSupport` is "required" refuses other clients with -32021 before
anything else runs.

A failing tool is an isError result the model can read; a protocol fault raises `RpcError`.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from typing import Any, NamedTuple

from pydantic import ValidationError

from ....pointers import first_error
from ....protocol import jsonrpc
from ....protocol.tasks import CREATE_TASK_RESULT, declares_tasks
from ....protocol.xheader import MAX_SAFE_INTEGER, extract
from ..bearer_auth import principal_id
from ..catalog import ServedTool
from ..config import IncomingRequest
from ..context import RpcError, ToolContext, ToolExecutionError
from ..handler_errors import tasks_extension_required
from ..header_checks import check_param_headers
from ..input_requests import InputRequired
from ..replicas import bucket_key
from ..results import error_result, rate_limited_result, shape_result
from ..tasks.launch import LegacyStart, TaskCreated
from ..tasks.legacy import LEGACY_TASKS_SINCE, task_parameter
from .rounds import end_round, redeem_round
from .served import ServedSet

__all__ = ["NO_ARGS", "CheckedCall", "call_tool"]

_LOG = logging.getLogger("mcpgen.server")

NO_ARGS: dict[str, Any] = {}  # params or arguments left out (shared, never mutated)


class CheckedCall(NamedTuple):
    """What a request brings to the tool and method paths besides its id and params, once its
    envelope is checked: the router's from `_meta`, a legacy session's from its handshake."""

    meta: dict[str, Any]
    version: str
    capabilities: dict[str, Any]
    request: IncomingRequest


async def call_tool(
    server: ServedSet,
    id_: jsonrpc.RequestId,
    params: dict[str, Any],
    checked: CheckedCall,
) -> dict[str, Any]:
    request = checked.request
    name = params.get("name")
    if type(name) is not str:
        raise RpcError(jsonrpc.INVALID_PARAMS, "params.name must be a string")
    tool = server._tools.get(name)
    if tool is None:
        raise RpcError(jsonrpc.INVALID_PARAMS, f"Unknown tool: {name}")  # TOOLS-22
    legacy_task: LegacyStart | None = None
    if request.channel is not None:  # a legacy session: the 2025-11-25 `task` parameter, or none
        if checked.version >= LEGACY_TASKS_SINCE:
            legacy_task = task_parameter(name, tool.task_support, params)
        elif tool.task_support == "required":
            raise RpcError(jsonrpc.METHOD_NOT_FOUND, f"Tool {name!r} runs only as a task (MCP 2025-11-25 on)")
    elif tool.task_support == "required" and not declares_tasks(checked.capabilities):
        raise tasks_extension_required(f"Tool {name!r} runs only as a task: it")
    if server._limiter is not None:
        wait = server._limiter.take(_caller_key(server, request))
        if wait:
            return rate_limited_result(name, wait, server._result_meta)
    elif server._shared_limit is not None:
        limit = server._shared_limit
        wait = await server._store.take_token(
            bucket_key(server.config.auth, request),
            rate=limit.rate,
            burst=limit.burst,
            ttl_s=limit.burst / limit.rate + 1.0,
        )
        if wait:
            return rate_limited_result(name, wait, server._result_meta)
    arguments = params.get("arguments")
    if arguments is None:
        arguments = NO_ARGS
    elif type(arguments) is not dict:
        raise RpcError(jsonrpc.INVALID_PARAMS, "params.arguments must be an object")
    if (
        request.headers is not None and tool.header_params and request.channel is None
    ):  # legacy: no Mcp-Param-*
        problem = check_param_headers(tool.header_params, arguments, request.headers)
        if problem is not None:
            raise RpcError(jsonrpc.HEADER_MISMATCH, problem)

    issue = tool.validate_input(arguments)  # SEC-01
    if issue is not None:
        return error_result(f"Invalid arguments for tool {name!r} {issue.describe()}", server._result_meta)
    for path in tool.integer_paths:  # XHDR-07: header-mirrored integers must survive the trip
        value = extract(arguments, path)
        if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
            pointer = "/" + "/".join(path)
            return error_result(
                f"Invalid arguments for tool {name!r} at {pointer}: integer outside ±(2^53-1)",
                server._result_meta,
            )
    args: Any = arguments
    if tool.models is not None:  # a generated package's models: imported on the first call
        tool.resolve()
    if tool.input_model is not None:
        try:
            parse = tool.parse_input
            if parse is None:
                # Generated models defer building their validator (fast imports): the first
                # call builds it; later calls skip model_validate's Python wrapper. Lax: the
                # models are strict for Python callers, but these are JSON values the schema
                # has already passed (arrays become tuples).
                args = tool.input_model.model_validate(arguments, strict=False)
                tool.parse_input = tool.input_model.__pydantic_validator__.validate_python
            else:
                args = parse(arguments, strict=False)
        except ValidationError as exc:
            pointer, why = first_error(exc, arguments)
            return error_result(
                f"Invalid arguments for tool {name!r} at {pointer}: {why}", server._result_meta
            )

    ctx = ToolContext._for_request(
        request,
        request_id=id_,
        method="tools/call",
        meta=checked.meta,
        protocol_version=checked.version,
        client_capabilities=checked.capabilities,
        progress_interval=server._progress_interval,
    )
    ctx.tool_name = name
    ctx._task = None
    if "inputResponses" in params or "requestState" in params:  # an MRTR retry: the slow path
        await redeem_round(server, ctx, "tools/call", params, request)
    body = _answer(server, tool, name, args, ctx, params, request)
    if legacy_task is not None:
        owner = principal_id(server.config.auth, request.principal)
        outcome = await server._tasks.run(body, ctx, tool=name, owner=owner, marked=True, legacy=legacy_task)
        assert isinstance(outcome, TaskCreated)
        return {"task": outcome.state.wire(legacy=True)}
    if request.channel is None and declares_tasks(checked.capabilities):  # it may become a task
        owner = principal_id(server.config.auth, request.principal)
        outcome = await server._tasks.run(
            body, ctx, tool=name, owner=owner, marked=tool.task_support is not None
        )
        if isinstance(outcome, TaskCreated):
            return outcome.state.wire(result_type=CREATE_TASK_RESULT)
        return outcome
    return await body


async def _answer(
    server: ServedSet,
    tool: ServedTool,
    name: str,
    args: Any,
    ctx: ToolContext,
    params: dict[str, Any],
    request: IncomingRequest,
) -> dict[str, Any]:
    """The handler's value or exception as tools/call's result (an isError result for a failing
    tool, an InputRequiredResult ending a round); `RpcError` propagates. A task runs it whole."""
    try:
        value = await tool.handler(args, ctx)
    except InputRequired as ask:
        ended = end_round(
            server,
            ask,
            "tools/call",
            params,
            request,
            f"tool {name!r}",
            single_use=name in server._single_use_tools,
        )
        if ended is None:
            return error_result(
                f"Tool {name!r} failed with an internal error (requestState)", server._result_meta
            )
        return ended
    except ToolExecutionError as exc:
        return error_result(str(exc) or f"Tool {name!r} failed", server._result_meta)
    except NotImplementedError:
        return error_result(f"Tool {name!r} is not implemented", server._result_meta)
    except RpcError:
        raise
    except Exception as exc:
        # Details stay in the server log; the model gets a short, safe message (SEC-04).
        _LOG.exception("tool %r raised", name)
        return error_result(
            f"Tool {name!r} failed with an internal error ({type(exc).__name__})", server._result_meta
        )
    finally:
        ctx.close()
    return shape_result(tool, value, server._result_meta)


def _caller_key(server: ServedSet, request: IncomingRequest) -> Hashable:
    principal = request.principal
    if principal is not None:
        return ("principal", principal_id(server.config.auth, principal))
    return ("peer", request.peer)
