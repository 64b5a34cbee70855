"""Transports: move one JSON-RPC message and return the reply (HTTP or stdio, sync or asyncio)."""

from .base import AsyncTransport, Message, OnNotification, Reply, SyncTransport, sends_headers
from .http import AsyncHttpTransport, HttpTransport, SseDecoder
from .stdio import AsyncStdioTransport, StdioTransport

__all__ = [
    "AsyncHttpTransport",
    "AsyncStdioTransport",
    "AsyncTransport",
    "HttpTransport",
    "Message",
    "OnNotification",
    "Reply",
    "SseDecoder",
    "StdioTransport",
    "SyncTransport",
    "sends_headers",
]
