"""Every schema shape in specs/shapes.json, as a user of the generated code sees it.

- the annotation each shape becomes (read from models.py with `ast`: the source is the contract);
- honesty: instances the *original* schema accepts (checked with jsonschema first) are accepted by
  the generated models and come back unchanged (`model_dump(mode="json", by_alias=True,
  exclude_unset=True)`), so no generated type is narrower than its schema;
- what types cannot say (`if`/`then`/`else`, `not`, `dependentSchemas`, `pattern`) is still enforced:
  the generated server validates every call against the original schema;
- tagged unions pick their member by tag, root unions return the root value, wire names are sent
  unchanged.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pydantic
import pytest

from codegen.pipeline import build_client, build_server
from codegen.spec import GeneratedPackage
from mcpgen_runtime.types import UNSET
from tests.codegen.pipeline.test_generate import Loopback, build_every_model, load_spec, write_package
from tests.support import ROOT

SHAPES = ROOT / "specs" / "shapes.json"
TOOLS = {tool["name"]: tool for tool in json.loads(SHAPES.read_text("utf-8"))["tools"]}


@pytest.fixture(scope="module")
def packages() -> tuple[GeneratedPackage, GeneratedPackage]:
    spec = load_spec(SHAPES)
    return build_client(spec, package="sh_client"), build_server(spec, package="sh_server")


@pytest.fixture(scope="module")
def imported(
    packages: tuple[GeneratedPackage, GeneratedPackage], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ModuleType, ModuleType]]:
    root = tmp_path_factory.mktemp("shapes")
    for package in packages:
        write_package(root, package)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("sh_client"), importlib.import_module("sh_server")
    finally:
        sys.path.remove(str(root))
        for name in list(sys.modules):
            if name.startswith(("sh_client", "sh_server")):
                del sys.modules[name]


def _fields(packages: tuple[GeneratedPackage, GeneratedPackage]) -> dict[tuple[str, str], str]:
    """(class, field) -> annotation source; ("alias", name) -> aliased type source."""
    body = [  # every `_models/` module (models.py only names their classes)
        node
        for name, data in sorted(packages[0].files.items())
        if name.startswith("_models/t")
        for node in ast.parse(data.decode("utf-8")).body
    ]
    out: dict[tuple[str, str], str] = {}
    for node in body:
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    out[(node.name, stmt.target.id)] = ast.unparse(stmt.annotation)
            bases = [ast.unparse(base) for base in node.bases]
            out[(node.name, "__bases__")] = ", ".join(bases)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            out[("alias", node.targets[0].id)] = ast.unparse(node.value)
    return out


# (class, field) -> the annotation models.py must declare
EXPECTED: list[tuple[str, str, str]] = [
    ("NoArgsInput", "__bases__", "BaseModel"),
    ("NestedObjectsInput", "outer", "NestedObjectsInputOuter"),
    ("NestedObjectsInputOuterInner", "leaf", "str"),
    ("NestedObjectsOutputEcho", "inner", "NestedObjectsOutputEchoInner | None"),
    ("ArrayOfObjectsInput", "items", "list[ArrayOfObjectsInputItemsItem]"),
    ("ArrayOfObjectsInput", "matrix", "list[list[ArrayOfObjectsInputMatrixItemItem]] | None"),
    ("ArrayOfObjectsOutput", "root", "list[ArrayOfObjectsOutputItem]"),
    ("alias", "EnumsInputColor", "Literal['red', 'green', 'blue']"),
    ("EnumsInput", "color", "EnumsInputColor"),
    ("alias", "EnumsInputLevel", "Literal[1, 2, 3]"),
    ("EnumsInput", "mixed", "EnumsInputMixed | float | dict[str, Any] | list[Any] | None"),
    ("EnumsInput", "nullable_enum", "EnumsInputNullableEnum | None"),
    ("EnumsInput", "single", "Literal['only'] | None"),
    ("ConstsInput", "kind", "Literal['fixed']"),
    ("ConstsInput", "version", "Literal[2] | None"),
    ("ConstsInput", "flag", "Literal[True] | None"),
    ("ConstsInput", "nothing", "None"),
    ("ConstsInput", "ratio", "float | None"),
    ("ConstsInput", "shape", "dict[str, Any] | None"),
    ("NullablesInput", "by_type_array", "int | None"),
    ("NullablesInput", "by_any_of", "str | None"),
    ("NullablesInput", "by_one_of", "int | float | None"),
    ("NullablesInput", "object_or_null", "NullablesInputObjectOrNullOption1 | None"),
    ("NullablesInput", "required_nullable", "str | None"),
    ("NullablesInput", "multi_type", "str | int | bool | None"),
    ("UnionsInput", "any_of", "str | int | UnionsInputAnyOfOption3 | None"),
    ("UnionsInput", "one_of", "UnionsInputOneOfOption1 | UnionsInputOneOfOption2 | None"),
    ("UnionsInput", "with_base", "UnionsInputWithBaseOption1 | UnionsInputWithBaseOption2 | None"),
    ("UnionsInputWithBaseOption1", "id", "str"),  # the base's fields in every branch
    ("UnionsInputWithBaseOption1", "email", "str"),
    ("UnionsInput", "required_only", "UnionsInputRequiredOnly | None"),  # branches only constrain
    (
        "DiscriminatedInput",
        "shape",
        "Annotated[DiscriminatedCircleDef | DiscriminatedSquareDef, Field(discriminator='kind')]",
    ),
    (
        "DiscriminatedInput",
        "pet",
        "Annotated[DiscriminatedInputPetOption1 | DiscriminatedInputPetOption2, "
        "Field(discriminator='type')] | None",
    ),
    (
        "DiscriminatedInput",
        "event",
        "Annotated[DiscriminatedInputEventOption1 | DiscriminatedInputEventOption2, "
        "Field(discriminator='type')] | None",
    ),
    (
        "DiscriminatedOutput",
        "root",
        "Annotated[DiscriminatedOutputOption1 | DiscriminatedOutputOption2, Field(discriminator='status')]",
    ),
    ("AllOfInputMerged", "a", "str"),
    ("AllOfInputMerged", "b", "int | None"),
    ("AllOfInputExtended", "id", "str"),
    ("AllOfInputExtended", "extra", "bool | None"),
    ("AllOfInput", "narrowed", "str | None"),
    ("AllOfOutput", "x", "str"),
    ("MapsInput", "counts", "dict[str, int] | None"),
    ("MapsInput", "objects", "dict[str, MapsInputObjectsValue] | None"),
    ("MapsInput", "prefixed", "dict[str, Any] | None"),  # keys matching no pattern hold anything
    ("MapsInput", "only_patterns", "dict[str, int | float | str] | None"),
    ("MapsInput", "free", "dict[str, Any] | None"),
    ("MapsInput", "fixed_and_extra", "MapsInputFixedAndExtra | None"),
    ("TuplesInput", "point", "tuple[int | float, int | float] | None"),
    ("TuplesInput", "pair", "tuple[str, int] | None"),
    ("TuplesInput", "up_to_two", "list[str | int] | None"),  # 0, 1 or 2 items: no fixed tuple
    ("TuplesInput", "open_tuple", "list[str | int | float] | None"),
    ("RecursiveDefsNodeDef", "children", "list[RecursiveDefsNodeDef] | None"),
    ("RecursiveDefsNestedDef", "root", "list[int | RecursiveDefsNestedDef]"),
    ("RecursiveDefsNestedDef", "__bases__", "RootModel['list[int | RecursiveDefsNestedDef]']"),
    ("RecursiveDefsOutput", "next", "RecursiveDefsLinkDef | None"),
    ("RecursiveRootInput", "parent", "RecursiveRootInput | None"),
    ("Draft07Input", "item", "Draft07ItemDef | None"),
    ("Draft07Input", "pair", "tuple[str, int] | None"),
    ("DefaultsInput", "s", "str | None"),
    ("DefaultsInput", "o", "DefaultsInputO | None"),
    ("DefaultsInput", "wrong", "int | None"),
    ("ConditionalsInput", "postcode", "str | None"),
    ("ConditionalsInput", "state", "str | None"),  # declared by both `then` and `else`
    ("ConditionalsInput", "email", "str | None"),  # formats are annotations: a plain str
    ("ConditionalsInput", "when", "str | None"),
    ("ConstraintsInput", "tags", "list[str] | None"),
    ("OutputStringOutput", "root", "str"),
    ("OutputIntegerOutput", "root", "int"),
    ("OutputArrayOutput", "root", "list[str]"),
    ("OutputUnionOutput", "root", "OutputUnionOutputOption1 | OutputUnionOutputOption2"),
    ("AnythingInput", "any", "Any"),
    ("AnythingInput", "true", "Any"),
    ("AnythingInput", "typed_any", "dict[str, Any] | list[Any] | str | int | float | bool | None"),
    ("RefSiblingsInput", "described", "RefSiblingsItemDef | None"),
    ("RefSiblingsInput", "nullable_ref", "RefSiblingsItemDef | None"),
    ("RefSiblingsInput", "items_ref", "list[RefSiblingsItemDef] | None"),
    ("RootUnionInput", "root", "RootUnionInputOption1 | RootUnionInputOption2"),
]


def test_every_model_builds(imported: Any) -> None:
    assert (
        build_every_model(imported[0].models) >= 76 and build_every_model(imported[1].models) >= 76
    )  # every class


def test_annotations(packages: tuple[GeneratedPackage, GeneratedPackage]) -> None:
    fields = _fields(packages)
    wrong = [
        (cls, name, fields.get((cls, name)), want)
        for cls, name, want in EXPECTED
        if fields.get((cls, name)) != want
    ]
    assert not wrong, "\n".join(map(repr, wrong))


def test_field_names_and_wire_names(
    packages: tuple[GeneratedPackage, GeneratedPackage], imported: Any
) -> None:
    models = imported[0].models
    aliases = {
        name: (info.serialization_alias or name) for name, info in models.NamesInput.model_fields.items()
    }
    assert aliases == {
        "class_": "class",
        "from_": "from",
        "match": "match",
        "type": "type",
        "self": "self",
        "list_": "list",
        "str_": "str",
        "id": "id",
        "field_2fa": "2fa",
        "first_name_3": "first-name",
        "first_name_4": "first.name",
        "first_name_2": "first name",
        "first_name_5": "firstName",
        "first_name": "first_name",
        "name_2": "Name",
        "name": "name",
        "uber": "über",
        "field": "天气",
        "meta": "_meta",
        "model_config_": "model_config",
        "json_": "json",
        "field_model_dump_json": "model_dump_json",
    }
    signature = inspect.signature(imported[0].Client.names, eval_str=True)
    positional = [
        p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    ]
    assert positional == ["self"]  # two required properties: every parameter is keyword-only
    assert list(signature.parameters)[1:3] == [
        "class_",
        "first_name_3",
    ]  # required first, in `required` order
    assert "self_" in signature.parameters  # the property `self` cannot be a parameter named self
    methods = {"names.tool-v2": "names_tool_v2_2", "Names.Tool-V2": "names_tool_v2"}
    for wire, method in methods.items():
        assert getattr(imported[0].Client, method).__doc__.startswith(TOOLS[wire]["description"][:20])


# ----------------------------------------------------------------------------------------- honesty

VALID_INPUTS: dict[str, list[dict[str, Any]]] = {
    "no_args": [{}],
    "no_args_open": [{}, {"anything": [1, {"x": None}]}],
    "nested_objects": [
        {"outer": {"inner": {"leaf": "x"}}},
        {"outer": {"inner": {"leaf": "x", "more": 1}, "o": 2}},
    ],
    "array_of_objects": [
        {"items": []},
        {"items": [{"id": 1, "tags": ["a"]}], "matrix": [[{"x": 1.5}], [], [{"x": 2}]]},
    ],
    "enums": [
        {"color": "red"},
        {"color": "blue", "level": 3, "mixed": 2.5, "nullable_enum": None, "single": "only"},
        *({"color": "green", "mixed": value} for value in ["a", 1, True, None, {"k": "v"}, [1]]),
    ],
    "consts": [
        {"kind": "fixed", "version": 2, "flag": True, "nothing": None, "ratio": 0.5, "shape": {"a": [1, 2]}}
    ],
    "nullables": [
        {"required_nullable": None},
        {
            "required_nullable": "x",
            "by_type_array": None,
            "by_any_of": None,
            "by_one_of": 1.5,
            "object_or_null": None,
            "multi_type": False,
        },
        {"required_nullable": "y", "by_one_of": 3, "object_or_null": {"a": "b"}, "multi_type": 7},
    ],
    "unions": [
        {"any_of": "s"},
        {"any_of": 5},
        {"any_of": {"x": 1}},
        {"one_of": {"a": "x"}},
        {"one_of": {"b": 2}},
        {"with_base": {"id": "1", "email": "e"}},
        {"with_base": {"id": "2", "phone": "p"}},
        {"required_only": {"email": "e"}},
    ],
    "discriminated": [
        {"shape": {"kind": "circle", "radius": 1}},
        {
            "shape": {"kind": "square", "side": 2.5},
            "pet": {"type": "dog", "barks": True},
            "event": {"@type": "key", "code": "K"},
        },
        {"shape": {"kind": "circle", "radius": 0.5}, "event": None},
    ],
    "all_of": [
        {"merged": {"a": "x", "b": 1}, "extended": {"id": "i", "name": "n", "extra": True}, "narrowed": "ab"}
    ],
    "maps": [
        {
            "counts": {"a": 1},
            "objects": {"k": {"v": "x"}},
            "prefixed": {"x-a": "s", "other": [1]},
            "only_patterns": {"abc": 1.5, "123": "s"},
            "free": {"k": None},
            "fixed_and_extra": {"fixed": "f", "flag": True},
        }
    ],
    "tuples": [
        {"point": [1, 2.5], "pair": ["a", 1], "up_to_two": [], "open_tuple": ["a", 1.5, 2]},
        {"up_to_two": ["a"]},
        {"up_to_two": ["a", 2]},
        {"open_tuple": []},
    ],
    "recursive_defs": [
        {"tree": {"value": 1, "children": [{"value": 2, "children": []}]}, "nested": [1, [2, [3]], []]}
    ],
    "recursive_root": [{"name": "a", "parent": {"name": "b", "parent": {"name": "c"}}}],
    "draft07": [{"item": {"id": "x"}, "pair": ["a", 1]}],
    "defaults": [
        {},
        {
            "s": "x",
            "i": 1,
            "f": 2,
            "neg": 0,
            "big": 1.5,
            "b": True,
            "n": None,
            "a": [],
            "o": {},
            "m": {},
            "e": "x",
            "unicode": "",
            "wrong": 3,
        },
    ],
    "conditionals": [
        {"country": "US", "postcode": "12345", "state": "CA"},
        {"country": "DE", "state": None},
        {"country": "DE", "email": "not an email", "when": "whenever", "site": "::"},
    ],  # formats: annotations
    "constraints": [{"name": "a" * 10, "count": 100, "ratio": 0.999, "tags": ["a", "b", "c"]}, {"count": 0}],
    "output_string": [{}],
    "closed_object": [{"a": "x"}, {}],
    "anything": [{"any": [1, {"a": None}], "true": "x", "typed_any": {"k": [1]}}, {"typed_any": None}],
    "ref_siblings": [{"described": {"id": "d"}, "nullable_ref": None, "items_ref": [{"id": "1"}]}],
    "root_union": [{"query": "q"}, {"id": 1}],
    "names": [
        {
            "class": "c",
            "first-name": "f",
            "from": 1,
            "match": "m",
            "type": "t",
            "self": "s",
            "list": "l",
            "str": "s",
            "id": "i",
            "2fa": True,
            "first.name": "a",
            "first name": "b",
            "firstName": "c",
            "first_name": "d",
            "Name": "N",
            "name": "n",
            "über": "u",
            "天气": "w",
            "_meta": "m",
            "model_config": "c",
            "json": "j",
            "model_dump_json": "d",
        }
    ],
}

VALID_OUTPUTS: dict[str, list[Any]] = {
    "nested_objects": [{}, {"echo": {"inner": {"leaf": "x"}}}],
    "array_of_objects": [[], [{"id": 1, "ok": True}, {"id": 2}]],
    "discriminated": [{"status": "ok", "area": 3}, {"status": "error", "message": "m"}],
    "all_of": [{"x": "a", "y": 1}],
    "recursive_defs": [{"value": 1, "next": {"value": 2, "next": {}}}],
    "conditionals": [{"accepted": True}],
    "output_string": ["s"],
    "output_integer": [0],
    "output_array": [[], ["a"]],
    "output_union": [{"ok": False}, {"error": "e"}],
    "closed_object": [{"b": "x"}],
}


def _check_valid(schema: dict[str, Any], instance: Any) -> None:
    validator = jsonschema.validators.validator_for(schema)
    validator(schema).validate(instance)  # the sample itself must be valid


def _class_names(packages: tuple[GeneratedPackage, GeneratedPackage]) -> dict[str, tuple[str, str | None]]:
    tools = json.loads(packages[0].files["tools.json"])["tools"]
    base = ast.parse(packages[1].files["base.py"].decode("utf-8"))
    out: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(base):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ToolBinding":
            kw = {k.arg: k.value for k in node.keywords}
            output = kw["output_model"]
            out[ast.literal_eval(kw["name"])] = (
                ast.literal_eval(kw["input_model"]),
                ast.literal_eval(output),
            )
    assert set(out) == {tool["name"] for tool in tools}
    return out


@pytest.mark.parametrize("tool", sorted(VALID_INPUTS))
def test_valid_inputs_are_accepted_unchanged(
    tool: str, imported: Any, packages: tuple[GeneratedPackage, GeneratedPackage]
) -> None:
    model = getattr(imported[0].models, _class_names(packages)[tool][0])
    for instance in VALID_INPUTS[tool]:
        _check_valid(TOOLS[tool]["inputSchema"], instance)
        parsed = model.model_validate(instance, strict=False)  # JSON data, as the runtime parses it
        assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == instance, (tool, instance)


@pytest.mark.parametrize("tool", sorted(VALID_OUTPUTS))
def test_valid_outputs_are_accepted_unchanged(
    tool: str, imported: Any, packages: tuple[GeneratedPackage, GeneratedPackage]
) -> None:
    output = _class_names(packages)[tool][1]
    assert output is not None
    model = getattr(imported[0].models, output)
    for instance in VALID_OUTPUTS[tool]:
        _check_valid(TOOLS[tool]["outputSchema"], instance)
        parsed = model.model_validate(instance, strict=False)  # JSON data, as the runtime parses it
        assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=True) == instance, (tool, instance)


def test_every_tool_has_samples() -> None:
    assert set(VALID_INPUTS) | {
        "output_integer",
        "output_array",
        "output_union",
        "names.tool-v2",
        "Names.Tool-V2",
    } == set(TOOLS)
    assert set(VALID_OUTPUTS) == {name for name, tool in TOOLS.items() if "outputSchema" in tool}


def test_models_check_what_types_can_say(imported: Any) -> None:
    models = imported[0].models
    bad = [
        (models.ConstraintsInput, {"name": ""}),
        (models.ConstraintsInput, {"count": 3}),
        (models.ConstraintsInput, {"ratio": 1}),
        (models.ConstraintsInput, {"tags": []}),
        (models.ClosedObjectInput, {"a": "x", "b": 1}),
        (models.TuplesInput, {"pair": ["a"]}),
        (models.EnumsInput, {"color": "pink"}),
        (models.ConstsInput, {"kind": "other"}),
        (models.DiscriminatedInput, {"shape": {"kind": "triangle"}}),
    ]
    for model, instance in bad:
        with pytest.raises(pydantic.ValidationError):
            model.model_validate(instance)


# -------------------------------------------------------------------------------------- behaviour


def test_tagged_unions_choose_by_tag(imported: Any) -> None:
    models = imported[0].models
    parsed = models.DiscriminatedInput.model_validate(
        {"shape": {"kind": "square", "side": 2}, "event": {"@type": "click", "x": 1}}
    )
    assert isinstance(parsed.shape, models.DiscriminatedSquareDef)
    assert isinstance(parsed.event, models.DiscriminatedInputEventOption1) and parsed.event.x == 1
    with pytest.raises(pydantic.ValidationError, match="kind"):
        models.DiscriminatedInput.model_validate({"shape": {"kind": "hexagon"}})


class _Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.reply: Any = None

    def _call(self, name: str, arguments: dict[str, Any], model: type) -> Any:
        self.sent.append((name, arguments))

    def _call_structured(self, name: str, arguments: dict[str, Any], model: type, output: type) -> Any:
        self.sent.append((name, arguments))
        return output.model_validate(self.reply)


def test_methods_send_wire_names(imported: Any) -> None:
    client_module = imported[0]
    recorder = _Recorder()
    client = object.__new__(client_module.Client)
    client._call, client._call_structured = recorder._call, recorder._call_structured
    client.names(
        class_="c",
        first_name_3="f",
        self_="s",
        uber="u",
        field="w",
        meta="m",
        field_model_dump_json="d",
        first_name_5="fn",
    )
    name, arguments = recorder.sent[-1]
    assert name == "names"
    assert {k: v for k, v in arguments.items() if v is not UNSET} == {
        "class": "c",
        "first-name": "f",
        "self": "s",
        "über": "u",
        "天气": "w",
        "_meta": "m",
        "model_dump_json": "d",
        "firstName": "fn",
    }
    client.no_args()
    assert recorder.sent[-1] == ("no_args", {})
    client.names_tool_v2_2(x="1")
    assert recorder.sent[-1] == ("names.tool-v2", {"x": "1"})
    recorder.reply = {"error": "boom"}
    result = client.output_union()
    assert isinstance(result, client_module.models.OutputUnionOutputOption2) and result.error == "boom"
    recorder.reply = 7
    assert client.output_integer() == 7
    client.root_union({"id": 3})
    assert recorder.sent[-1] == ("root_union", {"id": 3})
    # a schema default is documented, not sent: omitted stays omitted
    assert inspect.signature(client_module.Client.defaults, eval_str=True).parameters["s"].default is UNSET
    assert 'Defaults to "hello" when omitted.' in (client_module.Client.defaults.__doc__ or "")


def test_client_and_server_enforce_the_original_schema(imported: Any) -> None:
    """Python types cannot say `if`/`then`, `not`, `dependentSchemas` or `pattern`: the runtime
    validates the original schema on both sides, so the client's honest (wider) models are still
    safe. The client refuses before sending (with the pointer); a raw call meets the server's check."""
    from mcpgen_runtime.errors import ToolArgumentsError

    client_module, server_module = imported
    sm = server_module.models

    class Impl(server_module.Server):  # type: ignore[misc, name-defined]
        async def conditionals(self, args: Any, ctx: Any) -> Any:
            return sm.ConditionalsOutput(accepted=True)

    with client_module.Client(transport=Loopback(Impl())) as client:
        assert client.conditionals("US", postcode="12345").accepted is True
        assert client.conditionals("DE", email="not an email").accepted is True  # formats are annotations
        for kwargs, wire in (
            ({"country": "US"}, {"country": "US"}),
            ({"country": "DE", "not_zero": 0}, {"country": "DE", "not_zero": 0}),
            ({"country": "DE", "card": "4111"}, {"country": "DE", "card": "4111"}),
            ({"country": "DE", "code": "abc"}, {"country": "DE", "code": "abc"}),
            ({"country": "US", "postcode": "ABCDE"}, {"country": "US", "postcode": "ABCDE"}),
        ):
            country = kwargs.pop("country")
            with pytest.raises(ToolArgumentsError):
                client.conditionals(country, **kwargs)
            assert client.call_tool("conditionals", wire).is_error  # the server's own check


def test_async_twin_matches(imported: Any) -> None:
    client_module = imported[0]
    for name, method in inspect.getmembers(client_module.Client, inspect.isfunction):
        if name.startswith("_") or name not in vars(client_module.Client):
            continue
        twin = getattr(client_module.AsyncClient, name)
        assert inspect.iscoroutinefunction(twin)
        assert inspect.signature(twin, eval_str=True) == inspect.signature(method, eval_str=True)
    asyncio.run(asyncio.sleep(0))


def test_shapes_golden_files_exist() -> None:
    for package in ("shapes_client", "shapes_server"):
        assert (ROOT / "generated" / package / "models.py").is_file(), "run `mcpgen generate`"
    assert Path(SHAPES).is_file()
