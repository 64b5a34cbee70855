"""OpenTelemetry traces and metrics of MCP traffic, after the MCP semantic conventions
(open-telemetry/semantic-conventions-genai, `docs/gen-ai/mcp.md`); free when off.

Both sides use this module: the client driver (client/_async/client.py) and the server's
dispatchers (server/core/dispatch.py, server/legacy/session_dispatch.py). Only this module
imports `opentelemetry` (a contract), and only the API (`mcpgen-runtime[otel]`); the SDK and its
exporters are the user's choice.

Free when off: `active()` is asked once per message. While no process-wide tracer or meter
provider is configured it answers None after two dictionary lookups (OpenTelemetry not even
imported) or two attribute reads (imported, but still the API's proxy providers): no span, no
attribute dict, no clock read. Once a provider is set, the tracer and the instruments are made
once and kept (a provider is set once per process).

What is recorded (never headers: no token, no `Authorization`, no `Mcp-Param-*` value):
- a span per request and notification, CLIENT on the sending side and SERVER on the serving
  side, named `{mcp.method.name} {target}` (the tool or prompt name, the resource URI), with
  `mcp.method.name`, `jsonrpc.request.id`, `mcp.protocol.version`, `mcp.session.id` (legacy
  sessions), `gen_ai.tool.name` and `gen_ai.operation.name = execute_tool` for `tools/call`,
  `network.transport` (`tcp` for HTTP, `pipe` for stdio), `network.protocol.name = http`,
  `server.address`/`server.port` on clients; errors set status ERROR and `error.type` (the
  JSON-RPC code, `tool_error` for an `isError` result, else the exception's type) and
  `rpc.response.status_code` (the JSON-RPC code);
- the histograms `mcp.client.operation.duration`, `mcp.server.operation.duration` (seconds, the
  conventions' buckets) and, for legacy sessions, `mcp.client.session.duration` and
  `mcp.server.session.duration`;
- tool arguments and results (`gen_ai.tool.call.arguments` / `.result`) only when opted in:
  `set_capture_content(True)` or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`.
  Argument values a tool mirrors into `Mcp-Param-*` headers, and those of secret-looking names
  (`password`, `token`, `key`, ...), are masked even then (span_values.py);
- every name and value cut to a documented size (span_values.py): a peer's 4 MiB URI costs a
  queued span no more than a short one.

Propagation: the client injects its span's context into `params._meta` (`traceparent`,
`tracestate`, `baggage`) with the globally configured propagators; the server extracts it and
parents its span on it, linking the context it runs in (an HTTP server span of ASGI
instrumentation, or the request's `traceparent` header) when that is another one. A client
operation is one span across all its wire requests: the rounds of a multi-round-trip call and
retries (VER-02, HTTP-26, `retries`) are sent with the same context, so the server spans of
every round, on any replica, are its children.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._version import __version__
from .errors import RemoteError, ToolError
from .span_values import ATTRIBUTE_MAX, SPAN_NAME_MAX, captured, clip, clip_attributes, masked_arguments

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "DURATION_BUCKETS",
    "ClientSpans",
    "Otel",
    "PeerRequestSpan",
    "ServerSpan",
    "active",
    "client_peer",
    "set_capture_content",
    "set_enabled",
]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# The conventions' explicit bucket advice for the operation and session durations (seconds).
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

METHOD = "mcp.method.name"
TOOL_NAME = "gen_ai.tool.name"
PROMPT_NAME = "gen_ai.prompt.name"
RESOURCE_URI = "mcp.resource.uri"
OPERATION = "gen_ai.operation.name"
REQUEST_ID = "jsonrpc.request.id"
PROTOCOL_VERSION = "mcp.protocol.version"
SESSION_ID = "mcp.session.id"
ERROR_TYPE = "error.type"
STATUS_CODE = "rpc.response.status_code"
TRANSPORT = "network.transport"
PROTOCOL_NAME = "network.protocol.name"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ARGUMENTS = "gen_ai.tool.call.arguments"
RESULT = "gen_ai.tool.call.result"
TOOL_ERROR = "tool_error"
# Attributes that name one request or session: on spans, never on metrics (cardinality).
_SPAN_ONLY = frozenset({REQUEST_ID, SESSION_ID, RESOURCE_URI, ARGUMENTS, RESULT})
_TRANSPORTS = {"http": {TRANSPORT: "tcp", PROTOCOL_NAME: "http"}, "stdio": {TRANSPORT: "pipe"}}

_capture: bool | None = None  # None: read the environment on first use


def set_capture_content(enabled: bool) -> None:
    """Record tool arguments and results on spans (off by default: they may hold personal data)."""
    global _capture
    _capture = enabled


def capture_content() -> bool:
    global _capture
    if _capture is None:
        _capture = os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true", "yes")
    return _capture


class Otel:
    """The tracer and the instruments, made once a provider is configured."""

    __slots__ = (
        "client_duration",
        "client_session",
        "context",
        "extract",
        "inject",
        "server_duration",
        "server_session",
        "trace",
        "tracer",
    )

    def __init__(self, tracing: bool, metering: bool) -> None:
        from opentelemetry import context, metrics, propagate, trace

        self.trace = trace
        self.context = context
        self.inject = propagate.inject
        self.extract = propagate.extract
        self.tracer = trace.get_tracer("mcpgen_runtime", __version__) if tracing else None
        if metering:
            meter = metrics.get_meter("mcpgen_runtime", __version__)

            def histogram(name: str, what: str, buckets: tuple[float, ...]) -> Any:
                return meter.create_histogram(
                    name, unit="s", description=what, explicit_bucket_boundaries_advisory=buckets
                )

            self.client_duration = histogram(
                "mcp.client.operation.duration",
                "Duration of MCP requests as seen by the client",
                DURATION_BUCKETS,
            )
            self.server_duration = histogram(
                "mcp.server.operation.duration",
                "Duration of MCP requests as seen by the server",
                DURATION_BUCKETS,
            )
            self.client_session = histogram(
                "mcp.client.session.duration",
                "Duration of MCP sessions as seen by the client",
                DURATION_BUCKETS,
            )
            self.server_session = histogram(
                "mcp.server.session.duration",
                "Duration of MCP sessions as seen by the server",
                DURATION_BUCKETS,
            )
        else:
            self.client_duration = self.server_duration = None
            self.client_session = self.server_session = None


_otel: Otel | None = None
_final = False  # both providers configured: _otel never changes again
_trace_mod: Any = None
_metrics_mod: Any = None
_seen: tuple[Any, Any] = (None, None)  # the providers _probe last saw
_loaded = sys.modules.get  # bound once: `active()` runs for every message


_switched_off: tuple[Otel | None, bool] | None = None  # set_enabled(False): what to restore


def set_enabled(enabled: bool) -> None:
    """Turn this runtime's instrumentation off (and on again) while a provider stays configured
    for the rest of the program; on by default."""
    global _otel, _final, _switched_off
    if not enabled:
        if _switched_off is None:
            _switched_off = (_otel, _final)
            _otel, _final = None, True  # `active()` answers None at its first test
    elif _switched_off is not None:
        _otel, _final = _switched_off
        _switched_off = None


def active() -> Otel | None:
    """The instrumentation when a tracer or meter provider is configured, else None (cheap)."""
    if _final:
        return _otel
    if _trace_mod is None:
        if _loaded("opentelemetry.trace") is None and _loaded("opentelemetry.metrics") is None:
            return None  # nobody imported OpenTelemetry (or it is blocked), so nobody configured it
        return _probe()
    tracer_provider = _trace_mod._TRACER_PROVIDER
    meter_provider = _metrics_mod._METER_PROVIDER
    if tracer_provider is None and meter_provider is None:
        return None  # still the API's proxies: nothing would be recorded
    if tracer_provider is _seen[0] and meter_provider is _seen[1]:
        return _otel  # one of the two configured, as at the last look
    return _probe()


def _probe() -> Otel | None:
    global _otel, _final, _trace_mod, _metrics_mod, _seen
    try:
        from opentelemetry import trace
        from opentelemetry.metrics import _internal as metrics_internal
        from opentelemetry.metrics import get_meter_provider
    except ImportError:  # a broken or partial install counts as none
        return None
    # The public getters first: they load a provider named by OTEL_PYTHON_*_PROVIDER.
    tracer_provider = trace.get_tracer_provider()
    meter_provider = get_meter_provider()
    _trace_mod, _metrics_mod = trace, metrics_internal
    _seen = (trace._TRACER_PROVIDER, metrics_internal._METER_PROVIDER)
    tracing = not isinstance(tracer_provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
    metering = type(meter_provider).__name__ not in ("_ProxyMeterProvider", "NoOpMeterProvider")
    if not tracing and not metering:
        return None
    current = _otel
    if (
        current is None
        or (current.tracer is not None) != tracing
        or (current.client_duration is not None) != metering
    ):
        current = _otel = Otel(tracing, metering)
    _final = tracing and metering
    return current


# ---- what both sides record ---------------------------------------------------------------


def _target(method: str, params: Any) -> tuple[str, dict[str, Any]]:
    """The span name and the attributes the method and its params decide."""
    attributes: dict[str, Any] = {METHOD: method}
    if type(params) is not dict:
        return method, attributes
    if method == "tools/call":
        name = params.get("name")
        attributes[OPERATION] = "execute_tool"
        if type(name) is str:
            attributes[TOOL_NAME] = name
            return f"{method} {name}", attributes
    elif method == "prompts/get":
        name = params.get("name")
        if type(name) is str:
            attributes[PROMPT_NAME] = name
            return f"{method} {name}", attributes
    elif method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        uri = params.get("uri")
        if type(uri) is str:
            attributes[RESOURCE_URI] = uri
            return f"{method} {uri}", attributes
    return method, attributes


def _error_type(exc: BaseException) -> tuple[str, str | None]:
    """(`error.type`, `rpc.response.status_code`) of an exception."""
    if isinstance(exc, RemoteError):
        return str(exc.code), str(exc.code)
    if isinstance(exc, ToolError):
        return TOOL_ERROR, None
    cls = type(exc)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    ), None


class _Operation:
    """One span (when tracing) and one duration measurement (when metering)."""

    __slots__ = ("attributes", "context", "error", "histogram", "otel", "span", "start")

    def __init__(
        self,
        otel: Otel,
        kind: Any,
        name: str,
        attributes: dict[str, Any],
        histogram: Any,
        parent: Context | None,
        links: list[Any] | None = None,
    ) -> None:
        self.otel = otel
        self.attributes = attributes
        self.histogram = histogram
        self.error: tuple[str, str | None, str | None] | None = None
        self.start = time.perf_counter()
        clip_attributes(attributes)  # a peer's text, kept until the exporter takes the span
        tracer = otel.tracer
        if tracer is not None:
            if len(name) > SPAN_NAME_MAX:
                name = clip(name, SPAN_NAME_MAX)
            self.span: Span | None = tracer.start_span(
                name, context=parent, kind=kind, attributes=attributes, links=links
            )
            self.context: Context | None = otel.trace.set_span_in_context(self.span, parent)
        else:
            self.span = None
            self.context = parent

    def set(self, key: str, value: Any) -> None:
        if type(value) is str:
            value = clip(value, ATTRIBUTE_MAX)
        self.attributes[key] = value
        if self.span is not None:
            self.span.set_attribute(key, value)

    def fail(self, error_type: str, code: str | None = None, message: str | None = None) -> None:
        # The peer's words (an error code or message it sent): cut like any attribute.
        self.error = (
            clip(error_type, ATTRIBUTE_MAX),
            None if code is None else clip(code, ATTRIBUTE_MAX),
            None if message is None else clip(message, ATTRIBUTE_MAX),
        )

    def failed(self, exc: BaseException) -> None:
        error_type, code = _error_type(exc)
        self.fail(error_type, code, type(exc).__name__)

    def settle(self, response: Any, exc: BaseException | None) -> None:
        """The outcome of a request this span covers: the exception it ended with, else its response."""
        if exc is not None:
            self.failed(exc)
        elif response is not None:
            self.reply(response)

    def end(self) -> None:
        attributes = self.attributes
        error = self.error
        span = self.span
        if error is not None:
            attributes[ERROR_TYPE] = error[0]
            if error[1] is not None:
                attributes[STATUS_CODE] = error[1]
            if span is not None:
                span.set_attribute(ERROR_TYPE, error[0])
                if error[1] is not None:
                    span.set_attribute(STATUS_CODE, error[1])
                span.set_status(self.otel.trace.Status(self.otel.trace.StatusCode.ERROR, error[2]))
        if span is not None:
            span.end()
        if self.histogram is not None:
            self.histogram.record(
                time.perf_counter() - self.start,
                {k: v for k, v in attributes.items() if k not in _SPAN_ONLY},
            )

    def reply(self, response: Any) -> bool:
        """Note a JSON-RPC response; True when it ends the operation (False: an `input_required`
        round, or an error a client may still retry)."""
        if type(response) is not dict:
            return True
        error = response.get("error")
        if type(error) is dict:
            code = error.get("code")
            text = str(code)
            message = error.get("message")
            self.fail(text, text, message if type(message) is str else None)
            return False
        result = response.get("result")
        if type(result) is not dict:
            return True
        if result.get("resultType") == "input_required":
            self.error = None
            return False
        if result.get("isError") is True and self.attributes.get(METHOD) == "tools/call":
            self.fail(TOOL_ERROR)
        else:
            self.error = None
        if self.span is not None and capture_content() and OPERATION in self.attributes:
            self.span.set_attribute(RESULT, captured({k: v for k, v in result.items() if k != "_meta"}))
        return True


# ---- the client side -----------------------------------------------------------------------


def client_peer(url: str | None, stdio: bool) -> dict[str, Any]:
    """The attributes that say where a client's server is."""
    if url is None:
        return dict(_TRANSPORTS["stdio"]) if stdio else dict(_TRANSPORTS["http"])
    attributes: dict[str, Any] = dict(_TRANSPORTS["http"])
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
    meanwhile (the re-listing of XHDR-20, the `initialize` of a legacy fallback) is a child span.
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
        name, attributes = _target(method, params)
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
        op = _Operation(otel, otel.trace.SpanKind.CLIENT, name, attributes, otel.client_duration, parent)
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
        """A request failed, or the run ended with `exc`; a retry may still follow."""
        if self._stack:
            self._stack[-1][1].failed(exc)

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
        op = _Operation(otel, otel.trace.SpanKind.CLIENT, method, attributes, None, parent)
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
        name, attributes = _target(method, params)
        attributes[PROTOCOL_VERSION] = protocol_version
        if session_id:
            attributes[SESSION_ID] = session_id
        self._op = _Operation(otel, otel.trace.SpanKind.CLIENT, name, attributes, otel.client_duration, None)
        message: dict[str, Any] = {"params": dict(params)}
        _inject(otel, self._op.context, message)
        self.params: dict[str, Any] = message["params"]

    def end(self, response: Any = None, exc: BaseException | None = None) -> None:
        self._op.settle(response, exc)
        self._op.end()


# ---- the server side -----------------------------------------------------------------------


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
        name, attributes = _target(method, params)
        attributes.update(_TRANSPORTS.get(transport, ()))
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
        op = self._op = _Operation(
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
        otel.server_session.record(seconds, {PROTOCOL_VERSION: protocol_version, **_TRANSPORTS[transport]})
