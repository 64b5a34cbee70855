"""Options from input schemas, checked end to end: the CLI of `generated/shapes_client` (every schema
shape the generator models) against the mock serving specs/shapes.json, asserting what arrived on
the server; and `--help` of packages generated from the hostile corpus, where every description,
title and enum value is an attack on a terminal or on click's help formatter.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from codegen.pipeline import build_client
from mcpgen_runtime.cli import build_cli
from mcpgen_runtime.mock.harness import RunningMock, running_mock
from tests.codegen.pipeline.test_generate import load_spec, write_package
from tests.interop._support import GENERATED  # and generated/ on sys.path
from tests.support import ROOT

pytestmark = pytest.mark.timeout(90)

_shapes = importlib.import_module("shapes_client.__main__")
CLI = build_cli(
    importlib.import_module("shapes_client").Client, _shapes._TOOLS, prog="shapes", models=_shapes._m
)


@pytest.fixture(scope="module")
def mock() -> Iterator[RunningMock]:
    with running_mock(spec=ROOT / "specs" / "shapes.json") as running:
        yield running


def run(mock: RunningMock, *args: str) -> Result:
    mock.reset()
    return CliRunner().invoke(CLI, ["--url", str(mock.url), *args], catch_exceptions=False)


def sent(mock: RunningMock, *args: str) -> dict[str, Any]:
    result = run(mock, *args)
    assert result.exit_code == 0, result.output
    (call,) = mock.calls
    return call.arguments


def refused(mock: RunningMock, *args: str) -> str:
    result = run(mock, *args)
    assert result.exit_code == 2, result.output
    assert mock.calls == []  # nothing was sent
    return result.stderr


def test_enum_choices(mock: RunningMock) -> None:
    assert "'purple' is not one of 'red', 'green', 'blue'" in refused(mock, "enums", "--color", "purple")
    assert "'4' is not one of '1', '2', '3'" in refused(mock, "enums", "--color", "red", "--level", "4")
    assert sent(
        mock, "enums", "--color", "red", "--level", "2", "--mixed", '{"k": "v"}', "--single", "only"
    ) == {"color": "red", "level": 2, "mixed": {"k": "v"}, "single": "only"}
    assert sent(mock, "enums", "--color", "blue", "--mixed", "true", "--nullable-enum", "y") == {
        "color": "blue",
        "mixed": True,
        "nullable_enum": "y",
    }
    help_text = run(mock, "enums", "--help").stdout
    assert "--color [red|green|blue]" in help_text and "A string enum. [required]" in help_text


def test_numbers_are_range_checked(mock: RunningMock) -> None:
    assert "101 is not <= 100" in refused(mock, "constraints", "--count", "101")
    assert "-1 is not >= 0" in refused(mock, "constraints", "--count", "-1")
    assert "0 is not > 0" in refused(mock, "constraints", "--ratio", "0")
    assert "'1.5' is not an integer" in refused(mock, "constraints", "--count", "1.5")
    # what the options cannot say, the client's schema check says, with the JSON pointer
    assert "invalid arguments at /count" in refused(mock, "constraints", "--count", "3")  # multipleOf 2
    assert "invalid arguments at /name" in refused(mock, "constraints", "--name", "x" * 11)
    assert sent(mock, "constraints", "--count", "4", "--ratio", "0.25", "--tags", "a", "--tags", "b") == {
        "count": 4,
        "ratio": 0.25,
        "tags": ["a", "b"],
    }


def test_booleans_arrays_and_sub_options(mock: RunningMock) -> None:
    assert sent(mock, "defaults", "--b", "--a", "1", "--a", "2", "--o.k", "val", "--i", "-3") == {
        "b": True,
        "a": [1, 2],
        "o": {"k": "val"},
        "i": -3,
    }
    assert sent(mock, "defaults", "--no-b") == {"b": False}
    assert sent(mock, "defaults") == {}  # omitted options are not sent: the server's defaults apply
    assert sent(mock, "defaults", "--o", '{"k": "x"}', "--o.k", "y", "--m", '{"x": 2}') == {
        "o": {"k": "y"},
        "m": {"x": 2},
    }
    assert "'x' is not an integer" in refused(mock, "defaults", "--a", "1", "--a", "x")


def test_nested_objects_as_json(mock: RunningMock) -> None:
    assert sent(mock, "nested-objects", "--outer", '{"inner": {"leaf": "x"}}') == {
        "outer": {"inner": {"leaf": "x"}}
    }
    assert "is not a JSON object" in refused(mock, "nested-objects", "--outer", "[1]")
    assert "invalid arguments at /outer/inner" in refused(mock, "nested-objects", "--outer", '{"inner": {}}')
    assert "Missing option '--outer'" in refused(mock, "nested-objects")


def test_python_names_become_options_and_wire_names_are_sent(mock: RunningMock) -> None:
    tool = next(
        t
        for t in json.loads((GENERATED / "shapes_client" / "tools.json").read_text())["tools"]
        if t["name"] == "names"
    )
    required = tool["inputSchema"]["required"]
    arguments = sent(mock, "names", "--class", "c", "--first-name-3", "f", "--json-", "j", "--self", "s")
    assert set(required) <= set(arguments) and "self" in arguments and "json" in arguments
    assert "--json- TEXT" in run(mock, "names", "--help").stdout  # `json_` must not take over --json ARGS


def test_a_root_union_takes_json_only(mock: RunningMock) -> None:
    help_text = run(mock, "root-union", "--help").stdout
    assert "--json ARGS" in help_text and help_text.count("--") == 3  # --json, --no-wait and --help
    assert run(mock, "root-union").exit_code in (0, 2)  # {} may or may not fit the union; never a crash


# ------------------------------------------------------------------------------------ hostile


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("hostile_cli")
    modules: dict[str, Any] = {}
    sys.path.insert(0, str(root))
    try:
        for path in sorted((ROOT / "tests" / "hostile" / "corpus").glob("*.json")):
            package = f"hostile_cli_{path.stem}"
            write_package(root, build_client(load_spec(path), package=package))
            modules[path.stem] = (
                importlib.import_module(package),
                importlib.import_module(f"{package}.__main__"),
            )
        yield modules
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.startswith("hostile_cli_")]:
            del sys.modules[name]


def _inert(text: str) -> bool:
    return all(char.isprintable() or char == "\n" for char in text)


def test_hostile_help_is_inert(hostile: dict[str, Any], capfd: pytest.CaptureFixture[str]) -> None:
    """Every control, bidi and separator character in descriptions, titles and enum values shows as
    its escape; `\\b` and `\\f` never reach click (no unwrapped paragraph, no cut help)."""
    seen = 0
    for package, main in hostile.values():
        cli = build_cli(package.Client, main._TOOLS, prog="hostile", models=main._m)
        listing = CliRunner().invoke(cli, ["--help"], catch_exceptions=False)
        assert listing.exit_code == 0 and _inert(listing.stdout), listing.stdout
        for tool in main._TOOLS:
            result = CliRunner().invoke(cli, [tool.command, "--help"], catch_exceptions=False)
            assert result.exit_code == 0, result.output
            assert _inert(result.output), result.output
            seen += "PWNED" in result.stdout
    assert seen > 5  # the payloads reached the help, as text
    out, err = capfd.readouterr()
    assert "PWNED" not in out + err  # and nothing ran


def test_hostile_enum_values_are_choices_only_when_they_print(hostile: dict[str, Any]) -> None:
    """An enum whose values all print as typed is a choice; one holding a control, bidi or separator
    character is taken as a plain value instead (the schema check still holds it to the enum)."""
    package, main = hostile["text"]
    cli = build_cli(package.Client, main._TOOLS, prog="hostile", models=main._m)
    kinds = set()
    for tool in main._TOOLS:
        help_text = CliRunner().invoke(cli, [tool.command, "--help"], catch_exceptions=False).stdout
        (line,) = [line for line in help_text.splitlines() if line.startswith("  --choice ")]
        kinds.add("choice" if line.startswith("  --choice [") else line.split()[1])
        # a value outside the enum is refused before anything is sent (nothing listens on port 9)
        result = CliRunner().invoke(
            cli, ["--url", "http://127.0.0.1:9/mcp", tool.command, "--fixed", "nope", "--choice", "nope"]
        )
        assert result.exit_code == 2, result.output
    assert kinds == {"choice", "VALUE"}
