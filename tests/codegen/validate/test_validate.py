"""VALIDATE stage: one test per rule, each checking that the message names tool, pointer and rule."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from codegen.errors import Diagnostic, SpecValidationError
from codegen.load.document import load_file
from codegen.refs import SchemaIndex, resolve_pointer
from codegen.spec import LoadedSpec, ValidatedSpec
from codegen.validate.checks import validate
from codegen.validate.run import Limits
from tests.support import SHARED, needs_shared

FIXTURES = Path(__file__).parents[1] / "fixtures"
REALWORLD = SHARED / "realworld"
SOURCE = "specs/t.json"


def tool(name: Any = "t", schema: Any = None, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name, "inputSchema": {"type": "object"} if schema is None else schema}
    data.update(extra)
    return data


def spec(*tools: Any) -> LoadedSpec:
    return LoadedSpec(SOURCE, list(tools))


def diagnostics(loaded: LoadedSpec, **kwargs: Any) -> list[Diagnostic]:
    """Every diagnostic, whether validation failed or passed with warnings."""
    try:
        return validate(loaded, **kwargs).warnings
    except SpecValidationError as exc:
        return exc.diagnostics


def failing(loaded: LoadedSpec, **kwargs: Any) -> list[Diagnostic]:
    with pytest.raises(SpecValidationError) as info:
        validate(loaded, **kwargs)
    return info.value.diagnostics


def find(
    diags: list[Diagnostic],
    rule: str,
    pointer: str,
    *,
    tool_name: str | None = "t",
    severity: str = "error",
    text: str = "",
) -> Diagnostic:
    """The one diagnostic for (rule, pointer); its printed form names source, tool, pointer and rule."""
    matches = [d for d in diags if d.rule == rule and d.pointer == pointer]
    assert matches, f"no {rule} at {pointer!r} in:\n" + "\n".join(map(str, diags))
    diag = matches[0]
    printed = str(diag)
    assert diag.severity == severity, printed
    assert diag.tool == tool_name
    assert printed.startswith(f"{diag.source}: {severity}: "), printed
    if tool_name is not None:
        assert f"tool {tool_name!r}" in printed
    assert f" at {pointer or '/'}: {rule}: " in printed
    assert text in diag.message, printed
    return diag


# --------------------------------------------------------------------------- realworld inputs


def test_github_tools_all_valid() -> None:
    loaded = load_file(needs_shared("realworld", "github-tools.json"))
    result = validate(loaded)
    assert len(loaded.tools) == 117
    assert len(result.tools) == 117
    assert result.warnings == []
    assert result.digest == loaded.digest
    assert result.source == str(REALWORLD / "github-tools.json")


def test_x_mcp_header_valid() -> None:
    result = validate(load_file(needs_shared("realworld", "x-mcp-header-valid.json")))
    assert [t["name"] for t in result.tools] == ["test_custom_headers", "test_custom_headers_null"]
    assert result.warnings == []


def test_x_mcp_header_invalid_set_keeps_only_valid_tool() -> None:
    path = needs_shared("realworld", "x-mcp-header-invalid-set.json")
    result = validate(load_file(path))
    assert [t["name"] for t in result.tools] == ["valid_tool"]
    expected = {
        "invalid_empty_header": ("XHDR-02", "/tools/1/inputSchema/properties/value/x-mcp-header"),
        "invalid_object_header": ("XHDR-06", "/tools/2/inputSchema/properties/data/type"),
        "invalid_array_header": ("XHDR-06", "/tools/3/inputSchema/properties/items/type"),
        "invalid_null_header": ("XHDR-06", "/tools/4/inputSchema/properties/nil/type"),
        "invalid_duplicate_same_case": ("XHDR-05", "/tools/5/inputSchema/properties/field2/x-mcp-header"),
        "invalid_duplicate_diff_case": ("XHDR-05", "/tools/6/inputSchema/properties/field2/x-mcp-header"),
        "invalid_space_in_name": ("XHDR-03", "/tools/7/inputSchema/properties/value/x-mcp-header"),
        "invalid_colon_in_name": ("XHDR-03", "/tools/8/inputSchema/properties/value/x-mcp-header"),
        "invalid_non_ascii_name": ("XHDR-03", "/tools/9/inputSchema/properties/value/x-mcp-header"),
        "invalid_control_char_name": ("XHDR-04", "/tools/10/inputSchema/properties/value/x-mcp-header"),
    }
    by_tool = {d.tool: d for d in result.warnings}
    assert set(by_tool) == set(expected)
    for name, (rule, pointer) in expected.items():
        diag = find(result.warnings, rule, pointer, tool_name=name, severity="warning", text="excluded")
        assert diag.source == str(path)
        assert "XHDR-10" in diag.message


def test_x_mcp_header_number_alpha_excludes_number_headers() -> None:
    result = validate(load_file(needs_shared("realworld", "x-mcp-header-number-alpha.json")))
    assert result.tools == []
    number = [d for d in result.warnings if d.rule == "XHDR-06"]
    assert {d.tool for d in number} == {"test_custom_headers", "test_custom_headers_null"}
    assert all(d.pointer.endswith("/type") and "'number'" in d.message for d in number)
    assert any(d.rule == "MCPGEN-NO-TOOLS" for d in result.warnings)


def test_json_schema_2020_12_fixture_valid_and_anchor_resolves() -> None:
    loaded = load_file(needs_shared("realworld", "json-schema-2020-12-fixture.json"))
    result = validate(loaded)
    assert [t["name"] for t in result.tools] == ["json_schema_2020_12_tool", "nested_conditional"]
    schema = loaded.tools[0]["inputSchema"]
    index = SchemaIndex.build(schema)
    assert index.anchors[("", "addressDef")] == "/$defs/address"
    # The same fixture with the property pointing at the anchor instead of the pointer.
    schema["properties"]["address"] = {"$ref": "#addressDef"}
    assert validate(loaded).warnings == []
    (site,) = SchemaIndex.build(schema).refs
    assert SchemaIndex.build(schema).resolve(site).target == "/$defs/address"


def test_conformance_tools_valid() -> None:
    result = validate(load_file(needs_shared("spec", "conformance-tools.json")))
    assert len(result.tools) == 22
    assert result.warnings == []


def test_weather_spec_accepts_draft07() -> None:
    result = validate(load_file(Path(__file__).parents[3] / "specs/weather.json"))
    assert "calculate_sum" in [t["name"] for t in result.tools]
    assert len(result.tools) == 6
    assert result.warnings == []


def test_local_refs_fixture_resolves() -> None:
    result = validate(load_file(FIXTURES / "refs.json"))
    assert len(result.tools) == 3
    assert result.warnings == []


def test_pointers_are_real_for_every_document_shape() -> None:
    # The single-tool fixture has one meta-schema error; its pointer starts at the document root.
    path = FIXTURES / "single-tool.json"
    diags = failing(load_file(path))
    (diag,) = diags
    assert diag.pointer == "/inputSchema/properties/days/minimum"
    assert diag.rule == "SCHEMA-07"
    import json

    assert resolve_pointer(json.loads(path.read_text()), diag.pointer) == "one"


# --------------------------------------------------------------------------- tool object


def test_name_missing_or_not_string() -> None:
    diags = failing(spec({"inputSchema": {"type": "object"}}, tool(42)))
    find(diags, "MCPGEN-TOOL-SHAPE", "/tools/0", tool_name=None, text="no `name`")
    find(diags, "MCPGEN-TOOL-SHAPE", "/tools/1/name", tool_name=None, text="found an integer 42")


@pytest.mark.parametrize(
    ("name", "rule", "text"),
    [
        ("x" * 129, "TOOLS-11", "has 129"),
        ("get weather", "TOOLS-14", "' '"),
        ("a,b", "TOOLS-14", "','"),
        ("get/weather", "TOOLS-13", "'/'"),
        ("météo", "TOOLS-13", "'é'"),
    ],
)
def test_name_should_rules_warn_then_fail_under_strict(name: str, rule: str, text: str) -> None:
    shown = name
    result = validate(spec(tool(name)))
    assert len(result.tools) == 1
    find(result.warnings, rule, "/tools/0/name", tool_name=shown, severity="warning", text=text)
    diags = failing(spec(tool(name)), strict=True)
    find(diags, rule, "/tools/0/name", tool_name=shown, severity="error", text=text)


def test_valid_names_pass_strict() -> None:
    result = validate(
        spec(tool("getUser"), tool("DATA_EXPORT_v2"), tool("admin.tools.list"), tool("a-b")), strict=True
    )
    assert result.warnings == []


def test_duplicate_names_always_fail() -> None:
    diags = failing(spec(tool("dup"), tool("other"), tool("dup")))
    diag = find(diags, "TOOLS-15", "/tools/2/name", tool_name="dup", text="first listed at /tools/0/name")
    assert "'dup'" in diag.message


def test_case_differences_are_not_duplicates() -> None:
    assert len(validate(spec(tool("Search"), tool("search"))).tools) == 2  # TOOLS-12: case-sensitive


def test_title_and_description_must_be_strings() -> None:
    diags = failing(spec(tool(title=3, description=None)))
    find(diags, "MCPGEN-TOOL-SHAPE", "/tools/0/title", text="found an integer 3")
    find(diags, "MCPGEN-TOOL-SHAPE", "/tools/0/description", text="found null")


def test_annotations_icons_meta_shapes() -> None:
    diags = failing(spec(tool(annotations=[], icons={}, _meta="x")))
    find(diags, "MCPGEN-TOOL-SHAPE", "/tools/0/annotations", text="must be an object")
    find(diags, "MCPGEN-TOOL-SHAPE", "/tools/0/icons", text="must be an array")
    find(diags, "MCPGEN-TOOL-SHAPE", "/tools/0/_meta", text="must be an object")


def test_execution_task_support_values_are_accepted_and_kept() -> None:
    tools = [
        tool(f"t{i}", execution=execution)
        for i, execution in enumerate(
            [{}, {"taskSupport": "forbidden"}, {"taskSupport": "optional"}, {"taskSupport": "required"}]
        )
    ]
    result = validate(spec(*tools))
    assert result.warnings == []
    assert [t["execution"] for t in result.tools] == [t["execution"] for t in tools]


@pytest.mark.parametrize(
    ("execution", "pointer", "text"),
    [
        ("optional", "/tools/0/execution", "`execution` must be an object, found a string"),
        ([], "/tools/0/execution", "`execution` must be an object"),
        (None, "/tools/0/execution", "`execution` must be an object"),
        ({"taskSupport": "sometimes"}, "/tools/0/execution/taskSupport", "found 'sometimes'"),
        ({"taskSupport": "Required"}, "/tools/0/execution/taskSupport", "found 'Required'"),
        ({"taskSupport": True}, "/tools/0/execution/taskSupport", "'forbidden', 'optional', 'required'"),
        ({"taskSupport": None}, "/tools/0/execution/taskSupport", "must be one of"),
    ],
)
def test_execution_task_support_other_values_are_errors(execution: Any, pointer: str, text: str) -> None:
    find(failing(spec(tool(execution=execution))), "MCPGEN-TOOL-SHAPE", pointer, text=text)


def test_execution_error_under_skip_invalid_excludes_only_that_tool() -> None:
    result = validate(
        spec(tool("ok", execution={"taskSupport": "optional"}), tool("bad", execution={"taskSupport": 1})),
        skip_invalid=True,
    )
    assert [t["name"] for t in result.tools] == ["ok"]
    find(
        result.warnings,
        "MCPGEN-TOOL-SHAPE",
        "/tools/1/execution/taskSupport",
        tool_name="bad",
        severity="warning",
    )


def test_meta_key_format() -> None:
    meta = {
        "ui": {},
        "com.example/thing": 1,
        "io.modelcontextprotocol/x": 1,
        "com.example/": 1,  # fine
        "1com.example/x": 1,
        "com..x/y": 1,
        "-bad": 1,
        "com.example/bad-": 1,
    }
    result = validate(spec(tool(_meta=meta)))
    warnings = result.warnings
    find(warnings, "BASE-27", "/tools/0/_meta/1com.example~1x", severity="warning", text="bad label '1com'")
    find(warnings, "BASE-27", "/tools/0/_meta/com..x~1y", severity="warning", text="bad label ''")
    find(warnings, "BASE-29", "/tools/0/_meta/-bad", severity="warning")
    find(warnings, "BASE-29", "/tools/0/_meta/com.example~1bad-", severity="warning")
    assert len(warnings) == 4
    find(failing(spec(tool(_meta=meta)), strict=True), "BASE-29", "/tools/0/_meta/-bad")


def test_unnamed_tool_diagnostics_still_name_the_pointer() -> None:
    diags = failing(spec({"name": None, "inputSchema": None}))
    find(diags, "TOOLS-07", "/tools/0/inputSchema", tool_name=None)


# --------------------------------------------------------------------------- inputSchema / outputSchema


def test_input_schema_missing_or_null() -> None:
    diags = failing(spec({"name": "t"}, tool("u", None), {"name": "v", "inputSchema": None}))
    find(diags, "TOOLS-07", "/tools/0", text="no `inputSchema`")
    find(diags, "TOOLS-07", "/tools/2/inputSchema", tool_name="v", text="found null")


@pytest.mark.parametrize(
    ("schema", "pointer", "found"),
    [
        ({"properties": {}}, "/tools/0/inputSchema", "found no `type`"),
        ({"type": "array"}, "/tools/0/inputSchema/type", "found a string 'array'"),
        ({"type": ["object", "null"]}, "/tools/0/inputSchema/type", "found an array"),
    ],
)
def test_input_schema_root_type_object(schema: dict[str, Any], pointer: str, found: str) -> None:
    find(failing(spec(tool(schema=schema))), "TOOLS-08", pointer, text=found)


def test_input_schema_boolean_is_not_an_object() -> None:
    find(failing(spec(tool(schema=True))), "TOOLS-07", "/tools/0/inputSchema", text="found a boolean True")


def test_output_schema_any_root_type_but_must_be_object() -> None:
    ok = validate(spec(tool(outputSchema={"type": "array", "items": {"type": "string"}})))
    assert ok.warnings == []
    diags = failing(spec(tool(outputSchema=None), tool("u", outputSchema=True)))
    find(diags, "MCPGEN-TOOL-SHAPE", "/tools/0/outputSchema", text="found null")
    find(diags, "MCPGEN-TOOL-SHAPE", "/tools/1/outputSchema", tool_name="u", text="found a boolean True")


# --------------------------------------------------------------------------- dialects and meta-schemas


@pytest.mark.parametrize(
    "uri",
    [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-07/schema",
        # Spellings the runtime (mcpgen_runtime.schema) also accepts.
        "http://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft-07/schema#",
    ],
)
def test_supported_dialects(uri: str) -> None:
    assert validate(spec(tool(schema={"$schema": uri, "type": "object"}))).warnings == []


@pytest.mark.parametrize(
    ("declared", "shown"),
    [
        ("http://json-schema.org/draft-04/schema#", "'http://json-schema.org/draft-04/schema#'"),
        ("https://json-schema.org/draft/2019-09/schema", "'https://json-schema.org/draft/2019-09/schema'"),
        (7, "an integer 7"),
    ],
)
def test_unsupported_dialect(declared: Any, shown: str) -> None:
    diags = failing(
        spec(tool(schema={"$schema": declared, "type": "object"}, outputSchema={"$schema": declared}))
    )
    for member in ("inputSchema", "outputSchema"):
        diag = find(diags, "SCHEMA-06", f"/tools/0/{member}/$schema", text="is not supported")
        assert f"dialect {shown} is not supported; supported: 2020-12, draft-07" in diag.message


def test_nested_schema_dialect_must_match() -> None:
    schema = {"type": "object", "properties": {"a": {"$schema": "http://json-schema.org/draft-07/schema#"}}}
    find(
        failing(spec(tool(schema=schema))),
        "SCHEMA-06",
        "/tools/0/inputSchema/properties/a/$schema",
        text="differs from the schema's own (2020-12)",
    )


def test_meta_schema_errors_all_reported_with_pointers() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "strin"}, "b": {"minimum": "x"}, "c": {"items": 3}},
        "required": "a",
    }
    diags = failing(spec(tool(schema=schema, outputSchema={"type": 5})))
    find(
        diags,
        "SCHEMA-07",
        "/tools/0/inputSchema/properties/a/type",
        text="not a valid 2020-12 schema: 'strin'",
    )
    find(diags, "SCHEMA-07", "/tools/0/inputSchema/properties/b/minimum", text="'x' is not of type 'number'")
    find(diags, "SCHEMA-07", "/tools/0/inputSchema/properties/c/items")
    find(diags, "SCHEMA-07", "/tools/0/inputSchema/required", text="'a' is not of type 'array'")
    find(diags, "SCHEMA-07", "/tools/0/outputSchema/type")
    assert len([d for d in diags if d.rule == "SCHEMA-07"]) == 5


def test_draft07_schema_checked_against_draft07_meta_schema() -> None:
    draft07 = "http://json-schema.org/draft-07/schema#"
    # `prefixItems` is not a draft-07 keyword (ignored); exclusiveMinimum must be a number in draft-07.
    ok = {"$schema": draft07, "type": "object", "properties": {"a": {"exclusiveMinimum": 1}}}
    assert validate(spec(tool(schema=ok))).warnings == []
    bad = {"$schema": draft07, "type": "object", "properties": {"a": {"exclusiveMinimum": True}}}
    find(
        failing(spec(tool(schema=bad))),
        "SCHEMA-07",
        "/tools/0/inputSchema/properties/a/exclusiveMinimum",
        text="not a valid draft-07 schema",
    )


def test_meta_schema_error_cap() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "nope"} for i in range(30)}}
    diags = failing(spec(tool(schema=schema)), limits=Limits(max_schema_errors=5))
    assert len([d for d in diags if d.rule == "SCHEMA-07"]) == 6
    find(diags, "SCHEMA-07", "/tools/0/inputSchema", text="more than 5 meta-schema errors")


# --------------------------------------------------------------------------- $ref


def test_bad_refs_fixture() -> None:
    diags = failing(load_file(FIXTURES / "bad-refs.json"))
    base = "/tools/0/inputSchema/properties"
    name = "bad_refs"
    find(
        diags, "SCHEMA-08", f"{base}/network/$ref", tool_name=name, text="network URI, which is never fetched"
    )
    find(diags, "SCHEMA-10", f"{base}/relative/$ref", tool_name=name, text="another document")
    find(diags, "SCHEMA-10", f"{base}/urn/$ref", tool_name=name, text="another document")
    missing = find(diags, "SCHEMA-07", f"{base}/missing_def/$ref", tool_name=name)
    assert missing.message.startswith("$ref '#/$defs/unknown': target '#/$defs/unknown' does not exist")
    assert "does not exist" in missing.message and "no member 'unknown' at /$defs" in missing.message
    find(diags, "SCHEMA-07", f"{base}/missing_anchor/$ref", tool_name=name, text="no $anchor named 'nowhere'")
    find(
        diags,
        "SCHEMA-07",
        f"{base}/not_a_schema/$ref",
        tool_name=name,
        text="is an array of 1 item(s), not a schema",
    )
    assert len(diags) == 6


def test_ref_resolved_against_id_shows_the_target() -> None:
    schema = {
        "type": "object",
        "$id": "https://example.com/root.json",
        "properties": {"a": {"$ref": "other.json#/x"}},
    }
    diag = find(failing(spec(tool(schema=schema))), "SCHEMA-08", "/tools/0/inputSchema/properties/a/$ref")
    assert (
        "$ref 'other.json#/x' (-> 'https://example.com/other.json#/x'): refers to a network URI"
        in diag.message
    )


def test_refs_in_output_schema_and_defs() -> None:
    out = {"$defs": {"a": {"$ref": "http://evil.example/x.json"}}, "$ref": "#/$defs/a"}
    find(failing(spec(tool(outputSchema=out))), "SCHEMA-08", "/tools/0/outputSchema/$defs/a/$ref")


def test_ref_to_pointer_outside_keywords_is_indexed() -> None:
    schema = {
        "type": "object",
        "components": {
            "Pet": {"type": "object", "properties": {"owner": {"$ref": "#/components/Owner"}}},
            "Owner": {"type": "object", "properties": {"home": {"$ref": "#/nowhere"}}},
        },
        "properties": {"pet": {"$ref": "#/components/Pet"}},
    }
    diags = failing(spec(tool(schema=schema)))
    # The broken ref is only reachable through two refs into a non-keyword member; it is still found.
    find(
        diags,
        "SCHEMA-07",
        "/tools/0/inputSchema/components/Owner/properties/home/$ref",
        text="does not exist",
    )


def test_property_named_ref_is_not_a_reference() -> None:
    schema = {"type": "object", "properties": {"$ref": {"type": "string"}}, "default": {"$ref": "http://x"}}
    assert validate(spec(tool(schema=schema))).warnings == []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "$ref": "#"},
        {"type": "object", "allOf": [{"$ref": "#/$defs/a"}], "$defs": {"a": {"anyOf": [{"$ref": "#"}]}}},
        {
            "type": "object",
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"not": {"$ref": "#/$defs/a"}}},
            "properties": {"x": {"$ref": "#/$defs/a"}},
        },
    ],
)
def test_reference_loops_that_never_consume_input(schema: dict[str, Any]) -> None:
    diags = failing(spec(tool(schema=schema)))
    (diag,) = [d for d in diags if d.rule == "SCHEMA-11"]
    assert "would never terminate" in diag.message
    assert diag.pointer.startswith("/tools/0/inputSchema")
    assert "tool 't'" in str(diag)


def test_recursion_through_properties_is_fine() -> None:
    schema = {"type": "object", "properties": {"child": {"$ref": "#"}, "list": {"items": {"$ref": "#"}}}}
    assert validate(spec(tool(schema=schema))).warnings == []


# --------------------------------------------------------------------------- x-mcp-header


def test_header_violation_excludes_only_that_tool() -> None:
    bad = tool("bad", {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}})
    nested = tool(
        "nested",
        {"type": "object", "anyOf": [{"properties": {"r": {"type": "string", "x-mcp-header": "R"}}}]},
    )
    good = tool(
        "good", {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
    )
    result = validate(spec(bad, nested, good))
    assert [t["name"] for t in result.tools] == ["good"]
    find(
        result.warnings,
        "XHDR-06",
        "/tools/0/inputSchema/properties/n/type",
        tool_name="bad",
        severity="warning",
        text="excluded",
    )
    find(
        result.warnings,
        "XHDR-08",
        "/tools/1/inputSchema/anyOf/0/properties/r/x-mcp-header",
        tool_name="nested",
        severity="warning",
        text="excluded",
    )


def test_header_violation_is_an_error_under_strict() -> None:
    """MCPGEN-EXCLUDED: a tool must not vanish from a strict build; --skip-invalid still leaves it out."""
    bad = tool("bad", {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}})
    assert [t["name"] for t in validate(spec(bad, tool("ok"))).tools] == ["ok"]
    errors = failing(spec(bad, tool("ok")), strict=True)
    assert any(d.tool == "bad" and "MCPGEN-EXCLUDED" in d.message for d in errors)
    result = validate(spec(bad, tool("ok")), strict=True, skip_invalid=True)
    assert [t["name"] for t in result.tools] == ["ok"]


@pytest.mark.parametrize(
    "prop", ["password", "api_key", "apiKey", "authToken", "client_secret", "Authorization", "credentials"]
)
def test_secret_looking_header_parameters(prop: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "outer": {"type": "object", "properties": {prop: {"type": "string", "x-mcp-header": "Thing"}}}
        },
    }
    pointer = f"/tools/0/inputSchema/properties/outer/properties/{prop}/x-mcp-header"
    result = validate(spec(tool(schema=schema)))
    assert len(result.tools) == 1
    find(result.warnings, "XHDR-12", pointer, severity="warning", text="intermediaries")
    find(failing(spec(tool(schema=schema)), strict=True), "XHDR-12", pointer)


@pytest.mark.parametrize("prop", ["max_tokens", "keyword", "region", "monkey", "secretary_name"])
def test_ordinary_header_parameters_are_not_flagged(prop: str) -> None:
    schema = {"type": "object", "properties": {prop: {"type": "string", "x-mcp-header": "Thing"}}}
    assert validate(spec(tool(schema=schema)), strict=True).warnings == []


def test_secret_looking_header_name() -> None:
    schema = {"type": "object", "properties": {"value": {"type": "string", "x-mcp-header": "X-Api-Key"}}}
    find(
        validate(spec(tool(schema=schema))).warnings,
        "XHDR-12",
        "/tools/0/inputSchema/properties/value/x-mcp-header",
        severity="warning",
    )


# --------------------------------------------------------------------------- bounds (SCHEMA-11)


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_ten_thousand_levels_fail_fast() -> None:
    schema = _deep(10_000)
    started = time.perf_counter()
    diags = failing(spec(tool(schema=schema)))
    assert time.perf_counter() - started < 1.0
    (diag,) = diags
    assert diag.rule == "SCHEMA-11"
    assert "nested more than 64 levels deep" in diag.message
    assert diag.pointer.startswith("/tools/0/inputSchema/properties/a/properties/a/")
    assert diag.pointer.count("/") == 3 + 65  # /tools/0/inputSchema + 65 levels


def test_deep_arrays_and_meta_are_bounded_too() -> None:
    deep_list: Any = []
    for _ in range(10_000):
        deep_list = [deep_list]
    diags = failing(
        spec(tool(schema={"type": "object", "enum": deep_list}), tool("u", _meta={"x": deep_list}))
    )
    find(diags, "SCHEMA-11", "/tools/0/inputSchema/enum" + "/0" * 64, text="nested more than 64")
    find(diags, "MCPGEN-LIMITS", "/tools/1/_meta/x" + "/0" * 64, tool_name="u", text="nested more than 64")


def test_depth_just_within_the_limit_is_accepted() -> None:
    # 32 property levels = 64 nested objects below the schema root.
    assert validate(spec(tool(schema=_deep(31)))).warnings == []


@pytest.mark.parametrize("keyword", ["properties", "anyOf", "$defs"])
def test_huge_fan_out_fails_fast(keyword: str) -> None:
    many = 50_000
    if keyword == "anyOf":
        schema: dict[str, Any] = {"type": "object", "anyOf": [{"required": [f"p{i}"]} for i in range(many)]}
    else:
        schema = {"type": "object", keyword: {f"p{i}": {"type": "string"} for i in range(many)}}
    started = time.perf_counter()
    diags = failing(spec(tool(schema=schema)))
    assert time.perf_counter() - started < 2.0
    (diag,) = diags
    assert diag.rule == "SCHEMA-11"
    assert diag.pointer == "/tools/0/inputSchema"
    assert "more than 10000 subschemas" in diag.message


def test_subschema_budget_is_per_tool() -> None:
    half = {"type": "object", "properties": {f"p{i}": {} for i in range(6)}}
    limits = Limits(max_subschemas=10)
    diags = failing(spec(tool(schema=half, outputSchema=half)), limits=limits)
    find(diags, "SCHEMA-11", "/tools/0/outputSchema", text="more than 10 subschemas")


def test_total_subschema_budget_stops_early() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {} for i in range(9)}}  # 10 subschemas each
    diags = failing(spec(*[tool(f"t{i}", schema) for i in range(5)]), limits=Limits(max_total_subschemas=25))
    (diag,) = diags
    assert diag.rule == "MCPGEN-LIMITS" and diag.tool == "t2" and diag.pointer == "/tools/2/inputSchema"
    assert "together hold more than 25 subschemas" in diag.message


def test_schema_filling_the_budget_exactly_is_fully_checked() -> None:
    schema = {
        "type": "object",
        "properties": {f"p{i}": {} for i in range(8)},
        "$defs": {"h": {"type": "string"}},
    }  # 10 subschemas
    schema["properties"]["p0"] = {"type": "number", "x-mcp-header": "P"}
    result = validate(spec(tool(schema=schema)), limits=Limits(max_subschemas=10))
    assert result.tools == []  # the x-mcp-header check still ran
    find(result.warnings, "XHDR-06", "/tools/0/inputSchema/properties/p0/type", severity="warning")


def test_value_count_cap() -> None:
    schema = {"type": "object", "enum": list(range(1000))}
    find(
        failing(spec(tool(schema=schema)), limits=Limits(max_values=500)),
        "SCHEMA-11",
        "/tools/0",
        text="more than 500 JSON values",
    )


def test_total_value_cap_stops_early() -> None:
    tools = [tool(f"t{i}", {"type": "object", "enum": list(range(100))}) for i in range(10)]
    diags = failing(spec(*tools), limits=Limits(max_total_values=500))
    (diag,) = diags
    assert diag.rule == "MCPGEN-LIMITS" and "in total" in diag.message


def test_too_many_tools() -> None:
    diags = failing(spec(*[tool(f"t{i}") for i in range(11)]), limits=Limits(max_tools=10))
    (diag,) = diags
    assert diag.rule == "MCPGEN-LIMITS" and diag.pointer == "/tools"
    assert "11 tools listed; at most 10" in str(diag)


def test_string_length_caps() -> None:
    long_name = "n" * 2000
    diags = failing(
        spec(
            tool(long_name),
            tool("d", description="x" * (64 * 1024 + 1)),
            tool("k", {"type": "object", "properties": {"k" * 1025: {"type": "string"}}}),
            tool("s", {"type": "object", "default": {"v": "y" * 100}}),
        ),
        limits=Limits(max_string=50, max_description=64 * 1024),
    )
    shown = long_name[:77] + "..."
    find(diags, "MCPGEN-LIMITS", "/tools/0/name", tool_name=shown, text="2000 characters")
    find(diags, "MCPGEN-LIMITS", "/tools/1/description", tool_name="d", text="longer than the limit of 65536")
    find(
        diags,
        "SCHEMA-11",
        "/tools/2/inputSchema/properties",
        tool_name="k",
        text="member name of 1025 characters",
    )
    find(
        diags,
        "SCHEMA-11",
        "/tools/3/inputSchema/default/v",
        tool_name="s",
        text="longer than the limit of 50",
    )


# --------------------------------------------------------------------------- results


def test_all_errors_collected_and_sorted() -> None:
    diags = failing(spec(tool("b", {"type": "array"}), tool("a", None, title=1), tool("b")))
    rules = [(d.tool, d.rule) for d in diags]
    assert ("a", "MCPGEN-TOOL-SHAPE") in rules and ("b", "TOOLS-08") in rules and ("b", "TOOLS-15") in rules
    assert diags == sorted(diags, key=Diagnostic.sort_key)


def test_error_message_lists_every_error() -> None:
    with pytest.raises(SpecValidationError) as info:
        validate(spec(tool(schema={"type": "array"}), tool("u", title=2)))
    text = str(info.value)
    assert text.startswith("2 error(s):")
    assert "specs/t.json: error: tool 't' at /tools/0/inputSchema/type: TOOLS-08:" in text
    assert "specs/t.json: error: tool 'u' at /tools/1/title: MCPGEN-TOOL-SHAPE:" in text


def test_validated_spec_keeps_source_order_and_digest() -> None:
    loaded = spec(tool("z"), tool("a"))
    result = validate(loaded)
    assert isinstance(result, ValidatedSpec)
    assert [t["name"] for t in result.tools] == ["z", "a"]
    assert result.digest == loaded.digest


def test_hostile_text_is_repr_in_messages() -> None:
    name = "evil\x1b[2J\nname"
    result = validate(spec(tool(name)))
    printed = "\n".join(str(d) for d in result.warnings)
    assert "\x1b" not in printed and "\\x1b" in printed
    assert "\n" not in printed.replace("\n" + SOURCE, "")
