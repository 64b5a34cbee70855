"""`mcpgen diff`: each rule with a pair of specs, both directions; outputs; exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from codegen.cli import main
from codegen.diff.compare import diff_tools
from codegen.diff.formats import render
from tests.support import needs_shared


def tool(
    name: str = "t",
    properties: dict[str, Any] | None = None,
    required: list[str] | None = None,
    output: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    definition: dict[str, Any] = {"name": name, "inputSchema": schema, **extra}
    if output is not None:
        definition["outputSchema"] = output
    return definition


def judged(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    return {(c.kind, c.pointer, c.client, c.server) for c in diff_tools(old, new).changes}


def both_ways(old: dict[str, Any], new: dict[str, Any]) -> tuple[set[tuple[str, str, str, str]], ...]:
    return judged([old], [new]), judged([new], [old])


def test_identical_lists_have_no_changes() -> None:
    spec = [tool(properties={"a": {"type": "string"}}, required=["a"])]
    assert diff_tools(spec, json.loads(json.dumps(spec))).changes == ()


def test_tool_removed_added_renamed() -> None:
    a, b = tool("a", {"x": {"type": "string"}}), tool("b", {"y": {"type": "integer"}})
    assert judged([a, b], [a]) == {("tool-removed", "", "breaking", "compatible")}
    assert judged([a], [a, b]) == {("tool-added", "", "compatible", "breaking")}
    renamed = dict(b, name="b2")
    assert judged([a, b], [a, renamed]) == {("tool-renamed", "", "breaking", "breaking")}


def test_input_property_required_added_and_made_optional() -> None:
    old = tool(properties={"a": {"type": "string"}})
    new = tool(properties={"a": {"type": "string"}, "b": {"type": "string"}}, required=["b"])
    forward, back = both_ways(old, new)
    assert forward == {("input-narrowed", "/inputSchema/properties/b", "breaking", "compatible")}
    assert back == {("input-removed", "/inputSchema/properties/b", "breaking", "compatible")}
    optional = tool(properties={"a": {"type": "string"}}, required=["a"])
    forward, back = both_ways(optional, old)
    assert forward == {("input-widened", "/inputSchema/required", "compatible", "breaking")}
    assert back == {("input-narrowed", "/inputSchema/required", "breaking", "compatible")}


def test_input_property_added_optional_removed_renamed() -> None:
    old = tool(properties={"a": {"type": "string"}})
    new = tool(properties={"a": {"type": "string"}, "b": {"type": "integer"}})
    forward, back = both_ways(old, new)
    assert forward == {("input-described", "/inputSchema/properties/b", "compatible", "breaking")}
    assert back == {("input-removed", "/inputSchema/properties/b", "breaking", "compatible")}
    renamed = tool(properties={"alpha": {"type": "string"}})
    assert judged([old], [renamed]) == {
        ("input-renamed", "/inputSchema/properties/a", "breaking", "breaking")
    }


@pytest.mark.parametrize(
    ("before", "after", "pointer"),
    [
        ({"type": ["string", "integer"]}, {"type": "string"}, "/type"),
        ({"type": "number"}, {"type": "integer"}, "/type"),
        ({"enum": ["a", "b"]}, {"enum": ["a"]}, "/enum"),
        ({"type": "string"}, {"type": "string", "const": "x"}, "/const"),
        ({"type": "integer"}, {"type": "integer", "minimum": 1}, "/minimum"),
        ({"type": "integer", "minimum": 1}, {"type": "integer", "minimum": 5}, "/minimum"),
        ({"type": "integer", "maximum": 9}, {"type": "integer", "maximum": 5}, "/maximum"),
        ({"type": "string", "minLength": 1}, {"type": "string", "minLength": 2}, "/minLength"),
        ({"type": "string", "maxLength": 9}, {"type": "string", "maxLength": 2}, "/maxLength"),
        ({"type": "array", "minItems": 0}, {"type": "array", "minItems": 1}, "/minItems"),
        ({"type": "array", "maxItems": 9}, {"type": "array", "maxItems": 3}, "/maxItems"),
        ({"type": "string"}, {"type": "string", "pattern": "^a"}, "/pattern"),
        ({"type": "string"}, {"type": "string", "format": "email"}, "/format"),
        ({"type": "object"}, {"type": "object", "additionalProperties": False}, "/additionalProperties"),
        ({"type": "array"}, {"type": "array", "uniqueItems": True}, "/uniqueItems"),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"anyOf": [{"type": "string"}]}, "/anyOf"),
    ],
)
def test_input_narrowing_breaks_clients_and_widening_breaks_servers(
    before: dict[str, Any], after: dict[str, Any], pointer: str
) -> None:
    prefix = "/inputSchema/properties/v"
    forward, back = both_ways(tool(properties={"v": before}), tool(properties={"v": after}))
    assert forward == {("input-narrowed", prefix + pointer, "breaking", "compatible")}
    assert back == {("input-widened", prefix + pointer, "compatible", "breaking")}


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "^b"}),
        ({"not": {"type": "string"}}, {"not": {"type": "integer"}}),
        (
            {"if": {"type": "string"}, "then": {"minLength": 1}},
            {"if": {"type": "string"}, "then": {"minLength": 2}},
        ),
        ({"oneOf": [{"type": "string"}]}, {"oneOf": [{"type": "string"}, {"type": "integer"}]}),
        ({"allOf": [{"type": "string"}]}, {"allOf": [{"minLength": 1}]}),
        ({"$ref": "https://example.com/a"}, {"$ref": "https://example.com/b"}),
    ],
)
def test_undecidable_changes_are_possibly_breaking_never_compatible(
    before: dict[str, Any], after: dict[str, Any]
) -> None:
    for old, new in ((before, after), (after, before)):
        changes = diff_tools([tool(properties={"v": old})], [tool(properties={"v": new})]).changes
        assert changes, (old, new)
        assert {(c.client, c.server) for c in changes} == {("possibly-breaking", "possibly-breaking")}


def test_output_changes_mirror_inputs() -> None:
    out = {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "string"}},
        "required": ["x", "y"],
    }
    fewer = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    forward, back = both_ways(tool(output=out), tool(output=fewer))
    assert forward == {("output-removed", "/outputSchema/properties/y", "breaking", "compatible")}
    assert back == {("output-narrowed", "/outputSchema/properties/y", "compatible", "breaking")}
    optional = {**out, "required": ["x"]}
    forward, back = both_ways(tool(output=out), tool(output=optional))
    assert forward == {("output-widened", "/outputSchema/required", "breaking", "compatible")}
    assert back == {("output-narrowed", "/outputSchema/required", "compatible", "breaking")}
    widened_type = {**out, "properties": {**out["properties"], "x": {"type": ["integer", "null"]}}}
    assert judged([tool(output=out)], [tool(output=widened_type)]) == {
        ("output-widened", "/outputSchema/properties/x/type", "breaking", "compatible")
    }
    extra_field = {**out, "properties": {**out["properties"], "z": {"type": "string"}}}
    assert judged([tool(output=out)], [tool(output=extra_field)]) == {
        ("output-described", "/outputSchema/properties/z", "compatible", "compatible")
    }


def test_output_schema_added_or_removed() -> None:
    out = {"type": "object"}
    forward, back = both_ways(tool(), tool(output=out))
    assert forward == {("output-schema-added", "/outputSchema", "compatible", "breaking")}
    assert back == {("output-schema-removed", "/outputSchema", "breaking", "compatible")}


def test_x_mcp_header_added_renamed_removed() -> None:
    plain = tool(properties={"region": {"type": "string"}})
    with_header = tool(properties={"region": {"type": "string", "x-mcp-header": "Region"}})
    renamed = tool(properties={"region": {"type": "string", "x-mcp-header": "Zone"}})
    pointer = "/inputSchema/properties/region/x-mcp-header"
    for old, new in ((plain, with_header), (with_header, plain), (with_header, renamed)):
        changes = judged([old], [new])
        assert ("header-changed", pointer, "breaking", "breaking") in changes
        assert all(kind in ("header-changed", "input-changed") for kind, *_ in changes)


def test_behaviour_annotations_are_flagged_and_text_is_cosmetic() -> None:
    old = tool(annotations={"readOnlyHint": True}, description="a", title="A")
    new = tool(annotations={"readOnlyHint": False, "destructiveHint": False}, description="b", title="B")
    assert judged([old], [new]) == {
        ("annotation-changed", "/annotations/readOnlyHint", "possibly-breaking", "compatible"),
        ("annotation-changed", "/annotations/destructiveHint", "possibly-breaking", "compatible"),
        ("description-changed", "/description", "cosmetic", "cosmetic"),
        ("title-changed", "/title", "cosmetic", "cosmetic"),
    }
    # the spec's defaults: an absent hint equals its default, so spelling it out changes nothing
    assert judged([tool(annotations={})], [tool(annotations={"destructiveHint": True})]) == set()


@pytest.mark.parametrize(
    ("old", "new", "client", "server"),
    [
        (None, "optional", "compatible", "compatible"),
        ("forbidden", "optional", "compatible", "compatible"),
        (None, "required", "breaking", "compatible"),
        ("optional", "required", "breaking", "compatible"),
        ("required", "optional", "compatible", "compatible"),
        ("optional", "forbidden", "possibly-breaking", "compatible"),
        ("required", None, "possibly-breaking", "compatible"),
        ("optional", "later", "possibly-breaking", "possibly-breaking"),
    ],
)
def test_task_support_changes_are_judged(old: str | None, new: str | None, client: str, server: str) -> None:
    def with_support(value: str | None) -> dict[str, Any]:
        return tool(execution={} if value is None else {"taskSupport": value})

    changes = diff_tools([with_support(old)], [with_support(new)]).changes
    assert [(c.kind, c.pointer, c.client, c.server) for c in changes] == [
        ("task-support-changed", "/execution/taskSupport", client, server)
    ]
    assert changes[0].reason.startswith(
        f"`taskSupport` changed from {'absent' if old is None else repr(old).replace(chr(39), chr(34))} to "
    )
    if new == "required":
        assert "do not declare the tasks extension" in changes[0].reason


def test_task_support_absent_equals_forbidden_and_other_execution_members_are_cosmetic() -> None:
    assert judged([tool()], [tool(execution={"taskSupport": "forbidden"})]) == set()
    assert judged([tool(execution={"x": 1})], [tool(execution={"x": 2})]) == {
        ("execution-changed", "/execution/x", "cosmetic", "cosmetic")
    }


def test_task_support_change_fails_the_diff_command(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"tools": [tool(execution={"taskSupport": "optional"})]}), "utf-8")
    new.write_text(json.dumps({"tools": [tool(execution={"taskSupport": "required"})]}), "utf-8")
    result = CliRunner().invoke(main, ["diff", str(old), str(new), "--format", "json"])
    assert result.exit_code == 1, result.output
    (change,) = json.loads(result.stdout)["changes"]
    assert change["kind"] == "task-support-changed" and change["client"] == "breaking"
    relaxed = CliRunner().invoke(main, ["diff", str(new), str(old)])
    assert relaxed.exit_code == 0, relaxed.output


def test_refs_are_followed_on_both_sides_and_cycles_end() -> None:
    def with_defs(max_length: int) -> dict[str, Any]:
        return {
            "name": "t",
            "inputSchema": {
                "type": "object",
                "properties": {"node": {"$ref": "#/$defs/node"}},
                "$defs": {
                    "node": {
                        "type": "object",
                        "properties": {
                            "label": {"type": "string", "maxLength": max_length},
                            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                        },
                    }
                },
            },
        }

    assert judged([with_defs(10)], [with_defs(10)]) == set()
    assert judged([with_defs(10)], [with_defs(5)]) == {
        (
            "input-narrowed",
            "/inputSchema/properties/node/properties/label/maxLength",
            "breaking",
            "compatible",
        )
    }
    inline = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {
                "node": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string", "maxLength": 10},
                        "children": {"type": "array", "items": {}},
                    },
                }
            },
        },
    }
    assert (
        "input-narrowed",
        "/inputSchema/properties/node/properties/children/items/type",
        "breaking",
        "compatible",
    ) in judged([inline], [with_defs(10)])


def test_the_github_list_against_a_modified_copy() -> None:
    path = needs_shared("realworld", "github-tools.json")
    tools = json.loads(path.read_text())["tools"]
    assert diff_tools(tools, json.loads(json.dumps(tools))).changes == ()
    changed = json.loads(json.dumps(tools))
    first = changed[0]
    first["inputSchema"].setdefault("required", []).append("added_param")
    first["inputSchema"]["properties"]["added_param"] = {"type": "string"}
    removed = changed.pop()
    report = diff_tools(tools, changed)
    kinds = {(c.tool, c.kind) for c in report.changes}
    assert (removed["name"], "tool-removed") in kinds
    assert (first["name"], "input-narrowed") in kinds
    assert report.worst("client") == "breaking"


def test_json_shape_is_stable() -> None:
    report = diff_tools([tool("a")], [tool("b", {"x": {"type": "string"}})], old_source="o", new_source="n")
    document = json.loads(render(report, "json"))
    assert set(document) == {"old", "new", "summary", "changes"}
    assert document["summary"]["client"]["breaking"] == 1
    assert set(document["changes"][0]) == {"tool", "pointer", "kind", "client", "server", "reason"}


def _rendered(markdown: str) -> str:
    """The HTML a GitHub-like renderer (CommonMark + tables) makes of `markdown`."""
    markdown_it = pytest.importorskip("markdown_it")  # rich's dependency
    return str(markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown))


def test_markdown_escapes_spec_text() -> None:
    evil = "x|y`<script>"
    report = diff_tools([tool(evil)], [], old_source="o", new_source="n")
    html = _rendered(render(report, "markdown"))
    assert "<script>" not in html
    assert "<td><code>x|y`&lt;script&gt;</code></td>" in html  # the name, whole and inert


def test_markdown_keeps_its_code_spans_and_escapes_hostile_text() -> None:
    """Issue #21 trap 7e: the reasons' `name` code spans render as code; hostile names in them and
    around them stay text (no link, no HTML, no emphasis, no extra table cell)."""
    hostile = {
        "a|b": {"type": "string"},
        "`tick`": {"type": "string"},
        "[x](https://evil.example)": {"type": "string"},
        "<img src=x onerror=alert(1)>": {"type": "string"},
        "**bold** ~~gone~~ \\|": {"type": "string"},
    }
    old = [tool("plain", {"flag": {"type": "boolean"}}), tool("<b>tool</b>|[t](u)")]
    new = [tool("plain", {"flag": {"type": "boolean"}, "extra_flag": {"type": "boolean"}, **hostile})]
    report = diff_tools(old, new, old_source="old [x](y).json", new_source="<new>.json")
    text = render(report, "markdown")
    html = _rendered(text)
    assert "\\`" not in text  # backticks are code-span fences, never escaped
    assert "optional property <code>extra_flag</code> added" in html
    assert "<code>a|b</code>" in html and "<code>`tick`</code>" in html
    assert "<code>[x](https://evil.example)</code>" in html
    assert "<code>&lt;img src=x onerror=alert(1)&gt;</code>" in html
    assert "<code>**bold** ~~gone~~ \\|</code>" in html
    assert "<code>&lt;b&gt;tool&lt;/b&gt;|[t](u)</code>" in html
    for tag in ("<a ", "<img", "<b>", "<strong>", "<em>", "<s>", "<del>"):
        assert tag not in html, tag
    assert "old [x](y).json" in html and "&lt;new&gt;.json" in html  # heading and summary, as text
    rows = html.split("<tr>")[2:]
    assert len(rows) == len(report.changes) == 7
    assert all(row.count("<td>") == 5 for row in rows)  # no cell broken out of


@pytest.fixture()
def specs(tmp_path: Path) -> tuple[Path, Path, Path]:
    base = [tool("a", {"x": {"type": "string"}}), tool("b")]
    (old := tmp_path / "old.json").write_text(json.dumps({"tools": base}))
    (widened := tmp_path / "widened.json").write_text(
        json.dumps({"tools": [tool("a", {"x": {"type": ["string", "null"]}}), tool("b")]})
    )
    (removed := tmp_path / "removed.json").write_text(json.dumps({"tools": base[:1]}))
    return old, widened, removed


def test_exit_codes(specs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    old, widened, removed = specs
    runner = CliRunner()
    assert runner.invoke(main, ["diff", str(old), str(old)]).exit_code == 0
    assert runner.invoke(main, ["diff", str(old), str(removed)]).exit_code == 1
    # widening an input breaks servers only
    assert runner.invoke(main, ["diff", str(old), str(widened), "--for", "client"]).exit_code == 0
    assert runner.invoke(main, ["diff", str(old), str(widened), "--for", "server"]).exit_code == 1
    assert runner.invoke(main, ["diff", str(removed), str(old), "--for", "client"]).exit_code == 0
    assert (
        runner.invoke(main, ["diff", str(removed), str(old), "--for", "client", "--fail-on", "any"]).exit_code
        == 1
    )
    assert runner.invoke(main, ["diff", str(old)]).exit_code == 2
    assert runner.invoke(main, ["diff", str(old), str(tmp_path / "missing.json")]).exit_code == 2
    assert runner.invoke(main, ["diff", str(old), str(old), "--format", "yaml"]).exit_code == 2
    result = runner.invoke(main, ["diff", str(old), str(removed), "--format", "json"])
    assert json.loads(result.stdout)["changes"][0]["kind"] == "tool-removed"


def test_hostile_shapes_end_quickly_with_an_answer() -> None:
    import time

    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(2000):
        inner["items"] = {}
        inner = inner["items"]
    deeper = _rebuilt(deep, 2000, {"type": "string"})
    # exponential fan-out through $refs: d0 -> d1 twice -> d2 four times ... -> d40
    defs = {
        f"d{i}": {
            "type": "object",
            "properties": {"x": {"$ref": f"#/$defs/d{i + 1}"}, "y": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(40)
    }
    fan_old = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/d0"}},
        "$defs": {**defs, "d40": {"type": "string"}},
    }
    fan_new = {**fan_old, "$defs": {**defs, "d40": {"type": "integer"}}}
    started = time.monotonic()
    deep_report = diff_tools([tool(properties={"v": deep})], [tool(properties={"v": deeper})])
    fan_report = diff_tools([{"name": "t", "inputSchema": fan_old}], [{"name": "t", "inputSchema": fan_new}])
    assert time.monotonic() - started < 5
    assert {c.client for c in deep_report.changes} == {"possibly-breaking"}
    assert fan_report.changes and all(c.kind.startswith("input-") for c in fan_report.changes)


def _rebuilt(schema: dict[str, Any], depth: int, leaf: dict[str, Any]) -> dict[str, Any]:
    """`schema` (a chain of `items`) with its innermost `items` replaced by `leaf`, built iteratively."""
    top: dict[str, Any] = {}
    inner = top
    for _ in range(depth - 1):
        inner["items"] = {}
        inner = inner["items"]
    inner["items"] = leaf
    return top
