"""`mcpgen mock`: serve a spec's tools with made-up answers (`mcpgen_runtime.mock`, the
`mcpgen[mock]` extra)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import stages
from .common import (
    Failed,
    check_spec,
    config_source,
    header_option,
    mcp_config_options,
    reports_errors,
    require_source,
    usable_spec,
)

__all__ = ["mock"]


@click.command()
@click.argument("spec", metavar="[SPEC]", required=False)
@click.option(
    "--http", "transport", flag_value="http", default=True, help="Serve Streamable HTTP (the default)."
)
@click.option("--stdio", "transport", flag_value="stdio", help="Serve stdin/stdout instead.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="TCP port.")
@click.option("--seed", type=int, default=0, show_default=True, help="The same seed gives the same answers.")
@click.option(
    "--responses",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    metavar="FILE",
    help="Canned answers, errors, elicitation rounds, latency and failures per tool (YAML or JSON).",
)
@mcp_config_options
@header_option
@reports_errors
def mock(
    spec: str | None,
    transport: str,
    host: str,
    port: int,
    seed: int,
    responses: Path | None,
    mcp_config: Path | None,
    server_name: str | None,
    headers: dict[str, str],
) -> None:
    """Serve SPEC's tools with made-up answers that are valid against each tool's outputSchema.

    SPEC is a spec file, a generated package's tools.json, a live server's URL, or a server of an MCP
    config file (--config FILE --server NAME, or FILE#NAME). Arguments and
    x-mcp-header are checked as a generated server checks them. Needs `pip install 'mcpgen[mock]'`.
    """
    import logging

    from mcpgen_runtime.mock import MockDependencyError, MockServer, ResponsesError, serve_mock
    from mcpgen_runtime.mock.command import keep_hypothesis_files_in_the_cache

    spec = config_source(mcp_config, server_name, spec, None, headers)
    require_source(spec, None, headers, "SPEC")
    keep_hypothesis_files_in_the_cache()  # before hypothesis builds (and stores) its unicode tables
    validated = usable_spec(
        check_spec(stages.load_spec(spec, None, headers), strict=False, python_names=False)
    )
    try:
        server = MockServer(validated.tools, seed=seed, responses=responses)
    except (ResponsesError, MockDependencyError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        raise Failed from None
    logging.basicConfig(stream=sys.stderr, level="WARNING", format="%(levelname)s %(name)s: %(message)s")
    where = "stdio" if transport == "stdio" else f"http://{host}:{port}/mcp"
    click.echo(
        f"mcpgen mock: {len(validated.tools)} tool(s) from {validated.source} on {where} (seed {seed})",
        err=True,
    )  # stderr: on stdio, stdout carries protocol messages only (STDIO-03)
    serve_mock(server, "stdio" if transport == "stdio" else "http", host, port)
