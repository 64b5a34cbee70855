"""`mcpgen mock`: serve a spec's tools with made-up answers, record a real server's traffic to a
cassette, or replay one (`mcpgen_runtime.mock`, the `mcpgen-runtime[mock]` extra); each with faults
injected on request.

The real server a command reaches (the tools to mock, the upstream of `--record`, the passthrough of
`--replay`) is named in one place, `_upstream`: SOURCE (a URL, with `--header`), `--upstream-stdio
CMD`, or a server of an MCP config file (`--config FILE --server NAME`, or SOURCE `FILE#NAME`: its
command, args, env and cwd, or its URL and headers; the values it supplies are scrubbed from
cassettes).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from mcpgen_runtime.masking import masked

from .common import (
    Failed,
    Source,
    check_spec,
    gathers_source,
    header_option,
    mcp_config_options,
    parse_stdio,
    reports_errors,
    selected_tools,
    tool_filter_options,
    usable_spec,
)
from .output import is_quiet, say

if TYPE_CHECKING:
    from mcpgen_runtime.mock.faults import Faults
    from mcpgen_runtime.mock.upstream import Upstream

    from ..spec import ToolFilter

__all__ = ["mock"]


def _upstream(given: Source) -> Upstream | None:
    """The real server named on the command line, or None when none is."""
    source, upstream_stdio, headers = given.where, given.stdio, given.headers
    from mcpgen_runtime.mock.upstream import Upstream

    if source is not None and upstream_stdio is not None:
        raise click.UsageError("give SOURCE or --upstream-stdio CMD, not both")
    if headers and (source is None or "://" not in source):
        raise click.UsageError("--header applies to server URLs only")
    if upstream_stdio is not None:
        return Upstream.stdio(upstream_stdio)
    from ..load.launch import resolve_entry
    from ..load.mcp_config import read_config, split_config_source

    in_config = split_config_source(source) if source is not None else None
    if in_config is not None:
        path, name = in_config
        launch = resolve_entry(read_config(path), name, shown_path=str(path))
        if launch.transport == "stdio":
            return Upstream(
                command=launch.argv,
                env=dict(launch.env),
                cwd=launch.cwd,
                label=launch.source,
                secrets=frozenset(launch.secrets),
            )
        return Upstream(
            url=launch.url,
            headers=dict(launch.headers),
            label=launch.source,
            secrets=frozenset(launch.secrets),
        )
    if source is not None and "://" in source:
        return Upstream(url=source, headers=dict(headers))
    return None


def _faults(seed: int, options: Mapping[str, Any]) -> Faults:
    from mcpgen_runtime.mock.command import make_faults

    try:
        return make_faults(
            seed,
            options["latency"],
            options["error_rate"],
            options["drop_connection"],
            options["slow_stream"],
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


@click.command()
@click.argument("spec", metavar="[SOURCE]", required=False)
@click.option(
    "--http", "transport", flag_value="http", default=True, help="Serve Streamable HTTP (the default)."
)
@click.option("--stdio", "transport", flag_value="stdio", help="Serve stdin/stdout instead.")
@click.option(
    "--upstream-stdio",
    metavar="CMD",
    callback=parse_stdio,
    help="The real server is CMD (split like a shell would) over stdio: the tools to mock, what "
    "--record records, or --replay's --passthrough.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="TCP port.")
@click.option(
    "--seed", type=int, default=0, show_default=True, help="The same seed gives the same answers and faults."
)
# Repeats in shape only (duplicates): one click declaration per option (--responses, --replay, ...).
@click.option(
    "--responses",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    metavar="FILE",
    help="Canned answers, errors, elicitation rounds, latency and failures per tool (YAML or JSON).",
)
@click.option(
    "--record",
    is_flag=True,
    help="Proxy to the real server (SOURCE URL or --upstream-stdio) and write every exchange to -o CASSETTE.",
)
@click.option(
    "-o",
    "--output",
    "cassette_out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="CASSETTE",
    help="The cassette --record writes (YAML).",
)
@click.option(
    "--scrub-header",
    multiple=True,
    metavar="NAME",
    help="--record: also scrub this header's value (and wherever it appears in bodies); repeatable. "
    "Authorization, cookies and token-like headers always are.",
)
@click.option(
    "--replay",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    metavar="CASSETTE",
    help="Serve a recorded cassette; a request it does not hold gets an error naming it.",
)
@click.option(
    "--passthrough",
    is_flag=True,
    help="--replay: send requests the cassette does not hold to the real server (SOURCE URL or "
    "--upstream-stdio) instead of failing them.",
)
@click.option(
    "--skills",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    metavar="DIR",
    help="Also serve the skills in DIR (folders with a SKILL.md: skills/list, skills/get and their files).",
)
@click.option(
    "--latency", metavar="DURATION", help="Delay every request: 100ms, 1.5s, or a range such as 50-200ms."
)
@click.option(
    "--error-rate",
    metavar="P",
    help="Answer this fraction of requests with HTTP 503 and a retryable JSON-RPC error (-32603).",
)
@click.option(
    "--drop-connection",
    metavar="P",
    help="Cut this fraction of exchanges after the response head (stdio: the mock exits).",
)
@click.option(
    "--slow-stream", metavar="DURATION", help="Send every response in 16-byte pieces, DURATION apart."
)
@tool_filter_options
@mcp_config_options
@header_option
@reports_errors
@gathers_source("spec", stdio="upstream_stdio")
def mock(
    source: Source,
    transport: str,
    host: str,
    port: int,
    seed: int,
    responses: Path | None,
    record: bool,
    cassette_out: Path | None,
    scrub_header: tuple[str, ...],
    replay: Path | None,
    passthrough: bool,
    skills: Path | None,
    filters: ToolFilter,
    **fault_options: Any,
) -> None:
    """Serve SOURCE's tools with made-up answers that are valid against each tool's outputSchema;
    or record a real server to a cassette (--record), or serve a cassette (--replay).

    SOURCE is a spec file, a generated package's tools.json, a live server's URL, or a server of an
    MCP config file (--config FILE --server NAME, or FILE#NAME). Arguments and x-mcp-header are
    checked as a generated server checks them. With --include-tools / --exclude-tools only the tools
    they keep are served. Needs `pip install 'mcpgen[mock]'`.

    \b
    mcpgen mock specs/weather.json --http --port 8000 --seed 7
    mcpgen mock specs/weather.json --skills ./skills --stdio
    mcpgen mock --record http://127.0.0.1:9000/mcp -o weather.yaml --port 8000
    mcpgen mock --record --upstream-stdio 'npx server-everything' -o everything.yaml --stdio
    mcpgen mock --replay weather.yaml --stdio --latency 50-200ms --error-rate 0.1 --seed 3
    """
    import logging

    from mcpgen_runtime.masking import mask_log_handlers
    from mcpgen_runtime.mock.command import keep_hypothesis_files_in_the_cache

    transport_: Literal["http", "stdio"] = "stdio" if transport == "stdio" else "http"
    faults = _faults(seed, fault_options)
    source = source.resolved()
    spec = source.where
    # The real server behind a proxy or a passthrough (a config file's entry is resolved only then).
    upstream = _upstream(source) if record or passthrough else None
    logging.basicConfig(
        stream=sys.stderr,
        level="ERROR" if is_quiet() else "WARNING",
        format="%(levelname)s %(name)s: %(message)s",
    )
    mask_log_handlers()
    if record and replay is not None:
        raise click.UsageError("--record and --replay: choose one")
    if cassette_out is not None and not record:
        raise click.UsageError("-o CASSETTE goes with --record")
    if passthrough and replay is None:
        raise click.UsageError("--passthrough goes with --replay")
    if skills is not None and (record or replay is not None):
        raise click.UsageError("--skills goes with a mocked SOURCE, not --record or --replay")
    if filters and (record or replay is not None):
        raise click.UsageError(
            "--include-tools / --exclude-tools choose the tools mocked from SOURCE; --record and --replay "
            "pass every exchange through"
        )
    if record:
        _record(upstream, spec, cassette_out, transport_, host, port, scrub_header, faults, responses)
        return
    if replay is not None:
        _replay(replay, upstream, spec, passthrough, transport_, host, port, scrub_header, faults, responses)
        return
    if scrub_header:
        raise click.UsageError("--scrub-header goes with --record or --replay")
    if spec is None and source.stdio is None:
        raise click.UsageError(
            "give SOURCE (a spec file or server URL), --upstream-stdio CMD, --config FILE --server NAME, "
            "or --replay"
        )
    from mcpgen_runtime.mock import MockDependencyError, MockServer, ResponsesError, serve_mock
    from mcpgen_runtime.mock.surfaces import serve_surfaces

    keep_hypothesis_files_in_the_cache()  # before hypothesis builds (and stores) its unicode tables
    selected = selected_tools(source.load(), filters).spec
    validated = usable_spec(check_spec(selected, strict=False, python_names=False))
    try:
        server = MockServer(validated.tools, seed=seed, responses=responses)
        serve_surfaces(
            server,
            resources=validated.resources,
            resource_templates=validated.resource_templates,
            prompts=validated.prompts,
            seed=seed,
        )
        if skills is not None:
            server.serve_skills(skills)
    except (ResponsesError, MockDependencyError, ValueError) as exc:
        click.echo(f"error: {masked(str(exc))}", err=True)
        raise Failed from None
    where = "stdio" if transport_ == "stdio" else f"http://{host}:{port}/mcp"
    injected = f", {faults.describe()}" if faults.active else ""
    served = f", {len(server.served_skills)} skill(s)" if skills is not None else ""
    say(
        f"mcpgen mock: {len(validated.tools)} tool(s){served} from {validated.source} on {where} "
        f"(seed {seed}{injected})",
        err=True,
    )  # stderr: on stdio, stdout carries protocol messages only (STDIO-03)
    serve_mock(server, transport_, host, port, faults=faults)


def _record(
    upstream: Upstream | None,
    spec: str | None,
    cassette: Path | None,
    transport: str,
    host: str,
    port: int,
    scrub_headers: tuple[str, ...],
    faults: Faults,
    responses: Path | None,
) -> None:
    from mcpgen_runtime.mock.command import serve_record

    if upstream is None:
        what = f"{spec!r} is not a server URL; " if spec is not None else ""
        raise click.UsageError(
            f"--record: {what}name the real server: a URL, --upstream-stdio CMD "
            "or --config FILE --server NAME"
        )
    if cassette is None:
        raise click.UsageError("--record needs -o CASSETTE")
    if responses is not None:
        raise click.UsageError("--responses does not go with --record")
    if transport == "stdio" and faults.active:
        raise click.UsageError("fault injection while recording needs --http")
    where = "stdio" if transport == "stdio" else f"http://{host}:{port}/mcp"
    say(f"mcpgen mock: recording {upstream.display()} to {cassette} on {where}", err=True)
    serve_record(
        upstream,
        cassette,
        "stdio" if transport == "stdio" else "http",
        host,
        port,
        scrub_headers=scrub_headers,
        faults=faults,
    )


def _replay(
    cassette: Path,
    upstream: Upstream | None,
    spec: str | None,
    passthrough: bool,
    transport: str,
    host: str,
    port: int,
    scrub_headers: tuple[str, ...],
    faults: Faults,
    responses: Path | None,
) -> None:
    from mcpgen_runtime.mock.cassette import CassetteError, load_cassette
    from mcpgen_runtime.mock.command import serve_replay

    if responses is not None:
        raise click.UsageError("--responses does not go with --replay")
    if passthrough and upstream is None:
        raise click.UsageError(
            "--passthrough: name the real server: a URL, --upstream-stdio CMD or --config FILE --server NAME"
        )
    if not passthrough and (upstream is not None or spec is not None):
        raise click.UsageError("--replay serves the cassette alone; a server goes with --passthrough")
    where = "stdio" if transport == "stdio" else f"http://{host}:{port}/mcp"
    injected = f" ({faults.describe()})" if faults.active else ""
    try:
        loaded = load_cassette(cassette)  # a bad cassette stops here, before the server is announced
        say(f"mcpgen mock: replaying {cassette} on {where}{injected}", err=True)
        serve_replay(
            loaded,
            "stdio" if transport == "stdio" else "http",
            host,
            port,
            faults=faults,
            passthrough=upstream if passthrough else None,
            scrub_headers=scrub_headers,
        )
    except CassetteError as exc:
        click.echo(f"error: {masked(str(exc))}", err=True)
        raise Failed from None
