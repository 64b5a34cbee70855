"""Server runtime that generated server packages inherit from.

    class Server(ServerBase):                 # ServerBase(ToolServer) is generated
        async def get_weather(self, args: GetWeatherInput, ctx: ToolContext) -> str: ...

    serve_main(Server)                        # --http (default) / --stdio

Handlers may ask the client for input mid-call (multi round-trip requests):
`await ctx.elicit(...)`, `ctx.sample(...)`, `ctx.list_roots()`, or `ctx.need(...)` + `ctx.ask()`.
"""

from .auth import BearerAuth
from .cli import serve_main
from .context import (
    ClientCapabilityRequired,
    RequestContext,
    RpcError,
    ToolContext,
    ToolExecutionError,
    ToolReturn,
)
from .core import (
    LOCAL_HOSTS,
    LOCAL_ORIGINS,
    ASGIApp,
    IncomingRequest,
    MethodHandler,
    Outcome,
    ServerConfig,
    ToolBinding,
    ToolHandler,
    ToolServer,
)
from .mrtr import (
    Elicit,
    ElicitResult,
    ElicitUrl,
    InputRequest,
    ListRoots,
    Pending,
    Root,
    RootsResult,
    Sample,
    SamplingResult,
)
from .ratelimit import RateLimit

__all__ = [
    "LOCAL_HOSTS",
    "LOCAL_ORIGINS",
    "ASGIApp",
    "BearerAuth",
    "ClientCapabilityRequired",
    "Elicit",
    "ElicitResult",
    "ElicitUrl",
    "IncomingRequest",
    "InputRequest",
    "ListRoots",
    "MethodHandler",
    "Outcome",
    "Pending",
    "RateLimit",
    "RequestContext",
    "Root",
    "RootsResult",
    "RpcError",
    "Sample",
    "SamplingResult",
    "ServerConfig",
    "ToolBinding",
    "ToolContext",
    "ToolExecutionError",
    "ToolHandler",
    "ToolReturn",
    "ToolServer",
    "serve_main",
]
