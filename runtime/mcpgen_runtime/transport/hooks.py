"""What a transport hands back and what it calls: the reply of a request, the notification
callback, and the `on_request` hook that answers requests the peer initiates.

A peer request (a server-to-client `ping`, `elicitation/create`, ... of the legacy protocol
era) arrives in the middle of a reply: on a POST's SSE stream, or between lines on stdio.
With an `on_request` hook the transport passes it the request and sends back the response
message the hook returns (stdio: one line; HTTP: a POST to the same URL with the headers of
the request whose stream carried it). A hook that raises is answered for: the peer gets an
internal error (-32603) and is never left waiting. Without a hook such requests are dropped,
as the current protocol forbids them on a reply stream (HTTP-15) — except that an HTTP
`stream()` passes them on like any other message of the reply.

The blocking stdio transport reads (and so answers) only while a call is waiting for its
reply; the asyncio one answers whenever a request arrives, each in a task of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..protocol.jsonrpc import INTERNAL_ERROR, Message, error

__all__ = ["AsyncOnRequest", "Message", "OnNotification", "OnRequest", "Reply", "hook_failed"]

Reply = tuple[Message, int | None]
"""(response message, HTTP status or None for non-HTTP transports)."""
OnNotification = Callable[[Message], None]
OnRequest = Callable[[Message], Message]
"""Answers a peer request: takes the request message, returns the response message to send."""
AsyncOnRequest = Callable[[Message], Awaitable[Message]]
"""`OnRequest` for asyncio transports: a coroutine function."""


def hook_failed(request: Message, exc: Exception) -> Message:
    """The answer to `request` when the `on_request` hook raised `exc`."""
    return error(
        request.get("id"),
        INTERNAL_ERROR,
        f"the client failed to answer {request.get('method')!r}: {type(exc).__name__}: {exc}",
    )
