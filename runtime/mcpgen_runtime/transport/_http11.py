"""Moved: the HTTP/1.1 parsing to `mcpgen_runtime.transport.http11`, the pools to
`mcpgen_runtime.transport._async.pool` / `_sync.pool`; this path is kept for one release."""

from ._async.pool import AsyncPool, AsyncResponse
from ._sync.pool import Pool as SyncPool
from ._sync.pool import Response as SyncResponse
from .http11 import BodyDecoder, HeadBuilder, Origin, ResponseHead, lean_origin, parse_head
from .http11 import cached_head as _head_of  # noqa: F401 (bench/micro.py)

__all__ = [
    "AsyncPool",
    "AsyncResponse",
    "BodyDecoder",
    "HeadBuilder",
    "Origin",
    "ResponseHead",
    "SyncPool",
    "SyncResponse",
    "lean_origin",
    "parse_head",
]
