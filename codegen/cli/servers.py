"""`mcpgen servers`: the MCP servers the config files of this project and this user define."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..errors import McpgenError
from .common import Failed, display_path, report_error, reports_errors

__all__ = ["servers"]


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
