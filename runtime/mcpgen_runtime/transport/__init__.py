"""Transports: move JSON-RPC messages and hand back the replies (HTTP or stdio, sync or asyncio).

The package face: import transports and the names around them from here. The contract is in
`base.py`; the module map and the layers are in docs/ARCHITECTURE.md.

- Streamable HTTP (`HttpTransport`, `AsyncHttpTransport`): written once in
  `_async/streamable_http.py`, its blocking twin generated into `_sync/`, over two engines
  (`_async/engine.py`: the lean HTTP/1.1 pool, or httpx); its legacy session, the HTTP+SSE
  fallback and the session's GET stream are beside it in `_async/`. Reply decoding without I/O
  (`SseDecoder`, `classify_body`) is `sse_reader.py`; HTTP/1.1 framing without I/O, `http1_wire.py`.
- stdio (`StdioTransport`, `AsyncStdioTransport`): `stdio.py`, `asyncio_stdio.py`; framing `stdio_lines.py`.
"""

from ._async.streamable_http import AsyncHttpTransport
from ._sync.streamable_http import HttpTransport
from .asyncio_stdio import AsyncStdioTransport
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
from .sse_reader import BASE_HEADERS, USER_AGENT, ResponseStream, SseDecoder, classify_body, is_event_stream
from .stdio import StdioTransport

__all__ = [
    "BASE_HEADERS",
    "USER_AGENT",
    "AsyncHttpTransport",
    "AsyncOnRequest",
    "AsyncStdioTransport",
    "AsyncTransport",
    "HttpTransport",
    "Message",
    "OnNotification",
    "OnRequest",
    "Reply",
    "ResponseStream",
    "SseDecoder",
    "StdioTransport",
    "SyncTransport",
    "classify_body",
    "is_event_stream",
    "sends_headers",
]
