"""Commands that look at sources without generating bindings: `mcpgen validate` (check a source's tool
definitions), `mcpgen snapshot` (save a live server's tool list as a spec file) and `mcpgen servers`
(the MCP servers the config files of this project and this user define)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click

from ..errors import Diagnostic, McpgenError
from ..spec import ToolFilter
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
    report_error,
    reports_errors,
    selected_tools,
    source_argument,
    stdio_option,
    strict_option,
    tool_filter_options,
)

__all__ = ["servers", "snapshot", "validate"]


@click.command()
@source_argument
@stdio_option
@mcp_config_options
@strict_option
@tool_filter_options
@header_option
@login_options
@reports_errors
@gathers_source()
def validate(source: Source, strict: bool, filters: ToolFilter) -> None:
    """Check SOURCE's tool definitions and print every diagnostic.

    Exits 0 when the spec is usable (warnings allowed), 1 when it is not. With --include-tools /
    --exclude-tools only the tools they keep are checked, as `client` and `server` would.
    """
    source = source.resolved()
    source.require()
    from ..load.filters import select_tools

    selection = select_tools(source.load(), filters)
    checked = check_spec(selection.spec, strict)
    # a glob matching nothing is one of the warnings validate prints (on stdout, its output) and counts
    diagnostics = sorted([*selection.warnings, *checked.diagnostics], key=Diagnostic.sort_key)
    checked = dataclasses.replace(checked, diagnostics=diagnostics)
    print_diagnostics(checked.diagnostics, err=False)
    click.echo(checked.summary(selection.filtered if filters else None))
    if not checked.usable:
        raise Failed


@click.command()
@click.argument("url", required=False, metavar="[URL]")
@output_option(directory=False, help_text="Spec file to write, e.g. specs/example.json.")
@tool_filter_options
@stdio_option
@mcp_config_options
@header_option
@era_option
@max_response_option
@login_options
@reports_errors
@gathers_source("url")
def snapshot(source: Source, out: Path, filters: ToolFilter) -> None:
    """Save a live server's complete tool list (every page) as a spec file for offline builds.

    The file is {"tools": [...]} in the server's order, pretty-printed, replaced atomically. The
    server may be one of an MCP config file: --config FILE --server NAME (nothing of its command
    line, env or headers is saved). With --include-tools / --exclude-tools only the tools they keep
    are saved.
    """
    source = source.resolved()
    source.require("URL")
    selection = selected_tools(source.load(), filters)
    loaded = selection.spec
    document: dict[str, Any] = {"tools": loaded.tools}
    # what the server offers beside tools (issue 22), only when it has any: old snapshots stay the same
    for member, entries in (
        ("resources", loaded.resources),
        ("resourceTemplates", loaded.resource_templates),
        ("prompts", loaded.prompts),
        ("skills", loaded.skills),
    ):
        if entries:
            document[member] = entries
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    counted = f"{len(loaded.tools)} tool(s)"
    if filters:
        counted += f" ({selection.filtered} filtered out)"
    extra = [
        f"{len(entries)} {what}(s)"
        for what, entries in (
            ("resource", loaded.resources),
            ("resource template", loaded.resource_templates),
            ("prompt", loaded.prompts),
            ("skill", loaded.skills),
        )
        if entries
    ]
    if extra:
        counted = ", ".join([counted, *extra])
    if write_file_atomic(out, text.encode("utf-8")):
        click.echo(f"saved {counted} from {loaded.source} to {display_path(out)}")
    else:
        click.echo(f"{display_path(out)}: up to date ({counted})")


@click.command()
@click.option(
    "--config",
    "mcp_config",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    metavar="FILE",
    help="List this MCP config file only [default: every well-known file of the project and the user].",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout, for programs.")
@reports_errors
def servers(mcp_config: Path | None, as_json: bool) -> None:
    """List the MCP servers your editors' and hosts' config files define.

    Without --config, the project's files in the current directory (.mcp.json, .cursor/mcp.json,
    .vscode/mcp.json, .codex/config.toml) and the user's (Claude Desktop, ~/.claude.json, ~/.cursor,
    VS Code's user mcp.json, Windsurf, Codex) are read. For each server: its name, stdio or HTTP,
    and the command's name or the URL (never arguments, env values or headers). Generate a client
    from one with `mcpgen client --config FILE --server NAME -o DIR`. Exits 1 when a file cannot be
    read.
    """
    from ..load.mcp_config import read_config, well_known_files

    if mcp_config is not None:
        places = [("given", "", mcp_config)]
    else:
        places = [place for place in well_known_files(Path.cwd(), Path.home()) if place[2].is_file()]
    failed = False
    found: list[dict[str, Any]] = []
    for scope, host, path in places:
        shown = display_path(path) if scope != "user" else _home_relative(path)
        try:
            config = read_config(path)
        except McpgenError as exc:
            failed = True
            report_error(exc)
            continue
        found.append(
            {
                "file": shown,
                "scope": scope,
                "host": host,
                "format": config.format,
                "servers": [
                    {
                        "name": entry.name,
                        "transport": entry.transport,
                        "target": entry.summary(),
                        "disabled": entry.disabled,
                    }
                    for entry in config.entries.values()
                ],
            }
        )
    if as_json:
        click.echo(json.dumps(found, indent=2, ensure_ascii=False))
    else:
        _print(found)
    if failed:
        raise Failed


def _print(found: list[dict[str, Any]]) -> None:
    # The generated clients' own terminal escaping; imported here, as only this listing needs it.
    from mcpgen_runtime.cli.text import printable

    if not found:
        click.echo("no MCP config files found (mcpgen servers --help lists where it looks)")
        return
    for number, item in enumerate(found):
        if number:
            click.echo("")
        where = f"{item['scope']}, {item['host']}" if item["host"] else item["format"]
        click.echo(f"{item['file']} ({where}): {len(item['servers'])} server(s)")
        names = [printable(server["name"], keep_newlines=False) for server in item["servers"]]
        width = max(map(len, names), default=0)
        for name, server in zip(names, item["servers"], strict=True):
            off = "  (disabled)" if server["disabled"] else ""
            target = printable(server["target"], keep_newlines=False)
            click.echo(f"  {name:<{width}}  {server['transport']:<5}  {target}{off}")


def _home_relative(path: Path) -> str:
    try:
        return "~/" + path.resolve().relative_to(Path.home().resolve()).as_posix()
    except ValueError:
        return str(path)
