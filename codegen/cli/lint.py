"""`mcpgen lint SOURCE --profile P`: which tools a model provider's function calling takes as they are,
which only after a faithful lowering, and which never, with every refused keyword by JSON pointer.
The rules and lowerings are the runtime's (`mcpgen_runtime.providers`), shared with generated clients.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import click

from mcpgen_runtime.providers import PROFILES, Lowered, lint_tool

from .auth import login_options
from .common import (
    Failed,
    Source,
    era_option,
    gathers_source,
    header_option,
    max_response_option,
    mcp_config_options,
    reports_errors,
    source_argument,
    stdio_option,
)

__all__ = ["lint"]


@click.command()
@source_argument
@click.option(
    "--profile",
    "profiles",
    type=click.Choice(list(PROFILES)),
    multiple=True,
    required=True,
    help="The provider's function-calling subset to check against (repeatable).",
)
@click.option(
    "--allow-lowering",
    is_flag=True,
    help="Exit 0 when every tool is taken as it is or after a faithful lowering.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON document on stdout (with the lowered schemas)."
)
@stdio_option
@mcp_config_options
@header_option
@era_option
@max_response_option
@login_options
@reports_errors
@gathers_source()
def lint(source: Source, profiles: Sequence[str], allow_lowering: bool, as_json: bool) -> None:
    """Check SOURCE's tools against model providers' function-calling subsets.

    For each tool and JSON pointer: the keyword or shape the provider refuses, and how it is lowered
    faithfully (the lowered schema admits nothing the original refuses; an optional property becomes
    a required, nullable one whose null means "not sent"), or that it cannot be. Profiles:
    openai-strict (strict function calling), anthropic (strict tool use), gemini (function
    declarations). Exits 1 when some tool is not taken as it is (with --allow-lowering: when some
    tool can never be), 0 otherwise, 2 on usage errors.
    """
    source = source.resolved()
    source.require()
    tools = [tool for tool in source.load().tools if isinstance(tool, dict)]
    results = [lint_tool(profile, tool) for profile in dict.fromkeys(profiles) for tool in tools]
    if as_json:
        click.echo(json.dumps([_as_json(result) for result in results], indent=2, ensure_ascii=False))
    else:
        _print(results, list(dict.fromkeys(profiles)), len(tools))
    refused = {"never"} if allow_lowering else {"never", "lowered"}
    if any(result.status in refused for result in results):
        raise Failed


def _as_json(result: Lowered) -> dict[str, Any]:
    return {
        "profile": result.profile,
        "tool": result.tool,
        "name": result.name,
        "status": result.status,
        "problems": [
            {
                "pointer": problem.pointer,
                "keyword": problem.keyword,
                "message": problem.message,
                "lowering": problem.lowering,
            }
            for problem in result.problems
        ],
        "inputSchema": result.schema,
        "nullableOptional": list(result.nullable_optional),
    }


def _print(results: Sequence[Lowered], profiles: Sequence[str], tool_count: int) -> None:
    # The generated clients' own terminal escaping: tool names and schemas are the server's text.
    from mcpgen_runtime.cli.text import printable

    for result in results:
        if not result.problems:
            continue
        click.echo(f"{result.profile}: {printable(result.tool, keep_newlines=False)} ({result.status})")
        width = max(len(problem.pointer) for problem in result.problems)
        for problem in result.problems:
            how = f"lowered: {problem.lowering}" if problem.faithful else "no faithful lowering"
            where = printable(problem.pointer, keep_newlines=False)
            click.echo(f"  {where:<{width}}  {printable(problem.message, keep_newlines=False)} [{how}]")
    for profile in profiles:
        counts = Counter(result.status for result in results if result.profile == profile)
        click.echo(
            f"{profile}: {tool_count} tool(s): {counts['as-is']} as they are, "
            f"{counts['lowered']} after lowering, {counts['never']} never"
        )
