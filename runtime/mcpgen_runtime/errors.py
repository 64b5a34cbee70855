"""Runtime exception tree.

    McpRuntimeError
      TransportError                  the bytes did not get there or back
        ConnectError                  could not reach the server / start the process
        RequestTimeoutError           no response in time
        ServerExitedError             a stdio server process ended (exit code, stderr tail)
        HttpStatusError               an HTTP status without a JSON-RPC body
        ResponseLostError             a response stream ended before the response (HTTP-26)
      AuthorizationError              OAuth login failed, or a protected server refused the token (401/403)
      ProtocolError                   the peer broke JSON-RPC/MCP framing (bad JSON, id mismatch,
                                      unknown resultType)
        ResponseTooLargeError         a response, SSE event or stdio line over the client's size limit
      RemoteError                     a JSON-RPC error response: code, message, data
        HeaderMismatchError           -32020
        MissingClientCapabilityError  -32021
        UnsupportedProtocolVersionError -32022
        MethodNotFoundError           -32601
        InvalidParamsError            -32602
        ServiceUnavailableError       HTTP 503 or data.retryable: the server cannot serve it now; retry later
      ToolError                       a tools/call result with isError: true
      ToolArgumentsError              arguments rejected locally before sending
      ToolOutputError                 structuredContent missing or not matching outputSchema
      ToolDriftError                  the server's definition of a pinned tool changed (on_drift="error")
      PaginationError                 repeated cursor or page cap reached
      InputRequiredError              the server needs input the client cannot give (no callback)
      InputRequiredRoundsExceededError  multi-round-trip loop cap reached
      TaskError                       a task (the tasks extension) did not give the tool's result
        TaskNotFoundError             unknown or expired task id (-32602 to tasks/*)
        TaskFailedError               the task ended `failed`: the JSON-RPC error it carries
        TaskCancelledError            the task ended `cancelled`

Every error says whether calling again may succeed (`retryable`): true for a connection that
could not be made or broke before the response (`ConnectError`, `ResponseLostError`, a cut
exchange), for HTTP 429/502/503/504 (a proxy without a live upstream, an overloaded, limiting or
draining server) and for a JSON-RPC error sent with one of those statuses. Behind a load balancer
the next attempt usually reaches another replica; `Client(retries=N)` makes those attempts itself.

`unprocessed` says more: the server certainly did not act on the request, because it never
reached it (`ConnectError`: refused, DNS, TLS, a stdio server that could not start) or because the
answer says nothing was done (`ServiceUnavailableError`, HTTP 429/503). Any other retryable error
came after the request was sent and does not say whether the server ran it; the client resends
those only for requests that are safe to repeat (client/retry_policy.py). `retry_after_s` is how
long the server asked the client to wait (`Retry-After`, `data.retryAfterMs`), or None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

# HTTP statuses that say "not now, or not this server": a gateway without a live upstream (502,
# 504) or a server refusing work it may take later (429, 503).
RETRYABLE_STATUSES: Final = frozenset({429, 502, 503, 504})
# Of those, the ones that say the request was refused before anything was done with it.
UNPROCESSED_STATUSES: Final = frozenset({429, 503})
# The longest wait a server's `Retry-After` or `retryAfterMs` may ask for and be honoured.
MAX_RETRY_AFTER_S: Final = 3600.0


class McpRuntimeError(Exception):
    """Base of every error the runtime raises."""

    retryable: bool = False  # calling again (with a new request id) may succeed
    unprocessed: bool = False  # the server certainly did nothing with the request
    retry_after_s: float | None = None  # the wait the server asked for, if it asked


class TransportError(McpRuntimeError):
    def __init__(self, message: str, *, retryable: bool | None = None) -> None:
        super().__init__(message)
        if retryable is not None:
            self.retryable = retryable


class ConnectError(TransportError):
    retryable = True
    unprocessed = True  # nothing was sent: refused, DNS, TLS, a process that did not start


class RequestTimeoutError(TransportError):
    pass


class ServerExitedError(TransportError):
    def __init__(self, message: str, *, returncode: int | None = None, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class HttpStatusError(TransportError):
    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        body: bytes = b"",
        www_authenticate: str | None = None,
        retry_after_s: float | None = None,
        dpop_nonce: str | None = None,
    ) -> None:
        super().__init__(message, retryable=status_code in RETRYABLE_STATUSES)
        self.unprocessed = status_code in UNPROCESSED_STATUSES
        self.retry_after_s = retry_after_s  # its `Retry-After` (transport/failures.py reads it)
        self.status_code = status_code
        self.body = body
        self.www_authenticate = www_authenticate  # the challenge of a 401/403 (AUTH-01)
        self.dpop_nonce = dpop_nonce  # its `DPoP-Nonce` (RFC 9449 §9), bounded by the transport


class ResponseLostError(TransportError):
    """The reply stream ended before the response: the request is lost (HTTP-26). Calling
    again sends a new request with a new id; the client does that by itself only for reads
    (and, with `retries`, for requests that are safe to repeat: client/retry_policy.py)."""

    retryable = True


class AuthorizationError(McpRuntimeError):
    """Logging in to a protected server failed (metadata, registration, the authorization or
    token request), or the server kept refusing the credentials. The message says what failed
    and what to do about it; it never contains a token or a client secret (AUTH-16)."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code  # the MCP server's 401/403, when that is what ended it


class ProtocolError(McpRuntimeError):
    pass


class ResponseTooLargeError(ProtocolError):
    """The server sent more than the client accepts in one response, SSE event or stdio line
    (`max_response_bytes`): the rest was not read. `limit` is the limit in bytes."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class RemoteError(McpRuntimeError):
    """A JSON-RPC error response received from the peer (never a local failure: ERR-07)."""

    code_: ClassVar[int | None] = None
    # The error carried the request's own id: the server read the request and answered it (not,
    # say, a legacy server refusing a request outside a session with id null).
    in_band: bool = False

    def __init__(self, code: int, message: str, data: Any = None, *, http_status: int | None = None) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status
        self.retryable = http_status in RETRYABLE_STATUSES  # a server or gateway saying "not now"
        self.unprocessed = http_status in UNPROCESSED_STATUSES

    @staticmethod
    def from_error(error: Any, *, http_status: int | None = None) -> RemoteError:
        """Build the most specific subclass for a JSON-RPC `error` object."""
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            raise ProtocolError(f"malformed JSON-RPC error object: {error!r:.200}")
        code = error["code"]
        message = error.get("message")
        data = error.get("data")
        if http_status in UNPROCESSED_STATUSES or (isinstance(data, dict) and data.get("retryable") is True):
            cls: type[RemoteError] = ServiceUnavailableError
        else:
            cls = _BY_CODE.get(code, RemoteError)
        return cls(code, message if isinstance(message, str) else "", data, http_status=http_status)


class HeaderMismatchError(RemoteError):
    code_ = -32020


class MissingClientCapabilityError(RemoteError):
    code_ = -32021


class UnsupportedProtocolVersionError(RemoteError):
    code_ = -32022


class MethodNotFoundError(RemoteError):
    code_ = -32601


class InvalidParamsError(RemoteError):
    code_ = -32602


class ServiceUnavailableError(RemoteError):
    """The server could not serve the request now (HTTP 503 or 429, or an error whose data says
    `retryable`: e.g. the shared store of a replicated server is down). Nothing was done;
    sending the same request again after `retry_after_s` may succeed."""

    retry_after_s: float  # data.retryAfterMs (at most MAX_RETRY_AFTER_S), else 1 second

    def __init__(self, code: int, message: str, data: Any = None, *, http_status: int | None = None) -> None:
        super().__init__(code, message, data, http_status=http_status)
        self.retryable = True  # also off HTTP (stdio), where only data.retryable says so
        self.unprocessed = True
        wait = data.get("retryAfterMs") if isinstance(data, dict) else None
        in_bounds = isinstance(wait, int | float) and not isinstance(wait, bool)
        self.retry_after_s = (
            wait / 1000 if in_bounds and 0 <= wait <= MAX_RETRY_AFTER_S * 1000 else 1.0  # type: ignore[operator]
        )


_BY_CODE: dict[int, type[RemoteError]] = {
    cls.code_: cls
    for cls in (
        HeaderMismatchError,
        MissingClientCapabilityError,
        UnsupportedProtocolVersionError,
        MethodNotFoundError,
        InvalidParamsError,
    )
    if cls.code_ is not None
}


class ToolError(McpRuntimeError):
    """The tool ran and reported failure (`isError: true`); `result` holds its content."""

    def __init__(self, tool: str, result: Any) -> None:
        self.tool = tool
        self.result = result
        text = getattr(result, "text", "") or ""
        super().__init__(f"tool {tool!r} failed: {text[:500]}")


class ToolArgumentsError(McpRuntimeError):
    def __init__(self, tool: str, message: str, *, pointer: str = "") -> None:
        super().__init__(f"tool {tool!r}: invalid arguments at {pointer or '/'}: {message}")
        self.tool = tool
        self.pointer = pointer


class ToolOutputError(McpRuntimeError):
    def __init__(self, tool: str, message: str, *, pointer: str = "") -> None:
        super().__init__(f"tool {tool!r}: invalid output at {pointer or '/'}: {message}")
        self.tool = tool
        self.pointer = pointer


class ToolDriftError(McpRuntimeError):
    """A generated client's pinned tools drifted (`Client(on_drift="error")`): `report` (a
    `mcpgen_runtime.pins.DriftReport`) names each changed or missing tool and the JSON pointer of
    each change."""

    def __init__(self, report: Any) -> None:
        super().__init__(report.describe())
        self.report = report


class ToolDriftWarning(UserWarning):
    """A generated client's pinned tools drifted (`Client(on_drift="warn")`, the default): warned
    once per distinct drift."""


class PaginationError(McpRuntimeError):
    pass


class InputRequiredError(McpRuntimeError):
    """The server asked for input (`input_required`) and no callback can answer it.

    `input_requests` is the wire `inputRequests`, `requests` the same as typed requests
    (`mcpgen_runtime.protocol.input_messages`), `request_state` the opaque state to echo. Resume with
    `client.call_tool(exc.tool, exc.arguments, input_responses={...}, request_state=exc.request_state)`.
    """

    def __init__(
        self,
        message: str,
        *,
        input_requests: dict[str, Any],
        request_state: str | None,
        requests: Mapping[str, Any] | None = None,
        tool: str | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.input_requests = input_requests
        self.request_state = request_state
        self.requests = dict(requests or {})
        self.tool = tool
        self.arguments = arguments


class InputRequiredRoundsExceededError(McpRuntimeError):
    """The server kept answering `input_required` past the client's `max_input_rounds`."""

    def __init__(self, message: str, *, max_rounds: int) -> None:
        super().__init__(message)
        self.max_rounds = max_rounds


class TaskError(McpRuntimeError):
    """A task (the tasks extension) did not produce the tool's result. `task_id` is the full id
    (a secret of its principal); messages show it masked (`protocol.tasks.mask_task_id`)."""

    def __init__(self, message: str, *, task_id: str | None) -> None:
        super().__init__(message)
        self.task_id = task_id


class TaskNotFoundError(TaskError):
    """The server does not know the task (never created, expired and purged, or another
    principal's): its `-32602` answer to tasks/get, tasks/update or tasks/cancel."""

    def __init__(self, message: str, *, task_id: str | None, code: int = -32602, data: Any = None) -> None:
        super().__init__(message, task_id=task_id)
        self.code = code
        self.data = data


class TaskFailedError(TaskError):
    """The task ended `failed`: `error` is the JSON-RPC error it carries (code, message, data),
    also as `code`, `remote_message` and `data`."""

    def __init__(self, message: str, *, task_id: str | None, error: Mapping[str, Any]) -> None:
        super().__init__(message, task_id=task_id)
        self.error = dict(error)
        code = error.get("code")
        self.code: int | None = code if type(code) is int else None
        text = error.get("message")
        self.remote_message = text if isinstance(text, str) else ""
        self.data = error.get("data")


class TaskCancelledError(TaskError):
    """The task ended `cancelled` (by this client, another one, or the server)."""
