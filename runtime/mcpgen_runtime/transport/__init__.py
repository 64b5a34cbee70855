"""Transports: move JSON-RPC messages and hand back the replies (HTTP or stdio, sync or asyncio).

The contract is in `base.py`; the module map is in docs/ARCHITECTURE.md.
"""

from .base import (
    AsyncOnRequest,
    AsyncTransport,
    Message,
    OnNotification,
    OnRequest,
    Reply,
    SyncTransport,
    sends_headers,
)
from .http import AsyncHttpTransport, HttpTransport, SseDecoder
from .stdio import AsyncStdioTransport, StdioTransport

__all__ = [
    "AsyncHttpTransport",
    "AsyncOnRequest",
    "AsyncStdioTransport",
    "AsyncTransport",
    "HttpTransport",
    "Message",
    "OnNotification",
    "OnRequest",
    "Reply",
    "SseDecoder",
    "StdioTransport",
    "SyncTransport",
    "sends_headers",
]
