"""pysource: the only place data becomes source; and the template environment that enforces it."""

from __future__ import annotations

import ast
import inspect
import math
import random
import re
from pathlib import Path

import jinja2
import pytest

from codegen.errors import InternalGeneratorError
from codegen.render import templates
from codegen.render.python import pysource, spelling
from codegen.render.python.imports import Imports, natural

HOSTILE_TEXTS = [
    'ends with a quote"',
    'ends with two quotes""',
    'ends with three quotes"""',
    'ends with four quotes""""',
    '"starts with a quote',
    '"""starts with three',
    "ends with a backslash\\",
    "ends with two backslashes\\\\",
    "'''single triple quotes'''",
    'mixed """ and \'\'\' and \\""" and \\\\"""',
    "\\N{BULLET} \\x00 \\u202e \\",
    "{{ jinja }} {% if x %} {# c #}",
    "CR\rLF\r\nNUL\x00BEL\x07 ESC\x1b[31m FF\x0c VT\x0b NEL\x85",
    "bidi \u202aa\u202bb\u202cc\u202dd\u202ee\u2066f\u2067g\u2068h\u2069i\u200ej\u200fk",
    "separators \u2028 line \u2029 para",
    "lone surrogate \ud800 here",
    "tabs\tand  spaces   \n    indented line\n\n\n\ttab line",
    "",
    "x" * 20_000,
]


def _docstring_value(source: str) -> str:
    module = ast.parse(f"def f():\n    {source}\n    pass\n")
    function = module.body[0]
    assert isinstance(function, ast.FunctionDef)
    value = ast.get_docstring(function, clean=False)
    assert value is not None
    return value


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_docstring_round_trips_the_cleaned_text(text: str) -> None:
    doc = pysource.docstring(text, indent="    ")
    assert isinstance(doc, pysource.PyDocstring)
    value = _docstring_value(doc)
    cleaned = spelling.clean_text(text)
    assert inspect.cleandoc(value).strip() == inspect.cleandoc(cleaned).strip()
    for char in value:
        assert char in "\n\t" or (char.isprintable() and char not in "\u2028\u2029")


def test_clean_text_drops_controls_and_caps_length() -> None:
    assert spelling.clean_text("a\r\nb\rc\x00d\u202ee\u2028f") == "a\nb\ncdef"
    assert spelling.clean_text("  \n\n x  \n\n") == " x"
    assert spelling.clean_text("y" * 20_000).endswith(" [...]")
    assert len(spelling.clean_text("y" * 20_000)) <= spelling.MAX_DOCSTRING_CHARS + 6


@pytest.mark.parametrize("text", ["line\nbreak", "cr\rhere", "x\u2028y", "ok # \u202e", "a" * 1000])
def test_comment_is_one_safe_line(text: str) -> None:
    comment = pysource.comment(text)
    assert "\n" not in comment and "\r" not in comment and "\u2028" not in comment and "\u202e" not in comment
    assert len(comment) <= pysource.MAX_COMMENT_CHARS + 6
    tree = ast.parse(f"# {comment}\nx = 1\n")
    assert len(tree.body) == 1


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -1,
        2**63,
        1.5,
        -0.0,
        1e300,
        "",
        "'",
        '"',
        '"""',
        "\\",
        "\n\r\x00\u202e",
        "{{x}}",
        [],
        {},
        [1, "a", None, [True]],
        {"a": {"b": [1.25, "c'\""]}},
        {"": ""},
    ],
)
def test_literal_round_trips(value: object) -> None:
    source = pysource.literal(value)
    assert isinstance(source, pysource.PyLiteral)
    assert ast.literal_eval(source) == value


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, {1: "x"}, (1, 2), {1, 2}, b"x", object()])
def test_literal_rejects_non_json(value: object) -> None:
    with pytest.raises(InternalGeneratorError):
        pysource.literal(value)


def test_literal_caps_depth_and_size() -> None:
    deep: list[object] = []
    node = deep
    for _ in range(spelling.MAX_LITERAL_DEPTH + 2):
        child: list[object] = []
        node.append(child)
        node = child
    with pytest.raises(InternalGeneratorError, match="deeper"):
        pysource.literal(deep)
    with pytest.raises(InternalGeneratorError, match="too large"):
        pysource.literal(list(range(spelling.MAX_LITERAL_ITEMS + 1)))


@pytest.mark.parametrize("name", ["class", "1a", "a-b", "", "a b", "é", "None", "x.y"])
def test_ident_rejects(name: str) -> None:
    with pytest.raises(InternalGeneratorError):
        pysource.ident(name)


def test_markers_cannot_be_forged() -> None:
    with pytest.raises(TypeError):
        pysource.PyIdent("os.system")
    with pytest.raises(TypeError):
        pysource.PySource("x")


def test_nodes_hold_only_markers() -> None:
    """Nodes may be made anywhere, but only from markers: their one-line text is always checked."""
    with pytest.raises(InternalGeneratorError):
        pysource.Brk("__import__('os').system(", (), ")", True)  # type: ignore[arg-type]
    with pytest.raises(InternalGeneratorError):
        pysource.Param("os.system('x') or x: ", pysource.code("int"), None)  # type: ignore[arg-type]
    with pytest.raises(InternalGeneratorError):
        pysource.Seq(("import os",))  # type: ignore[arg-type]
    with pytest.raises(InternalGeneratorError):
        pysource.union_of([pysource.code("int"), "str; import os"])  # type: ignore[list-item]


def test_laid_out_allows_only_line_breaks_commas_and_parentheses() -> None:
    node = pysource.call(pysource.code("f"), [pysource.literal("a b"), pysource.ident("x")])
    assert pysource.laid_out(node, '    f("a b", x)', indent="    ") == '    f("a b", x)'
    split = '    f(\n        "a b",\n        x,\n    )'
    assert pysource.laid_out(node, split, indent="    ") == split
    for forged in [
        '    f("a b", x); import os',
        '    f("a b", y)',
        '    f(\n        "a b",\n        x.y,\n    )',
    ]:
        with pytest.raises(InternalGeneratorError, match="layout changed"):
            pysource.laid_out(node, forged, indent="    ")
    with pytest.raises(InternalGeneratorError, match="indent"):
        pysource.laid_out(node, 'import os\nf("a b", x)', indent="import os\n")
    wide = pysource.call(pysource.code("f"), [pysource.literal("é ü"), pysource.ident("x")])  # not ASCII
    assert pysource.laid_out(wide, 'f(\n    "é ü",\n    x,\n)', indent="") == 'f(\n    "é ü",\n    x,\n)'
    for forged in ['f("é ü", x) or 1', 'f("e ü", x)', 'f("é ü", x)\nimport os']:
        with pytest.raises(InternalGeneratorError, match="layout changed"):
            pysource.laid_out(wide, forged, indent="")


def test_only_pysource_mints_markers() -> None:
    """No other generator module can reach the token that creates a marker."""
    for path in sorted(Path(pysource.__file__).parent.parent.rglob("*.py")):
        if path.name == "pysource.py":
            continue
        tree = ast.parse(path.read_text("utf-8"))
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        names |= {
            alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names
        }
        assert "_TOKEN" not in names, path.name


def test_environment_rejects_plain_strings() -> None:
    env = templates.environment()
    template = env.from_string("x = {{ value }}\n")
    assert template.render(value=pysource.literal("ok")) == 'x = "ok"\n'  # black's quotes
    for value in ["'); import os #", 42, None, ["a"]]:
        with pytest.raises(InternalGeneratorError):
            template.render(value=value)
    with pytest.raises(jinja2.UndefinedError):
        template.render()
    assert not env.filters  # no |safe, |e, |join ... to launder a str


def test_environment_rejects_plain_strings_inside_macros() -> None:
    env = templates.environment()
    template = env.from_string("{% macro m(v) %}<{{ v }}>{% endmacro %}{{ m(value) }}")
    assert template.render(value=pysource.ident("ok")) == "<ok>"
    with pytest.raises(InternalGeneratorError):
        template.render(value="plain")


def test_import_block_is_isort_ordered() -> None:
    imports = Imports(future=True)
    imports.add("pydantic", "BaseModel")
    imports.add("typing", "Literal")
    imports.add("typing", "Any")
    imports.add("datetime", "date", "date_aliased")
    imports.add("datetime", "datetime")
    imports.add("decimal")
    imports.add("mcpgen_runtime.client", "Client", "_ClientBase")
    imports.add(".", "models", "_m")
    imports.add("pydantic", "UUID4")
    assert imports.block() == (
        "from __future__ import annotations\n\n"
        "import decimal\n"
        "from datetime import date as date_aliased\n"
        "from datetime import datetime\n"
        "from typing import Any, Literal\n\n"
        "from mcpgen_runtime.client import Client as _ClientBase\n"
        "from pydantic import UUID4, BaseModel\n\n"
        "from . import models as _m"
    )
    with pytest.raises(InternalGeneratorError):
        imports.add("other", "thing", "_m")


def _natord_tuple(text: str) -> tuple[tuple[int, int, int, str], ...]:
    """ruff's natural order as tuples (what `natural` encodes as one string)."""
    key = []
    for part in re.split(r"(\d+)", text):
        if not part:
            continue
        if part.isdigit():
            key.append((0, 0, 0, part) if part[0] == "0" else (0, 1, len(part), part))
        else:
            key.append((1, 0, 0, part))
    return tuple(key)


def test_natural_order_strings_sort_as_ruffs_tuples() -> None:
    rng = random.Random(5)
    pieces = ["a", "B", "_", ".", "0", "00", "007", "1", "2", "9", "10", "12", "\u00b2", "\u0663", "z", "Z"]
    names = {"".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(3000)}
    assert sorted(names, key=natural) == sorted(names, key=_natord_tuple)
    with pytest.raises(InternalGeneratorError):
        natural("nul\x00")
