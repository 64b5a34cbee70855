"""Client benchmark: latency and CPU of one sequential `add(1, 2)` call, per client, against one server.

    python -m bench.client_bench [--calls 250] [--repeats 20] [--server ours] [--legacy] [--json FILE]

Clients, all in this process, all against the same server (bench/serve.py, h11+asyncio):

  raw-sync      the baseline: a pre-built request (bytes) over one kept-alive blocking socket,
                reply read by Content-Length; no JSON encoding or parsing, no validation
  raw-async     the same over asyncio streams (the floor of any asyncio client)
  ours-sync     generated `bench_client.Client(url).add(a=1, b=2)`: argument schema check, request
                building, MCP headers, transport, result and output-model parsing
  ours-async    generated `bench_client.AsyncClient`
  (ours: `on_drift="ignore"`: the drift check is one `tools/list` per client, not per call)
  ours-httpx    `bench_client.Client` on the httpx engine (what the lean transport replaced)
  ours-async-httpx  `bench_client.AsyncClient` on the httpx engine
  sdk           the official SDK: `mcp.Client(url).call_tool("add", {...})` (asyncio)

The same in the initialize-based era (`LEGACY_CLIENTS`, part `legacy-client` of `python -m bench`;
the server is the same process, which serves both eras), each in a 2025-11-25 session opened
before the first measured call:

  raw-legacy          the baseline: a pre-built legacy `tools/call` (Mcp-Session-Id,
                      MCP-Protocol-Version, no `_meta`) over one kept-alive blocking socket
  ours-sync-legacy    generated `bench_client.Client(url, era="legacy")`
  ours-async-legacy   generated `bench_client.AsyncClient(url, era="legacy")`
  sdk-legacy          the official SDK forced to its initialize handshake: `mcp.Client(url, mode="legacy")`

Rounds are interleaved (each repeat measures every client once, in rotating order); reported are
medians over repeats of each round's median latency and of its mean CPU per call
(`time.process_time`, this process only). Overhead = latency - the baseline's latency
(raw-sync; raw-legacy for the legacy clients), compared with the SDK's overhead in the same era.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import socket
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click

from . import _cli, loadgen, procstat
from .servers import ROOT, Server, start

for _path in (ROOT, ROOT / "generated"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

CLIENTS = ["raw-sync", "raw-async", "ours-sync", "ours-async", "ours-httpx", "ours-async-httpx", "sdk"]
BASELINE = "raw-sync"
SDK = "sdk"
LEGACY_CLIENTS = ["raw-legacy", "ours-sync-legacy", "ours-async-legacy", "sdk-legacy"]
LEGACY_BASELINE = "raw-legacy"
LEGACY_SDK = "sdk-legacy"
TARGET = 0.1  # our overhead ≤ this fraction of the SDK's, in each era


def _read_reply(recv: Callable[[], bytes], first: bytes = b"") -> bytes:
    """One Content-Length-framed reply (the server under test always frames that way)."""
    data = first
    while True:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            head = data[:end].lower()
            at = head.find(b"content-length:")
            line_end = head.find(b"\r\n", at)
            length = int(head[at + 15 : line_end if line_end > 0 else None])
            total = end + 4 + length
            while len(data) < total:
                data += recv()
            return data[end + 4 : total]
        chunk = recv()
        if not chunk:
            raise ConnectionError("server closed the connection")
        data += chunk


class RawSync:
    def __init__(self, port: int) -> None:
        self.port = port
        self.request = loadgen.build_request("127.0.0.1", port, "/mcp", 1)
        self.sock = self._connect()

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def prepare(self) -> None:
        """A fresh connection per round (uvicorn drops idle ones after 5 s), opened untimed."""
        self.sock.close()
        self.sock = self._connect()

    def call(self) -> None:
        sock = self.sock
        sock.sendall(self.request)
        _read_reply(lambda: sock.recv(65536))

    def close(self) -> None:
        self.sock.close()


class RawLegacy(RawSync):
    """RawSync in a legacy session: the session is opened once (untimed, loadgen.open_session)
    and every round's fresh connection sends the session's pre-built `tools/call`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock, self.session_id = loadgen.open_session("127.0.0.1", port)
        self.request = loadgen.build_legacy_request("127.0.0.1", port, "/mcp", self.session_id, 1)
        _, status, content_type, body = loadgen.exchange(self.sock, self.request)  # the session works
        if status != 200:
            raise loadgen.BadResponse(f"legacy tools/call answered HTTP {status}: {body[:300]!r}")
        loadgen.check_result(content_type, body)

    def close(self) -> None:
        self.sock.close()
        loadgen.end_sessions("127.0.0.1", self.port, "/mcp", [self.session_id])


class RawAsync:
    def __init__(self, port: int) -> None:
        self.port = port
        self.request = loadgen.build_request("127.0.0.1", port, "/mcp", 1)

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def prepare(self) -> None:
        """A fresh connection per round (uvicorn drops idle ones after 5 s), opened untimed."""
        self.writer.close()
        await self.open()

    async def call(self) -> None:
        self.writer.write(self.request)
        data = await self.reader.readuntil(b"\r\n\r\n")
        head = data.lower()
        at = head.find(b"content-length:")
        length = int(head[at + 15 : head.find(b"\r\n", at)])
        await self.reader.readexactly(length)

    async def aclose(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


def _check(value: Any) -> None:
    total = getattr(value, "sum", None)
    if total is None:
        structured = getattr(value, "structured_content", None) or getattr(value, "structuredContent", None)
        total = structured.get("sum") if isinstance(structured, dict) else None
    if total != 3:
        raise AssertionError(f"add(1, 2) returned {value!r:.300}")


class Bench:
    """Every client opened once, inside one event loop (the SDK client's anyio task group must be
    entered and left in the same task); sync clients run on that loop's thread, blocking it."""

    def __init__(self, server: Server, clients: list[str], stack: contextlib.AsyncExitStack) -> None:
        self.url = f"http://127.0.0.1:{server.port}/mcp"
        self.port = server.port
        self.clients = clients
        self.stack = stack
        self.sync_calls: dict[str, Callable[[], Any]] = {}
        self.async_calls: dict[str, Callable[[], Awaitable[Any]]] = {}
        self.prepares: dict[str, Callable[[], Any]] = {}
        self.engines: dict[str, str] = {}

    async def open(self) -> None:
        for name in self.clients:
            await getattr(self, "_open_" + name.replace("-", "_"))()

    async def _open_raw_sync(self) -> None:
        raw = RawSync(self.port)
        self.sync_calls["raw-sync"] = raw.call
        self.prepares["raw-sync"] = raw.prepare
        self.stack.callback(raw.close)

    async def _open_raw_async(self) -> None:
        raw = RawAsync(self.port)
        await raw.open()
        self.async_calls["raw-async"] = raw.call
        self.prepares["raw-async"] = raw.prepare
        self.stack.push_async_callback(raw.aclose)

    async def _open_ours_sync(self) -> None:
        from bench_client import Client

        client = self.stack.enter_context(Client(self.url, on_drift="ignore"))
        self.engines["ours-sync"] = getattr(client.transport, "engine", "httpx")
        self.sync_calls["ours-sync"] = lambda: client.add(a=1, b=2)

    async def _open_ours_async(self) -> None:
        from bench_client import AsyncClient

        client = await self.stack.enter_async_context(AsyncClient(self.url, on_drift="ignore"))
        self.engines["ours-async"] = getattr(client.transport, "engine", "httpx")
        self.async_calls["ours-async"] = lambda: client.add(a=1, b=2)

    async def _open_ours_httpx(self) -> None:
        import httpx
        from bench_client import Client

        from mcpgen_runtime.transport import BASE_HEADERS, HttpTransport

        http = self.stack.enter_context(httpx.Client(headers=dict(BASE_HEADERS), timeout=30.0))
        transport = HttpTransport(self.url, client=http)
        client = self.stack.enter_context(Client(transport=transport, on_drift="ignore"))
        self.engines["ours-httpx"] = transport.engine
        self.sync_calls["ours-httpx"] = lambda: client.add(a=1, b=2)

    async def _open_ours_async_httpx(self) -> None:
        import httpx
        from bench_client import AsyncClient

        from mcpgen_runtime.transport import BASE_HEADERS, AsyncHttpTransport

        http = await self.stack.enter_async_context(
            httpx.AsyncClient(headers=dict(BASE_HEADERS), timeout=30.0)
        )
        transport = AsyncHttpTransport(self.url, client=http)
        client = await self.stack.enter_async_context(AsyncClient(transport=transport, on_drift="ignore"))
        self.engines["ours-async-httpx"] = transport.engine
        self.async_calls["ours-async-httpx"] = lambda: client.add(a=1, b=2)

    async def _open_sdk(self) -> None:
        from mcp import Client as SdkClient

        client = await self.stack.enter_async_context(SdkClient(self.url))
        self.async_calls["sdk"] = lambda: client.call_tool("add", {"a": 1, "b": 2})

    async def _open_raw_legacy(self) -> None:
        raw = RawLegacy(self.port)
        self.sync_calls["raw-legacy"] = raw.call
        self.prepares["raw-legacy"] = raw.prepare
        self.stack.callback(raw.close)

    async def _open_ours_sync_legacy(self) -> None:
        from bench_client import Client

        client = self.stack.enter_context(Client(self.url, era="legacy", on_drift="ignore"))
        self.engines["ours-sync-legacy"] = getattr(client.transport, "engine", "httpx")
        self.sync_calls["ours-sync-legacy"] = lambda: client.add(a=1, b=2)

    async def _open_ours_async_legacy(self) -> None:
        from bench_client import AsyncClient

        client = await self.stack.enter_async_context(AsyncClient(self.url, era="legacy", on_drift="ignore"))
        self.engines["ours-async-legacy"] = getattr(client.transport, "engine", "httpx")
        self.async_calls["ours-async-legacy"] = lambda: client.add(a=1, b=2)

    async def _open_sdk_legacy(self) -> None:
        from mcp import Client as SdkClient

        client = await self.stack.enter_async_context(SdkClient(self.url, mode="legacy"))
        self.async_calls["sdk-legacy"] = lambda: client.call_tool("add", {"a": 1, "b": 2})

    async def warm(self, calls: int) -> None:
        for name in self.clients:
            # a raw connection opened while the other clients were set up may have sat idle past
            # uvicorn's 5 s keep-alive on a loaded machine: warm on a fresh one
            await self.prepare(name)
            if name in self.sync_calls:
                value = self.sync_calls[name]()
            else:
                value = await self.async_calls[name]()
            if not name.startswith("raw"):
                _check(value)
            await self.measure(name, calls)

    async def prepare(self, name: str) -> None:
        prepare = self.prepares.get(name)
        if prepare is not None:
            result = prepare()
            if asyncio.iscoroutine(result):
                await result

    async def measure(self, name: str, calls: int) -> tuple[float, float, float]:
        """(median latency µs, mean latency µs, CPU µs per call) of `calls` sequential calls."""
        await self.prepare(name)
        gc.collect()
        lat = [0.0] * calls
        clock = time.perf_counter
        if name in self.sync_calls:
            call = self.sync_calls[name]
            cpu0 = time.process_time()
            for i in range(calls):
                t = clock()
                call()
                lat[i] = clock() - t
            cpu = time.process_time() - cpu0
        else:
            acall = self.async_calls[name]
            cpu0 = time.process_time()
            for i in range(calls):
                t = clock()
                await acall()
                lat[i] = clock() - t
            cpu = time.process_time() - cpu0
        return statistics.median(lat) * 1e6, statistics.fmean(lat) * 1e6, cpu / calls * 1e6


async def _run_clients(
    server: Server, clients: list[str], calls: int, repeats: int, log: Any
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    rounds: list[dict[str, Any]] = []
    async with contextlib.AsyncExitStack() as stack:
        bench = Bench(server, clients, stack)
        await bench.open()
        await bench.warm(max(calls // 5, 50))
        for repeat in range(repeats):
            shift = repeat % len(clients)
            for name in clients[shift:] + clients[:shift]:
                median, mean, cpu = await bench.measure(name, calls)
                rounds.append(
                    {"client": name, "repeat": repeat, "median_us": median, "mean_us": mean, "cpu_us": cpu}
                )
                print(
                    f"  [client rep {repeat + 1}/{repeats}] {name:<11} median {median:8.1f} us  "
                    f"mean {mean:8.1f} us  cpu {cpu:8.1f} us/call",
                    file=log,
                    flush=True,
                )
        return rounds, bench.engines


def run(
    clients: list[str],
    *,
    calls: int,
    repeats: int,
    server_kind: str = "ours",
    baseline: str = BASELINE,
    sdk: str = SDK,
    log: Any = sys.stderr,
) -> dict[str, Any]:
    """`baseline` and `sdk` name the clients the overheads are measured from and compared with."""
    server = start(server_kind, "h11")
    try:
        rounds, engines = asyncio.run(_run_clients(server, clients, calls, repeats, log))
        server_cmd = server.command()
    finally:
        server.stop()
    return {
        "rounds": rounds,
        "engines": engines,
        "server": server_kind,
        "server_command": server_cmd,
        "settings": {
            "clients": clients,
            "calls": calls,
            "repeats": repeats,
            "baseline": baseline,
            "sdk": sdk,
        },
        "machine": procstat.machine(),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def summarize(data: dict[str, Any]) -> list[dict[str, Any]]:
    settings = data["settings"]
    clients = settings["clients"]
    baseline, sdk_name = settings.get("baseline", BASELINE), settings.get("sdk", SDK)
    rows = []
    by = {name: [r for r in data["rounds"] if r["client"] == name] for name in clients}
    base = statistics.median(r["median_us"] for r in by[baseline]) if by.get(baseline) else None
    for name in clients:
        mine = by[name]
        if not mine:
            continue
        median = statistics.median(r["median_us"] for r in mine)
        rows.append(
            {
                "client": name,
                "engine": data["engines"].get(name),
                "median_us": median,
                "mean_us": statistics.median(r["mean_us"] for r in mine),
                "cpu_us": statistics.median(r["cpu_us"] for r in mine),
                "overhead_us": None if base is None else median - base,
            }
        )
    sdk = next((r for r in rows if r["client"] == sdk_name), None)
    for row in rows:
        row["overhead_vs_sdk"] = (
            row["overhead_us"] / sdk["overhead_us"]
            if sdk and sdk["overhead_us"] and row["overhead_us"] is not None
            else None
        )
    return rows


LABELS = {
    "raw-sync": "raw POST, blocking socket (baseline)",
    "raw-async": "raw POST, asyncio streams",
    "ours-sync": "mcpgen Client (generated, sync)",
    "ours-async": "mcpgen AsyncClient (generated)",
    "ours-httpx": "mcpgen Client on httpx (old engine)",
    "ours-async-httpx": "mcpgen AsyncClient on httpx (old engine)",
    "sdk": "SDK mcp.Client (async)",
    "raw-legacy": "raw legacy POST in a session, blocking socket (baseline)",
    "ours-sync-legacy": 'mcpgen Client (generated, sync, era="legacy")',
    "ours-async-legacy": 'mcpgen AsyncClient (generated, era="legacy")',
    "sdk-legacy": 'SDK mcp.Client (async, mode="legacy")',
}
OURS = ("ours-sync", "ours-async", "ours-sync-legacy", "ours-async-legacy")


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| client | latency p50 µs | mean µs | client CPU µs/call | overhead µs | overhead ÷ SDK's |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        over = f"{row['overhead_us']:.0f}" if row["overhead_us"] is not None else "-"
        ratio = f"{row['overhead_vs_sdk']:.3f}" if row["overhead_vs_sdk"] is not None else "-"
        lines.append(
            f"| {LABELS[row['client']]} | {row['median_us']:.0f} | {row['mean_us']:.0f} | "
            f"{row['cpu_us']:.0f} | {over} | {ratio} |"
        )
    return "\n".join(lines)


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for row in rows:
        if row["client"] in OURS and row["overhead_vs_sdk"] is not None:
            ok = row["overhead_vs_sdk"] <= TARGET
            out.append(
                f"client overhead {row['client']}: {row['overhead_us']:.0f} µs = "
                f"{row['overhead_vs_sdk']:.3f} x SDK's (target ≤ {TARGET:.3f}) {'PASS' if ok else 'FAIL'}"
            )
    return out


@click.command(help=__doc__.splitlines()[0] if __doc__ else None)
@click.option("--clients", "client_list", help="comma list (default: every client of the era)")
@click.option("--legacy", is_flag=True, help="the legacy-era clients (LEGACY_CLIENTS)")
@click.option("--calls", type=int, default=250, help="sequential calls per round")
@click.option("--repeats", type=int, default=20)
@click.option("--server", default="ours")
@click.option("--json", "json_path", type=click.Path(path_type=Path))
def command(
    client_list: str | None, legacy: bool, calls: int, repeats: int, server: str, json_path: Path | None
) -> dict[str, Any]:
    era = (LEGACY_CLIENTS, LEGACY_BASELINE, LEGACY_SDK) if legacy else (CLIENTS, BASELINE, SDK)
    known, baseline, sdk = era
    clients = [c for c in (client_list or ",".join(known)).split(",") if c]
    unknown = [c for c in clients if c not in known]
    if unknown:
        raise click.UsageError(f"unknown clients: {', '.join(unknown)}")
    if baseline not in clients:
        clients.insert(0, baseline)
    data = run(clients, calls=calls, repeats=repeats, server_kind=server, baseline=baseline, sdk=sdk)
    rows = summarize(data)
    data["summary"] = rows
    data["verdicts"] = verdicts(rows)
    print(table(rows))
    for line in data["verdicts"]:
        print(line)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(data, indent=1))
    return data


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return _cli.run(command, argv)


if __name__ == "__main__":
    main()
