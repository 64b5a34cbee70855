"""The MODEL stage's parts on their own: class names, schema documents, shape facts, fields."""

from __future__ import annotations

from typing import Any

import pytest

from codegen.errors import UnsupportedSchemaError
from codegen.model.build import build_models
from codegen.model.classnames import MODULE_NAMES, ClassNames, def_class_stems, path_name, plan_classes
from codegen.model.fields import MAX_DESCRIPTION, field_def
from codegen.model.ir import ANY, NONE, FieldDef, ListOf, Lit, ModelRef, Prim, Union, union
from codegen.model.naming import _field_identifier, assign_names, field_names, field_reserved_names
from codegen.model.schemadoc import Budget, open_document
from codegen.model.schemafacts import Facts, collect_facts, declared_types, merge_facts, own_constraints

STR, INT, FLOAT = Prim("str"), Prim("int"), Prim("float")


# --------------------------------------------------------------------------------------- classnames


def test_class_names_take_a_suffix_on_a_clash() -> None:
    names = ClassNames()
    assert [names.take("Thing"), names.take("Thing"), names.take("Thing")] == ["Thing", "Thing2", "Thing3"]
    assert names.take("BaseModel") == "BaseModel2"  # models.py's own imports are taken from the start
    assert "BaseModel" in MODULE_NAMES


def test_plan_classes_reserves_tool_classes_first() -> None:
    tools: list[dict[str, Any]] = [
        {"name": "get_user", "inputSchema": {}, "outputSchema": {}},
        {"name": "list", "inputSchema": {}},
    ]
    plans = plan_classes(tools)
    assert [(p.input_class, p.output_class) for p in plans] == [
        ("GetUserInput", "GetUserOutput"),
        ("ListInput", None),
    ]


def test_def_stems_and_path_names() -> None:
    stems = def_class_stems({"$defs": {"user-info": {}}, "definitions": {"x": {}}}, "Tool")
    assert stems == {("$defs", "user-info"): "ToolUserInfoDef", ("definitions", "x"): "ToolXDef"}
    assert (
        path_name("/$defs/user-info/properties/tags/items", "ToolInput", stems) == "ToolUserInfoDefTagsItem"
    )
    assert path_name("/properties/a/anyOf/1", "ToolInput", stems) == "ToolInputAOption2"
    assert path_name("/properties/m/additionalProperties", "ToolInput", stems) == "ToolInputMValue"
    assert path_name("/prefixItems/0", "ToolInput", stems) == "ToolInputItem1"


# ---------------------------------------------------------------------------------------- schemadoc


def test_open_document_resolves_refs_to_pointers() -> None:
    tool = {
        "name": "t",
        "inputSchema": {"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}},
    }
    doc = open_document(0, tool, "inputSchema", "TInput", "T")
    assert doc.refs == {"/properties/a": "/$defs/A"}
    assert doc.node("/$defs/A") == {"type": "string"}
    assert doc.node("/properties/missing") is True  # nothing there: anything goes
    assert doc.def_classes == {("$defs", "A"): "TADef"}


def test_open_document_refuses_what_it_cannot_model() -> None:
    with pytest.raises(UnsupportedSchemaError, match="not a JSON object"):
        open_document(0, {"name": "t", "inputSchema": []}, "inputSchema", "TInput", "T")
    with pytest.raises(UnsupportedSchemaError, match="never fetched"):
        open_document(
            0,
            {"name": "t", "inputSchema": {"$ref": "https://example.com/s.json"}},
            "inputSchema",
            "TInput",
            "T",
        )


# -------------------------------------------------------------------------------------- schemafacts


def test_facts_follow_ref_and_allof() -> None:
    schema = {
        "allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"b": {"type": "integer"}}, "required": ["b"]}],
        "$defs": {"Base": {"type": "object", "properties": {"a": {}}, "additionalProperties": False}},
        "anyOf": [{"properties": {"ignored": {}}}],  # only narrows the value: not a fact
    }
    doc = open_document(0, {"name": "t", "inputSchema": schema}, "inputSchema", "TInput", "T")
    facts = collect_facts(doc, "", 0, Budget())
    assert facts.types == {"object"}
    assert facts.properties == {"a": ["/$defs/Base/properties/a"], "b": ["/allOf/1/properties/b"]}
    assert facts.required == ["b"]
    assert facts.closed


def test_declared_types_and_merge() -> None:
    assert declared_types("string") == {"string"}
    assert declared_types(["null", "nonsense", 3]) == {"null"}
    assert declared_types(None) is None
    merged = merge_facts(
        Facts(properties={"a": ["/p"]}, required=["a"]),
        Facts(properties={"a": ["/q"], "b": ["/r"]}, required=["b"], closed=True),
    )
    assert merged.properties == {"a": ["/p", "/q"], "b": ["/r"]}
    assert merged.required == ["a", "b"] and merged.closed and merged.object_like


def test_own_constraints_are_the_facts_of_a_plain_subschema() -> None:
    node = {"type": "integer", "minimum": 1, "maximum": float("inf"), "multipleOf": True, "maxLength": 3}
    doc = open_document(0, {"name": "t", "inputSchema": node}, "inputSchema", "TInput", "T")
    assert own_constraints(node) == collect_facts(doc, "", 0, Budget()).constraints
    assert own_constraints(node) == {"minimum": 1, "maxLength": 3}
    assert own_constraints({"type": "string"}) == {}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "number"}, Union((INT, FLOAT))),
        ({"type": ["string", "null"], "description": "d"}, Union((STR, NONE))),
        ({"type": ["null", "integer", "number"]}, Union((INT, FLOAT, NONE))),
        ({"type": "nonsense"}, ANY),
        ({"type": []}, ANY),
        ({"type": ["array"], "maxItems": 2}, ListOf(ANY)),
        ({"type": "object", "required": ["a"]}, ModelRef("TInputX")),
    ],
)
def test_scalar_subschemas_read_without_facts_get_the_facts_type(schema: Any, expected: Any) -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"x": schema}, "required": ["x"]}}
    _plans, models = build_models([tool])
    (model,) = [m for m in models.models if m.name == "TInput"]
    assert model.fields[0].type == expected


# -------------------------------------------------------------------------------------- modelfields


def test_field_keeps_a_default_only_when_it_fits_the_type() -> None:
    kept = field_def("n", "n", INT, False, {"default": 3}, {}, {})
    assert (kept.has_default, kept.default, kept.type) == (True, 3, Union((INT, NONE)))
    dropped = field_def("n", "n", INT, False, {"default": "three"}, {}, {})
    assert not dropped.has_default
    required = field_def("n", "n", INT, True, {"default": 3}, {}, {})
    assert not required.has_default and required.type == INT  # a required field has no default
    literal = field_def("k", "k", Lit(("a", "b")), False, {"default": "b"}, {}, {})
    assert literal.has_default


def test_field_bounds_keep_their_exact_meaning() -> None:
    bounds = {"minimum": 1.0, "maximum": 5, "multipleOf": 2, "minLength": 3}
    assert field_def("n", "n", INT, True, {}, bounds, {}).constraints == (
        ("ge", 1),
        ("le", 5),
        ("multiple_of", 2),
    )
    assert field_def("x", "x", Union((INT, FLOAT)), True, {}, bounds, {}).constraints == (
        ("ge", 1.0),
        ("le", 5),
    )
    assert field_def("s", "s", STR, True, {}, bounds, {}).constraints == (("min_length", 3),)
    assert field_def("l", "l", ListOf(STR), True, {}, {"minItems": 2.0}, {}).constraints == (
        ("min_length", 2),
    )


def test_field_description_is_capped() -> None:
    field = field_def("d", "d", STR, True, {"description": "x" * (MAX_DESCRIPTION + 10)}, {}, {})
    assert field.description is not None and field.description.endswith(" [...]")
    assert field_def("d", "d", STR, True, {"description": "   "}, {}, {}).description is None


def test_fields_are_still_frozen_dataclasses_with_their_defaults() -> None:
    field = FieldDef("a", "a", STR, True, False, None, None)
    assert (field.constraints, field.nullable) == ((), False)
    assert field == FieldDef(
        name="a", wire_name="a", type=STR, required=True, has_default=False, default=None, description=None
    )
    assert hash(field) == hash(FieldDef("a", "a", STR, True, False, None, None))
    with pytest.raises(AttributeError):
        field.name = "b"  # type: ignore[misc]


def test_union_of_several_members() -> None:
    assert union([STR, NONE, INT, STR, Prim("None")]) == Union((STR, INT, NONE))
    assert union([Union((STR, NONE)), NONE]) == Union((STR, NONE))
    assert union([STR, INT, Prim("Any")]) == ANY
    assert union([Lit(("a",)), STR, Lit(("b", "a")), NONE]) == Union((Lit(("a", "b")), STR, NONE))


@pytest.mark.parametrize("wires", [["a", "b", "c_d"], ["getUser", "get_user", "get-user", "json", "_meta"]])
def test_field_names_agree_with_assign_names(wires: list[str]) -> None:
    assert field_names(wires) == assign_names(wires, _field_identifier, taken=field_reserved_names())
