"""The transport contract: move JSON-RPC messages and hand back the replies (docs/ARCHITECTURE.md).

`SyncTransport` and `AsyncTransport` (`close` / `aclose`) each have `start`, `request`,
`notify`, `stream`, `close`, and an `on_request` hook for requests the peer initiates.

Transports know nothing of MCP semantics: the client core builds messages and MCP headers
and reads results; a transport only frames bytes (HTTP POST + JSON/SSE, or stdio lines),
maps I/O failures to `TransportError`s, passes notifications that precede a response to
`on_notification`, and answers peer requests through `on_request` (`hooks.py`).

A transport may set the class attribute `sends_headers = False` (stdio does) to tell the
client core that HTTP headers are ignored, so it skips building them.
"""

from __future__ import annotations

from ._async.contract import AsyncTransport
from ._sync.contract import SyncTransport
from .hooks import AsyncOnRequest, Message, OnNotification, OnRequest, Reply

__all__ = [
    "AsyncOnRequest",
    "AsyncTransport",
    "Message",
    "OnNotification",
    "OnRequest",
    "Reply",
    "SyncTransport",
    "sends_headers",
]


def sends_headers(transport: object) -> bool:
    """Whether the client core should build MCP HTTP headers for `transport`."""
    return bool(getattr(transport, "sends_headers", True))
