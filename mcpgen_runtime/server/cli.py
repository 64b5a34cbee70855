"""`python -m <generated package>`: serve a `ToolServer` subclass over HTTP (default) or stdio."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from collections.abc import Sequence

from .tool_server import ToolServer

__all__ = ["build_parser", "serve_main"]


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Serve MCP tools (protocol 2026-07-28).")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--http", dest="transport", action="store_const", const="http",
                      help="Streamable HTTP (the default)")
    mode.add_argument("--stdio", dest="transport", action="store_const", const="stdio",
                      help="newline-delimited JSON-RPC on stdin/stdout")
    parser.set_defaults(transport="http")
    # HTTP-04: local by default; binding elsewhere is an explicit choice.
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    parser.add_argument("--page-size", type=int, default=None, metavar="N",
                        help="tools per tools/list page (0: no pagination)")
    parser.add_argument("--log-level", default="warning",
                        choices=["debug", "info", "warning", "error", "critical"],
                        help="log level; logs go to stderr (default warning)")
    return parser


def serve_main(server_cls: type[ToolServer], argv: Sequence[str] | None = None) -> None:
    """Parse `argv`, build `server_cls` and serve until interrupted (or stdin closes).

    Configuration that cannot work (a `ServerConfig` value, a `MCPGEN_STATE_SECRET` that is too
    short) stops here with exit code 2 and one line on stderr saying what to fix, before anything
    listens."""
    args = build_parser().parse_args(argv)
    # Logs never go to stdout: on stdio it carries protocol messages only (STDIO-03).
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = server_cls.default_config()
        if args.page_size is not None:
            if args.page_size < 0:
                raise ValueError("--page-size must be >= 0")
            config = dataclasses.replace(config, page_size=args.page_size or None)
        server = server_cls(config)
    except ValueError as exc:  # ServerConfig and the state secrets raise ValueError for bad settings
        print(f"{server_cls.__module__.partition('.')[0]}: cannot start: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if args.transport == "stdio":
        server.run_stdio()
    else:
        server.run_http(args.host, args.port)
