"""`mcpgen validate` (check a source's tool definitions) and `mcpgen snapshot` (save a live server's
tool list as a spec file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..write.package import write_file_atomic
from .auth import login_options
from .common import (
    Failed,
    Source,
    check_spec,
    display_path,
    era_option,
    gathers_source,
    header_option,
    max_response_option,
    mcp_config_options,
    output_option,
    print_diagnostics,
    reports_errors,
    source_argument,
    stdio_option,
    strict_option,
)

__all__ = ["snapshot", "validate"]


@click.command()
@source_argument
@stdio_option
@mcp_config_options
@strict_option
@header_option
@login_options
@reports_errors
@gathers_source()
def validate(source: Source, strict: bool) -> None:
    """Check SOURCE's tool definitions and print every diagnostic.

    Exits 0 when the spec is usable (warnings allowed), 1 when it is not.
    """
    source = source.resolved()
    source.require()
    checked = check_spec(source.load(), strict)
    print_diagnostics(checked.diagnostics, err=False)
    click.echo(checked.summary())
    if not checked.usable:
        raise Failed


@click.command()
@click.argument("url", required=False, metavar="[URL]")
@output_option(directory=False, help_text="Spec file to write, e.g. specs/example.json.")
@stdio_option
@mcp_config_options
@header_option
@era_option
@max_response_option
@login_options
@reports_errors
@gathers_source("url")
def snapshot(source: Source, out: Path) -> None:
    """Save a live server's complete tool list (every page) as a spec file for offline builds.

    The file is {"tools": [...]} in the server's order, pretty-printed, replaced atomically. The
    server may be one of an MCP config file: --config FILE --server NAME (nothing of its command
    line, env or headers is saved).
    """
    source = source.resolved()
    source.require("URL")
    loaded = source.load()
    document: dict[str, Any] = {"tools": loaded.tools}
    # what the server offers beside tools (issue 22), only when it has any: old snapshots stay the same
    for member, entries in (
        ("resources", loaded.resources),
        ("resourceTemplates", loaded.resource_templates),
        ("prompts", loaded.prompts),
    ):
        if entries:
            document[member] = entries
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    counted = f"{len(loaded.tools)} tool(s)"
    extra = [
        f"{len(entries)} {what}(s)"
        for what, entries in (
            ("resource", loaded.resources),
            ("resource template", loaded.resource_templates),
            ("prompt", loaded.prompts),
        )
        if entries
    ]
    if extra:
        counted = ", ".join([counted, *extra])
    if write_file_atomic(out, text.encode("utf-8")):
        click.echo(f"saved {counted} from {loaded.source} to {display_path(out)}")
    else:
        click.echo(f"{display_path(out)}: up to date ({counted})")
