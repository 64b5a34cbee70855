"""Renamed names are said (issue #21, trap 7b): a tool or parameter whose Python name is not its
plain transliteration (a keyword, a runtime attribute, a builtin, a pydantic member, a clash) gets
one warning naming the wire name, the Python name and the reason; `mcpgen validate` counts them,
and the names it announces are the ones the generated client really has."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

from click.testing import CliRunner

from codegen import cli

SPEC = {
    "tools": [
        {
            "name": "close",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "class": {"type": "string"},
                    "self": {"type": "string"},
                    "json": {"type": "string"},
                    "a-b": {"type": "string"},
                    "a_b": {"type": "string"},
                    "getUser": {"type": "string"},
                },
            },
        },
        {"name": "call_tool", "inputSchema": {"type": "object"}},
        {"name": "call-tool", "inputSchema": {"type": "object"}},
        {"name": "class", "inputSchema": {"type": "object"}},
        {"name": "list", "inputSchema": {"type": "object"}},
        {"name": "getWeather", "inputSchema": {"type": "object"}},
        {"name": "start", "inputSchema": {"type": "object"}},
        {"name": "resume", "inputSchema": {"type": "object"}},
        {"name": "tasks", "inputSchema": {"type": "object"}},
        {"name": "check_drift", "inputSchema": {"type": "object"}},
        {"name": "tool_specs", "inputSchema": {"type": "object"}},
        {"name": "load_skill", "inputSchema": {"type": "object"}},
    ]
}
# wire name -> (Python name, a word of the reason)
TOOLS = {
    "close": ("close_", "attribute of the runtime's Client"),
    "call_tool": ("call_tool__2", "'call-tool' also maps to 'call_tool'"),
    "call-tool": ("call_tool_", "attribute of the runtime's Client"),
    "class": ("class_", "Python keyword"),
    "list": ("list_", "Python builtin"),
    "start": ("start_", "attribute of every generated Client (`client.start`)"),
    "resume": ("resume_", "attribute of every generated Client (`client.resume`)"),
    "tasks": ("tasks_", "attribute of every generated Client (`client.tasks`)"),
    "check_drift": ("check_drift_", "attribute of every generated Client (`client.check_drift`)"),
    "tool_specs": ("tool_specs_", "attribute of every generated Client (`client.tool_specs`)"),
    "load_skill": ("load_skill_", "attribute of every generated Client (`client.load_skill`)"),
}
PARAMS = {
    "class": ("class_", "Python keyword"),
    "self": ("self_", "the method's own parameter"),
    "json": ("json_", "pydantic's BaseModel"),
    "a-b": ("a_b_2", "'a_b' also maps to 'a_b'"),
}


def test_every_rename_is_a_warning_and_matches_the_generated_code(tmp_path: Path) -> None:
    spec = tmp_path / "clash.json"
    spec.write_text(json.dumps(SPEC), "utf-8")
    result = CliRunner().invoke(cli.main, ["validate", str(spec)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "MCPGEN-RENAMED" in line]
    assert len(lines) == len(TOOLS) + len(PARAMS)
    assert result.output.rstrip().endswith(f"12 tool(s) usable, 0 excluded, {len(lines)} warning(s)")
    for wire, (python, why) in TOOLS.items():
        [line] = [line for line in lines if f"tool {wire!r} is {python!r} in Python: " in line]
        assert why in line and ": warning: " in line and "/name:" in line
    for wire, (python, why) in PARAMS.items():
        [line] = [line for line in lines if f"parameter {wire!r} is {python!r} in Python: " in line]
        assert why in line and f"/tools/0/inputSchema/properties/{wire}:" in line
    assert "getWeather" not in result.output and "getUser" not in result.output  # plain snake_case

    out = tmp_path / "out"
    generated = CliRunner().invoke(
        cli.main, ["client", str(spec), "--output", str(out), "--package", "clash_client"]
    )
    assert generated.exit_code == 0, generated.output
    assert generated.output.count("MCPGEN-RENAMED") == len(lines)  # generate says it too
    sys.path.insert(0, str(out))
    try:
        from clash_client import Client  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(out))
    for python, _ in TOOLS.values():
        assert python in vars(Client), python
    from mcpgen_runtime.client import Client as RuntimeClient

    # the runtime's attributes, not a tool's method
    for attribute in ("check_drift", "tool_specs", "load_skill", "close"):
        assert attribute not in vars(Client) and getattr(Client, attribute) is getattr(
            RuntimeClient, attribute
        )
    close_params = set(inspect.signature(Client.close_).parameters)
    assert {python for python, _ in PARAMS.values()} <= close_params
