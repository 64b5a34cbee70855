"""Schema shapes that change what a method looks like: allOf inheritance, root unions, `$ref`
forms, defaults, empty schemas, class-name collisions with nested schemas, and no tools at all."""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Literal, get_args

import pytest

from codegen.model.build import build_models
from codegen.model.ir import ModelRef, Prim, Union
from codegen.pipeline import build_client, build_server
from codegen.spec import ValidatedSpec, canonical_digest
from mcpgen_runtime.client import ClientCore
from mcpgen_runtime.errors import ToolArgumentsError
from mcpgen_runtime.types import UNSET, Unset

BASE = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
EDGE_TOOLS: list[dict[str, Any]] = [
    {"name": "refroot", "inputSchema": {"type": "object", "$ref": "#/$defs/base", "$defs": {"base": BASE}}},
    {
        "name": "allof",
        "inputSchema": {
            "type": "object",
            "allOf": [
                {"$ref": "#/definitions/base"},
                {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
            ],
            "definitions": {"base": {"type": "object", "properties": {"a": {"type": "string"}}}},
        },
    },
    {
        "name": "oneof",
        "inputSchema": {
            "type": "object",
            "oneOf": [
                {"properties": {"x": {"type": "string"}}, "required": ["x"]},
                {"properties": {"y": {"type": "integer"}}, "required": ["y"]},
            ],
        },
    },
    {
        "name": "nested_defs",
        "inputSchema": {
            "type": "object",
            "properties": {"q": {"$ref": "#/$defs/a/$defs/b"}, "r": {"$ref": "#/properties/q"}},
            "$defs": {"a": {"$defs": {"b": {"type": "object", "properties": {"z": {"type": "string"}}}}}},
        },
    },
    {
        "name": "tree",
        "inputSchema": {
            "type": "object",
            "properties": {
                "label": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#"}},
            },
            "required": ["label"],
        },
        "outputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]},
    },
    {
        "name": "defaults",
        "inputSchema": {
            "type": "object",
            "properties": {
                "n": {"type": "integer", "default": 10},
                "s": {"type": "string", "default": 'x"y'},
                "o": {"type": "object", "properties": {"k": {"type": "string"}}, "default": {"k": "v"}},
                "nul": {"type": ["string", "null"], "default": None},
                "req": {"type": "integer", "default": 3},
                "e": {"enum": ["a", "b"], "default": "b"},
            },
            "required": ["req"],
        },
    },
    {"name": "empty_out", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}},
    # tool `a` names its nested schema `AInputBInput`, which is also tool `a_input_b`'s planned class
    {
        "name": "a",
        "inputSchema": {
            "type": "object",
            "properties": {"b_input": {"type": "object", "properties": {"x": {"type": "string"}}}},
        },
    },
    {"name": "a_input_b", "inputSchema": {"type": "object", "properties": {"y": {"type": "string"}}}},
    # True == 1 in Python; as JSON values (and Literal members) they differ
    {
        "name": "consts",
        "inputSchema": {
            "type": "object",
            "properties": {
                "flag": {"const": True},
                "one": {"const": 1},
                "mixed": {"enum": [1, True, 0, False]},
            },
        },
    },
]


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    spec = ValidatedSpec(source="edge.json", tools=EDGE_TOOLS, digest=canonical_digest(EDGE_TOOLS))
    package = build_client(spec, package="edge_client")
    root = tmp_path_factory.mktemp("edge")
    (root / package.package).mkdir()
    for name, data in package.files.items():
        (root / package.package / name).parent.mkdir(exist_ok=True)  # _models/
        (root / package.package / name).write_bytes(data)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(package.package)
    finally:
        sys.path.remove(str(root))
        for name in list(sys.modules):
            if name.startswith("edge_client"):
                del sys.modules[name]


def _params(method: Any) -> dict[str, inspect.Parameter]:
    return dict(list(inspect.signature(method, eval_str=True).parameters.items())[1:])


def test_ref_at_the_root(edge: ModuleType) -> None:
    params = _params(edge.Client.refroot)
    assert list(params) == ["a"] and params["a"].annotation is str


def test_allof_inheritance_keeps_base_fields(edge: ModuleType) -> None:
    params = _params(edge.Client.allof)
    assert list(params) == ["b", "a"]
    assert params["b"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert params["a"].kind is inspect.Parameter.KEYWORD_ONLY and params["a"].default is UNSET


def test_root_union_input_takes_an_option_model_or_a_dict(edge: ModuleType) -> None:
    params = _params(edge.Client.oneof)
    assert list(params) == ["arguments"]
    option_x, option_y = edge.models.OneofInputOption1, edge.models.OneofInputOption2
    assert get_args(params["arguments"].annotation) == (option_x, option_y, dict[str, Any])
    sent = []
    client = object.__new__(edge.Client)
    client._call = lambda name, arguments, model: sent.append((name, arguments, model))
    client.oneof({"x": "1"})
    assert sent == [("oneof", {"x": "1"}, edge.models.OneofInput)]
    # What the runtime sends for each form: the option's wire object, validated against the union.
    core = ClientCore()
    assert core.checks.prepare_arguments("oneof", option_y(y=3), edge.models.OneofInput) == {"y": 3}
    assert core.checks.prepare_arguments("oneof", {"x": "1"}, edge.models.OneofInput) == {"x": "1"}
    with pytest.raises(ToolArgumentsError):
        core.checks.prepare_arguments("oneof", {"x": 1}, edge.models.OneofInput)


def test_refs_into_nested_defs_and_properties(edge: ModuleType) -> None:
    params = _params(edge.Client.nested_defs)
    assert set(params) == {"q", "r"}
    q_model = params["q"].annotation.__args__[0]
    assert "z" in q_model.model_fields


def test_recursive_root_ref(edge: ModuleType) -> None:
    params = _params(edge.Client.tree)
    assert params["children"].annotation == list[edge.models.TreeInput] | Unset
    edge.models.TreeInput.model_validate({"label": "a", "children": [{"label": "b"}]})


def test_defaults(edge: ModuleType) -> None:
    params = _params(edge.Client.defaults)
    assert next(iter(params)) == "req" and params["req"].default is inspect.Parameter.empty
    # omitted stays omitted: a schema default is the server's to apply, so it is documented, not sent
    assert all(params[name].default is UNSET for name in ("n", "s", "e", "o", "nul"))
    doc = inspect.getdoc(edge.Client.defaults) or ""
    for name, shown in (("n", "10"), ("s", '"x\\"y"'), ("e", '"b"'), ("nul", "null")):
        assert f"{name}: Defaults to {shown} when omitted." in doc, (name, doc)
    assert "o: Defaults" not in doc  # non-scalar default: left to the model / server


def test_true_and_one_stay_distinct_literals(edge: ModuleType) -> None:
    fields = edge.models.ConstsInput.model_fields
    assert get_args(fields["flag"].annotation) == (Literal[True], type(None))
    assert get_args(fields["one"].annotation) == (Literal[1], type(None))
    assert get_args(fields["mixed"].annotation) == (Literal[1, True, 0, False], type(None))


def test_empty_output_schema(edge: ModuleType) -> None:
    assert (
        inspect.signature(edge.Client.empty_out, eval_str=True).return_annotation
        is edge.models.EmptyOutOutput
    )


def test_tool_classes_are_reserved_before_nested_ones(edge: ModuleType) -> None:
    # tool `a`'s nested object `b_input` would be called AInputBInput, the class of tool `a_input_b`
    sent = []
    client = object.__new__(edge.Client)
    client._call = lambda name, arguments, model: sent.append(model)
    client.a_input_b(y="1")
    assert sent == [edge.models.AInputBInput] and "y" in edge.models.AInputBInput.model_fields
    a_model = _params(edge.Client.a)["b_input"].annotation.__args__[0]
    assert a_model is edge.models.AInputBInput2 and "x" in a_model.model_fields


def test_planned_names() -> None:
    plans, models = build_models(EDGE_TOOLS)
    assert [plan.input_class for plan in plans][:3] == ["RefrootInput", "AllofInput", "OneofInput"]
    by_name = {model.name: model for model in models.models}
    # a root $ref to an object: the tool gets its own class with the target's fields
    assert [f.name for f in by_name["RefrootInput"].fields] == ["a"]
    assert "definitions" not in by_name and "AllofInput" in by_name
    tree = by_name["TreeInput"]
    assert [f.name for f in tree.fields] == ["label", "children"]
    assert [m.name for m in models.models].index("TreeInput") >= 0


def test_titles_and_ids_never_name_anything() -> None:
    tools = [
        {
            "name": "t",
            "inputSchema": {
                "$id": "https://evil.example/schema",
                "title": "Evil",
                "type": "object",
                "properties": {"title": {"type": "string", "title": "AlsoEvil"}, "x": {"$ref": "#anchor"}},
                "$defs": {
                    "d": {
                        "$anchor": "anchor",
                        "title": "DefEvil",
                        "type": "object",
                        "properties": {"k": {"type": "string"}},
                    }
                },
            },
        }
    ]
    _, models = build_models(tools)
    text = repr(models)
    assert "Evil" not in text and "evil.example" not in text and "anchor" not in text.lower()
    by_name = {model.name: model for model in models.models}
    assert [f.name for f in by_name["TInput"].fields] == ["title", "x"]  # a property named title stays
    assert by_name["TInput"].fields[1].type == Union((ModelRef("TDDef"), Prim("None")))


def test_no_tools() -> None:
    spec = ValidatedSpec(source="empty.json", tools=[], digest=canonical_digest([]))
    client, server = build_client(spec, package="none_client"), build_server(spec, package="none_server")
    client_module = ast.parse(client.files["client.py"])
    classes = [node for node in client_module.body if isinstance(node, ast.ClassDef)]
    assert [cls.name for cls in classes] == ["Client", "AsyncClient"]
    assert b"_tool_bindings_ = ()" in server.files["base.py"]
    assert client.files["tools.json"] == b'{\n  "tools": [],\n  "pins": {}\n}\n'
    assert server.files["tools.json"] == b'{\n  "tools": []\n}\n'
    python = [data for name, data in server.user_files.items() if name.endswith(".py")]
    for data in [*client.files.values(), *server.files.values(), *python]:
        if not data.startswith(b"{"):
            ast.parse(data)


def test_properties_declared_only_under_conditions() -> None:
    """Only `then` and `else` of one `if` together cover every instance; a single branch or a
    dependentSchemas entry may not apply, so there the honest type is Any."""
    schema = {
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"properties": {"both": {"type": "integer"}, "then_only": {"type": "string"}}},
        "else": {"properties": {"both": {"type": "string"}}},
        "dependentSchemas": {"kind": {"properties": {"dependent": {"type": "boolean"}}}},
    }
    _, models = build_models([{"name": "c", "inputSchema": schema}])
    fields = {f.name: f.type for model in models.models if model.name == "CInput" for f in model.fields}
    assert fields["both"] == Union((Prim("int"), Prim("str"), Prim("None")))
    assert fields["then_only"] == Prim("Any") and fields["dependent"] == Prim("Any")
