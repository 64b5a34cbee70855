"""Server runtime that generated server packages inherit from.

    class Server(ServerBase):                 # ServerBase(ToolServer) is generated
        async def get_weather(self, args: GetWeatherInput, ctx: ToolContext) -> str: ...

    serve_main(Server)                        # --http (default) / --stdio

Handlers may ask the client for input mid-call (multi round-trip requests):
`await ctx.elicit(...)`, `ctx.sample(...)`, `ctx.list_roots()`, or `ctx.need(...)` + `ctx.ask()`.

The server is dual-era: clients of the initialize-based revisions (2025-11-25, 2025-06-18,
2025-03-26) get sessions (`ServerConfig.legacy_sessions`, `LegacySessionStore`) and the same handlers, whose
asks are then real requests to the client (`ClientRequestError` when unanswered).
"""

from ..protocol.input_messages import CreateMessageResult, ElicitResult, ListRootsResult, Root
from .auth.oauth import IntrospectionVerifier, ProtectedResource, TokenPrincipal
from .cli import handlers_getattr, load_handlers, serve_main
from .core.bearer_auth import BearerAuth
from .core.catalog import MethodHandler, ToolHandler
from .core.config import (
    LOCAL_HOSTS,
    LOCAL_ORIGINS,
    IncomingRequest,
    LegacySessionOptions,
    LegacySessionStore,
    Outcome,
    ServerConfig,
    TaskOptions,
    ToolBinding,
)
from .core.context import (
    ClientCapabilityRequired,
    ClientRequestError,
    RequestContext,
    RpcError,
    ToolContext,
    ToolExecutionError,
    ToolReturn,
)
from .core.input_requests import (
    Elicit,
    ElicitUrl,
    InputRequest,
    ListRoots,
    Pending,
    Sample,
)
from .core.ratelimit import RateLimit
from .core.resources.bindings import (
    CompletionBinding,
    PromptBinding,
    ResourceTemplateBinding,
    load_package_surfaces,
)
from .core.resources.safe_paths import PathEscapeError, safe_join
from .core.resources.surfaces import (
    CompletionHandler,
    CompletionReturn,
    PromptHandler,
    PromptReturn,
    ResourceNotFound,
    ResourceReader,
    ResourceReturn,
    TemplateReader,
)
from .http.app import ASGIApp
from .legacy.sessions import MemorySessionStore, Session
from .tool_server import ToolServer

__all__ = [
    "LOCAL_HOSTS",
    "LOCAL_ORIGINS",
    "ASGIApp",
    "BearerAuth",
    "ClientCapabilityRequired",
    "ClientRequestError",
    "CompletionBinding",
    "CompletionHandler",
    "CompletionReturn",
    "CreateMessageResult",
    "Elicit",
    "ElicitResult",
    "ElicitUrl",
    "IncomingRequest",
    "InputRequest",
    "IntrospectionVerifier",
    "LegacySessionOptions",
    "LegacySessionStore",
    "ListRoots",
    "ListRootsResult",
    "MemorySessionStore",
    "MethodHandler",
    "Outcome",
    "PathEscapeError",
    "Pending",
    "PromptBinding",
    "PromptHandler",
    "PromptReturn",
    "ProtectedResource",
    "RateLimit",
    "RequestContext",
    "ResourceNotFound",
    "ResourceReader",
    "ResourceReturn",
    "ResourceTemplateBinding",
    "Root",
    "RpcError",
    "Sample",
    "ServerConfig",
    "Session",
    "TaskOptions",
    "TemplateReader",
    "TokenPrincipal",
    "ToolBinding",
    "ToolContext",
    "ToolExecutionError",
    "ToolHandler",
    "ToolReturn",
    "ToolServer",
    "handlers_getattr",
    "load_handlers",
    "load_package_surfaces",
    "safe_join",
    "serve_main",
]
