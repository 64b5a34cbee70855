"""Generating from hostile tool lists: untrusted text stays inert, names stay safe, cost stays bounded.

corpus/*.json are tool lists a malicious or broken server could send (written with ensure_ascii, so
every control, bidi and separator character is visible as an escape in review):

    text.json        every place text can appear (title, description, default, enum, const,
                     examples) carrying triple quotes, backslashes, CR/LF/NEL, U+2028/9, bidi
                     controls, NUL/ESC, template syntax, `\\N{...}`, code and comment injection,
                     lone surrogates, huge strings
    names.json       tool, property, $defs and $anchor names built to break out of identifiers
    collisions.json  names that are keywords, soft keywords, builtins, runtime members, generated
                     module names, pydantic members; that differ only by case or separator; empty
    structure.json   deep nesting, a 3,000-value enum, 800 properties, 100 kB strings,
                     mutual recursion, keys that need pointer escaping, extreme numbers

Every injection attempt carries the marker PWNED (upper case: rebuilt identifiers are lower case
or Capitalised, so it can only survive inside string literals). Each generated module must:
tokenize with PWNED only inside STRING or COMMENT tokens; call, import and define nothing beyond
the plan; be black-stable; import without side effects.
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import re
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import black
import pytest

from codegen.errors import UnsupportedSchemaError
from codegen.model import build, schemadoc
from codegen.pipeline import build_client, build_server
from codegen.render.python import black_format
from codegen.spec import GeneratedPackage, ValidatedSpec, canonical_digest
from tests.codegen.pipeline.test_generate import (
    build_every_model,
    clear_generator_caches,
    load_spec,
    write_package,
)
from tests.codegen.pipeline.test_generate_hostile import _ALLOWED_CALLS, _FACADE_CALLS

CORPUS = Path(__file__).parent / "corpus"
CORPUS_FILES = sorted(path.stem for path in CORPUS.glob("*.json"))
MARKER = "PWNED"

# collections.abc, operator: the task namespaces' annotations and `finish` (_tasks.py)
_ALLOWED_IMPORTS = {
    "__future__",
    "typing",
    "pydantic",
    "models",
    "base",
    "handlers",
    "client",
    "collections.abc",
    "operator",
}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _spec(name: str) -> ValidatedSpec:
    return load_spec(CORPUS / f"{name}.json")


@pytest.fixture(scope="module")
def built() -> dict[str, tuple[GeneratedPackage, GeneratedPackage]]:
    return {
        name: (
            build_client(_spec(name), package=f"hostile_{name}_client"),
            build_server(_spec(name), package=f"hostile_{name}_server"),
        )
        for name in CORPUS_FILES
    }


def _sources(built: dict[str, tuple[GeneratedPackage, GeneratedPackage]]) -> Iterator[tuple[str, str]]:
    for client, server in built.values():
        for package in (client, server):
            for name, data in {**package.files, **package.user_files}.items():
                if name.endswith(".py"):
                    yield f"{package.package}/{name}", data.decode("utf-8")


@pytest.fixture(scope="module")
def imported(
    built: dict[str, tuple[GeneratedPackage, GeneratedPackage]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, ModuleType]]:
    root = tmp_path_factory.mktemp("hostile_corpus")
    for client, server in built.values():
        write_package(root, client)
        write_package(root, server)
    sys.path.insert(0, str(root))
    try:
        yield {
            package.package: importlib.import_module(package.package)
            for pair in built.values()
            for package in pair
        }
    finally:
        sys.path.remove(str(root))
        for module in list(sys.modules):
            if module.startswith("hostile_"):
                del sys.modules[module]


def test_corpus_is_complete() -> None:
    assert CORPUS_FILES == ["collisions", "names", "structure", "text"]
    text = (CORPUS / "text.json").read_text("utf-8")
    assert text.isascii()  # every hostile character is an escape in the file itself
    for escape in ("\\u202e", "\\u2028", "\\u0000", "\\u001b", "\\ud800", '\\"\\"\\"', "{{", "{%"):
        assert escape in text


def test_marker_only_inside_strings_and_comments(
    built: dict[str, tuple[GeneratedPackage, GeneratedPackage]],
) -> None:
    checked = 0
    for path, source in _sources(built):
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if MARKER in token.string:
                assert token.type in (tokenize.STRING, tokenize.COMMENT), (path, token)
                checked += 1
    assert checked > 1000  # the payloads did reach the output, as data


def test_no_code_beyond_the_plan(built: dict[str, tuple[GeneratedPackage, GeneratedPackage]]) -> None:
    for path, source in _sources(built):
        module = ast.parse(source)
        facade = path.endswith("/models.py")  # the lazy index: __getattr__/__dir__ over a table of literals
        allowed_calls = _ALLOWED_CALLS | (_FACADE_CALLS if facade else set())
        for node in ast.walk(module):
            if isinstance(node, ast.Call):
                func = node.func
                name = (
                    func.id
                    if isinstance(func, ast.Name)
                    else func.attr
                    if isinstance(func, ast.Attribute)
                    else None
                )
                assert name in allowed_calls, (path, ast.unparse(node)[:120])
            elif isinstance(node, ast.ImportFrom):
                assert (
                    node.module in _ALLOWED_IMPORTS
                    or (facade and node.module == "importlib")
                    or (node.module or "").startswith("mcpgen_runtime")
                    or (
                        node.level == 1
                        and node.module in (None, "models", "base", "handlers", "client", "_tasks")
                    )
                    or (node.level == 1 and re.fullmatch(r"(_models\.)?t\d{4,}", node.module or ""))
                ), (path, node.module)
            elif isinstance(node, ast.Import):
                raise AssertionError(f"{path}: plain import {ast.unparse(node)}")
            elif isinstance(node, (ast.Lambda, ast.Exec if hasattr(ast, "Exec") else ast.Lambda)):
                raise AssertionError(f"{path}: lambda")
            elif isinstance(node, ast.JoinedStr):  # the fixed runtime-version and unknown-name messages
                assert path.endswith(("client.py", "base.py")) or facade, path
            elif isinstance(node, ast.Name | ast.arg | ast.Attribute | ast.FunctionDef | ast.ClassDef):
                name = (
                    getattr(node, "id", None)
                    or getattr(node, "arg", None)
                    or getattr(node, "attr", None)
                    or node.name
                )
                assert _IDENTIFIER.match(name) and len(name) <= 110, (path, name)
                banned = {"eval", "exec", "compile", "__import__", "open"} | (
                    set() if facade else {"getattr", "globals"}
                )
                assert name not in banned, (
                    path,
                    name,
                )
        top = {type(node).__name__ for node in module.body}
        assert top <= {"ImportFrom", "ClassDef", "Assign", "If", "Expr"} | (
            {"FunctionDef"} if path.endswith("client/__main__.py") else set()
        ) | ({"AnnAssign"} if facade else set()), (path, top)
        assert [n.name for n in module.body if isinstance(n, ast.FunctionDef)] in ([], ["main"]), path


def test_modules_import_without_side_effects(
    imported: dict[str, ModuleType], capfd: pytest.CaptureFixture[str]
) -> None:
    assert len(imported) == 2 * len(CORPUS_FILES)
    for package in imported.values():
        assert build_every_model(importlib.import_module(package.__name__ + ".models")) > 0
    out, err = capfd.readouterr()
    assert MARKER not in out and MARKER not in err


def test_black_leaves_every_file_alone(built: dict[str, tuple[GeneratedPackage, GeneratedPackage]]) -> None:
    seen: set[str] = set()
    for path, source in _sources(built):
        if source not in seen and not path.endswith("handlers.py"):  # handlers.py: base.py's methods again
            seen.add(source)
            assert black.format_str(source, mode=black_format.BLACK_MODE) == source, path


def test_docstrings_and_comments_are_clean(
    built: dict[str, tuple[GeneratedPackage, GeneratedPackage]],
) -> None:
    forbidden = re.compile(
        "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"
    )
    for path, source in _sources(built):
        assert not forbidden.search(source), path  # raw, not escaped: none anywhere in the file
        assert source.isprintable() or all(ch.isprintable() or ch in "\n" for ch in source), path
        module = ast.parse(source)
        for node in ast.walk(module):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
                doc = ast.get_docstring(node, clean=False)
                if doc is not None:
                    assert not forbidden.search(doc.replace("\t", " ")), (path, doc[:80])


def test_data_survives_exactly(imported: dict[str, ModuleType]) -> None:
    tools = json.loads((CORPUS / "text.json").read_text("utf-8"))["tools"]
    models = imported["hostile_text_client"].models
    for index, tool in enumerate(tools):
        schema = tool["inputSchema"]["properties"]
        stem = "Text" + str(index)
        model = getattr(models, f"{stem}Input")
        expected = schema["value"]["description"]
        if len(expected) <= build.MAX_DESCRIPTION:
            assert model.model_fields["value"].description == expected
        assert model.model_fields["value"].default == schema["value"]["default"]
        fixed = model.model_fields["fixed"].annotation
        const = schema["fixed"]["const"]
        if re.search("[\ud800-\udfff]", const):
            assert fixed is str  # pydantic cannot hold a lone surrogate in a Literal: the honest type
        else:
            assert fixed.__args__ == (const,)  # Literal[<the exact text>]


def test_wire_names_sent_unchanged(imported: dict[str, ModuleType]) -> None:
    tools = json.loads((CORPUS / "names.json").read_text("utf-8"))["tools"]
    client_module = imported["hostile_names_client"]
    sent: list[tuple[str, dict[str, Any]]] = []
    client = object.__new__(client_module.Client)
    client._call = lambda name, arguments, model: sent.append((name, arguments))
    client._call_structured = lambda name, arguments, model, output: sent.append((name, arguments))
    wire_to_method = {b.name: b.method for b in imported["hostile_names_server"].ServerBase._tool_bindings_}
    for tool in tools:
        method = getattr(client, wire_to_method[tool["name"]])
        import inspect

        params = list(inspect.signature(method).parameters.values())  # bound: no self
        required = [p for p in params if p.default is inspect.Parameter.empty]
        if len(required) == 1:  # one required parameter is positional; more are keyword-only
            method("v")
        else:
            method(**{p.name: "v" for p in required})
        name, arguments = sent[-1]
        assert name == tool["name"]
        # every wire name, unchanged (a name with a lone surrogate cannot be a pydantic alias: it
        # stays an extra key, allowed by the model, and is not a parameter)
        usable = {key for key in tool["inputSchema"]["properties"] if not re.search("[\ud800-\udfff]", key)}
        assert set(arguments) == usable and len(usable) == len(tool["inputSchema"]["properties"]) - 1


def test_tools_json_is_ascii_data(built: dict[str, tuple[GeneratedPackage, GeneratedPackage]]) -> None:
    for name, (client, server) in built.items():
        data, served = client.files["tools.json"], server.files["tools.json"]
        assert data.isascii() and served.isascii()
        # a lone surrogate cannot travel as UTF-8: tools.json has U+FFFD instead, nothing else changes
        expected = _without_surrogates(_spec(name).tools)
        assert json.loads(data)["tools"] == json.loads(served)["tools"] == expected
        assert set(json.loads(data)["pins"]) == {tool["name"] for tool in expected}  # a client's pins


def test_rebuild_is_byte_identical(built: dict[str, tuple[GeneratedPackage, GeneratedPackage]]) -> None:
    clear_generator_caches()
    for name in ("names", "text"):
        assert build_client(_spec(name), package=f"hostile_{name}_client").files == built[name][0].files


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------------- bounded cost


def _tool(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "t", "inputSchema": schema}]


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_depth_is_bounded_without_recursion_errors() -> None:
    """The validator refuses deep schemas first (SCHEMA-11); the generator has its own bound."""
    build.build_models(_tool(_nested(build.MAX_DEPTH // 2)))
    with pytest.raises(UnsupportedSchemaError, match="deeper than"):
        build.build_models(_tool(_nested(build.MAX_DEPTH * 3)))
    chain: dict[str, Any] = {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": {}}
    for i in range(300):  # a $ref chain: each hop is a level too
        chain["$defs"][f"d{i}"] = {"$ref": f"#/$defs/d{i + 1}"}
    chain["$defs"]["d300"] = {"type": "string"}
    with pytest.raises(UnsupportedSchemaError, match="deeper than"):
        build.build_models(_tool(chain))


def test_work_and_time_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    wide = {
        "type": "object",
        "properties": {
            f"p{i}": {"type": "object", "properties": {"q": {"type": "string"}}} for i in range(300)
        },
    }
    monkeypatch.setattr(schemadoc, "MAX_VISITS", 100)
    with pytest.raises(UnsupportedSchemaError, match="subschema visits"):
        build.build_models(_tool(wide))
    monkeypatch.setattr(schemadoc, "MAX_VISITS", 10**6)
    monkeypatch.setattr(schemadoc, "MAX_SECONDS", -1.0)
    with pytest.raises(UnsupportedSchemaError, match="longer than"):
        build.build_models(_tool(wide | {"properties": {f"p{i}": {"type": "string"} for i in range(3000)}}))


def test_unvalidated_oddities_do_not_crash() -> None:
    """Things validation normally stops still fail cleanly (or generate), never with a traceback."""
    odd: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"a": {"type": "nonsense"}, "b": {"enum": "not a list"}, "c": {"items": 5}},
        },
        {"type": "object", "required": ["only", 5], "properties": {"x": {"allOf": [False, True, {}]}}},
        {"type": "object", "properties": {"x": {"oneOf": []}, "y": {"anyOf": [True]}, "z": False}},
        {
            "type": "object",
            "properties": {
                "x": {
                    "discriminator": {"propertyName": "nope"},
                    "oneOf": [{"type": "object"}, {"type": "string"}],
                }
            },
        },
    ]
    for schema in odd:
        tools = _tool(schema)
        spec = ValidatedSpec(source="odd.json", tools=tools, digest=canonical_digest(tools))
        package = build_client(spec, package="odd_client")
        assert b"class Client" in package.files["client.py"]
