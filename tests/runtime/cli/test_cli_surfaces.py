"""The command line's commands beyond tools (runtime/mcpgen_runtime/cli/surfaces.py), without a
server: which commands a package offers, usage errors (exit 2) before anything is started."""

from __future__ import annotations

import click
from click.testing import CliRunner
from pydantic import BaseModel

from mcpgen_runtime.cli import CliTool, build_cli
from mcpgen_runtime.client import Client


class Empty(BaseModel):
    pass


def _commands(group: click.Group) -> list[str]:
    with click.Context(group) as ctx:
        return group.list_commands(ctx)


def test_offered_only_when_asked_and_a_tool_of_the_same_name_wins() -> None:
    tools = [CliTool("read", "read", Empty), CliTool("echo", "echo", Empty), CliTool("skill", "skill", Empty)]
    # task: cli/tasks.py; check: cli/drift.py; skills, skill: cli/skills.py (`mcp-skill`: a tool has `skill`)
    always = ["task", "check", "skills", "mcp-skill"]
    assert _commands(build_cli(Client, tools, prog="pkg")) == ["read", "echo", "skill", *always]
    group = build_cli(Client, tools, prog="pkg", surfaces=True)
    assert _commands(group) == [
        "read",
        "echo",
        "skill",
        "resources",
        "prompts",
        "prompt",
        "complete",
        *always,
    ]
    shown = CliRunner().invoke(group, ["--help"])
    assert "resources" in shown.output and "prompt " in shown.output


def test_usage_errors_exit_2_before_any_connection() -> None:
    group = build_cli(Client, [], prog="pkg", surfaces=True)
    runner = CliRunner()
    both = runner.invoke(group, ["--url", "http://127.0.0.1:9/mcp", "read", "x:a", "--template", "x://{a}"])
    assert both.exit_code == 2 and "give a URI or --template" in both.output and "not both" in both.output
    neither = runner.invoke(group, ["--url", "http://127.0.0.1:9/mcp", "read"])
    assert neither.exit_code == 2 and "one of them" in neither.output
    bad_template = runner.invoke(
        group, ["--url", "http://127.0.0.1:9/mcp", "read", "--template", "x://{a b}"]
    )
    assert bad_template.exit_code == 2 and "--template" in bad_template.output
    bad_arg = runner.invoke(group, ["--url", "http://127.0.0.1:9/mcp", "prompt", "p", "--arg", "novalue"])
    assert bad_arg.exit_code == 2 and "KEY=VALUE" in bad_arg.output
    no_ref = runner.invoke(group, ["--url", "http://127.0.0.1:9/mcp", "complete", "arg", "x"])
    assert no_ref.exit_code == 2 and "one of them" in no_ref.output
    two_refs = runner.invoke(
        group, ["--url", "http://127.0.0.1:9/mcp", "complete", "--prompt", "p", "--template", "x://{a}", "a"]
    )
    assert two_refs.exit_code == 2 and "not both" in two_refs.output


def test_an_unreachable_server_is_exit_3() -> None:
    group = build_cli(Client, [], prog="pkg", surfaces=True)
    result = CliRunner().invoke(group, ["--url", "http://127.0.0.1:9/mcp", "--timeout", "2", "prompts"])
    assert result.exit_code == 3, result.output
