"""`ToolServer`: the base class of generated servers — the sans-I/O `Dispatcher` plus its
transports (`asgi_app` / `run_http` from http/app.py, `run_stdio` from stdio.py).

It sits above the dispatcher and both transports, so they never import it: http/app.py and
stdio.py drive any `Dispatcher`.
"""

from __future__ import annotations

from collections.abc import Callable

from .core.dispatch import Dispatcher
from .http.app import MCP_PATH, ASGIApp, McpAsgiApp
from .http.serve import run_http
from .http.slow_clients import HttpParser
from .stdio import run_stdio

__all__ = ["ToolServer"]


class ToolServer(Dispatcher):
    """Base of generated servers: subclasses set `_tool_definitions_` and `_tool_bindings_` and
    implement the handlers as `async def method(self, args, ctx)`. Serving a message and
    changing the served set at run time (`add_tool`, `add_method`, `notify_list_changed`, ...)
    are the `Dispatcher`'s; this class adds the transports.
    """

    __slots__ = ()

    def asgi_app(self, *, path: str = MCP_PATH) -> ASGIApp:
        """A raw ASGI app serving the MCP endpoint on `path` under the point it is mounted at, and at
        the mount point itself (other paths: 404; the probes and, for a `ProtectedResource` in
        `config.auth`, its OAuth metadata too: auth/oauth.py)."""
        app: ASGIApp = McpAsgiApp(self, path=path)
        wrap = getattr(self.config.auth, "wrap_app", None)
        return wrap(app, self.config) if wrap is not None else app

    def run_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        parser: HttpParser = "auto",
        on_listening: Callable[[], None] | None = None,
    ) -> None:
        """Serve Streamable HTTP with uvicorn until interrupted (HTTP-04: localhost by default);
        `parser`: uvicorn's HTTP/1.1 parser, "auto" (httptools when installed), "h11" or "httptools";
        `on_listening`: called once the socket listens."""
        run_http(self, host, port, parser=parser, on_listening=on_listening)

    def run_stdio(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve stdin/stdout until stdin closes (STDIO-11); `on_ready` once Ctrl-C stops it cleanly."""
        run_stdio(self, on_ready)
