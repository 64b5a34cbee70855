"""FORMAT without running black: generated source is already in black's layout.

`pysource` writes literals, docstrings and statements the way black (pinned, explicit Mode) would, and
hands the rare statement it cannot place to black. These tests prove it on random input, beyond the
specs and corpora that test_generate*.py and tests/hostile check file by file:

- string literals equal black's quote normalisation of `repr()`, and parse back to the same text;
- docstrings from hostile alphabets survive black unchanged;
- random method signatures, calls and model fields (long names, unions, Literals, Annotated, defaults,
  descriptions, East Asian wide characters) laid out by the engine survive black unchanged;
- the generated code does not depend on the order of keywords inside a schema.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import random
from typing import Any

import black
import pytest
from black.strings import normalize_string_quotes

from codegen.model import ir
from codegen.model.ir import FieldDef
from codegen.pipeline import build_client, build_server
from codegen.render import models_module
from codegen.render.python import black_format, layout, pysource, spelling, typenodes
from codegen.render.python.imports import Imports, type_names
from codegen.spec import ValidatedSpec, canonical_digest
from tests.codegen.pipeline.test_generate import clear_generator_caches
from tests.support import ROOT

ALPHABET = [
    *"abcxyz_ -'\"\\{}%#\n\t",
    "\u202e",
    "\u2028",
    "\x00",
    "\x1b",
    "\x85",
    "é",
    "天",
    "😀",
    "\u3000",
    '"""',
    "'''",
    "\\N{BULLET}",
    "\\x41",
    "\ud800",
]


def _text(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, size)))


def _black_stable(source: str) -> None:
    formatted = black.format_str(source, mode=black_format.BLACK_MODE)
    if formatted != source:
        import difflib

        diff = "".join(list(difflib.unified_diff(source.splitlines(True), formatted.splitlines(True)))[:80])
        raise AssertionError("black changed the layout:\n" + diff)


def test_string_literals_are_blacks() -> None:
    rng = random.Random(11)
    for _ in range(20_000):
        text = _text(rng, 12)
        literal = pysource.literal(text)
        assert literal == normalize_string_quotes(repr(text))
        assert ast.literal_eval(literal) == text


def test_numbers_are_blacks() -> None:
    for value in [0, -1, 10**30, 1.5, -0.0, 1e100, 1e-7, 5e-324, 1.7976931348623157e308, 123456789.125]:
        literal = pysource.literal(value)
        assert black.format_str(f"x = {literal}\n", mode=black_format.BLACK_MODE) == f"x = {literal}\n"
        assert ast.literal_eval(literal) == value


def test_docstrings_survive_black() -> None:
    rng = random.Random(5)
    blocks = []
    for index in range(400):
        text = _text(rng, 60) if index % 3 else "\n".join(_text(rng, 30) for _ in range(rng.randint(1, 5)))
        doc = pysource.docstring(text or "x", indent=" " * 8)
        blocks.append(f"    def f{index}(self) -> None:\n        {doc}\n")
        module_doc = pysource.docstring(text or "x", indent="")
        ast.parse(f"{module_doc}\n")
    _black_stable("class C:\n" + "\n".join(blocks))


_NAMES = ["x", "name", "a" * 40, "very_long_parameter_name_for_layout", "b" * 70]
_MODELS = [
    "Item",
    "VeryLongModelNameForLayoutPurposesOption1",
    "VeryLongModelNameForLayoutPurposesOption2",
    "Short",
    "天气Model" if False else "WideModel",
]


def _random_type(rng: random.Random, depth: int = 0) -> ir.TypeExpr:
    choice = rng.randint(0, 9 if depth < 2 else 4)
    if choice == 0:
        return ir.Prim(rng.choice(["str", "int", "bool", "Any"]))
    if choice == 1:
        return ir.Union((ir.Prim("int"), ir.Prim("float")))
    if choice == 2:
        return ir.ModelRef(rng.choice(_MODELS))
    if choice == 3:
        return ir.Lit(
            tuple(
                rng.choice(["a", "value " * rng.randint(1, 9), "天气" * 5, 1, True])
                for _ in range(rng.randint(1, 6))
            )
        )
    if choice == 4:
        return ir.AliasRef("SomeAliasName" * rng.randint(1, 4))
    if choice == 5:
        return ir.ListOf(_random_type(rng, depth + 1))
    if choice == 6:
        return ir.DictOf(_random_type(rng, depth + 1))
    if choice == 7:
        return ir.TupleOf(tuple(_random_type(rng, depth + 1) for _ in range(rng.randint(1, 3))))
    members = ir.union([ir.ModelRef(name) for name in rng.sample(_MODELS, rng.randint(2, 4))])
    if choice == 8 and isinstance(members, ir.Union):
        return ir.Annotated(members, "kind")
    return ir.union([members, _random_type(rng, depth + 1)])


def _names() -> typenodes.TypeNames:
    return typenodes.TypeNames(lambda name: pysource.code(f"_m.{pysource.ident(name)}"), lambda name: name)


@pytest.mark.parametrize("line_length", [79, 88, 120])
def test_shared_layouts_are_the_single_ones(line_length: int) -> None:
    """`def_headers` and `call_statements` (a method's blocking and asyncio forms, laid out once) give
    what `def_header` and `statement` give for each form."""
    rng = random.Random(line_length)
    names = _names()
    with black_format.formatting(black_format.Style(line_length=line_length)):
        for index in range(200):
            params: list[pysource.Node] = [pysource.code("self")]
            for position in range(rng.randint(0, 4)):
                annotation = typenodes.type_node(_random_type(rng), names, plain=True)
                params.append(pysource.annotated_name(f"{rng.choice(_NAMES)}_{position}", annotation))
            returns = typenodes.type_node(_random_type(rng), names, plain=True)
            name = pysource.ident(f"method_{index}_" + "m" * rng.randint(0, 60))
            assert layout.def_headers(name, params, returns, indent="    ") == tuple(
                layout.def_header(name, params, returns, indent="    ", is_async=is_async)
                for is_async in (False, True)
            )
            items = [
                pysource.seq(pysource.literal(_text(rng, 20)), pysource.code(": "), pysource.ident("x"))
                for _ in range(rng.randint(0, 8))
            ]
            arguments = pysource.brk(
                "(",
                [
                    pysource.literal("w" * rng.randint(1, 50)),
                    pysource.brk("{", items, "}") if items else pysource.code("{}"),
                ],
                ")",
            )
            heads = [
                pysource.code("return self._call"),
                pysource.code("_result = await self._call_structured"),
            ]
            assert layout.call_statements(heads, arguments, indent="        ") == [
                layout.statement(pysource.seq(head, arguments), indent="        ") for head in heads
            ]


def test_random_signatures_and_calls_survive_black() -> None:
    rng = random.Random(7)
    names = _names()
    methods = []
    for index in range(300):
        params: list[pysource.Node] = [pysource.code("self")]
        for position in range(rng.randint(0, 5)):
            annotation = typenodes.type_node(_random_type(rng), names, plain=rng.random() < 0.5)
            default = rng.choice([None, pysource.literal(None), pysource.literal("d" * rng.randint(0, 60))])
            if default is not None and pysource.code("*") not in params:
                params.append(pysource.code("*"))
            params.append(pysource.annotated_name(f"{rng.choice(_NAMES)}_{position}", annotation, default))
        returns = typenodes.type_node(_random_type(rng), names, plain=True)
        name = pysource.ident(f"method_{index}_" + "m" * rng.randint(0, 60))
        header = layout.def_header(name, params, returns, indent="    ", is_async=rng.random() < 0.5)
        items = [
            pysource.seq(pysource.literal(_text(rng, 20)), pysource.code(": "), pysource.ident("x"))
            for _ in range(rng.randint(0, 8))
        ]
        call = pysource.call(
            pysource.code("return self._call"),
            [
                pysource.literal("w" * rng.randint(1, 50)),
                pysource.brk("{", items, "}") if items else pysource.code("{}"),
                pysource.code("_m.Input" + "I" * rng.randint(0, 40)),
            ],
        )
        body = layout.statement(call, indent="        ")
        methods.append(f"{header}\n        {pysource.docstring('doc', indent='        ')}\n{body}\n")
    source = "class C:\n" + "\n".join(methods)
    lines = source.splitlines()
    assert sum(line.endswith(": (") for line in lines) > 20  # parenthesized long annotations
    assert sum(line.endswith("return self._call(") for line in lines) > 20  # exploded calls
    assert sum(line.startswith("    ) -> (") for line in lines) > 5  # long return annotations
    _black_stable(source)


@pytest.mark.parametrize("seed", [3, 123])  # 123 once caught a union annotation black parenthesizes
def test_random_model_fields_survive_black(seed: int) -> None:
    rng = random.Random(seed)
    imports = Imports(future=True)
    names = type_names(imports, prefix=None)
    lines = []
    for index in range(600):
        type_ = _random_type(rng)
        required = rng.random() < 0.3
        default: Any = rng.choice(
            [None, "text " * rng.randint(0, 30), 3, [1, 2] * rng.randint(0, 20), {"k": "v"}]
        )
        field = FieldDef(
            name=rng.choice(_NAMES) + f"_{index}",
            wire_name=rng.choice(["same", _text(rng, 30)]),
            type=type_ if required else ir.union([type_, ir.NONE]),
            required=required,
            has_default=not required and default is not None,
            default=default,
            description=rng.choice([None, _text(rng, 200)]),
            constraints=rng.choice([(), (("ge", 0),), (("min_length", 1), ("max_length", 10))]),
        )
        if field.wire_name == "same":
            field = dataclasses.replace(field, wire_name=field.name)
        lines.append(models_module._field_statement(field, names))
    source = "class C(BaseModel):\n" + "\n".join(lines) + "\n"
    assert sum(line.endswith(("= Field(", ": (", "= (")) for line in source.splitlines()) > 50  # long ones
    _black_stable(source)


def _reorder_keywords(value: Any, parent: str | None = None) -> Any:
    """Every schema object with its keywords in reverse order; maps keyed by names keep their order."""
    if isinstance(value, list):
        return [_reorder_keywords(item) for item in value]
    if not isinstance(value, dict):
        return value
    keep = parent in (
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
        "dependentRequired",
    )
    items = list(value.items()) if keep else list(reversed(value.items()))
    return {key: _reorder_keywords(item, key) for key, item in items}


def test_code_does_not_depend_on_keyword_order() -> None:
    tools = json.loads((ROOT / "specs" / "shapes.json").read_text("utf-8"))["tools"]
    reordered = _reorder_keywords(tools)
    assert json.dumps(reordered) != json.dumps(tools)
    out = []
    for variant in (tools, reordered):
        clear_generator_caches()
        spec = ValidatedSpec(source="shapes.json", tools=variant, digest=canonical_digest(variant))
        client, server = build_client(spec, package="p_client"), build_server(spec, package="p_server")
        out.append(
            {name: data for name, data in {**client.files, **server.files}.items() if name.endswith(".py")}
        )
    assert out[0] == out[1]


@pytest.mark.parametrize("count", [0, 1, 2])
def test_small_specs(count: int) -> None:
    """No tools, one tool (a one-element bindings tuple keeps its comma), two tools."""
    tools = [
        {"name": f"t{i}", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}
        for i in range(count)
    ]
    spec = ValidatedSpec(source="small.json", tools=tools, digest=canonical_digest(tools))
    for package in (build_client(spec, package="s_client"), build_server(spec, package="s_server")):
        for name, data in {**package.files, **package.user_files}.items():
            if name.endswith(".py"):
                _black_stable(data.decode("utf-8"))


def test_ported_docstring_indentation_is_blacks() -> None:
    """pysource keeps a copy of black's PEP 257 helper (so black is imported only when needed)."""
    from black.strings import fix_multiline_docstring

    rng = random.Random(9)
    pieces = [" ", "  ", "\t", "x", "y z", "\u3000", "\xa0", "\r\n", "\n", "\r", "  \t "]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        for prefix in ("", "    ", "        "):
            assert spelling.fix_multiline_docstring(text, prefix) == fix_multiline_docstring(text, prefix)


def test_ported_quote_preference_is_blacks() -> None:
    """pysource keeps a copy of black's quote normalisation for repr() in single quotes."""
    rng = random.Random(13)
    pieces = ["a", " ", "'", '"', "\\", "\\'", '\\"', "é", "\n"]
    for _ in range(20_000):
        text = repr("".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))))
        if text[0] == "'":
            assert spelling.prefer_double_quotes(text) == normalize_string_quotes(text)


def test_width_needs_black_only_for_maybe_wide_text() -> None:
    """layout.width counts one column per character unless the text has a character black's
    width table might list: every range of the table must be inside `_MAYBE_WIDE`."""
    from black._width_table import WIDTH_TABLE
    from black.strings import str_width

    for start, end, _width in WIDTH_TABLE:
        assert all(layout._MAYBE_WIDE.match(chr(c)) for c in range(start, end + 1))
    for text in ["abc", "é—€→\u10ff", "天", "a\u1100b", "😀x", "\u3000", "\u115f\u1160"]:
        assert layout.width(text) == str_width(text)


@pytest.mark.parametrize("line_length", [79, 88, 100])
def test_long_class_lines_are_blacks(line_length: int) -> None:
    """`class Name(Base):` too long for its line: the base on a line of its own when it fits there
    (written without black), black's own layout otherwise; every width around the limit."""
    style = black_format.Style(line_length=line_length)
    mode = black_format.black_mode(style)
    with black_format.formatting(style):
        for size in range(line_length - 30, line_length + 60, 3):
            name = pysource.ident("M" + "x" * size)
            for base in (
                pysource.ident("BaseModel"),
                pysource.seq(
                    pysource.ident("RootModel"),
                    pysource.brk("[", [pysource.code("A" * (size // 2) + " | None")], "]", magic=False),
                ),
            ):
                for indent in ("", "    "):
                    outer = "class Outer:\n" if indent else ""
                    header = layout.class_header(name, [base], indent=indent)
                    one_line = f"{outer}{indent}class {name}({pysource.flat(base)}):\n{indent}    pass\n"
                    source = f"{outer}{header}\n{indent}    pass\n"
                    assert black.format_str(one_line, mode=mode) == source, source
