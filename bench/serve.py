"""Serve one benchmark server under uvicorn with explicit, shared settings.

    python -m bench.serve KIND --port N [--http h11|httptools] [--loop asyncio|uvloop]

KIND is one of `SERVERS`. Every server runs in this process (one uvicorn worker, no reload),
with the same uvicorn settings, so /proc/<pid> of this process is the server's CPU and memory.
`ours` is the generated package `bench_server` (specs/bench.json), served by the same ASGI app
`python -m bench_server --http` serves (`ToolServer.asgi_app()`, every check on), under uvicorn's
protocol with the slow-client limits as `run_http` serves it (slow_clients.py).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _ours() -> Any:
    from bench_server.handlers import Server

    return Server().asgi_app()


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("kind", choices=sorted(SERVERS))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--http", default="h11", choices=["h11", "httptools"])
    parser.add_argument("--loop", default="asyncio", choices=["asyncio", "uvloop"])
    args = parser.parse_args(argv)
    for path in (ROOT, ROOT / "generated"):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))

    import uvicorn

    app = SERVERS[args.kind]()
    http: Any = args.http
    if args.kind == "ours":  # as run_http serves it: uvicorn's protocol with the slow-client limits
        from mcpgen_runtime.server.limits import HttpLimits
        from mcpgen_runtime.server.slow_clients import SlowClients, guarded_protocol

        http = guarded_protocol(args.http, SlowClients(HttpLimits()))
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=args.port,
        http=http,
        loop=args.loop,
        ws="none",
        lifespan="auto",  # the SDK and FastMCP apps start their session managers there
        log_level="warning",
        access_log=False,
        server_header=False,
        date_header=False,
        workers=None,
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
