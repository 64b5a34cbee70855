"""Server runtime that generated server packages inherit from.

    class Server(ServerBase):                 # ServerBase(ToolServer) is generated
        async def get_weather(self, args: GetWeatherInput, ctx: ToolContext) -> str: ...

    serve_main(Server)                        # --http (default) / --stdio
"""

from .cli import serve_main
from .context import ClientCapabilityRequired, RpcError, ToolContext, ToolExecutionError, ToolReturn
from .core import (
    LOCAL_HOSTS,
    LOCAL_ORIGINS,
    ASGIApp,
    IncomingRequest,
    Outcome,
    ServerConfig,
    ToolBinding,
    ToolServer,
)

__all__ = [
    "LOCAL_HOSTS",
    "LOCAL_ORIGINS",
    "ASGIApp",
    "ClientCapabilityRequired",
    "IncomingRequest",
    "Outcome",
    "RpcError",
    "ServerConfig",
    "ToolBinding",
    "ToolContext",
    "ToolExecutionError",
    "ToolReturn",
    "ToolServer",
    "serve_main",
]
