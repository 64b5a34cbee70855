"""Shared pieces of the interop proof: server commands, one driver for both generated clients,
a recording reverse proxy, and raw JSON-RPC builders.

Everything here runs real processes and real sockets on 127.0.0.1; nothing is mocked.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import http.server
import json
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support import PYTHON, ROOT, free_port, subprocess_env

GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:  # the checked-in bindings: weather_client, weather_server
    sys.path.insert(0, str(GENERATED))

from weather_client import AsyncClient, Client, models  # noqa: E402

__all__ = [
    "GENERATED",
    "OUR_STDIO",
    "PROTOCOL",
    "SDK_CLIENT",
    "SDK_NAMES",
    "SDK_STDIO",
    "STDIO_ENV",
    "WEATHER_NAMES",
    "WEATHER_TOOLS",
    "AsyncClient",
    "Client",
    "Driver",
    "Exchange",
    "RecordingProxy",
    "b64_sentinel",
    "models",
    "open_driver",
    "our_http_command",
    "rpc",
    "sdk_http_command",
    "standard_headers",
]

PROTOCOL = "2026-07-28"
SDK_PEER = ROOT / "tests" / "peers" / "sdk_server.py"
SDK_CLIENT = ROOT / "tests" / "peers" / "sdk_client.py"
WEATHER_TOOLS: list[dict[str, Any]] = json.loads((ROOT / "specs" / "weather.json").read_text())["tools"]
WEATHER_NAMES = [tool["name"] for tool in WEATHER_TOOLS]
SDK_NAMES = [*WEATHER_NAMES, "report_error", "slow_echo", "count_progress"]  # the peer's test-only extras

# Our generated server lists 2 tools per page, so every listing needs 3 pages.
OUR_PAGE_SIZE = "2"
SDK_STDIO = [PYTHON, str(SDK_PEER), "--stdio"]  # 4 tools per page; page 2's cursor is ""
OUR_STDIO = [PYTHON, "-m", "weather_server", "--stdio", "--page-size", OUR_PAGE_SIZE]
# Client.stdio's `env` is added to ours: the child must import mcpgen_runtime and weather_server.
STDIO_ENV = {"PYTHONPATH": subprocess_env()["PYTHONPATH"]}


def sdk_http_command(port: int) -> list[str]:
    return [PYTHON, str(SDK_PEER), "--http", "--port", str(port)]


def our_http_command(port: int) -> list[str]:
    return [PYTHON, "-m", "weather_server", "--http", "--port", str(port), "--page-size", OUR_PAGE_SIZE]


# -- one scenario, both generated clients -----------------------------------------------------


class Driver:
    """A generated `Client` or `AsyncClient`, driven the same way: `drv(lambda c: c.list_users())`.

    The lambda returns a value (sync) or a coroutine (async); async clients live on one
    `asyncio.Runner` for their whole life, so a module can reuse one client across tests.
    """

    def __init__(self, client: Client | AsyncClient, runner: asyncio.Runner | None) -> None:
        self.client = client
        self.runner = runner

    def __call__(self, call: Callable[[Any], Any]) -> Any:
        value = call(self.client)
        return self.runner.run(value) if self.runner is not None else value

    def close(self) -> None:
        if self.runner is None:
            self.client.close()  # type: ignore[union-attr]
            return
        try:
            self.runner.run(self.client.aclose())  # type: ignore[union-attr]
        finally:
            self.runner.close()


@contextlib.contextmanager
def open_driver(mode: str, *, url: str | None = None, command: list[str] | None = None) -> Iterator[Driver]:
    """The generated client of `mode` ("sync" | "async") over HTTP (`url`) or stdio (`command`)."""
    if mode == "sync":
        client: Client | AsyncClient = (
            Client(url) if url is not None else Client.stdio(command or [], env=STDIO_ENV, cwd=ROOT)
        )
        drv = Driver(client, None)
    else:
        runner = asyncio.Runner()
        if url is not None:
            client = AsyncClient(url)
        else:
            client = AsyncClient.stdio(command or [], env=STDIO_ENV, cwd=ROOT)
            runner.run(client.__aenter__())  # start the process now, not at the first call
        drv = Driver(client, runner)
    try:
        yield drv
    finally:
        drv.close()


# -- what went over the wire ------------------------------------------------------------------


@dataclass
class Exchange:
    """One POST as the client sent it, and the upstream server's answer."""

    headers: dict[str, str]  # lower-case names, as received from the client
    body: Any
    status: int
    reply: Any  # the JSON-RPC response (JSON body, or the last SSE `data:` event)

    @property
    def method(self) -> str:
        return str(self.body.get("method"))


@dataclass
class RecordingProxy:
    """A loopback reverse proxy: forwards every POST to `upstream` unchanged (minus the headers
    named in `drop`) and records it, so tests can assert on the bytes a client really sent."""

    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)
    drop: frozenset[str] = frozenset()  # lower-case header names to strip before forwarding

    _HOP = frozenset(
        {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "accept-encoding"}
    )

    def __post_init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._http = httpx.Client(timeout=30.0)
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                received = {name.lower(): value for name, value in self.headers.items()}
                forwarded = {
                    name: value
                    for name, value in self.headers.items()
                    if name.lower() not in proxy._HOP and name.lower() not in proxy.drop
                }
                with proxy._lock:
                    answer = proxy._http.post(proxy.upstream, content=raw, headers=forwarded)
                content_type = answer.headers.get("content-type", "application/json")
                proxy.exchanges.append(
                    Exchange(
                        received, json.loads(raw), answer.status_code, _reply_of(answer.content, content_type)
                    )
                )
                self.send_response(answer.status_code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._http.close()

    @contextlib.contextmanager
    def recording(self, *, drop: frozenset[str] = frozenset()) -> Iterator[list[Exchange]]:
        """A fresh record for one test, optionally stripping headers on the way upstream."""
        self.exchanges = []
        self.drop = drop
        try:
            yield self.exchanges
        finally:
            self.drop = frozenset()


def _reply_of(content: bytes, content_type: str) -> Any:
    if not content:
        return None
    if content_type.startswith("text/event-stream"):
        events = [line[5:].strip() for line in content.decode().splitlines() if line.startswith("data:")]
        return json.loads(events[-1]) if events else None
    return json.loads(content)


# -- raw JSON-RPC for header-rule checks ------------------------------------------------------


def rpc(id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request carrying the per-request `_meta` every 2026-07-28 request needs (BASE-30)."""
    body = dict(params or {})
    body["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "interop-raw", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": body}


def standard_headers(message: dict[str, Any]) -> dict[str, str]:
    """Content negotiation plus MCP-Protocol-Version, Mcp-Method and (tools/call) Mcp-Name."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": message["method"],
    }
    if message["method"] == "tools/call":
        headers["Mcp-Name"] = message["params"]["name"]
    return headers


def b64_sentinel(text: str) -> str:
    return f"=?base64?{base64.b64encode(text.encode()).decode()}?="
