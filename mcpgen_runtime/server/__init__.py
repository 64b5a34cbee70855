"""Server runtime that generated server packages inherit from.

    class Server(ServerBase):                 # ServerBase(ToolServer) is generated
        async def get_weather(self, args: GetWeatherInput, ctx: ToolContext) -> str: ...

    serve_main(Server)                        # --http (default) / --stdio

Handlers may ask the client for input mid-call (multi round-trip requests):
`await ctx.elicit(...)`, `ctx.sample(...)`, `ctx.list_roots()`, or `ctx.need(...)` + `ctx.ask()`.
"""

from ..protocol.inputs import CreateMessageResult, ElicitResult, ListRootsResult, Root
from .auth import BearerAuth
from .catalog import MethodHandler, ToolHandler
from .cli import serve_main
from .config import LOCAL_HOSTS, LOCAL_ORIGINS, IncomingRequest, Outcome, ServerConfig, ToolBinding
from .context import (
    ClientCapabilityRequired,
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
from .tool_server import ToolServer

__all__ = [
    "LOCAL_HOSTS",
    "LOCAL_ORIGINS",
    "ASGIApp",
    "BearerAuth",
    "ClientCapabilityRequired",
    "CreateMessageResult",
    "Elicit",
    "ElicitResult",
    "ElicitUrl",
    "IncomingRequest",
    "InputRequest",
    "IntrospectionVerifier",
    "ListRoots",
    "ListRootsResult",
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
    "TokenPrincipal",
    "ToolBinding",
    "ToolContext",
    "ToolExecutionError",
    "ToolHandler",
    "ToolReturn",
    "ToolServer",
    "serve_main",
]
