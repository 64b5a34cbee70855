"""The exceptions of handlers: those a handler may raise to shape its answer, and `ClientRequestError`,
which its asks to the client may raise (re-exported by `context` and the package)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...protocol import jsonrpc
from ...protocol.tasks import EXTENSION, missing_tasks_capability

__all__ = [
    "ClientCapabilityRequired",
    "ClientRequestError",
    "RpcError",
    "ToolExecutionError",
    "status_for_code",
    "tasks_extension_required",
]


class ToolExecutionError(Exception):
    """Raise from a handler to report a failure the model can act on: an `isError: true` result
    whose text is the exception message (TOOLS-22). Keep the message free of secrets."""


class ClientRequestError(ToolExecutionError):
    """A request the server sent to the client in a legacy session (`ctx.elicit`, `ctx.sample`,
    `ctx.list_roots`) got no usable answer: the client answered with an error or a malformed
    result, did not answer in time, too many requests were already waiting, or the session
    ended. Uncaught in a tool, it becomes an `isError: true` result with this message."""


class RpcError(Exception):
    """Raise to answer with a JSON-RPC error instead of a tool result (protocol-level failures only).

    Use only codes the specification defines, with their meaning (ERR-03).
    """

    def __init__(self, code: int, message: str, data: Any = None, *, http_status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status if http_status is not None else status_for_code(code)


class ClientCapabilityRequired(RpcError):
    """The request needs a client capability it did not declare: `-32021` with
    `data.requiredCapabilities`, HTTP 400 (BASE-35, BASE-36)."""

    def __init__(self, required: Mapping[str, Any]) -> None:
        names = ", ".join(sorted(required))
        super().__init__(
            jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY,
            f"This request requires the client capabilities: {names}",
            {"requiredCapabilities": dict(required)},
            http_status=400,
        )


def tasks_extension_required(what: str) -> ClientCapabilityRequired:
    """-32021 for a request that needs the tasks extension in its client capabilities (`what`
    names the request: a task-only tool, a tasks/* method, a listen filter's taskIds)."""
    error = ClientCapabilityRequired(missing_tasks_capability()["requiredCapabilities"])
    error.message = f"{what} needs the {EXTENSION} extension in the request's client capabilities"
    error.args = (error.message,)
    return error


def status_for_code(code: int) -> int:
    """HTTP status for a JSON-RPC error code (404 for -32601 per HDR-05; ERR-08 codes are 400)."""
    if code == jsonrpc.METHOD_NOT_FOUND:
        return 404
    if code == jsonrpc.INTERNAL_ERROR:
        return 500
    return 400
