"""Serve one benchmark server under uvicorn with explicit, shared settings.

    python -m bench.serve KIND --port N [--http h11|httptools] [--loop asyncio|uvloop] [--rate-limit R/B]
                               [--task-tool]

KIND is one of `SERVERS`. Every server runs in this process (one uvicorn worker, no reload),
with the same uvicorn settings, so /proc/<pid> of this process is the server's CPU and memory.
`ours` is the generated package `bench_server` (specs/bench.json), served by the same ASGI app
`python -m bench_server --http` serves (`ToolServer.asgi_app()`, every check on), under uvicorn's
protocol with the slow-client limits as `run_http` serves it (slow_clients.py); its store is
`MCPGEN_STORE` from the environment, as for `python -m bench_server`, and `--rate-limit` turns on
the rate limit (bench/scale.py: a call that touches the store), `--task-tool` adds `sleep`, a tool
that runs as a task (bench/task_poll.py: what a `tasks/get` poll costs).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import _cli

ROOT = Path(__file__).resolve().parent.parent


SLEEP_TOOL = {
    "name": "sleep",
    "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    "execution": {"taskSupport": "optional"},
}


async def _sleep(args: dict[str, Any], ctx: Any) -> str:
    import asyncio

    await asyncio.sleep(float(args.get("seconds", 0)))  # a client that declared tasks gets a task
    return "slept"


def _ours(rate_limit: str | None = None, task_tool: bool = False) -> Any:
    import dataclasses

    from bench_server.handlers import Server

    from mcpgen_runtime.server import RateLimit

    config = Server.default_config()
    if rate_limit is not None:
        rate, _, burst = rate_limit.partition("/")
        config = dataclasses.replace(config, rate_limit=RateLimit(float(rate), int(burst)))
    server = Server(config)
    if task_tool:
        server.add_tool(SLEEP_TOOL, _sleep, notify=False)
    return server.asgi_app()


def _sdk() -> Any:
    from bench.peers.sdk_server import build_app

    return build_app(json_response=False)


def _sdk_json() -> Any:
    from bench.peers.sdk_server import build_app

    return build_app(json_response=True)


def _fastmcp() -> Any:
    from bench.peers.fastmcp_server import build_app

    return build_app()


def _bare() -> Any:
    from bench.peers.bare_asgi import build_app

    return build_app()


SERVERS: dict[str, Callable[[], Any]] = {
    "ours": _ours,
    "sdk": _sdk,
    "sdk-json": _sdk_json,
    "fastmcp": _fastmcp,
    "bare": _bare,
}


@click.command(help=__doc__.splitlines()[0] if __doc__ else None)
@click.argument("kind", type=click.Choice(sorted(SERVERS)))
@click.option("--port", type=int, required=True)
@click.option("--http", "http_name", default="h11", type=click.Choice(["h11", "httptools"]))
@click.option("--loop", default="asyncio", type=click.Choice(["asyncio", "uvloop"]))
@click.option("--rate-limit", metavar="RATE/BURST", help="ours only: the rate limit on")
@click.option("--task-tool", is_flag=True, help="ours only: add `sleep`, a tool that runs as a task")
def command(kind: str, port: int, http_name: str, loop: str, rate_limit: str | None, task_tool: bool) -> None:
    for path in (ROOT, ROOT / "generated"):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
    from .otel_bench import ENV, apply_mode

    apply_mode(os.environ.get(ENV))  # bench/otel_bench.py: OpenTelemetry off, unconfigured or on

    import uvicorn

    app = _ours(rate_limit, task_tool) if kind == "ours" else SERVERS[kind]()
    http: Any = http_name
    if kind == "ours":  # as run_http serves it: uvicorn's protocol with the slow-client limits
        from mcpgen_runtime.server.core.limits import HttpLimits
        from mcpgen_runtime.server.http.slow_clients import SlowClients, guarded_protocol

        http = guarded_protocol(http_name, SlowClients(HttpLimits()))
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        http=http,
        loop=loop,
        ws="none",
        lifespan="auto",  # the SDK and FastMCP apps start their session managers there
        log_level="warning",
        access_log=False,
        server_header=False,
        date_header=False,
        workers=None,
    )
    uvicorn.Server(config).run()


def main(argv: list[str] | None = None) -> None:
    _cli.run(command, argv)


if __name__ == "__main__":
    main()
