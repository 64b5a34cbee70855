"""OpenTelemetry traces and metrics of MCP traffic, after the MCP semantic conventions
(open-telemetry/semantic-conventions-genai, `docs/gen-ai/mcp.md`); free when off.

Both sides use this package: the client driver (client/_async/client.py) and the server's
dispatchers (server/core/dispatch/, server/legacy/session_dispatch.py). Only this package
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

Tasks (the tasks extension): a task's run in the background is a span of its own (`TaskSpan`,
INTERNAL, `task {tool}`), the root of a new trace LINKED to the `tools/call` span that created it,
with `mcp.task.status` (completed, failed, cancelled, expired) and never the task id; `tasks/get`,
`tasks/update` and `tasks/cancel` get spans as other methods do (named by the method alone: the
id is a secret). On the client a plain call's wait is one `tools/call` span, its polls children of
it; a `CreateTaskResult` is never captured as a tool result.

Propagation: the client injects its span's context into `params._meta` (`traceparent`,
`tracestate`, `baggage`) with the globally configured propagators; the server extracts it and
parents its span on it, linking the context it runs in (an HTTP server span of ASGI
instrumentation, or the request's `traceparent` header) when that is another one. A client
operation is one span across all its wire requests: the rounds of a multi-round-trip call and
retries (VER-02, HTTP-26, `retries`) are sent with the same context, so the server spans of
every round, on any replica, are its children.

- `span_values.py`: what a span may hold (sizes, masked arguments)
- `attributes.py`: the conventions' attribute names; a message's target and error type
- `otel.py`: `active()`, `Otel`, `set_enabled`, content capture
- `operation.py`: one span and its histogram, for both sides
- `client_spans.py`, `server_spans.py`: each side's spans
"""

from __future__ import annotations

from .attributes import (
    ARGUMENTS,
    ERROR_TYPE,
    METHOD,
    OPERATION,
    PROMPT_NAME,
    PROTOCOL_NAME,
    PROTOCOL_VERSION,
    REQUEST_ID,
    RESOURCE_URI,
    RESULT,
    SERVER_ADDRESS,
    SERVER_PORT,
    SESSION_ID,
    STATUS_CODE,
    TOOL_ERROR,
    TOOL_NAME,
    TRANSPORT,
)
from .client_spans import ClientSpans, PeerRequestSpan, client_peer
from .otel import (
    CAPTURE_CONTENT_ENV,
    DURATION_BUCKETS,
    Otel,
    active,
    capture_content,
    set_capture_content,
    set_enabled,
)
from .server_spans import ServerSpan, TaskSpan, record_server_session

__all__ = [
    "ARGUMENTS",
    "CAPTURE_CONTENT_ENV",
    "DURATION_BUCKETS",
    "ERROR_TYPE",
    "METHOD",
    "OPERATION",
    "PROMPT_NAME",
    "PROTOCOL_NAME",
    "PROTOCOL_VERSION",
    "REQUEST_ID",
    "RESOURCE_URI",
    "RESULT",
    "SERVER_ADDRESS",
    "SERVER_PORT",
    "SESSION_ID",
    "STATUS_CODE",
    "TOOL_ERROR",
    "TOOL_NAME",
    "TRANSPORT",
    "ClientSpans",
    "Otel",
    "PeerRequestSpan",
    "ServerSpan",
    "TaskSpan",
    "active",
    "capture_content",
    "client_peer",
    "record_server_session",
    "set_capture_content",
    "set_enabled",
]
