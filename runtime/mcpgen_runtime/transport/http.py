"""Streamable HTTP transport (2026-07-28): every message its own POST; JSON or SSE replies.

`HttpTransport` (blocking) and `AsyncHttpTransport` are one class written once
(`_async/http.py`, its blocking twin generated into `_sync/http.py`) over two engines behind
one interface (`_async/engine.py`): the lean HTTP/1.1 pool for plain http(s) URLs
(`http11.py`, `_async/pool.py`, `sync_backend.py`, `asyncio_backend.py`) and httpx for
anything else. Reply decoding without I/O (`SseDecoder`, `classify_body`) is in
`streamable.py`; this module gathers the names callers import.
"""

from ._async.http import AsyncHttpTransport
from ._sync.http import HttpTransport
from .streamable import BASE_HEADERS, USER_AGENT, ResponseStream, SseDecoder, classify_body, is_event_stream

__all__ = [
    "BASE_HEADERS",
    "USER_AGENT",
    "AsyncHttpTransport",
    "HttpTransport",
    "ResponseStream",
    "SseDecoder",
    "classify_body",
    "is_event_stream",
]
