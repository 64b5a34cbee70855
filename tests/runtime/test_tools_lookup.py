"""One tool's definition from a generated package's tools.json without parsing the rest
(`PackageTools.find`, `ToolTable`, the command line's group): what one call reads (issue #20).

The tools.json files here are written by the generator's own writer (codegen/render/toolsjson.py)
from the synthetic spec and from definitions built to look like the layout the lookup relies on
(escaped newlines and `"name": ` inside strings, nested `name` keys); a file in another layout
(compact, CRLF, hand-edited) is parsed whole and gives the same answers.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from codegen.render.toolsjson import tools_json
from mcpgen_runtime.tools import PackageTools, ToolTable, _one_tool
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "specs" / "tools"))
try:
    from make_synthetic import make_tools
finally:
    sys.path.remove(str(ROOT / "specs" / "tools"))

TRICKY: list[dict[str, Any]] = [
    {
        "name": "first",
        "description": 'looks like a tool start:\n    {\n      "name": "second",\n    }',
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string", "title": "name"}}},
    },
    {
        "inputSchema": {
            "type": "object",
            "properties": {"nested": {"type": "object", "properties": {"name": {"const": "first"}}}},
        },
        "name": "second",  # not the first key
    },
    {"name": "sec", "inputSchema": {"type": "object"}},  # a prefix of another name
    {"name": "émoji-less.name_3", "inputSchema": {"type": "object"}, "title": "ünïcode \u2603"},
]


def _package(root: Path, name: str, text: str) -> str:
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tools.json").write_text(text, "utf-8", newline="")
    return name


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("definitions", [make_tools(200), TRICKY], ids=["synthetic", "tricky"])
def test_each_tool_is_its_own_slice_of_the_generated_file(definitions: list[dict[str, Any]]) -> None:
    data = tools_json(definitions).encode("utf-8")
    parsed = json.loads(data)["tools"]
    for definition in parsed:
        assert _one_tool(data, definition["name"]) == definition
    assert _one_tool(data, "no_such_tool") is None
    assert _one_tool(data, "name") is None  # a key of a schema is no tool


def test_find_reads_one_tool_and_other_layouts_are_parsed_whole(on_path: Path) -> None:
    definitions = make_tools(50)
    layouts = {
        "generated": tools_json(definitions),
        "compact": json.dumps({"tools": definitions}),
        "crlf": tools_json(definitions).replace("\n", "\r\n"),
    }
    for label, text in layouts.items():
        tools = PackageTools(_package(on_path, f"pkg_{label}", text))
        for definition in definitions[::7]:
            assert tools.find(definition["name"]) == definition, label
        assert tools.loaded == (label != "generated"), label  # the generated layout: never parsed whole
        assert tools.find("no_such_tool") is None
        assert tools.loaded  # a name that is not there: the whole file says so


def test_a_duplicated_name_is_decided_by_the_whole_file(on_path: Path) -> None:
    twice = [{"name": "a", "inputSchema": {"type": "object"}}] * 2
    tools = PackageTools(_package(on_path, "pkg_twice", tools_json(twice)))
    assert tools.find("a") == twice[0]
    assert tools.loaded
    with pytest.raises(ValueError, match="duplicate tool name 'a'"):
        ToolTable(PackageTools("pkg_twice"))["a"]  # the table refuses the file, as before


def test_tool_table_parses_only_what_is_looked_up(on_path: Path) -> None:
    definitions = make_tools(30)
    source = PackageTools(_package(on_path, "pkg_table", tools_json(definitions)))
    table = ToolTable(source)
    wanted = definitions[12]["name"]
    assert table[wanted].definition == definitions[12]
    assert wanted in table and table.get(wanted) is table[wanted]
    assert table.parsed == {wanted} and not source.loaded
    assert "no_such_tool" not in table and table.get("no_such_tool") is None
    assert list(table) == [d["name"] for d in definitions]  # iterating indexes the whole file
    assert source.loaded
