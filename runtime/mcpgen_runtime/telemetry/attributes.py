"""The attribute names of the MCP semantic conventions, and what both sides read off a message:
its target (`{method} {target}` span names) and the `error.type` of a failure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import RemoteError, ToolError

if TYPE_CHECKING:
    pass


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
# A task's background run (tasks extension): its final status (completed, failed, cancelled, expired).
# Never the task id: a bearer secret.
TASK_STATUS = "mcp.task.status"
# Attributes that name one request or session: on spans, never on metrics (cardinality).
SPAN_ONLY = frozenset({REQUEST_ID, SESSION_ID, RESOURCE_URI, ARGUMENTS, RESULT})
TRANSPORTS = {"http": {TRANSPORT: "tcp", PROTOCOL_NAME: "http"}, "stdio": {TRANSPORT: "pipe"}}


def target(method: str, params: Any) -> tuple[str, dict[str, Any]]:
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


def classify_error(exc: BaseException) -> tuple[str, str | None]:
    """(`error.type`, `rpc.response.status_code`) of an exception."""
    if isinstance(exc, RemoteError):
        return str(exc.code), str(exc.code)
    if isinstance(exc, ToolError):
        return TOOL_ERROR, None
    cls = type(exc)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    ), None
