"""The server side: `ServerSpan` (the SERVER span of one incoming message, parented on the context
in `_meta`) and the legacy session duration (`record_server_session`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .attributes import ARGUMENTS, PROTOCOL_VERSION, REQUEST_ID, SESSION_ID, TRANSPORTS, target
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


def record_server_session(seconds: float, protocol_version: str, transport: str) -> None:
    """`mcp.server.session.duration` of a legacy session this process opened and ended."""
    otel = active()
    if otel is not None and otel.server_session is not None:
        otel.server_session.record(seconds, {PROTOCOL_VERSION: protocol_version, **TRANSPORTS[transport]})
