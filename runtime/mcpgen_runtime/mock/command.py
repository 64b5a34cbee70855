"""Running a mock: `serve_mock` (both command lines end here) and `python -m mcpgen_runtime.mock`.

`mcpgen mock` (codegen/cli.py) reads specs from files and live servers and reports the
generator's diagnostics first; `python -m mcpgen_runtime.mock` needs only the runtime and reads
spec files (`{"tools": [...]}`, a bare list, a JSON-RPC `tools/list` response, or a generated
package's `tools.json`). The pytest plugin starts the latter for stdio and subprocess mocks.
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
from ..server.cli import HELP_OPTIONS, parse_command_line
from .responses import ResponsesError
from .server import MockServer
from .surfaces import load_spec_surfaces, serve_surfaces
from .values import MockDependencyError

__all__ = ["build_command", "keep_hypothesis_files_in_the_cache", "load_spec_file", "main", "serve_mock"]

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
    server: MockServer, transport: Transport = "http", host: str = "127.0.0.1", port: int = 8000
) -> None:
    """Serve until interrupted (HTTP) or until stdin closes (stdio)."""
    if transport == "stdio":
        server.run_stdio()
    else:
        server.run_http(host, port)


def build_command() -> click.Command:
    """The options of `python -m mcpgen_runtime.mock`; the command returns them (a dict)."""

    def read(**options: Any) -> dict[str, Any]:
        if options["http"] and options["stdio"]:
            raise click.UsageError("--http and --stdio: choose one")
        options["transport"] = "stdio" if options["stdio"] else "http"
        return options

    opt = click.option
    params = [
        click.argument("spec"),
        opt("--http", is_flag=True, help="Streamable HTTP (default)"),
        opt("--stdio", is_flag=True, help="stdin/stdout"),
        opt("--host", default="127.0.0.1", metavar="ADDRESS", help="interface to bind (default 127.0.0.1)"),
        opt("--port", type=int, default=8000, metavar="PORT", help="TCP port (default 8000)"),
        opt("--seed", type=int, default=0, help="the same seed gives the same answers (default 0)"),
        opt("--responses", metavar="FILE", help="canned answers, errors and faults (YAML or JSON)"),
        opt("--record", metavar="FILE", help="append every call to FILE as JSON lines"),
        opt(
            "--log-level",
            type=click.Choice(["debug", "info", "warning", "error"]),
            default="warning",
            help="log level; logs go to stderr (default warning)",
        ),
    ]
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
    try:
        server = MockServer(
            load_spec_file(args["spec"]),
            seed=args["seed"],
            responses=args["responses"],
            record=args["record"],
        )
        serve_surfaces(server, **_surface_arguments(load_spec_surfaces(args["spec"])), seed=args["seed"])
    except (OSError, ValueError, ResponsesError, MockDependencyError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise SystemExit(1) from None
    serve_mock(server, args["transport"], args["host"], args["port"])
