"""`python -m <generated package>`: serve a `ToolServer` subclass over HTTP (default) or stdio."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from .limits import HttpLimits
from .ratelimit import RateLimit
from .store import STORE_ENV, Store, StoreUnavailable, open_store
from .tool_server import ToolServer

__all__ = ["build_parser", "serve_main"]

_LIMITS = HttpLimits()  # the defaults, for --help


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
    parser.add_argument("--shutdown-grace", type=float, default=None, metavar="SECONDS",
                        help="on SIGTERM, how long calls in flight may take to finish (default 10)")
    parser.add_argument("--store", metavar="URL", default=None,
                        help=f"state shared by replicas: 'memory' (default) or redis://host:6379/0 "
                             f"(default: ${STORE_ENV}); a shared store needs MCPGEN_STATE_SECRET")
    parser.add_argument("--rate-limit", metavar="RATE/BURST", type=_rate_limit, default=None,
                        help="tool calls per caller: RATE per second sustained, bursts of BURST, e.g. 5/20 "
                             "(SEC-03; with a shared store the budget holds across replicas)")
    oauth = parser.add_argument_group(
        "OAuth (HTTP)", "protect the server: bearer JWTs from the authorization server, checked against its keys")
    oauth.add_argument("--oauth-issuer", metavar="URL", help="the authorization server's issuer")
    oauth.add_argument("--resource", metavar="URL",
                       help="this server's public URL, e.g. https://mcp.example.com/mcp (the tokens' audience)")
    oauth.add_argument("--jwks-uri", metavar="URL", help="the issuer's JWKS (default: from its metadata)")
    oauth.add_argument("--token-leeway", type=int, default=30, metavar="SECONDS",
                       help="clock skew allowed on exp/nbf (default 30)")
    oauth.add_argument("--token-type", action="append", default=[], metavar="TYP",
                       help="also accept JWTs whose typ header is TYP, e.g. JWT ('none': no typ), from an "
                            "issuer that does not type its access tokens at+jwt (RFC 9068; repeatable)")
    oauth.add_argument("--scope", action="append", default=[], metavar="SCOPE",
                       help="a scope every request needs (repeatable)")
    oauth.add_argument("--tool-scope", action="append", default=[], metavar="TOOL=SCOPE",
                       help="a scope calls of TOOL need as well (repeatable; adds to the generated defaults)")
    limits = parser.add_argument_group(
        "slow clients (HTTP)", "how long a request may take to arrive, and how many may be arriving at once")
    limits.add_argument("--header-timeout", type=float, metavar="SECONDS",
                        help=f"request line and headers (default {_LIMITS.header_timeout_s:g})")
    limits.add_argument("--body-idle-timeout", type=float, metavar="SECONDS",
                        help=f"longest pause within a request body (default {_LIMITS.body_idle_timeout_s:g})")
    limits.add_argument("--body-timeout", type=float, metavar="SECONDS",
                        help=f"a whole request body (default {_LIMITS.body_timeout_s:g})")
    limits.add_argument("--max-slow-connections", type=int, metavar="N",
                        help=f"connections still receiving a request; past it the oldest is closed "
                             f"(default {_LIMITS.max_slow_connections})")
    limits.add_argument("--parser", choices=["auto", "h11", "httptools"], default="auto",
                        help="uvicorn's HTTP/1.1 parser (default auto: httptools when installed)")
    parser.add_argument("--log-level", default="warning",
                        choices=["debug", "info", "warning", "error", "critical"],
                        help="log level; logs go to stderr (default warning)")
    return parser


def serve_main(server_cls: type[ToolServer], argv: Sequence[str] | None = None) -> None:
    """Parse `argv`, build `server_cls` and serve until interrupted (or stdin closes).

    Configuration that cannot work (a `ServerConfig` value, a `MCPGEN_STATE_SECRET` that is too
    short, a shared store without a shared secret, a store that does not answer) stops here with
    exit code 2 and one line on stderr saying what to fix, before anything listens."""
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
        if args.shutdown_grace is not None:
            config = dataclasses.replace(config, shutdown_grace_s=args.shutdown_grace)
        if args.modern_only:
            config = dataclasses.replace(config, modern_only=True)
        given = {name: value for name, value in (
            ("header_timeout_s", args.header_timeout), ("body_idle_timeout_s", args.body_idle_timeout),
            ("body_timeout_s", args.body_timeout), ("max_slow_connections", args.max_slow_connections),
        ) if value is not None}
        if given:
            config = dataclasses.replace(config, http_limits=dataclasses.replace(config.http_limits, **given))
        if args.oauth_issuer or args.resource:
            config = dataclasses.replace(config, auth=_protected_resource(args, server_cls))
        if args.store is not None:
            config = dataclasses.replace(config, store=args.store)
        if args.rate_limit is not None:
            config = dataclasses.replace(config, rate_limit=args.rate_limit)
        server = server_cls(config)
        if server.shared_store.shared:
            _check_reachable(config, server.shared_store)
    except ValueError as exc:  # ServerConfig and the state secrets raise ValueError for bad settings
        print(f"{server_cls.__module__.partition('.')[0]}: cannot start: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if args.transport == "stdio":
        server.run_stdio()
    else:
        server.run_http(args.host, args.port, parser=args.parser)


def _rate_limit(text: str) -> RateLimit:
    rate, sep, burst = text.partition("/")
    try:
        return RateLimit(float(rate), int(burst) if sep else RateLimit.burst)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes RATE/BURST, e.g. 5/20 (a positive rate, a burst >= 1), "
                                         f"not {text!r}") from None


def _check_reachable(config: Any, store: Store) -> None:
    """Ping the shared store once before serving, over a connection of its own (the server's
    store binds its connections to the serving event loop)."""
    url = config.store if isinstance(config.store, str) else os.environ.get(STORE_ENV)
    if url is None:
        return  # a Store object given in code: its owner checks it

    async def ping() -> None:
        probe = open_store(url, config.name)
        try:
            await probe.ping()
        finally:
            await probe.close()

    try:
        asyncio.run(ping())
    except StoreUnavailable as exc:
        raise ValueError(f"{exc}: check --store / {STORE_ENV} and that the store is running") from None


def _protected_resource(args: argparse.Namespace, server_cls: type[ToolServer]) -> Any:
    if not (args.oauth_issuer and args.resource):
        raise SystemExit("--oauth-issuer and --resource go together")
    from .jwt import ACCESS_TOKEN_TYPES, JwtVerifier  # the auth extra
    from .oauth import ProtectedResource, declared_tool_scopes

    # What tools need: their definitions' _meta (the spec file), then handlers.py's _tool_scopes_, then flags.
    tool_scopes = declared_tool_scopes(server_cls._tool_definitions_)
    tool_scopes.update({name: tuple(scopes) for name, scopes in getattr(server_cls, "_tool_scopes_", {}).items()})
    for item in args.tool_scope:
        tool, sep, scope = item.partition("=")
        if not sep or not tool or not scope:
            raise SystemExit(f"--tool-scope takes TOOL=SCOPE, not {item!r}")
        tool_scopes[tool] = (*tool_scopes.get(tool, ()), scope)
    base = (*getattr(server_cls, "_scopes_", ()), *args.scope)
    types = [None if typ.lower() == "none" else typ for typ in args.token_type]
    verifier = JwtVerifier(args.oauth_issuer, audience=args.resource, jwks_uri=args.jwks_uri,
                           leeway=args.token_leeway, token_types=(*ACCESS_TOKEN_TYPES, *types))
    return ProtectedResource(verify=verifier, resource=args.resource, authorization_servers=(args.oauth_issuer,),
                             scopes=tuple(dict.fromkeys(base)), tool_scopes=tool_scopes)
