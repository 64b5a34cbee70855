"""Hostile or odd tool lists: each class of problem is refused quickly, or the tool is excluded (or the
value dropped) with a warning naming the tool and the pointer, and the rest still generates.

- `$ref` fan-out: definitions referencing each other several times each, in every shape that
  multiplies (properties, anyOf + items, allOf, additionalProperties, three-way, anchors) are
  refused in well under a second at the `$ref` where the expansion passes the limit;
- `x-mcp-header` on the root inputSchema excludes the tool (XHDR-08);
- duplicate member names refuse the file, naming tool and pointer;
- an empty tool name excludes the tool;
- a `$ref` loop with no structure in between names the offending `$ref`;
- a JSON-RPC envelope is accepted with a note; an unknown or `input_required` resultType is refused;
- an invalid regular expression excludes the tool;
- a 100 KB description is accepted and generated;
- a number beyond double range is dropped from a `default` (or a vacuous bound), else its tool is
  excluded; the other tools stay.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from codegen.errors import Diagnostic, SpecLoadError, SpecValidationError
from codegen.load.document import load_file
from codegen.pipeline import build_client, build_server
from codegen.spec import ValidatedSpec
from codegen.validate.checks import validate


def _file(tmp_path: Path, document: Any, name: str = "spec.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document), "utf-8")
    return path


def _tool(name: str, schema: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": schema or {"type": "object"}, **extra}


def _one(diagnostics: list[Diagnostic], rule: str, pointer: str) -> Diagnostic:
    found = [d for d in diagnostics if d.rule == rule and d.pointer == pointer]
    assert found, f"no {rule} at {pointer}:\n" + "\n".join(map(str, diagnostics))
    return found[0]


# ----------------------------------------------------------------------------------- $ref fan-out


def _chain(levels: int, step: Any, leaf: dict[str, Any]) -> dict[str, Any]:
    defs = {f"d{i}": step(f"#/$defs/d{i + 1}") for i in range(levels)}
    defs[f"d{levels}"] = leaf
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}


FAN_OUTS = {
    "two properties": lambda ref: {"type": "object", "properties": {"a": {"$ref": ref}, "b": {"$ref": ref}}},
    "anyOf and items": lambda ref: {"anyOf": [{"$ref": ref}, {"type": "array", "items": {"$ref": ref}}]},
    "allOf": lambda ref: {"allOf": [{"$ref": ref}, {"$ref": ref}]},
    "map and tuple": lambda ref: {
        "type": "object",
        "additionalProperties": {"$ref": ref},
        "properties": {"t": {"type": "array", "prefixItems": [{"$ref": ref}]}},
    },
    "three ways": lambda ref: {
        "oneOf": [
            {"$ref": ref},
            {"type": "array", "items": {"$ref": ref}},
            {"type": "object", "properties": {"z": {"$ref": ref}}},
        ]
    },
}


@pytest.mark.parametrize("shape", sorted(FAN_OUTS))
@pytest.mark.parametrize("levels", [40, 400])
def test_exponential_ref_fan_out_is_refused_quickly(tmp_path: Path, shape: str, levels: int) -> None:
    schema = _chain(levels, FAN_OUTS[shape], {"type": "object", "properties": {"s": {"type": "string"}}})
    path = _file(tmp_path, {"tools": [_tool("ok"), _tool("fan", schema)]})
    started = time.perf_counter()
    with pytest.raises(SpecValidationError) as caught:
        validate(load_file(path))
    assert time.perf_counter() - started < 3.0
    [error] = [d for d in caught.value.diagnostics if d.severity == "error"]
    assert error.tool == "fan" and error.rule == "SCHEMA-11"
    assert error.pointer.startswith("/tools/1/inputSchema/$defs/d") and error.pointer.endswith("/$ref")
    assert "expands to" in error.message and "at most 100,000" in error.message


def test_anchored_fan_out_is_refused(tmp_path: Path) -> None:
    defs: dict[str, Any] = {
        f"d{i}": {
            "$anchor": f"a{i}",
            "type": "array",
            "items": {"anyOf": [{"$ref": f"#a{i + 1}"}, {"$ref": f"#a{i + 1}"}]},
        }
        for i in range(30)
    }
    defs["d30"] = {"$anchor": "a30", "type": "string"}
    schema = {"type": "object", "properties": {"x": {"$ref": "#a0"}}, "$defs": defs}
    with pytest.raises(SpecValidationError, match="expands to"):
        validate(load_file(_file(tmp_path, {"tools": [_tool("fan", schema)]})))


def test_shared_and_recursive_definitions_are_not_fan_out(tmp_path: Path) -> None:
    """Many references to one definition, and a recursive tree, stay well inside the limit."""
    shared = {f"p{i}": {"$ref": "#/$defs/text"} for i in range(200)}
    tree = {
        "type": "object",
        "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            "left": {"$ref": "#/$defs/node"},
            "right": {"$ref": "#/$defs/node"},
        },
    }
    schema = {
        "type": "object",
        "properties": {**shared, "root": {"$ref": "#/$defs/node"}},
        "$defs": {"text": {"type": "object", "properties": {"content": {"type": "string"}}}, "node": tree},
    }
    validated = validate(load_file(_file(tmp_path, {"tools": [_tool("deep", schema)]})))
    assert [t["name"] for t in validated.tools] == ["deep"]
    build_client(validated, package="deep_client")


@pytest.mark.parametrize(
    ("defs", "steps"),
    [
        (
            {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            ["/$defs/a/$ref", "/$defs/b/$ref", "/$defs/a"],
        ),
        ({"a": {"$ref": "#/$defs/a"}}, ["/$defs/a/$ref", "/$defs/a"]),
        (
            {"a": {"allOf": [{"$ref": "#/$defs/a"}]}},
            ["/$defs/a/allOf/0", "/$defs/a/allOf/0/$ref", "/$defs/a"],
        ),
    ],
)
def test_ref_loop_names_the_offending_ref(tmp_path: Path, defs: dict[str, Any], steps: list[str]) -> None:
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}, "$defs": defs}
    with pytest.raises(SpecValidationError) as caught:
        validate(load_file(_file(tmp_path, {"tools": [_tool("loop", schema)]})))
    [error] = caught.value.diagnostics
    assert error.rule == "SCHEMA-11" and error.pointer.endswith("/$ref")
    assert " -> ".join("/tools/0/inputSchema" + step for step in steps) in error.message


# -------------------------------------------------------------------------------- tool-level oddities


def test_header_annotation_on_the_root_excludes_the_tool(tmp_path: Path) -> None:
    bad = _tool(
        "rooted", {"type": "object", "x-mcp-header": "Region", "properties": {"r": {"type": "string"}}}
    )
    validated = validate(load_file(_file(tmp_path, {"tools": [bad, _tool("fine")]})))
    assert [t["name"] for t in validated.tools] == ["fine"]
    warning = _one(validated.warnings, "XHDR-08", "/tools/0/inputSchema/x-mcp-header")
    assert warning.tool == "rooted" and warning.severity == "warning" and "excluded" in warning.message


def test_empty_tool_name_is_excluded(tmp_path: Path) -> None:
    path = _file(tmp_path, {"tools": [_tool(""), _tool("fine")]})
    validated = validate(load_file(path))
    assert [t["name"] for t in validated.tools] == ["fine"]
    assert "excluded" in _one(validated.warnings, "TOOLS-11", "/tools/0/name").message
    with pytest.raises(SpecValidationError, match="the tool name is empty"):
        validate(load_file(path), strict=True)


@pytest.mark.parametrize(
    ("member", "pointer"),
    [
        ('"pattern": "(["', "/tools/1/inputSchema/properties/a/pattern"),
        # invalid in ECMA-262, what JSON Schema patterns are (Python's `re` accepts the first)
        ('"pattern": "(?P<x>a)"', "/tools/1/inputSchema/properties/a/pattern"),
        ('"pattern": "\\\\p{Foo}"', "/tools/1/inputSchema/properties/a/pattern"),
        (
            '"patternProperties": {"[a-": {"type": "string"}}',
            "/tools/1/inputSchema/properties/a/patternProperties/[a-",
        ),
    ],
)
def test_invalid_regex_excludes_the_tool(tmp_path: Path, member: str, pointer: str) -> None:
    text = (
        '{"tools": [{"name": "fine", "inputSchema": {"type": "object"}}, {"name": "re", "inputSchema": '
        '{"type": "object", "properties": {"a": {"type": "string", ' + member + "}}}}]}"
    )
    validated = validate(load_file(_file(tmp_path, text)))
    assert [t["name"] for t in validated.tools] == ["fine"]
    warning = _one(validated.warnings, "MCPGEN-REGEX", pointer)
    assert warning.tool == "re" and "excluded" in warning.message


def test_long_description_is_accepted_and_generated(tmp_path: Path) -> None:
    text = ("Line of prose with \"quotes\", \\backslashes\\ and '''triple''' quotes. " * 1500)[:100_000]
    tool = _tool(
        "long",
        {"type": "object", "properties": {"q": {"type": "string", "description": text}}},
        description=text,
    )
    validated = validate(load_file(_file(tmp_path, {"tools": [tool]})))
    client, server = (
        build_client(validated, package="long_client"),
        build_server(validated, package="long_server"),
    )
    assert json.loads(client.files["tools.json"])["tools"][0]["description"] == text
    assert b"triple" in client.files["client.py"] and any(
        b"triple" in data for name, data in server.files.items() if name.startswith("_models/")
    )


# ---------------------------------------------------------------------------------- document oddities


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            '{"tools": [{"name": "a", "name": "b", "inputSchema": {"type": "object"}}]}',
            "tool 'b' at /tools/0:",
        ),
        (
            '{"tools": [{"name": "t", "inputSchema": {"type": "object", '
            '"properties": {"p": {"type": "string", '
            '"type": "integer"}}}}]}',
            "tool 't' at /tools/0/inputSchema/properties/p:",
        ),
        ('{"tools": [], "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}', "at /:"),
    ],
)
def test_duplicate_member_names_refuse_the_file(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(SpecLoadError, match="duplicate member names") as caught:
        load_file(_file(tmp_path, text))
    assert where in str(caught.value)


def test_json_rpc_envelope_is_accepted_with_a_note(tmp_path: Path) -> None:
    path = _file(
        tmp_path, {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete", "tools": [_tool("t")]}}
    )
    validated = validate(load_file(path))
    note = _one(validated.warnings, "MCPGEN-JSON", "/result")
    assert "JSON-RPC response" in note.message and "/result/tools" in note.message
    assert validated.tools == [_tool("t")]


@pytest.mark.parametrize(
    ("document", "says"),
    [
        (
            {"resultType": "input_required", "inputRequests": {}, "requestState": "s"},
            "at /resultType: this is an input_required result",
        ),
        ({"resultType": "input_required", "tools": []}, "at /resultType: this is an input_required result"),
        ({"resultType": "partial", "tools": []}, "at /resultType: unknown resultType 'partial'"),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "inputRequests": {}}},
            "at /result/resultType: this is an input_required result",
        ),
    ],
)
def test_results_that_are_not_tool_lists_are_refused(tmp_path: Path, document: Any, says: str) -> None:
    with pytest.raises(SpecLoadError, match=says):
        load_file(_file(tmp_path, document))


def _number_spec(tmp_path: Path, member: str) -> ValidatedSpec:
    text = (
        '{"tools": [{"name": "fine", "inputSchema": {"type": "object"}}, {"name": "n", "inputSchema": '
        '{"type": "object", "properties": {"a": {"type": "number", ' + member + "}}}}]}"
    )
    return validate(load_file(_file(tmp_path, text)))


@pytest.mark.parametrize(
    ("member", "pointer"),
    [
        ('"default": 1e400', "/tools/1/inputSchema/properties/a/default"),
        ('"default": {"deep": [1, -1e400]}', "/tools/1/inputSchema/properties/a/default"),
        ('"examples": [1e999]', "/tools/1/inputSchema/properties/a/examples"),
        ('"maximum": 1e400', "/tools/1/inputSchema/properties/a/maximum"),
        ('"minimum": -1e400', "/tools/1/inputSchema/properties/a/minimum"),
    ],
)
def test_unusable_number_is_dropped_and_the_tool_kept(tmp_path: Path, member: str, pointer: str) -> None:
    validated = _number_spec(tmp_path, member)
    assert [t["name"] for t in validated.tools] == ["fine", "n"]
    assert validated.tools[1]["inputSchema"]["properties"]["a"] == {"type": "number"}
    warning = _one(validated.warnings, "MCPGEN-JSON", pointer)
    assert warning.tool == "n" and "beyond the range of a double" in warning.message
    build_client(validated, package="numbers_client")


@pytest.mark.parametrize("member", ['"const": 1e400', '"maximum": -1e400', '"enum": [1, 1e400]'])
def test_number_that_changes_meaning_excludes_only_its_tool(tmp_path: Path, member: str) -> None:
    validated = _number_spec(tmp_path, member)
    assert [t["name"] for t in validated.tools] == ["fine"]
    [warning] = [d for d in validated.warnings if d.rule == "MCPGEN-JSON"]
    assert warning.tool == "n" and "the tool is excluded" in warning.message
