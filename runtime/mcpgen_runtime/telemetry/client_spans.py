"""The client side: `ClientSpans` (the CLIENT spans of one driver run, context injected into
`params._meta`), `PeerRequestSpan` (a legacy server's own requests), `client_peer`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .attributes import (
    ARGUMENTS,
    METHOD,
    PROTOCOL_VERSION,
    REQUEST_ID,
    SERVER_ADDRESS,
    SERVER_PORT,
    SESSION_ID,
    TRANSPORTS,
    target,
)
from .operation import Operation
from .otel import Otel, capture_content
from .span_values import captured, masked_arguments

if TYPE_CHECKING:
    from opentelemetry.context import Context


def client_peer(url: str | None, stdio: bool) -> dict[str, Any]:
    """The attributes that say where a client's server is."""
    if url is None:
        return dict(TRANSPORTS["stdio"]) if stdio else dict(TRANSPORTS["http"])
    attributes: dict[str, Any] = dict(TRANSPORTS["http"])
    try:
        parts = urlsplit(url)
        if parts.hostname:
            attributes[SERVER_ADDRESS] = parts.hostname
        port = parts.port or (443 if parts.scheme == "https" else 80 if parts.scheme == "http" else None)
        if port is not None:
            attributes[SERVER_PORT] = port
    except ValueError:
        pass
    return attributes


class ClientSpans:
    """The CLIENT spans of one driver run: an operation the user asked for, with the protocol's
    own requests it needs (a probe, `initialize`, a tool list refreshed after -32020).

    A request with the same method and target as the open span continues it while that span's
    last exchange did not end it (an `input_required` round, an error the flow retries): the
    rounds and retries of one call share one span and one trace context. Another request sent
    meanwhile (the re-listing of XHDR-20, the `initialize` of a legacy fallback, the `tasks/get`
    polls, `tasks/update` and `tasks/cancel` of a call the server made a task) is a child span:
    a plain call's whole wait on its task is one `tools/call` span with its polls inside.
    The driver makes the open span current while a request is on the wire and while the user's
    callbacks run (`enter`/`leave`): HTTP-level instrumentation and a legacy server's own requests
    nest under it.
    """

    __slots__ = ("_otel", "_parent", "_peer", "_redact", "_session", "_stack", "_version")

    def __init__(
        self,
        otel: Otel,
        peer: Mapping[str, Any],
        version: Callable[[], str],
        session: Callable[[], str | None],
        redact: Callable[[str], Iterable[tuple[str, ...]]],
    ) -> None:
        self._otel = otel
        self._peer = peer
        self._version = version
        self._session = session
        self._redact = redact
        # Open spans, outermost first: (method and span name, the span, whether it ended its exchange).
        self._stack: list[list[Any]] = []
        self._parent = otel.context.get_current()

    def request(self, message: dict[str, Any]) -> None:
        """Before a request is sent: its span (new or continued), its context into `_meta`."""
        method = message.get("method")
        params = message.get("params")
        if type(method) is not str:
            return
        name, attributes = target(method, params)
        key = (method, name)
        stack = self._stack
        while stack:
            top = stack[-1]
            if top[2]:  # finished its exchange: ends now
                stack.pop()[1].end()
            elif top[0] == key:  # the next round or a retry of the open operation
                top[2] = False
                _inject(self._otel, top[1].context, message)
                return
            else:
                break
        attributes.update(self._peer)
        version = self._version()
        if version:
            attributes[PROTOCOL_VERSION] = version
        session = self._session()
        if session:
            attributes[SESSION_ID] = session
        request_id = message.get("id")
        if request_id is not None:
            attributes[REQUEST_ID] = str(request_id)
        otel = self._otel
        parent = stack[-1][1].context if stack else self._parent
        op = Operation(otel, otel.trace.SpanKind.CLIENT, name, attributes, otel.client_duration, parent)
        stack.append([key, op, False])
        if op.span is not None and method == "tools/call" and capture_content() and type(params) is dict:
            tool = params.get("name")  # not the attribute: that may be cut
            header_paths = self._redact(tool if type(tool) is str else "")
            op.span.set_attribute(
                ARGUMENTS, captured(masked_arguments(params.get("arguments"), header_paths))
            )
        _inject(otel, op.context, message)

    def reply(self, response: Any) -> None:
        if self._stack:
            top = self._stack[-1]
            top[2] = top[1].reply(response)

    def failed(self, exc: BaseException) -> None:
        """A request failed, or the run ended with `exc`; a retry may still follow. Spans whose
        exchange ended (a task's last poll) end first: the error is the operation's around them."""
        stack = self._stack
        while len(stack) > 1 and stack[-1][2]:
            stack.pop()[1].end()
        if stack:
            stack[-1][1].failed(exc)

    def end(self) -> None:
        stack = self._stack
        while stack:
            stack.pop()[1].end()

    def enter(self) -> object | None:
        """Make the open span current (the user's input callbacks run inside it); `leave` undoes it."""
        if not self._stack or self._stack[-1][1].context is None:
            return None
        token: object = self._otel.context.attach(self._stack[-1][1].context)
        return token

    def leave(self, token: object | None) -> None:
        if token is not None:
            self._otel.context.detach(token)

    def notification(self, message: dict[str, Any]) -> None:
        """A notification about to be sent: a short CLIENT span, its context into `_meta`."""
        method = message.get("method")
        if type(method) is not str:
            return
        otel = self._otel
        attributes = {METHOD: method, **self._peer}
        parent = self._stack[-1][1].context if self._stack else self._parent
        op = Operation(otel, otel.trace.SpanKind.CLIENT, method, attributes, None, parent)
        _inject(otel, op.context, message)
        op.end()


def _inject(otel: Otel, context: Context | None, message: dict[str, Any]) -> None:
    if otel.tracer is None:
        return
    params = message.get("params")
    if params is None:
        params = message["params"] = {}
    elif type(params) is not dict:
        return
    meta = params.get("_meta")
    carrier: dict[str, Any] = dict(meta) if type(meta) is dict else {}  # _meta may be shared: a copy
    otel.inject(carrier, context=context)
    params["_meta"] = carrier


class PeerRequestSpan:
    """The CLIENT span of a request a server sends its client (legacy sessions: elicitation,
    sampling, roots), a child of the span of the call that asks; `params` carry its context."""

    __slots__ = ("_op", "params")

    def __init__(
        self, otel: Otel, method: str, params: dict[str, Any], protocol_version: str, session_id: str | None
    ) -> None:
        name, attributes = target(method, params)
        attributes[PROTOCOL_VERSION] = protocol_version
        if session_id:
            attributes[SESSION_ID] = session_id
        self._op = Operation(otel, otel.trace.SpanKind.CLIENT, name, attributes, otel.client_duration, None)
        message: dict[str, Any] = {"params": dict(params)}
        _inject(otel, self._op.context, message)
        self.params: dict[str, Any] = message["params"]

    def end(self, response: Any = None, exc: BaseException | None = None) -> None:
        self._op.settle(response, exc)
        self._op.end()
