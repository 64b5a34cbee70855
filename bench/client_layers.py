"""Where a client call's time goes, layer by layer, against one live server (the bare ASGI app,
so the server's share is as small and steady as it gets).

    python -m bench.client_layers [--calls 800] [--rounds 12]

Each layer adds one piece to the one below it:

  raw, socket with timeout   pre-built request bytes on a socket with a Python-level timeout
                             (poll() before every send and recv: what the lean engine avoids)
  raw, blocking socket       the same, blocking: the floor
  lean engine: post          `SyncPool.post(payload).read()`: pooling, kernel timeouts, head parsing
  transport.request          + JSON encode/decode, request head from a header dict, reply checks
  Client.add                 + the generated client and its core: argument schema check, ids, `_meta`,
                             MCP headers, result and output models

and the asyncio twins (raw asyncio streams, `AsyncPool.post`, `AsyncHttpTransport.request`,
`AsyncClient.add`). Rounds are interleaved; reported is the minimum over rounds of the mean per
call (CPU of this process, and wall time): on a shared machine, noise only ever adds.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click

from . import _cli, loadgen
from .client_bench import RawAsync, _read_reply
from .servers import ROOT, start

for _path in (ROOT, ROOT / "generated"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"}


async def _measure(port: int, calls: int, rounds: int) -> dict[str, tuple[float, float]]:
    import orjson
    from bench_client import AsyncClient, Client

    from mcpgen_runtime.transport import AsyncHttpTransport, HttpTransport

    url = f"http://127.0.0.1:{port}/mcp"
    request = loadgen.build_request("127.0.0.1", port, "/mcp", 1)
    body = request.split(b"\r\n\r\n", 1)[1]
    message = orjson.loads(body)

    def raw_socket(timeout: float | None) -> Callable[[], Callable[[], None]]:
        def fresh() -> Callable[[], None]:
            sock = socket.create_connection(("127.0.0.1", port))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(timeout)
            opened.append(sock)

            def call() -> None:
                sock.sendall(request)
                _read_reply(lambda: sock.recv(262144))

            return call

        return fresh

    opened: list[socket.socket] = []
    sync_transport = HttpTransport(url)
    sync_payload = sync_transport._engine.heads.head(HEADERS, len(body)) + body
    sync_client = Client(url, on_drift="ignore")  # the call path only: no drift listing
    async_transport = AsyncHttpTransport(url)
    async_payload = async_transport._engine.heads.head(HEADERS, len(body)) + body
    async_client = AsyncClient(url, on_drift="ignore")
    raw_async = RawAsync(port)
    await raw_async.open()

    async def apost() -> None:
        await (await async_transport._engine.pool.post(async_payload, 30.0)).aread()

    sync_layers: dict[str, Callable[[], Callable[[], Any]]] = {
        "sync: raw, socket with a Python timeout": raw_socket(30.0),
        "sync: raw, blocking socket": raw_socket(None),
        "sync: lean engine post": lambda: lambda: sync_transport._engine.pool.post(sync_payload, 30.0).read(),
        "sync: transport.request": lambda: lambda: sync_transport.request(message, HEADERS, timeout=30.0),
        "sync: Client.add": lambda: lambda: sync_client.add(a=1, b=2),
    }
    async_layers: dict[str, Callable[[], Awaitable[Any]]] = {
        "async: raw asyncio streams": raw_async.call,
        "async: lean engine post": apost,
        "async: transport.request": lambda: async_transport.request(message, HEADERS, timeout=30.0),
        "async: AsyncClient.add": lambda: async_client.add(a=1, b=2),
    }
    best: dict[str, tuple[float, float]] = {}

    def keep(name: str, cpu: float, wall: float) -> None:
        old = best.get(name)
        best[name] = (cpu, wall) if old is None else (min(old[0], cpu), min(old[1], wall))

    try:
        for _ in range(rounds):
            for name, make in sync_layers.items():
                call = make()
                for _ in range(50):
                    call()
                cpu0, wall0 = time.process_time(), time.perf_counter()
                for _ in range(calls):
                    call()
                keep(
                    name,
                    (time.process_time() - cpu0) / calls * 1e6,
                    (time.perf_counter() - wall0) / calls * 1e6,
                )
            await raw_async.prepare()
            for name, acall in async_layers.items():
                for _ in range(50):
                    await acall()
                cpu0, wall0 = time.process_time(), time.perf_counter()
                for _ in range(calls):
                    await acall()
                keep(
                    name,
                    (time.process_time() - cpu0) / calls * 1e6,
                    (time.perf_counter() - wall0) / calls * 1e6,
                )
    finally:
        for sock in opened:
            sock.close()
        sync_transport.close()
        sync_client.close()
        await async_transport.aclose()
        await async_client.aclose()
        await raw_async.aclose()
    return best


def run(calls: int = 800, rounds: int = 12) -> dict[str, tuple[float, float]]:
    server = start("bare", "h11")
    try:
        return asyncio.run(_measure(server.port, calls, rounds))
    finally:
        server.stop()


def table(best: dict[str, tuple[float, float]]) -> str:
    lines = ["| layer | CPU µs/call | + over the layer above | wall µs/call |", "|---|---:|---:|---:|"]
    previous: float | None = None
    for name, (cpu, wall) in best.items():
        if name.startswith("async") and previous is not None and "raw" in name:
            previous = None
        delta = "" if previous is None else f"{cpu - previous:+.1f}"
        lines.append(f"| {name} | {cpu:.1f} | {delta} | {wall:.0f} |")
        previous = cpu
    return "\n".join(lines)


@click.command(help=__doc__.splitlines()[0] if __doc__ else None)
@click.option("--calls", type=int, default=800)
@click.option("--rounds", type=int, default=12)
@click.option("--json", "json_path", type=click.Path(path_type=Path))
def command(calls: int, rounds: int, json_path: Path | None) -> dict[str, tuple[float, float]]:
    best = run(calls, rounds)
    print(table(best))
    if json_path is not None:
        json_path.write_text(json.dumps(best, indent=1))
    return best


def main(argv: list[str] | None = None) -> dict[str, tuple[float, float]]:
    return _cli.run(command, argv)


if __name__ == "__main__":
    main()
