"""Moved: `ToolServer` to `server/tool_server.py`, the sans-I/O dispatch to `server/dispatch.py`,
`ServerConfig`/`ToolBinding`/`IncomingRequest`/`Outcome` to `server/config.py`, the handler
types to `server/catalog.py`, the ASGI types to `server/http.py` and `RETRY_AFTER_KEY` to
`server/ratelimit.py`; this path is kept for one release."""

from .catalog import MethodHandler, ToolHandler
from .config import LOCAL_HOSTS, LOCAL_ORIGINS, IncomingRequest, Outcome, ServerConfig, ToolBinding
from .dispatch import CACHEABLE_METHODS, REMOVED_METHODS
from .http import ASGIApp
from .ratelimit import RETRY_AFTER_KEY
from .tool_server import ToolServer

__all__ = [
    "CACHEABLE_METHODS",
    "LOCAL_HOSTS",
    "LOCAL_ORIGINS",
    "REMOVED_METHODS",
    "RETRY_AFTER_KEY",
    "ASGIApp",
    "IncomingRequest",
    "MethodHandler",
    "Outcome",
    "ServerConfig",
    "ToolBinding",
    "ToolHandler",
    "ToolServer",
]
