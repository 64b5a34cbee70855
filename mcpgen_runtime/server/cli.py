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
    parser = argparse.ArgumentParser(
        prog=prog, description="Serve MCP tools (protocol 2026-07-28; 2025-11-25, 2025-06-18 and 2025-03-26 "
                               "clients through initialize).")
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
    parser.add_argument("--modern-only", action="store_true",
                        help="serve MCP 2026-07-28 only; answer initialize with an error naming it")
    parser.add_argument("--log-level", default="warning",
                        choices=["debug", "info", "warning", "error", "critical"],
                        help="log level; logs go to stderr (default warning)")
    return parser


def serve_main(server_cls: type[ToolServer], argv: Sequence[str] | None = None) -> None:
    """Parse `argv`, build `server_cls` and serve until interrupted (or stdin closes)."""
    args = build_parser().parse_args(argv)
    # Logs never go to stdout: on stdio it carries protocol messages only (STDIO-03).
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = server_cls.default_config()
    if args.page_size is not None:
        if args.page_size < 0:
            raise SystemExit("--page-size must be >= 0")
        config = dataclasses.replace(config, page_size=args.page_size or None)
    if args.modern_only:
        config = dataclasses.replace(config, modern_only=True)
    server = server_cls(config)
    if args.transport == "stdio":
        server.run_stdio()
    else:
        server.run_http(args.host, args.port)
