"""Micro-benchmarks: CPU per operation of the parts, in-process, no sockets (minimum of 5 runs).

    python -m bench.micro [--json FILE]

What the end-to-end numbers are made of:

  server app       one `tools/call add` through each ASGI app, driven directly (no uvicorn, no
                   socket): our generated server (all checks on) vs the bare ceiling app; and
                   `ToolServer.handle_message` alone
  client core      one generated `Client.add(a=1, b=2)` over a stub transport (no I/O): argument
                   schema check, flow, `_meta`, headers, JSON both ways, result and output models
  lean transport   request-head building and response-head parsing, first time vs cached
  asyncio timers   an `asyncio.timeout()` scope vs one `loop.call_at` timer per wait
  DPoP             what a DPoP-bound token adds per request: the client's proof (ES256), the
                   server's check of it (RFC 9449 §4.3, without the store's replay check)
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import _cli
from .servers import ROOT

for _path in (ROOT, ROOT / "generated"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

BODY = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
)
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"add"),
    (b"content-length", str(len(BODY)).encode()),
]


def _per_op(fn: Callable[[], Any], n: int, repeats: int = 5) -> float:
    """Minimum over repeats of CPU µs per call (on a shared machine noise only adds)."""
    for _ in range(max(n // 10, 10)):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        samples.append((time.process_time() - t0) / n * 1e6)
    return min(samples)


def _per_op_async(make: Callable[[], Any], n: int, repeats: int = 5) -> float:
    async def run(count: int) -> float:
        t0 = time.process_time()
        for _ in range(count):
            await make()
        return (time.process_time() - t0) / count * 1e6

    async def main() -> float:
        await run(max(n // 10, 10))
        return min([await run(n) for _ in range(repeats)])

    return asyncio.run(main())


def _asgi_call(app: Any) -> Callable[[], Any]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": HEADERS,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    request = {"type": "http.request", "body": BODY, "more_body": False}
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return request

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def call() -> None:
        sent.clear()
        await app(scope, receive, send)
        if b'"sum":3' not in sent[-1]["body"]:
            raise AssertionError(f"unexpected reply {sent[-1]!r:.300}")

    return call


def server_app(n: int) -> dict[str, float]:
    from bench_server.handlers import Server

    from bench.peers.bare_asgi import app as bare
    from mcpgen_runtime import _json
    from mcpgen_runtime.server import IncomingRequest

    server = Server()
    ours = server.asgi_app()
    message = _json.loads(BODY)
    headers = {name.decode(): value.decode() for name, value in HEADERS}
    incoming = IncomingRequest("http", headers)
    return {
        "ours_asgi_us": _per_op_async(_asgi_call(ours), n),
        "bare_asgi_us": _per_op_async(_asgi_call(bare), n),
        "ours_handle_message_us": _per_op_async(lambda: server.handle_message(message, incoming), n),
    }


def client_core(n: int) -> dict[str, float]:
    import orjson
    from bench_client import Client

    reply = orjson.loads(
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\\"sum\\":3.0}"}],'
        b'"structuredContent":{"sum":3.0},"isError":false,"resultType":"complete"}}'
    )

    class Stub:
        sends_headers = True

        def request(
            self, message: dict[str, Any], headers: Any, *, timeout: Any, on_notification: Any = None
        ) -> tuple[dict[str, Any], int]:
            orjson.dumps(message)
            return {**reply, "id": message["id"]}, 200

        def notify(self, message: Any, headers: Any) -> None:
            pass

        def close(self) -> None:
            pass

    # The call path only: no drift listing (which this stub cannot answer); a baseline tree from
    # before pinned definitions has no such option.
    skip_drift = {"on_drift": "ignore"} if "on_drift" in inspect.signature(Client).parameters else {}
    client = Client(transport=Stub(), **skip_drift)
    return {"client_core_us": _per_op(lambda: client.add(a=1, b=2), n)}


def transport_parts(n: int) -> dict[str, float]:
    from mcpgen_runtime.transport import BASE_HEADERS, http1_wire

    origin = http1_wire.lean_origin("http://127.0.0.1:8000/mcp")
    assert origin is not None
    builder = http1_wire.HeadBuilder(origin, BASE_HEADERS)
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"}
    raw = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 247"

    def head_uncached() -> None:
        builder._cache.clear()
        builder.head(headers, 200)

    return {
        "request_head_uncached_us": _per_op(head_uncached, n),
        "request_head_cached_us": _per_op(lambda: builder.head(headers, 200), n),
        "response_head_parse_us": _per_op(lambda: http1_wire.parse_head(raw), n),
        "response_head_cached_us": _per_op(lambda: http1_wire.cached_head(raw), n),
    }


def timers(n: int) -> dict[str, float]:
    async def scope() -> None:
        async with asyncio.timeout(30):
            pass

    async def call_at() -> None:
        loop = asyncio.get_running_loop()
        loop.call_at(loop.time() + 30, _noop).cancel()

    return {
        "asyncio_timeout_scope_us": _per_op_async(scope, n),
        "call_at_timer_us": _per_op_async(call_at, n),
    }


def _noop() -> None:
    pass


def dpop(n: int) -> dict[str, float]:
    from mcpgen_runtime.protocol.oauth.dpop import DPoPKey, check_proof

    key = DPoPKey.generate()
    url = "https://mcp.example.com/mcp"
    token = "eyJ" + "a" * 800  # an access token's usual length
    proof = key.proof("POST", url, access_token=token)
    n = max(n // 10, 50)  # signatures: milliseconds, not microseconds
    return {
        "dpop_proof_us": _per_op(lambda: key.proof("POST", url, access_token=token), n),
        "dpop_check_us": _per_op(lambda: check_proof(proof, method="POST", url=url, access_token=token), n),
    }


def run(n: int = 5000) -> dict[str, float]:
    results: dict[str, float] = {}
    for part in (server_app, client_core, transport_parts, timers, dpop):
        results.update(part(n))
    return results


LABELS = {
    "ours_asgi_us": "server: our ASGI app, one tools/call add (all checks, no uvicorn)",
    "bare_asgi_us": "server: bare ASGI app, same request",
    "ours_handle_message_us": "server: ToolServer.handle_message alone",
    "client_core_us": "client: generated Client.add over a stub transport",
    "request_head_uncached_us": "lean transport: build request head (first time)",
    "request_head_cached_us": "lean transport: build request head (cached header set)",
    "response_head_parse_us": "lean transport: parse response head",
    "response_head_cached_us": "lean transport: parse response head (memoized)",
    "asyncio_timeout_scope_us": "asyncio.timeout() scope per request",
    "call_at_timer_us": "loop.call_at timer per wait",
    "dpop_proof_us": "client: a DPoP proof for one request (ES256)",
    "dpop_check_us": "server: checking one DPoP proof (before the replay check)",
}


def table(results: dict[str, float]) -> str:
    lines = ["| part | CPU µs/op |", "|---|---:|"]
    lines += [f"| {LABELS.get(key, key)} | {value:.1f} |" for key, value in results.items()]
    return "\n".join(lines)


@click.command(help=__doc__.splitlines()[0] if __doc__ else None)
@click.option("-n", type=int, default=5000)
@click.option("--json", "json_path", type=click.Path(path_type=Path))
def command(n: int, json_path: Path | None) -> dict[str, float]:
    results = run(n)
    print(table(results))
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(results, indent=1))
    return results


def main(argv: list[str] | None = None) -> dict[str, float]:
    return _cli.run(command, argv)


if __name__ == "__main__":
    main()
