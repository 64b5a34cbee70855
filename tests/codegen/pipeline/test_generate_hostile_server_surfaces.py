"""The server side of test_generate_hostile_surfaces.py: the same hostile resources, templates and prompts
through `build_server` (issue 22).

base.py and the handlers.py scaffold parse; the only calls are the planned binding constructors and
loaders; spec text appears only as escaped docstrings and as string literals that are the validated
wire strings themselves (names, URI templates); the definitions reach the wire from surfaces.json
unchanged; and the package serves: hostile template values expanded by RFC 6570 arrive at the
handler exactly, hostile prompt argument names map to their safe parameters.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from codegen.pipeline import build_server
from codegen.spec import GeneratedPackage
from mcpgen_runtime.server.core.resources.uri_match import UriPattern
from mcpgen_runtime.uri_template import expand
from tests.codegen.pipeline.test_generate_hostile_surfaces import (
    EVIL,
    EVIL_TEMPLATE,
    PROMPTS,
    RESOURCES,
    TEMPLATES,
    hostile_spec,
)
from tests.runtime.server_helpers import request

PACKAGE = "hostile_server_surfaces"
ALLOWED_CALLS = {
    "ImportError",
    "load_package_tools",
    "load_package_surfaces",
    "ToolBinding",
    "ResourceTemplateBinding",
    "PromptBinding",
    "CompletionBinding",
}


@pytest.fixture(scope="module")
def package() -> GeneratedPackage:
    return build_server(hostile_spec(), package=PACKAGE)


@pytest.fixture(scope="module")
def base(package: GeneratedPackage, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp(PACKAGE)
    for name, data in {**package.files, **package.user_files}.items():
        path = root / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(f"{PACKAGE}.base")
    finally:
        sys.path.remove(str(root))
        for name in list(sys.modules):
            if name.startswith(PACKAGE):
                del sys.modules[name]


def _docstring_ids(tree: ast.Module) -> set[int]:
    return {
        id(node.body[0].value)  # type: ignore[attr-defined]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.AsyncFunctionDef, ast.FunctionDef))
        and ast.get_docstring(node) is not None
    }


@pytest.mark.parametrize("path", ["base.py", "handlers.py"])
def test_only_planned_calls_and_spec_text_only_as_data(package: GeneratedPackage, path: str) -> None:
    files = {**package.files, **package.user_files}
    source = files[path].decode("utf-8")
    assert "\u202e" not in source and "\x00" not in source and "\r" not in source
    tree = ast.parse(source)
    wire = {str(t["uriTemplate"]) for t in TEMPLATES} | {str(p["name"]) for p in PROMPTS}
    wire |= {str(a["name"]) for p in PROMPTS for a in p.get("arguments", [])}
    wire |= {v for t in TEMPLATES for v in UriPattern(str(t["uriTemplate"])).variables}
    docstrings = _docstring_ids(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            assert name in ALLOWED_CALLS, ast.unparse(node)[:100]
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    for node in ast.walk(cls):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            # In the class a literal is a wire string (validated, repr'd), a Python name, or a ref kind.
            assert node.value in wire or node.value.isidentifier(), node.value[:80]
    assert "os" not in {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "system" not in {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def test_the_definitions_are_served_unchanged_and_values_arrive_exactly(base: ModuleType) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    bindings = {b.uri_template: b for b in base.ServerBase._resource_template_bindings_}
    evil = bindings[EVIL_TEMPLATE]
    prompt_bindings = {b.name: b for b in base.ServerBase._prompt_bindings_}
    klass = prompt_bindings["class"]

    async def read_evil(self: Any, ctx: Any, **values: Any) -> str:
        seen.append(("read", values))
        return "ok"

    async def get_class(self: Any, ctx: Any, **values: Any) -> str:
        seen.append(("prompt", values))
        return "ok"

    methods = {evil.method: read_evil, klass.method: get_class}
    # Values with "/" and "../" arrive exactly only where handlers.py opts out (issue 31, item 8).
    server_cls = type(
        "Server", (base.ServerBase,), {**methods, "_raw_template_values_": frozenset({EVIL_TEMPLATE})}
    )
    server = server_cls()
    guarded = type("Guarded", (base.ServerBase,), methods)()

    def ask(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        response = asyncio.run(server.handle_message(request(1, method, params)))
        assert response.response is not None
        return response.response

    assert ask("resources/list")["result"]["resources"] == RESOURCES
    assert ask("resources/templates/list")["result"]["resourceTemplates"] == TEMPLATES
    listed: list[dict[str, Any]] = []
    params: dict[str, Any] = {}
    while True:
        page = ask("prompts/list", params)["result"]
        listed += page["prompts"]
        if "nextCursor" not in page:
            break
        params = {"cursor": page["nextCursor"]}
    assert listed == PROMPTS

    values = {"class": '../"""; x', "self": "#?&/ é", "_m": "a b/c,d", "%C3%BC": "ü?#", "UNSET": "1,2"}
    uri = expand(EVIL_TEMPLATE, values)
    read = ask("resources/read", {"uri": uri})
    assert read["result"]["contents"] == [{"uri": uri, "text": "ok"}], read
    refused = asyncio.run(guarded.handle_message(request(1, "resources/read", {"uri": uri}))).response
    assert refused is not None and refused["error"]["code"] == -32602 and len(seen) == 1, refused
    by_wire = dict(evil.params)
    assert seen[-1] == ("read", {by_wire[wire]: value for wire, value in values.items()})

    arguments = {"self": EVIL, "import": "x", EVIL: "y"}
    got = ask("prompts/get", {"name": "class", "arguments": arguments})
    assert got["result"]["messages"][0]["content"]["text"] == "ok", got
    by_wire = dict(klass.params)
    assert seen[-1] == ("prompt", {by_wire[wire]: value for wire, value in arguments.items()})
    assert all(name.isidentifier() for name in by_wire.values())
