"""`[tool.mcpgen]` parsing: targets as frozen dataclasses, clear errors for anything unexpected."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from codegen.cli.config import ConfigError, find_pyproject, load_config
from codegen.errors import McpgenError

GOOD = """
[project]
name = "x"

[[tool.mcpgen.targets]]
source = "specs/weather.json"
kind = "client"
output = "generated"
package = "weather_client"

[[tool.mcpgen.targets]]
source = "specs/weather.json"
kind = "server"
output = "src"
package = "weather_server"
strict = true
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    return path


def test_targets_resolved_against_pyproject(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    first, second = config.targets
    assert first.source == "specs/weather.json"
    assert first.source_path == (tmp_path / "specs" / "weather.json").resolve()
    assert first.output == (tmp_path / "generated").resolve()
    assert (first.kind, first.package, first.strict, first.index) == ("client", "weather_client", False, 1)
    assert (second.kind, second.output.name, second.strict, second.index) == ("server", "src", True, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.package = "other"  # type: ignore[misc]


def test_find_pyproject_walks_up(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_pyproject(deep) == path.resolve()


TARGET = '[[tool.mcpgen.targets]]\nsource = "s.json"\nkind = "client"\noutput = "g"\npackage = "p"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            TARGET + "packge = 'q'\n",
            "#1: unknown key(s) 'packge'; expected source, kind, output, package, strict",
        ),
        (TARGET.replace('"client"', '"both"'), "kind 'both' is unknown; expected 'client' or 'server'"),
        (TARGET.replace('package = "p"\n', ""), "#1: missing key(s) 'package'"),
        (TARGET.replace('"p"', '"my-pkg"'), "package 'my-pkg' is not a valid Python identifier"),
        (TARGET.replace('"p"', '"class"'), "package 'class' is not a valid Python identifier"),
        (TARGET + "strict = 'yes'\n", "'strict' must be a bool"),
        (TARGET.replace('"s.json"', '"https://x.example/mcp"'), "is a URL"),
        (TARGET.replace('"s.json"', "3"), "'source' must be a str"),
        (TARGET + TARGET, "both write"),
        ("[tool.mcpgen]\ntarget = []\n", "[tool.mcpgen]: unknown key(s) 'target'"),
        ("[tool.mcpgen]\ntargets = []\n", "needs at least one"),
        ("[tool.mcpgen]\ntargets = [1]\n", "expected a table"),
        ("[tool.black]\nx = 1\n", "no [tool.mcpgen] section"),
        ("tool = 3\n", "no [tool.mcpgen] section"),
        ("[tool.mcpgen\n", "invalid TOML"),
    ],
)
def test_config_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    assert message in str(info.value)
    assert str(tmp_path / "pyproject.toml") in str(info.value)
    assert isinstance(info.value, McpgenError)


def test_unreadable_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
