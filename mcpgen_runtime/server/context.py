"""What a tool handler sees of its request (`ToolContext`) and the exceptions it may raise.

Each request is self-contained (BASE-19): everything here comes from that request's
`_meta` and transport, never from earlier requests on the same connection.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..content import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent, ToolResult
from ..protocol import jsonrpc
from ..protocol.meta import CLIENT_INFO_KEY, PROGRESS_TOKEN_KEY

__all__ = ["ClientCapabilityRequired", "Notify", "RpcError", "ToolContext", "ToolExecutionError", "ToolReturn"]

_LOG = logging.getLogger("mcpgen.server")

# What a handler of a tool without an outputSchema may return: text, content blocks, or a whole result.
ContentValue = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
ToolReturn = str | ContentValue | list[ContentValue] | ToolResult

# Sends one server notification on the stream of the request it belongs to.
Notify = Callable[[dict[str, Any]], Awaitable[None]]


class ToolExecutionError(Exception):
    """Raise from a handler to report a failure the model can act on: an `isError: true` result
    whose text is the exception message (TOOLS-22). Keep the message free of secrets."""


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


def status_for_code(code: int) -> int:
    """HTTP status for a JSON-RPC error code (404 for -32601 per HDR-05; ERR-08 codes are 400)."""
    if code == jsonrpc.METHOD_NOT_FOUND:
        return 404
    if code == jsonrpc.INTERNAL_ERROR:
        return 500
    return 400


class ToolContext:
    """Per-request facts and services for one `tools/call`.

    `report_progress` streams `notifications/progress` when the request carried a
    progress token; `input_responses`/`request_state` hold the multi-round-trip retry
    fields as received, ready for a future `elicit()` that would end the call with an
    `input_required` result.
    """

    __slots__ = (
        "_closed",
        "_last_progress",
        "_notify",
        "client_capabilities",
        "client_info",
        "headers",
        "input_responses",
        "meta",
        "principal",
        "progress_token",
        "protocol_version",
        "request_id",
        "request_state",
        "tool_name",
        "transport",
    )

    def __init__(
        self,
        *,
        request_id: jsonrpc.RequestId,
        tool_name: str,
        meta: Mapping[str, Any],
        protocol_version: str,
        client_capabilities: Mapping[str, Any],
        transport: str = "direct",
        headers: Mapping[str, str] | None = None,
        principal: Any = None,
        notify: Notify | None = None,
        input_responses: Mapping[str, Any] | None = None,
        request_state: str | None = None,
    ) -> None:
        self.request_id = request_id
        self.tool_name = tool_name
        self.meta = meta  # the request's whole `_meta`, as sent
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        info = meta.get(CLIENT_INFO_KEY)
        # Self-reported and unverified: for logs only, never for decisions (BASE-38).
        self.client_info: Mapping[str, Any] | None = info if isinstance(info, dict) else None
        self.transport = transport  # "http" | "stdio" | "direct"
        self.headers = headers  # lower-case names; None off HTTP
        self.principal = principal  # set by an authentication layer, if any
        token = meta.get(PROGRESS_TOKEN_KEY)
        # PROG-01: tokens are strings or integers; anything else means "no progress wanted".
        self.progress_token: str | int | None = (
            token if isinstance(token, (str, int)) and not isinstance(token, bool) else None
        )
        self.input_responses = input_responses
        self.request_state = request_state
        self._notify = notify
        self._last_progress: float | None = None
        self._closed = False

    def has_capability(self, name: str) -> bool:
        """Whether this request declared the client capability `name` (BASE-34)."""
        return isinstance(self.client_capabilities.get(name), dict)

    def require_capability(self, name: str, settings: Mapping[str, Any] | None = None) -> None:
        """Fail the request with `-32021` unless the client declared `name` (BASE-35)."""
        if not self.has_capability(name):
            raise ClientCapabilityRequired({name: dict(settings or {})})

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send `notifications/progress` for this request.

        A no-op without a progress token (PROG-05), after the handler returned (PROG-08), or
        when `progress` does not increase (PROG-03) or is not finite.
        """
        if self._closed or self.progress_token is None or self._notify is None:
            return
        if not math.isfinite(progress) or (self._last_progress is not None and progress <= self._last_progress):
            _LOG.debug("dropping non-increasing progress %r for request %r", progress, self.request_id)
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None and math.isfinite(total):
            params["total"] = total
        if message is not None:
            params["message"] = message
        try:
            await self._notify(jsonrpc.notification("notifications/progress", params))
        except (OSError, RuntimeError) as exc:  # the peer went away; the caller's cancellation follows
            _LOG.debug("progress for request %r not delivered: %s", self.request_id, exc)
            self._closed = True

    def close(self) -> None:
        """Called by the server when the handler is done: no more notifications (PROG-08)."""
        self._closed = True
