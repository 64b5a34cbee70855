"""uvicorn's server as `run_http` (app.py) runs it: the shared store joined before listening, and
one drain for SIGTERM and SIGINT alike.

uvicorn's own drain closes the listener at once, resetting connections the kernel completed but the
event loop had not accepted (a proxy that sent a POST on one answers 502), and re-raises the signal
once drained (SIGTERM then kills the process: exit 143, no "stopped" line, queued telemetry lost).
Here the waiting connections are accepted and served first, calls the grace period cut off get to
answer (a retryable 503, app.py), and the signal is not re-raised. Tasks running here get what is
left of the same grace to end; those still running then fail ("the server running this task stopped").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn

from ..core.dispatch import Dispatcher

__all__ = ["DrainingServer", "uvicorn_config"]

_LOG = logging.getLogger("mcpgen.server")


def uvicorn_config(app: Any, *, grace_s: float, **options: Any) -> uvicorn.Config:
    """uvicorn set up as every HTTP server of the runtime runs (`run_http`, the mock's proxies and
    test harness): quiet, no lifespan, no Server or Date header, no WebSocket endpoint (an Upgrade
    is answered as plain HTTP); `grace_s` rounded up, as uvicorn takes whole seconds."""
    return uvicorn.Config(
        app,
        log_level="warning",
        lifespan="off",
        server_header=False,
        date_header=False,
        ws="none",
        timeout_graceful_shutdown=math.ceil(grace_s),
        **options,
    )


class DrainingServer(uvicorn.Server):
    """uvicorn's server for `run_http`: joins the shared store before listening, and drains on
    SIGTERM as on SIGINT (see `run_http`), returning normally once drained."""

    def __init__(
        self,
        config: uvicorn.Config,
        server: Dispatcher,
        mcp_app: Any,
        on_listening: Callable[[], None] | None,
    ) -> None:
        super().__init__(config)
        self.mcp = server
        self.mcp_app = mcp_app
        self.on_listening = on_listening

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await self.mcp.open_shared_state()  # a shared store: join the replicas' change fan-out
        await super().startup(sockets)
        if self.started and self.on_listening is not None:
            self.on_listening()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        until = time.monotonic() + self.mcp.config.shutdown_grace_s
        self.mcp.probes.draining = True
        _LOG.info("shutting down: draining for up to %.0fs", self.mcp.config.shutdown_grace_s)
        self.mcp.close_subscriptions()  # SUB-07: open listen streams end instead of holding shutdown up
        self.mcp_app.close_sessions()  # legacy GET streams too
        await self._accept_backlog()
        await super().shutdown(sockets)  # closes the listener first
        if self.server_state.tasks:  # cut off at the grace period: they answer 503 (`_watched`)
            await asyncio.wait(set(self.server_state.tasks), timeout=1.0)
        await self._finish_tasks(until)
        await self.mcp.close_shared_state()  # fails the tasks still running

    async def _finish_tasks(self, until: float) -> None:
        """Tasks running here (detached from any connection) get what is left of the grace to end,
        as calls in flight do: a rolling deploy does not fail work that would finish. A second
        Ctrl-C cuts it short."""
        while not self.force_exit and (left := until - time.monotonic()) > 0:
            if await self.mcp.finish_tasks(min(left, 0.25)):
                return

    async def _accept_backlog(self) -> None:
        """Take the connections the kernel completed but the event loop has not accepted yet:
        closing the listener would reset them, and a proxy that already sent a POST on one
        answers its client 502. Each is served like any other, its request told `Connection: close`."""
        loop = asyncio.get_running_loop()
        uvicorn_config = self.config

        def create_protocol() -> asyncio.Protocol:
            protocol: asyncio.Protocol = uvicorn_config.http_protocol_class(  # type: ignore[call-arg]
                config=uvicorn_config,
                server_state=self.server_state,
                app_state=self.lifespan.state,
                _loop=loop,
            )
            return protocol

        for listening in self.servers:
            for transport_socket in listening.sockets:
                listener = socket.socket(fileno=os.dup(transport_socket.fileno()))
                try:
                    listener.setblocking(False)
                    while True:
                        try:
                            connection, _ = listener.accept()
                        except OSError:  # BlockingIOError: none waiting
                            break
                        connection.setblocking(False)
                        await loop.connect_accepted_socket(create_protocol, connection)
                finally:
                    listener.close()  # the duplicate only

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn's own re-raises the signal once drained: SIGTERM would then kill the process
        # (exit 143, no "stopped" line, spans still queued lost). Drained means done here.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
