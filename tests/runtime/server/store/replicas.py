"""Replicas of one generated server in this process: each a uvicorn server on its own port and
thread, all given the same store URL and requestState secret (what N containers behind a load
balancer get from their environment)."""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
from typing import Any

import httpx
import uvicorn

from mcpgen_runtime.server import ServerConfig, ToolServer
from tests.runtime.server_helpers import mcp_headers
from tests.support import ROOT, free_port, wait_for_port

GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

SECRET = "replica-shared-secret-0123456789abcdef"


class Replica:
    def __init__(self, server: ToolServer) -> None:
        self.server = server
        self.port = free_port()
        config = uvicorn.Config(
            server.asgi_app(), host="127.0.0.1", port=self.port, log_level="error", lifespan="on"
        )  # start(): the change fan-out
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._uvicorn.run, name=f"replica-{self.port}", daemon=True)
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}/mcp", timeout=10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> Replica:
        self._thread.start()
        wait_for_port(self.port)
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()
        self._uvicorn.should_exit = True
        self._thread.join(10)

    def post(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
        return self.http.post(
            "", content=json.dumps(message).encode(), headers={**mcp_headers(message), **(headers or {})}
        )


def with_store(server_cls: type[ToolServer], store_url: str, **config: Any) -> ToolServer:
    base = server_cls.default_config()
    return server_cls(dataclasses.replace(base, store=store_url, state_secrets=(SECRET,), **config))


def conformance_server(store_url: str, **config: Any) -> ToolServer:
    from conformance_server.handlers import Server

    base = Server.default_config()
    settings: dict[str, Any] = {"store": store_url, "state_secrets": (SECRET,), **config}
    return Server(ServerConfig(**{**{f: getattr(base, f) for f in ("name", "version", "title")}, **settings}))
