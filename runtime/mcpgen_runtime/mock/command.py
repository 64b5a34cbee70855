"""Running a mock: `serve_mock` (both command lines end here) and `python -m mcpgen_runtime.mock`.

`mcpgen mock` (codegen/cli.py) reads specs from files and live servers and reports the
generator's diagnostics first; `python -m mcpgen_runtime.mock` needs only the runtime and reads
spec files (`{"tools": [...]}`, a bare list, a JSON-RPC `tools/list` response, or a generated
package's `tools.json`). The pytest plugin starts the latter for stdio and subprocess mocks.

Both take `--record` (a proxy writing a cassette: record.py), `--replay CASSETTE` (replay.py) and
the fault options (faults.py); `make_faults`, `serve_record` and `serve_replay` are where they end.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import click

from .. import _json
from ..masking import mask_log_handlers, remember
from ..server.cli import HELP_OPTIONS, parse_command_line
from .cassette import Cassette, CassetteError, Scrubber
from .faults import Faults, parse_duration_ms, parse_latency, parse_rate
from .responses import ResponsesError
from .server import MockServer
from .surfaces import load_spec_surfaces, serve_surfaces
from .upstream import Upstream
from .values import MockDependencyError

__all__ = [
    "build_command",
    "keep_hypothesis_files_in_the_cache",
    "load_spec_file",
    "main",
    "make_faults",
    "serve_mock",
    "serve_record",
    "serve_replay",
]

MAX_SPEC_BYTES: Final = 64 * 1024 * 1024
Transport = Literal["http", "stdio"]


def load_spec_file(path: str | Path) -> list[dict[str, Any]]:
    """The tool objects in a spec file; `ValueError` saying why when there are none."""
    path = Path(path)
    data = path.read_bytes()
    if len(data) > MAX_SPEC_BYTES:
        raise ValueError(f"{path}: larger than {MAX_SPEC_BYTES} bytes")
    try:
        document = _json.loads(data)
    except _json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from exc
    if isinstance(document, Mapping) and isinstance(document.get("result"), Mapping):
        document = document["result"]  # a JSON-RPC tools/list response
    tools = document.get("tools") if isinstance(document, Mapping) else document
    if not isinstance(tools, list) or not all(isinstance(tool, Mapping) for tool in tools):
        raise ValueError(f'{path}: expected {{"tools": [...]}} or a list of tool objects')
    return [dict(tool) for tool in tools]


def keep_hypothesis_files_in_the_cache() -> None:
    """For a mock process of its own: hypothesis's files (its unicode tables) go to
    `$XDG_CACHE_HOME/mcpgen/hypothesis` (else `~/.cache/...`), not `.hypothesis/` wherever the
    mock was started, unless `HYPOTHESIS_STORAGE_DIRECTORY` says otherwise. It moves them for
    the whole process: only the mock's own command lines call it, before anything imports
    hypothesis-jsonschema (which builds those tables when imported)."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    try:
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:  # nothing to move: the mock then needs no generated values
        return
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    set_hypothesis_home_dir(os.path.join(cache, "mcpgen", "hypothesis"))


def serve_mock(
    server: MockServer,
    transport: Transport = "http",
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    faults: Faults | None = None,
) -> None:
    """Serve until interrupted (HTTP) or until stdin closes (stdio), with `faults` injected."""
    if faults is not None and faults.active:
        from .faults import FaultInjector, FaultyApp, serve_stdio_with_faults

        injector = FaultInjector(faults)
        if transport == "stdio":
            from ..server.stdio import serve_stdio

            serve_stdio_with_faults(lambda stdin, stdout: serve_stdio(server, stdin, stdout), injector)
        else:
            from .record import serve_asgi

            serve_asgi(FaultyApp(server.asgi_app(), injector), host, port)
        return
    if transport == "stdio":
        server.run_stdio()
    else:
        server.run_http(host, port)


def make_faults(
    seed: int = 0,
    latency: str | None = None,
    error_rate: str | float | None = None,
    drop_connection: str | float | None = None,
    slow_stream: str | None = None,
) -> Faults:
    """`Faults` from the command-line spellings; `ValueError` naming the option that is wrong."""
    try:
        latency_ms = parse_latency(latency) if latency else None
    except ValueError as exc:
        raise ValueError(f"--latency {exc}") from None
    try:
        errors = parse_rate(error_rate) if error_rate is not None else 0.0
    except ValueError as exc:
        raise ValueError(f"--error-rate {exc}") from None
    try:
        drops = parse_rate(drop_connection) if drop_connection is not None else 0.0
    except ValueError as exc:
        raise ValueError(f"--drop-connection {exc}") from None
    try:
        slow = parse_duration_ms(slow_stream) if slow_stream else None
    except ValueError as exc:
        raise ValueError(f"--slow-stream {exc}") from None
    return Faults(seed=seed, latency_ms=latency_ms, error_rate=errors, drop_rate=drops, slow_stream_ms=slow)


def serve_record(
    upstream: Upstream,
    cassette: str | Path,
    transport: Transport = "http",
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    scrub_headers: Sequence[str] = (),
    faults: Faults | None = None,
) -> None:
    """Proxy to `upstream`, writing `cassette`, until interrupted (HTTP) or stdin closes (stdio)."""
    from .record import record_http, record_stdio

    # Headers, environment and credentials given to the upstream are secrets (masking.py).
    hidden = upstream.hidden()
    remember(hidden)  # log lines too
    scrubber = Scrubber(scrub_headers, hidden)
    if transport == "stdio":
        if faults is not None and faults.active:
            raise ValueError("fault injection while recording needs --http")
        record_stdio(upstream, cassette, scrubber=scrubber)
    else:
        record_http(upstream, cassette, host=host, port=port, scrubber=scrubber, faults=faults)


def serve_replay(
    cassette: str | Path | Cassette,
    transport: Transport = "http",
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    faults: Faults | None = None,
    passthrough: Upstream | None = None,
    scrub_headers: Sequence[str] = (),
) -> None:
    """Serve `cassette` (a path, or one `load_cassette` read) until interrupted (HTTP) or stdin
    closes (stdio); `CassetteError` when unreadable."""
    from .cassette import load_cassette
    from .replay import replay_http, replay_stdio

    loaded = cassette if isinstance(cassette, Cassette) else load_cassette(cassette)
    scrubber = Scrubber(scrub_headers)
    if transport == "stdio":
        replay_stdio(loaded, faults=faults, passthrough=passthrough, scrubber=scrubber)
    else:
        replay_http(loaded, host=host, port=port, faults=faults, passthrough=passthrough, scrubber=scrubber)


def build_command() -> click.Command:
    """The options of `python -m mcpgen_runtime.mock`; the command returns them (a dict)."""

    def read(**options: Any) -> dict[str, Any]:
        if options["http"] and options["stdio"]:
            raise click.UsageError("--http and --stdio: choose one")
        options["transport"] = "stdio" if options["stdio"] else "http"
        if (options["spec"] is None) == (options["replay"] is None):
            raise click.UsageError("give SPEC or --replay CASSETTE")
        return options

    opt = click.option
    params = [
        click.argument("spec", required=False),
        opt("--replay", metavar="CASSETTE", help="serve a cassette recorded by mcpgen mock --record"),
        opt("--http", is_flag=True, help="Streamable HTTP (default)"),
        opt("--stdio", is_flag=True, help="stdin/stdout"),
        opt("--host", default="127.0.0.1", metavar="ADDRESS", help="interface to bind (default 127.0.0.1)"),
        opt("--port", type=int, default=8000, metavar="PORT", help="TCP port (default 8000)"),
        opt("--seed", type=int, default=0, help="the same seed gives the same answers (default 0)"),
        opt("--responses", metavar="FILE", help="canned answers, errors and faults (YAML or JSON)"),
        opt("--record", metavar="FILE", help="append every call to FILE as JSON lines"),
        opt("--skills", metavar="DIR", help="also serve the skills in DIR (folders with a SKILL.md)"),
        opt("--latency", metavar="MS", help="delay every request: 100ms, or a range 50-200ms"),
        opt("--error-rate", metavar="P", help="answer this fraction of requests with a retryable error"),
        opt("--drop-connection", metavar="P", help="cut this fraction of exchanges (stdio: exit)"),
        opt("--slow-stream", metavar="MS", help="send bodies in 16-byte pieces this far apart"),
        opt(
            "--log-level",
            type=click.Choice(["debug", "info", "warning", "error"]),
            default="warning",
            help="log level; logs go to stderr (default warning)",
        ),
    ]
    # Built as `serve`'s command is (server/cli.py), with options of its own: alike in shape only.
    for decorate in reversed(params):
        read = decorate(read)
    return click.command(
        "mock",
        context_settings=HELP_OPTIONS,
        help="Serve a spec's tools with schema-valid answers (mcpgen mock without the generator).\n\n"
        "SPEC: a spec file or a generated package's tools.json.",
    )(read)


def _surface_arguments(found: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "resources": found["resources"],
        "resource_templates": found["resourceTemplates"],
        "prompts": found["prompts"],
    }


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_command_line(build_command(), argv, "python -m mcpgen_runtime.mock")
    keep_hypothesis_files_in_the_cache()  # before hypothesis builds (and stores) its unicode tables
    # Logs never go to stdout: on stdio it carries protocol messages only (STDIO-03).
    logging.basicConfig(
        stream=sys.stderr,
        level=args["log_level"].upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    mask_log_handlers()
    try:
        faults = make_faults(
            args["seed"], args["latency"], args["error_rate"], args["drop_connection"], args["slow_stream"]
        )
        if args["replay"] is not None:
            serve_replay(args["replay"], args["transport"], args["host"], args["port"], faults=faults)
            return
        server = MockServer(
            load_spec_file(args["spec"]),
            seed=args["seed"],
            responses=args["responses"],
            record=args["record"],
        )
        serve_surfaces(server, **_surface_arguments(load_spec_surfaces(args["spec"])), seed=args["seed"])
        if args["skills"] is not None:
            server.serve_skills(args["skills"])
    except (OSError, ValueError, ResponsesError, MockDependencyError, CassetteError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(1) from None
    serve_mock(server, args["transport"], args["host"], args["port"], faults=faults)
