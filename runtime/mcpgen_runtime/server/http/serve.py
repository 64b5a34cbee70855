"""`run_http`: a Dispatcher served over Streamable HTTP by uvicorn, until SIGTERM or Ctrl-C drains it.

The ASGI app is app.py's `McpAsgiApp` (behind the OAuth wrapper when the server is protected); the
parser guard against slow clients is slow_clients.py's; the drain is draining.py's.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import math
from collections.abc import Callable

from ..core.config import LOCAL_HOSTS
from ..core.dispatch import Dispatcher
from .app import McpAsgiApp
from .asgi_io import ASGIApp
from .draining import DrainingServer, uvicorn_config
from .slow_clients import HttpParser, SlowClients, guarded_protocol

__all__ = ["run_http"]

_LOG = logging.getLogger("mcpgen.server")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run_http(
    server: Dispatcher,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    parser: HttpParser = "auto",
    on_listening: Callable[[], None] | None = None,
) -> None:
    """Serve with uvicorn until interrupted; `parser` is uvicorn's HTTP/1.1 parser ("auto": httptools
    when installed, else h11). Slow clients are bounded by `ServerConfig.http_limits` (slow_clients.py).
    `on_listening` is called once the socket listens.

    SIGTERM or SIGINT drains the replica: readiness answers 503, the listener closes (a proxy's
    next connection goes to another replica), listen and legacy SSE streams end cleanly so their
    clients reconnect elsewhere, idle keep-alive connections close, and calls in flight finish,
    for up to `ServerConfig.shutdown_grace_s`, as do tasks running here; then what still runs is
    cancelled (a task: `failed`, on every replica at once). Either signal
    then returns normally (no KeyboardInterrupt, no re-raised SIGTERM): the caller flushes
    telemetry and exits 0. A second SIGINT cuts the drain short."""

    allowed_hosts = server.config.allowed_hosts
    if allowed_hosts == LOCAL_HOSTS and not _is_loopback(host):
        # Remote clients address the server by names we cannot guess; the Origin check stays on.
        _LOG.warning(
            "bound to %s: Host header check disabled (set ServerConfig.allowed_hosts to enable it)", host
        )
        allowed_hosts = None
    mcp_app = McpAsgiApp(server, allowed_hosts=allowed_hosts)
    app: ASGIApp = mcp_app
    if (wrap := getattr(server.config.auth, "wrap_app", None)) is not None:
        app = wrap(
            app, server.config
        )  # a ProtectedResource (auth/oauth.py): metadata, 403 insufficient_scope
    limits = server.config.http_limits
    config = uvicorn_config(
        app,
        grace_s=server.config.shutdown_grace_s,
        host=host,
        port=port,
        timeout_keep_alive=math.ceil(server.config.keep_alive_s),
        http=guarded_protocol(parser, SlowClients(limits)),
        h11_max_incomplete_event_size=limits.max_header_bytes,
    )

    with contextlib.suppress(KeyboardInterrupt):  # a Ctrl-C before or after uvicorn's handlers
        DrainingServer(config, server, mcp_app, on_listening).run()
