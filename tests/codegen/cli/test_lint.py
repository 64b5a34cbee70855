"""`mcpgen lint SOURCE --profile P` (issue 35, item 3): every refused keyword by tool and JSON pointer,
whether a faithful lowering exists, and the exit codes (1 when a tool is not taken as it is, 0
otherwise, 2 on usage errors); the source read as every command reads it (here a file and a live
stdio server)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from codegen.cli import main

ROOT = Path(__file__).resolve().parents[3]

CLOSED = {
    "type": "object",
    "properties": {"q": {"type": "string"}},
    "required": ["q"],
    "additionalProperties": False,
}
OPTIONAL = {"type": "object", "properties": {"q": {"type": "string"}}}
NULLABLE_OPTIONAL = {
    "type": "object",
    "properties": {"q": {"type": ["string", "null"]}},
    "additionalProperties": False,
}


def spec(tmp_path: Path, *tools: tuple[str, dict[str, Any]]) -> str:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": [{"name": name, "inputSchema": schema} for name, schema in tools]}))
    return str(path)


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["lint", *args], catch_exceptions=False)


def test_a_spec_taken_as_it_is_exits_0(tmp_path: Path) -> None:
    done = run(spec(tmp_path, ("search", CLOSED)), "--profile", "openai-strict")
    assert done.exit_code == 0, done.output
    assert done.output.strip() == "openai-strict: 1 tool(s): 1 as they are, 0 after lowering, 0 never"


def test_each_problem_by_tool_and_pointer_with_its_lowering(tmp_path: Path) -> None:
    source = spec(tmp_path, ("search", CLOSED), ("opt", OPTIONAL), ("both", NULLABLE_OPTIONAL))
    done = run(source, "--profile", "openai-strict")
    assert done.exit_code == 1
    lines = done.output.splitlines()
    assert "openai-strict: opt (lowered)" in lines
    assert any(
        "/inputSchema/properties/q" in line and "required and nullable (null = not sent)" in line
        for line in lines
    )
    assert any(
        "/inputSchema/additionalProperties" in line and "additionalProperties: false" in line
        for line in lines
    )
    assert "openai-strict: both (never)" in lines
    assert any("/inputSchema/properties/q" in line and "no faithful lowering" in line for line in lines)
    assert lines[-1] == "openai-strict: 3 tool(s): 1 as they are, 1 after lowering, 1 never"
    # --allow-lowering: only a tool that can never be taken fails
    assert run(source, "--profile", "openai-strict", "--allow-lowering").exit_code == 1
    lowered_only = spec(tmp_path, ("search", CLOSED), ("opt", OPTIONAL))
    assert run(lowered_only, "--profile", "openai-strict").exit_code == 1
    assert run(lowered_only, "--profile", "openai-strict", "--allow-lowering").exit_code == 0


def test_several_profiles_and_json(tmp_path: Path) -> None:
    source = spec(
        tmp_path, ("files.read", {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}})
    )
    done = run(source, "--profile", "gemini", "--profile", "anthropic", "--json")
    assert done.exit_code == 1
    results = json.loads(done.output)
    assert [(r["profile"], r["status"], r["name"]) for r in results] == [
        ("gemini", "as-is", "files.read"),
        ("anthropic", "never", "files_read"),
    ]
    assert {p["pointer"]: p["lowering"] is not None for p in results[1]["problems"]} == {
        "/name": True,
        "/inputSchema/properties/n/minimum": False,
        "/inputSchema/additionalProperties": True,
    }
    assert results[0]["inputSchema"] == {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1}},
    }


@pytest.mark.parametrize(
    "args",
    [
        ["specs/weather.json"],  # --profile is required
        ["specs/weather.json", "--profile", "mistral"],
        ["--profile", "gemini"],  # no source
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert CliRunner().invoke(main, ["lint", *args]).exit_code == 2


def test_server_text_is_escaped(tmp_path: Path) -> None:
    done = run(spec(tmp_path, ("evil\x1b[31m", OPTIONAL)), "--profile", "anthropic")
    assert "\x1b" not in done.output


@pytest.mark.peer
def test_a_live_server_over_stdio() -> None:
    command = f"{sys.executable} {ROOT / 'tests' / 'peers' / 'sdk_server.py'} --stdio"
    done = run("--stdio", command, "--profile", "openai-strict", "--profile", "gemini")
    assert done.exit_code == 1, done.output
    assert done.output.splitlines()[-2:] == [
        "openai-strict: 9 tool(s): 1 as they are, 8 after lowering, 0 never",
        "gemini: 9 tool(s): 7 as they are, 2 after lowering, 0 never",
    ]
