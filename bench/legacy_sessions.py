"""What an idle legacy session costs the server: memory per session, over 10,000 sessions, in-process.

    python -m bench.legacy_sessions [--sessions 10000] [--json FILE]

Two measurements, each with tracemalloc (Python allocations only) from a warmed-up state to the
moment every session is open and idle, after a garbage collection, divided by the count:

  asgi     the generated bench server's ASGI app (`Server().asgi_app()`, what `python -m
           bench_server --http` serves), driven directly (no uvicorn, no socket): per session an
           `initialize` for 2025-11-25 with the capabilities and clientInfo an SDK client sends,
           then `notifications/initialized` with the session's `Mcp-Session-Id`. Everything the
           app keeps counts: the session record, its id, the store's entry and the app's bounded
           header memo (a fixed cost spread over the sessions).
  record   the session record alone, as tests/runtime/server/legacy/test_session_dispatch.py measures it:
           `LegacyDispatcher.initialize` + `open_session` + `MemorySessionStore.add`.

The cap on live sessions (`LegacySessionOptions.max_sessions`, 10,000 by default) is raised above the
count, so no session is evicted while measuring.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click

from . import _cli, loadgen
from .servers import ROOT

for _path in (ROOT, ROOT / "generated"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

SESSIONS = 10_000
WARMUP = 100
BUDGET_BYTES = 8 * 1024  # per idle session (issue 10)
# What an SDK client declares at initialize (the conformance client's set: every client capability).
CAPABILITIES: dict[str, dict[str, Any]] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
}
CLIENT_INFO = {"name": "bench-client", "version": "1.0.0"}


def _initialize_message() -> dict[str, Any]:
    """A fresh `initialize` (fresh dicts: the server may keep what it is given)."""
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": loadgen.LEGACY_VERSION,
            "capabilities": {name: dict(value) for name, value in CAPABILITIES.items()},
            "clientInfo": dict(CLIENT_INFO),
        },
    }


def _measure(
    open_sessions: Callable[[int], Awaitable[None]], all_alive: Callable[[], Awaitable[bool]], count: int
) -> float:
    """Bytes per session that stay allocated after `open_sessions(count)` (one event loop, warmed);
    `all_alive()` then checks that no session was dropped."""

    async def scenario() -> float:
        await open_sessions(WARMUP)  # first-use caches, imports, the loop's own allocations
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            await open_sessions(count)
            gc.collect()
            per_session = (tracemalloc.get_traced_memory()[0] - before) / count
        finally:
            tracemalloc.stop()
        if not await all_alive():
            raise AssertionError("a session was dropped while measuring: the measurement is void")
        return per_session

    return asyncio.run(scenario())


def _server(max_sessions: int) -> Any:
    from bench_server.handlers import Server

    config = Server.default_config()
    return Server(
        dataclasses.replace(
            config, legacy_sessions=dataclasses.replace(config.legacy_sessions, max_sessions=max_sessions)
        )
    )


def asgi_bytes(count: int) -> float:
    """Per idle session, through the ASGI app (see the module docstring)."""
    from mcpgen_runtime import _json

    app = _server(count + WARMUP + 1).asgi_app()
    base_headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"),
    ]
    version = loadgen.LEGACY_VERSION.encode()

    async def post(body: bytes, extra: list[tuple[bytes, bytes]]) -> list[dict[str, Any]]:
        headers = [*base_headers, *extra, (b"content-length", str(len(body)).encode())]
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
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        request = {"type": "http.request", "body": body, "more_body": False}
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return request

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)
        return sent

    oldest: list[bytes] = []

    async def open_sessions(n: int) -> None:
        for _ in range(n):
            start = (await post(_json.dumps(_initialize_message()), []))[0]
            session_id = dict(start["headers"]).get(b"mcp-session-id")
            if start["status"] != 200 or session_id is None:
                raise AssertionError(f"initialize answered {start!r:.300}")
            done = await post(
                loadgen.INITIALIZED_BODY,
                [(b"mcp-session-id", session_id), (b"mcp-protocol-version", version)],
            )
            if done[0]["status"] != 202:
                raise AssertionError(f"notifications/initialized answered {done[0]!r:.300}")
            if not oldest:
                oldest.append(session_id)

    async def all_alive() -> bool:
        """The least recently used session still answers a ping (the store evicts that one first)."""
        answer = await post(
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            [(b"mcp-session-id", oldest[0]), (b"mcp-protocol-version", version)],
        )
        return bool(answer[0]["status"] == 200)

    return _measure(open_sessions, all_alive, count)


def record_bytes(count: int) -> float:
    """Per idle session, the record alone (see the module docstring)."""
    from mcpgen_runtime.server.legacy.session_dispatch import LegacyDispatcher
    from mcpgen_runtime.server.legacy.sessions import MemorySessionStore, new_session_id

    era = LegacyDispatcher(_server(count + WARMUP + 1))
    store = MemorySessionStore(idle_timeout_s=3600, max_sessions=count + WARMUP + 1)

    async def open_sessions(n: int) -> None:
        for _ in range(n):
            _, handshake = era.initialize(_initialize_message())
            if handshake is None or not await store.add(era.open_session(handshake, new_session_id(), None)):
                raise AssertionError("a session was not opened")

    async def all_alive() -> bool:
        return len(store) == count + WARMUP

    return _measure(open_sessions, all_alive, count)


def run(count: int = SESSIONS) -> dict[str, Any]:
    started = time.monotonic()
    rows = [
        {"part": "asgi", "sessions": count, "bytes_per_session": asgi_bytes(count)},
        {"part": "record", "sessions": count, "bytes_per_session": record_bytes(count)},
    ]
    return {"rows": rows, "budget_bytes": BUDGET_BYTES, "seconds": time.monotonic() - started}


LABELS = {
    "asgi": "through the generated server's ASGI app (initialize + notifications/initialized)",
    "record": "the session record and store entry alone (LegacyDispatcher + MemorySessionStore)",
}


def table(data: dict[str, Any]) -> str:
    lines = [
        "| idle legacy sessions | sessions | bytes per session | KiB per session |",
        "|---|---:|---:|---:|",
    ]
    for row in data["rows"]:
        lines.append(
            f"| {LABELS[row['part']]} | {row['sessions']} | {row['bytes_per_session']:.0f} | "
            f"{row['bytes_per_session'] / 1024:.2f} |"
        )
    return "\n".join(lines)


def verdicts(data: dict[str, Any]) -> list[str]:
    budget = data["budget_bytes"]
    return [
        f"idle legacy session ({row['part']}): {row['bytes_per_session'] / 1024:.2f} KiB "
        f"(target ≤ {budget / 1024:.0f} KiB, {row['sessions']} sessions) "
        f"{'PASS' if row['bytes_per_session'] <= budget else 'FAIL'}"
        for row in data["rows"]
    ]


@click.command(help=__doc__.splitlines()[0] if __doc__ else None)
@click.option("--sessions", type=int, default=SESSIONS)
@click.option("--json", "json_path", type=click.Path(path_type=Path))
def command(sessions: int, json_path: Path | None) -> dict[str, Any]:
    data = run(sessions)
    data["verdicts"] = verdicts(data)
    print(table(data))
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
