"""The transport contract: move one JSON-RPC message and hand back the reply (docs/ARCHITECTURE.md).

Transports know nothing of MCP semantics: the client core builds messages and MCP headers
and reads results; a transport only frames bytes (HTTP POST + JSON/SSE, or stdio lines),
maps I/O failures to `TransportError`s, and passes notifications that precede a response
to `on_notification`.

A transport may set the class attribute `sends_headers = False` (stdio does) to tell the
client core that HTTP headers are ignored, so it skips building them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]
OnNotification = Callable[[Message], None]
Reply = tuple[Message, int | None]
"""(response message, HTTP status or None for non-HTTP transports)."""


@runtime_checkable
class SyncTransport(Protocol):
    def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: float | None,
        on_notification: OnNotification | None = None,
    ) -> Reply:
        """Send one JSON-RPC request; return (response message, HTTP status or None)."""
        ...

    def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        """Send one JSON-RPC notification (no reply is read)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class AsyncTransport(Protocol):
    async def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: float | None,
        on_notification: OnNotification | None = None,
    ) -> Reply:
        """Send one JSON-RPC request; return (response message, HTTP status or None)."""
        ...

    async def notify(self, message: Message, headers: Mapping[str, str]) -> None: ...

    async def aclose(self) -> None: ...


def sends_headers(transport: object) -> bool:
    """Whether the client core should build MCP HTTP headers for `transport`."""
    return bool(getattr(transport, "sends_headers", True))
