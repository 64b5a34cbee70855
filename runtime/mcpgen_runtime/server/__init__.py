"""Server runtime that generated server packages inherit from.

    class Server(ServerBase):                 # ServerBase(ToolServer) is generated
        async def get_weather(self, args: GetWeatherInput, ctx: ToolContext) -> str: ...

    serve_main(Server)                        # --http (default) / --stdio

Handlers may ask the client for input mid-call (multi round-trip requests):
`await ctx.elicit(...)`, `ctx.sample(...)`, `ctx.list_roots()`, or `ctx.need(...)` + `ctx.ask()`.

The server is dual-era: clients of the initialize-based revisions (2025-11-25, 2025-06-18,
2025-03-26) get sessions (`ServerConfig.sessions`, `SessionStore`) and the same handlers, whose
asks are then real requests to the client (`ClientRequestError` when unanswered).
"""

from ..protocol.input_messages import CreateMessageResult, ElicitResult, ListRootsResult, Root
from .auth import BearerAuth
from .catalog import MethodHandler, ToolHandler
from .cli import serve_main
from .config import LOCAL_HOSTS, LOCAL_ORIGINS, IncomingRequest, Outcome, ServerConfig, ToolBinding
from .context import (
    ClientCapabilityRequired,
    ClientRequestError,
    RequestContext,
    RpcError,
    ToolContext,
    ToolExecutionError,
    ToolReturn,
)
from .http import ASGIApp
from .input_required import (
    Elicit,
    ElicitUrl,
    InputRequest,
    ListRoots,
    Pending,
    RootsResult,
    Sample,
    SamplingResult,
)
from .oauth import IntrospectionVerifier, ProtectedResource, TokenPrincipal
from .ratelimit import RateLimit
from .sessions import MemorySessionStore, Session, SessionOptions, SessionStore
from .tool_server import ToolServer

__all__ = [
    "LOCAL_HOSTS",
    "LOCAL_ORIGINS",
    "ASGIApp",
    "BearerAuth",
    "ClientCapabilityRequired",
    "ClientRequestError",
    "CreateMessageResult",
    "Elicit",
    "ElicitResult",
    "ElicitUrl",
    "IncomingRequest",
    "InputRequest",
    "IntrospectionVerifier",
    "ListRoots",
    "ListRootsResult",
    "MemorySessionStore",
    "MethodHandler",
    "Outcome",
    "Pending",
    "ProtectedResource",
    "RateLimit",
    "RequestContext",
    "Root",
    "RootsResult",
    "RpcError",
    "Sample",
    "SamplingResult",
    "ServerConfig",
    "Session",
    "SessionOptions",
    "SessionStore",
    "TokenPrincipal",
    "ToolBinding",
    "ToolContext",
    "ToolExecutionError",
    "ToolHandler",
    "ToolReturn",
    "ToolServer",
    "serve_main",
]
