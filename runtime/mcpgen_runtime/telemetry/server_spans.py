"""The server side: `ServerSpan` (the SERVER span of one incoming message, parented on the context
in `_meta`), `TaskSpan` (a task's run in the background) and the legacy session duration
(`record_server_session`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .attributes import (
    ARGUMENTS,
    OPERATION,
    PROTOCOL_VERSION,
    REQUEST_ID,
    SESSION_ID,
    TASK_STATUS,
    TOOL_ERROR,
    TOOL_NAME,
    TRANSPORTS,
    target,
)
from .operation import Operation
from .otel import Otel, active, capture_content
from .span_values import captured, masked_arguments

if TYPE_CHECKING:
    pass


class ServerSpan:
    """The SERVER span of one incoming request or notification: parented on the context in
    its `_meta`, linked to the one it runs in."""

    __slots__ = ("_op", "_token")

    def __init__(
        self,
        otel: Otel,
        method: str,
        request_id: Any,
        params: Any,
        *,
        transport: str,
        protocol_version: str | None = None,
        session_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        redact: Iterable[tuple[str, ...]] = (),
    ) -> None:
        name, attributes = target(method, params)
        attributes.update(TRANSPORTS.get(transport, ()))
        if protocol_version:
            attributes[PROTOCOL_VERSION] = protocol_version
        if session_id:
            attributes[SESSION_ID] = session_id
        if request_id is not None:
            attributes[REQUEST_ID] = str(request_id)
        parent = None
        links = None
        if otel.tracer is not None:
            meta = params.get("_meta") if type(params) is dict else None
            if type(meta) is dict and "traceparent" in meta:
                parent = otel.extract(meta)
            ambient = otel.trace.get_current_span().get_span_context()
            if not ambient.is_valid and headers is not None and "traceparent" in headers:
                ambient = otel.trace.get_current_span(otel.extract(headers)).get_span_context()
            if ambient.is_valid:
                if parent is None:
                    parent = otel.context.get_current()
                elif otel.trace.get_current_span(parent).get_span_context() != ambient:
                    links = [otel.trace.Link(ambient)]
        op = self._op = Operation(
            otel, otel.trace.SpanKind.SERVER, name, attributes, otel.server_duration, parent, links
        )
        self._token = otel.context.attach(op.context) if op.context is not None else None
        if op.span is not None and method == "tools/call" and capture_content() and type(params) is dict:
            op.span.set_attribute(ARGUMENTS, captured(masked_arguments(params.get("arguments"), redact)))

    def set_protocol_version(self, version: str) -> None:
        self._op.set(PROTOCOL_VERSION, version)

    def end(self, response: Any = None, exc: BaseException | None = None) -> None:
        op = self._op
        op.settle(response, exc)
        if self._token is not None:
            op.otel.context.detach(self._token)
        op.end()


class TaskSpan:
    """The INTERNAL span of a task's run in the background (tasks extension), from the
    `CreateTaskResult` to its terminal state: the root of a trace of its own (the run outlives the
    request), LINKED to the `tools/call` span that created it. `gen_ai.tool.name`, and
    `mcp.task.status` its final status; an error status when it failed (`error.type`: the
    JSON-RPC code) or completed with an `isError` result (`tool_error`). Never the task id. A
    handler that asked for the task (`ctx.run_as_task()`) runs inside it from then on."""

    __slots__ = ("_op", "_settled", "_status")

    def __init__(self, otel: Otel, tool: str) -> None:
        created_by = otel.trace.get_current_span().get_span_context()
        links = [otel.trace.Link(created_by)] if created_by.is_valid else None
        attributes: dict[str, Any] = {TOOL_NAME: tool, OPERATION: "execute_tool"}
        self._op = Operation(
            otel,
            otel.trace.SpanKind.INTERNAL,
            f"task {tool}",
            attributes,
            None,
            otel.context.Context(),
            links,
        )
        self._status = "failed"  # until an outcome says otherwise (the server stopped)
        self._settled = False

    @classmethod
    def start(cls, tool: str) -> TaskSpan | None:
        """The span of a task created now (the `tools/call` span current), or None when not tracing."""
        otel = active()
        return cls(otel, tool) if otel is not None and otel.tracer is not None else None

    def enter(self) -> None:
        """Make this span current in the calling asyncio task's context for the rest of its life
        (the task's handler, once it asked to be one: what it traces is the task's)."""
        op = self._op
        if op.context is not None:
            op.otel.context.attach(op.context)

    def outcome(self, status: str, error: Any = None, result: Any = None) -> None:
        """The task's terminal state, as written (the winner of the single-winner write; the first
        one given counts: a handler cancelled after the task failed does not make it cancelled)."""
        if self._settled:
            return
        self._settled = True
        self._status = status
        if status == "failed" and isinstance(error, dict):
            code = str(error.get("code"))
            message = error.get("message")
            self._op.fail(code, code, message if isinstance(message, str) else None)
        elif status == "completed" and isinstance(result, dict) and result.get("isError") is True:
            self._op.fail(TOOL_ERROR)

    def end(self) -> None:
        op = self._op
        op.set(TASK_STATUS, self._status)
        if self._status == "failed" and op.error is None:
            op.fail("failed")
        op.end()


def record_server_session(seconds: float, protocol_version: str, transport: str) -> None:
    """`mcp.server.session.duration` of a legacy session this process opened and ended."""
    otel = active()
    if otel is not None and otel.server_session is not None:
        otel.server_session.record(seconds, {PROTOCOL_VERSION: protocol_version, **TRANSPORTS[transport]})
