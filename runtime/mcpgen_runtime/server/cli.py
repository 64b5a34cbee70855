"""`python -m <generated package>`: serve a `ToolServer` subclass over HTTP (default) or stdio.

The command line is click's (`mcpgen-runtime[server]`). It only reads the options: the server is
built and run after click has returned, so a setting that cannot work stops with exit code 2 and
one line on stderr (as click's own usage errors do), and an interrupt while serving is the
server's to handle, not click's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import logging
import math
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import click

from .._version import LEGACY_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from .core.limits import MAX_URI_LENGTH, HttpLimits
from .core.ratelimit import RateLimit
from .http.app import MCP_PATH
from .otel_setup import configure_from_environment
from .otel_setup import flush as flush_telemetry
from .store import STORE_ENV, Store, StoreUnavailable, open_store
from .tool_server import ToolServer

__all__ = [
    "HELP_OPTIONS",
    "TASK_LEASE_ENV",
    "SectionedCommand",
    "build_command",
    "handlers_getattr",
    "load_handlers",
    "parse_command_line",
    "program_name",
    "serve_main",
    "startup_line",
    "unimplemented_tools",
]

TASK_LEASE_ENV = "MCPGEN_TASK_LEASE"
_LIMITS = HttpLimits()  # the defaults, for --help
HELP_OPTIONS = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


class SectionedCommand(click.Command):
    """A click command whose --help lists some options under headings of their own (`sections`:
    title, one line about them, the options' parameter names), the rest under "Options"."""

    def __init__(
        self, *args: Any, sections: Sequence[tuple[str, str, Sequence[str]]] = (), **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.sections = sections

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        placed = {name for _, _, names in self.sections for name in names}
        rows: dict[str, tuple[str, str]] = {}
        plain = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.name in placed:
                rows[param.name] = record
            else:
                plain.append(record)
        with formatter.section("Options"):
            formatter.write_dl(plain)
        for title, about, names in self.sections:
            with formatter.section(title):
                formatter.write_text(about)
                formatter.write_dl([rows[name] for name in names if name in rows])


def program_name(fallback: str) -> str:
    """`python -m <package>` as the program was started (`__main__.__spec__`), else `fallback`."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = getattr(spec, "name", None)
    if not name:
        return fallback
    return f"python -m {name.removesuffix('.__main__')}"


class _RateLimitType(click.ParamType):  # type: ignore[type-arg]
    name = "RATE/BURST"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> RateLimit:
        if isinstance(value, RateLimit):
            return value
        rate, sep, burst = str(value).partition("/")
        try:
            return RateLimit(float(rate), int(burst) if sep else RateLimit.burst)
        except ValueError:
            self.fail(
                f"takes RATE/BURST, e.g. 5/20 (a positive rate, a burst >= 1), not {value!r}", param, ctx
            )


def build_command() -> click.Command:
    """The options of `serve_main`; the command returns them (a dict of parameter names)."""

    def read(**options: Any) -> dict[str, Any]:
        if options["http"] and options["stdio"]:
            raise click.UsageError("--http and --stdio: choose one")
        options["transport"] = "stdio" if options["stdio"] else "http"
        return options

    opt = click.option
    params = [
        opt("--http", is_flag=True, help="Streamable HTTP (the default)"),
        opt("--stdio", is_flag=True, help="newline-delimited JSON-RPC on stdin/stdout"),
        # HTTP-04: local by default; binding elsewhere is an explicit choice.
        opt("--host", default="127.0.0.1", metavar="ADDRESS", help="interface to bind (default 127.0.0.1)"),
        opt("--port", type=int, default=8000, metavar="PORT", help="TCP port (default 8000)"),
        opt(
            "--page-size",
            type=int,
            default=None,
            metavar="N",
            help="tools per tools/list page (0: no pagination)",
        ),
        opt(
            "--modern-only",
            is_flag=True,
            help="serve MCP 2026-07-28 only; answer initialize with an error naming it",
        ),
        opt(
            "--shutdown-grace",
            type=float,
            default=None,
            metavar="SECONDS",
            help="on SIGTERM, how long calls in flight may take to finish (default 10)",
        ),
        opt(
            "--task-lease",
            type=float,
            default=None,
            envvar=TASK_LEASE_ENV,
            metavar="SECONDS",
            help=f"how soon a task whose replica died reads failed: its worker renews a lease this long "
            f"every third of it (default 30; env ${TASK_LEASE_ENV})",
        ),
        opt(
            "--store",
            metavar="URL",
            default=None,
            help=f"state shared by replicas: 'memory' (default) or redis://host:6379/0 "
            f"(default: ${STORE_ENV}); a shared store needs MCPGEN_STATE_SECRET",
        ),
        opt(
            "--rate-limit",
            type=_RateLimitType(),
            default=None,
            metavar="RATE/BURST",
            help="tool calls per caller: RATE per second sustained, bursts of BURST, e.g. 5/20 "
            "(SEC-03; with a shared store the budget holds across replicas)",
        ),
        opt("--oauth-issuer", metavar="URL", help="the authorization server's issuer"),
        opt(
            "--resource",
            metavar="URL",
            help="this server's public URL, e.g. https://mcp.example.com/mcp (the tokens' audience)",
        ),
        opt("--jwks-uri", metavar="URL", help="the issuer's JWKS (default: from its metadata)"),
        opt(
            "--token-leeway",
            type=int,
            default=30,
            metavar="SECONDS",
            help="clock skew allowed on exp/nbf (default 30)",
        ),
        opt(
            "--token-type",
            "token_types",
            multiple=True,
            metavar="TYP",
            help="also accept JWTs whose typ header is TYP, e.g. JWT ('none': no typ), from an issuer that "
            "does not type its access tokens at+jwt (RFC 9068; repeatable)",
        ),
        opt(
            "--dpop",
            type=click.Choice(["off", "allowed", "required"]),
            default="off",
            help="DPoP-bound tokens (RFC 9449): 'allowed' takes them next to bearer tokens, 'required' "
            "takes nothing else (default off: bearer only; a DPoP-bound token sent as bearer is "
            "always refused)",
        ),
        opt(
            "--dpop-nonce",
            is_flag=True,
            help="with --dpop: proofs carry a nonce this server issued (DPoP-Nonce, RFC 9449); replicas "
            "share them through MCPGEN_STATE_SECRET",
        ),
        opt(
            "--scope",
            "scopes",
            multiple=True,
            metavar="SCOPE",
            help="a scope every request needs (repeatable)",
        ),
        opt(
            "--tool-scope",
            "tool_scopes",
            multiple=True,
            metavar="TOOL=SCOPE",
            help="a scope calls of TOOL need as well (repeatable; adds to the generated defaults)",
        ),
        opt(
            "--header-timeout",
            type=float,
            metavar="SECONDS",
            help=f"request line and headers (default {_LIMITS.header_timeout_s:g})",
        ),
        opt(
            "--body-idle-timeout",
            type=float,
            metavar="SECONDS",
            help=f"longest pause within a request body (default {_LIMITS.body_idle_timeout_s:g})",
        ),
        opt(
            "--body-timeout",
            type=float,
            metavar="SECONDS",
            help=f"a whole request body (default {_LIMITS.body_timeout_s:g})",
        ),
        opt(
            "--max-slow-connections",
            type=int,
            metavar="N",
            help=f"connections still receiving a request; past it the oldest is closed "
            f"(default {_LIMITS.max_slow_connections})",
        ),
        opt(
            "--max-uri-length",
            type=int,
            metavar="N",
            help=f"characters of a resources/read or completion URI; longer ones get -32602 "
            f"(default {MAX_URI_LENGTH})",
        ),
        opt(
            "--skills",
            metavar="DIR",
            help="serve the skills in DIR: folders with a SKILL.md (the io.modelcontextprotocol/skills "
            "extension); replaces the folder the server declares",
        ),
        opt(
            "--parser",
            type=click.Choice(["auto", "h11", "httptools"]),
            default="auto",
            help="uvicorn's HTTP/1.1 parser (default auto: httptools when installed)",
        ),
        opt(
            "--log-level",
            default="warning",
            type=click.Choice(["debug", "info", "warning", "error", "critical"]),
            help="log level; logs go to stderr (default warning)",
        ),
    ]
    for decorate in reversed(params):
        read = decorate(read)
    return click.command(
        "serve",
        cls=SectionedCommand,
        context_settings=HELP_OPTIONS,
        help="Serve MCP tools (protocol 2026-07-28; 2025-11-25, 2025-06-18 and 2025-03-26 clients through "
        "initialize).",
        sections=[
            (
                "OAuth (HTTP)",
                "protect the server: bearer JWTs from the authorization server, checked against its keys",
                [
                    "oauth_issuer",
                    "resource",
                    "jwks_uri",
                    "token_leeway",
                    "token_types",
                    "scopes",
                    "tool_scopes",
                ],
            ),
            (
                "Slow clients (HTTP)",
                "how long a request may take to arrive, and how many may be arriving at once",
                ["header_timeout", "body_idle_timeout", "body_timeout", "max_slow_connections", "parser"],
            ),
        ],
    )(read)


def parse_command_line(command: click.Command, argv: Sequence[str] | None, prog: str) -> dict[str, Any]:
    """Run click's parsing of `argv` (None: the process's arguments) and return what the command
    returned; `--help` and usage errors end the process as click ends it (exit 0, exit 2)."""
    try:
        result = command.main(
            args=None if argv is None else list(argv), prog_name=prog, standalone_mode=False
        )
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        raise SystemExit(1) from None
    if not isinstance(result, dict):  # --help: click returns the exit code
        raise SystemExit(result or 0)
    return result


def serve_main(server_cls: type[ToolServer], argv: Sequence[str] | None = None) -> None:
    """Parse `argv`, build `server_cls` and serve until interrupted (or stdin closes).

    Configuration that cannot work (a `ServerConfig` value, a skill that cannot be served, a
    `MCPGEN_STATE_SECRET` that is too short, a shared store without a shared secret, a store that
    does not answer) stops here with exit code 2 and one line on stderr saying what to fix, before
    anything listens."""
    package = server_cls.__module__.partition(".")[0]
    args = parse_command_line(build_command(), argv, program_name(f"python -m {package}"))
    # Logs never go to stdout: on stdio it carries protocol messages only (STDIO-03).
    logging.basicConfig(
        stream=sys.stderr,
        level=args["log_level"].upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        configure_from_environment(stdio=args["transport"] == "stdio")
        config = server_cls.default_config()
        if args["page_size"] is not None:
            if args["page_size"] < 0:
                raise ValueError("--page-size must be >= 0")
            config = dataclasses.replace(config, page_size=args["page_size"] or None)
        if args["shutdown_grace"] is not None:
            config = dataclasses.replace(config, shutdown_grace_s=args["shutdown_grace"])
        if args["task_lease"] is not None:
            if not 0 < args["task_lease"] < math.inf:
                raise ValueError(f"--task-lease (${TASK_LEASE_ENV}) must be a positive number of seconds")
            config = dataclasses.replace(
                config, tasks=dataclasses.replace(config.tasks, lease_s=args["task_lease"])
            )
        if args["modern_only"]:
            config = dataclasses.replace(config, modern_only=True)
        if args["max_uri_length"] is not None:
            config = dataclasses.replace(config, max_uri_length=args["max_uri_length"])
        if args["skills"] is not None:
            config = dataclasses.replace(config, skills=args["skills"])
        given = {
            name: value
            for name, value in (
                ("header_timeout_s", args["header_timeout"]),
                ("body_idle_timeout_s", args["body_idle_timeout"]),
                ("body_timeout_s", args["body_timeout"]),
                ("max_slow_connections", args["max_slow_connections"]),
            )
            if value is not None
        }
        if given:
            config = dataclasses.replace(config, http_limits=dataclasses.replace(config.http_limits, **given))
        if args["oauth_issuer"] or args["resource"]:
            config = dataclasses.replace(config, auth=_protected_resource(args, server_cls))
        elif args["dpop"] != "off" or args["dpop_nonce"]:
            raise ValueError("--dpop protects the server with --oauth-issuer and --resource: give them too")
        if args["store"] is not None:
            config = dataclasses.replace(config, store=args["store"])
        if args["rate_limit"] is not None:
            config = dataclasses.replace(config, rate_limit=args["rate_limit"])
        server = server_cls(config)
        if server.shared_store.shared:
            _check_reachable(config, server.shared_store)
    except ValueError as exc:  # ServerConfig and the state secrets raise ValueError for bad settings
        print(f"{package}: cannot start: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    _warn_unimplemented(server_cls, package)
    # One line on stderr when serving starts and one when it ends (Ctrl-C or SIGTERM: exit 0, no
    # traceback).
    try:  # the transports end an interrupt themselves; this catches one between their steps
        if args["transport"] == "stdio":
            server.run_stdio(on_ready=lambda: _say(startup_line(package, server, "stdio")))
        else:
            host = args["host"]
            url = f"http://{f'[{host}]' if ':' in host else host}:{args['port']}{MCP_PATH}"
            server.run_http(
                host,
                args["port"],
                parser=args["parser"],
                on_listening=lambda: _say(startup_line(package, server, url)),
            )
    except KeyboardInterrupt:
        pass
    flush_telemetry()  # spans still queued for export (SIGTERM stops as Ctrl-C does: exit 0)
    _say(f"{package}: stopped")


def startup_line(package: str, server: ToolServer, where: str) -> str:
    """`<package>: serving N tools[, N resources, N resource templates, N prompts, N skills] on
    <url | stdio> (MCP <revisions>)`: what a person starting the server by hand sees, whatever the log level.
    Tools are always counted; the other kinds when the server serves any."""
    era = f"MCP {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}"
    era += " only" if server.config.modern_only else f" and legacy {', '.join(LEGACY_PROTOCOL_VERSIONS)}"
    surfaces = server.surfaces
    counts = [(len(server.tools), "tool")]
    if surfaces is not None:
        counts += [
            (len(surfaces.resources), "resource"),
            (len(surfaces.resource_templates), "resource template"),
            (len(surfaces.prompts), "prompt"),
        ]
    counts.append((len(server.served_skills), "skill"))
    served = ", ".join(
        f"{count} {kind}{'' if count == 1 else 's'}"
        for i, (count, kind) in enumerate(counts)
        if count or not i
    )
    return f"{package}: serving {served} on {where} ({era})"


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def unimplemented_tools(server_cls: type[ToolServer]) -> list[str]:
    """Wire names of the tools whose method `server_cls` takes unchanged from the generated base
    (the class that declares `_tool_bindings_`): their calls answer "not implemented"."""
    missing = []
    for binding in getattr(server_cls, "_tool_bindings_", ()):
        owner = next((k for k in server_cls.__mro__ if binding.method in vars(k)), None)
        if owner is not None and "_tool_bindings_" in vars(owner) and owner is not server_cls:
            missing.append(binding.name)
    return missing


def _warn_unimplemented(server_cls: type[ToolServer], package: str) -> None:
    missing = unimplemented_tools(server_cls)
    if missing:
        names = ", ".join(repr(name) for name in missing)
        print(
            f"{package}: warning: handlers.py implements no method for {len(missing)} tool(s): {names}; "
            'their calls answer "not implemented" (`mcpgen generate --add-stubs` adds stubs to class Server)',
            file=sys.stderr,
        )


def handlers_getattr(package: str) -> Callable[[str], Any]:
    """A generated server package's module `__getattr__`: `PACKAGE.Server` is imported from
    handlers.py on first use, not when the package is, so that `python -m PACKAGE` reaches
    `__main__.py` (and `load_handlers`) even when handlers.py no longer imports."""

    def __getattr__(name: str) -> Any:
        if name == "Server":
            server_cls = importlib.import_module(f"{package}.handlers").Server
            vars(sys.modules[package])["Server"] = server_cls  # later lookups skip this function
            return server_cls
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def load_handlers(package: str | None) -> type[ToolServer]:
    """`PACKAGE.handlers.Server`, for a generated package's `__main__.py`.

    handlers.py is the user's, and regenerating never rewrites it: after a tool is removed from the
    spec it may still use a name the package's models.py or base.py no longer defines. Then the
    server does not start: exit 2 and one line naming the name and the line of handlers.py, not a
    traceback. Only that case is caught; any other error (the user's own imports and bugs)
    propagates as it is."""
    if not package:
        raise SystemExit("run the server as `python -m PACKAGE`")
    own = {f"{package}.models", f"{package}.base"}
    try:
        module = importlib.import_module(f"{package}.handlers")
    except AttributeError as exc:  # _m.GetWeatherInput
        if not (isinstance(exc.obj, ModuleType) and exc.obj.__name__ in own and exc.name):
            raise
        _stale_name(package, exc, exc.name, exc.obj.__name__)
    except ImportError as exc:  # from .models import GetWeatherInput
        found = re.match(r"cannot import name '([^']+)'", str(exc))
        if type(exc) is not ImportError or exc.name not in own or found is None:
            raise
        _stale_name(package, exc, found.group(1), exc.name)
    server_cls = getattr(module, "Server", None)
    if not (isinstance(server_cls, type) and issubclass(server_cls, ToolServer)):
        print(
            f"{package}: cannot start: {module.__file__} defines no `class Server(ServerBase)`, "
            "which the package serves",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return server_cls


def _stale_name(package: str, exc: BaseException, name: str, module: str) -> None:
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if os.path.basename(f.filename) == "handlers.py"
    ]
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else f"{package}/handlers.py"
    print(
        f"{package}: cannot start: {where} uses {name!r}, which {module} no longer defines (its tool was "
        "removed or renamed in the spec); change or delete that code "
        "(`mcpgen generate` lists every such place)",
        file=sys.stderr,
    )
    raise SystemExit(2) from None


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


def _protected_resource(args: dict[str, Any], server_cls: type[ToolServer]) -> Any:
    if not (args["oauth_issuer"] and args["resource"]):
        raise SystemExit("--oauth-issuer and --resource go together")
    from .auth.jwt import ACCESS_TOKEN_TYPES, JwtVerifier  # the auth extra
    from .auth.oauth import ProtectedResource, declared_tool_scopes

    # What tools need: their definitions' _meta (the spec file), then handlers.py's _tool_scopes_, then flags.
    tool_scopes = declared_tool_scopes(server_cls._tool_definitions_)
    tool_scopes.update(
        {name: tuple(scopes) for name, scopes in getattr(server_cls, "_tool_scopes_", {}).items()}
    )
    for item in args["tool_scopes"]:
        tool, sep, scope = item.partition("=")
        if not sep or not tool or not scope:
            raise SystemExit(f"--tool-scope takes TOOL=SCOPE, not {item!r}")
        tool_scopes[tool] = (*tool_scopes.get(tool, ()), scope)
    base = (*getattr(server_cls, "_scopes_", ()), *args["scopes"])
    types = [None if typ.lower() == "none" else typ for typ in args["token_types"]]
    verifier = JwtVerifier(
        args["oauth_issuer"],
        audience=args["resource"],
        jwks_uri=args["jwks_uri"],
        leeway=args["token_leeway"],
        token_types=(*ACCESS_TOKEN_TYPES, *types),
    )
    return ProtectedResource(
        verify=verifier,
        resource=args["resource"],
        authorization_servers=(args["oauth_issuer"],),
        scopes=tuple(dict.fromkeys(base)),
        tool_scopes=tool_scopes,
        dpop=args["dpop"],
        dpop_nonce=args["dpop_nonce"],
    )
