"""Untrusted text never becomes code: a tool list written to break the generator.

Names, descriptions, titles, property names, enum values, defaults, `$defs` keys and the source
name are hostile. The output must parse, import, define exactly the planned names, carry every
description only as an escaped docstring / repr'd string, and still send wire names unchanged.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codegen.pipeline import build_client, build_server
from codegen.render.python import spelling
from codegen.spec import GeneratedPackage, ValidatedSpec, canonical_digest
from mcpgen_runtime.types import UNSET

EVIL = (
    'x"""; import os; os.system("echo pwned") #\\ \n\r\x00 \u202e\u2028 {{ 1 }} {% if x %} '
    "\\N{BULLET} ''' end\\"
)
EVIL_SOURCE = "specs/evil.json\nimport os  # \u202e\x1b[31m"

HOSTILE_TOOLS: list[dict[str, Any]] = [
    {
        "name": "get-user",
        "title": 'Title """ with quotes',
        "description": EVIL,
        "inputSchema": {
            "type": "object",
            "title": "class Evil: pass",
            "properties": {
                "title": {"type": "string", "title": "Evil2", "description": EVIL},
                "$ref": {"type": "string"},
                "self": {"type": "integer", "default": 3},
                "_m": {"type": "string"},
                "über": {"type": "string", "enum": ["a'b", 'c"d', 'e"""f', EVIL], "default": "a'b"},
                "getUser": {"type": "boolean", "default": True},
                "get_user": {"type": "number", "default": 1.5},
                "tags": {"type": "array", "items": {"type": "string"}, "default": ["x"]},
                "when": {"type": "string", "format": "date"},
                "date": {"type": "string", "format": "date-time"},
                "node": {"$ref": "#/$defs/node"},
                "anchored": {"$ref": "#nodeAnchor"},
                "again": {"$ref": "#"},
            },
            "required": ["self", "title"],
            "$defs": {
                "node": {
                    "$anchor": "nodeAnchor",
                    "title": "__import__('os')",
                    "type": "object",
                    "properties": {
                        "next": {"$ref": "#/$defs/node"},
                        "v": {"type": "string", "description": EVIL},
                    },
                }
            },
        },
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    },
    {"name": "get_user", "description": '"""', "inputSchema": {"type": "object"}},
    {
        "name": "getUser",
        "description": "\\",
        "inputSchema": {"type": "object", "additionalProperties": {"type": "string"}},
        "outputSchema": {"type": "array", "items": {"type": "string"}},
    },
    *(
        {"name": name, "inputSchema": {"type": "object"}}
        for name in (
            "close",
            "call_tool",
            "self",
            "class",
            "match",
            "1st.tool",
            "date",
            "list",
            "models",
            "_meta",
            "model_config",
        )
    ),
    {
        "name": "ns.tool-v2",
        "inputSchema": {
            "type": "object",
            "properties": {
                "arguments": {"type": "string"},
                "result": {"type": "string"},
                "_result": {"type": "integer"},
            },
            "required": ["arguments"],
        },
        "outputSchema": {
            "type": "array",
            "items": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
    },
]

EXPECTED_METHODS = {
    "get-user": "get_user_2",
    "get_user": "get_user",
    "getUser": "get_user_3",
    "close": "close_",
    "call_tool": "call_tool_",
    "self": "self_",
    "class": "class_",
    "match": "match_",
    "1st.tool": "tool_1st_tool",
    "date": "date",  # nothing named `date` is imported any more
    "list": "list_",
    "models": "models_",
    "_meta": "meta_",
    "model_config": "model_config",
    "ns.tool-v2": "ns_tool_v2",
}


def hostile_spec() -> ValidatedSpec:
    return ValidatedSpec(source=EVIL_SOURCE, tools=HOSTILE_TOOLS, digest=canonical_digest(HOSTILE_TOOLS))


@pytest.fixture(scope="module")
def packages() -> tuple[GeneratedPackage, GeneratedPackage]:
    spec = hostile_spec()
    return build_client(spec, package="hostile_client"), build_server(spec, package="hostile_server")


@pytest.fixture(scope="module")
def client_module(
    packages: tuple[GeneratedPackage, GeneratedPackage],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("hostile")
    client = packages[0]
    (root / client.package).mkdir()
    for name, data in client.files.items():
        (root / client.package / name).parent.mkdir(exist_ok=True)  # _models/
        (root / client.package / name).write_bytes(data)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(client.package)
    finally:
        sys.path.remove(str(root))
        for name in list(sys.modules):
            if name.startswith("hostile_"):
                del sys.modules[name]


def _modules(packages: tuple[GeneratedPackage, GeneratedPackage]) -> dict[str, ast.Module]:
    client, server = packages
    out = {}
    for prefix, files in (("client", client.files), ("server", {**server.files, **server.user_files})):
        for name, data in files.items():
            if name.endswith(".py"):
                out[f"{prefix}/{name}"] = ast.parse(data.decode("utf-8"))
    return out


def test_every_file_parses_with_one_header_line(packages: tuple[GeneratedPackage, GeneratedPackage]) -> None:
    for path, module in _modules(packages).items():
        assert module.body, path
    for data in [*packages[0].files.values(), *packages[1].files.values()]:
        text = data.decode("utf-8")
        assert "\u202e" not in text and "\x1b" not in text and "\x00" not in text and "\r" not in text
        if text.startswith("#"):
            first, second = text.split("\n", 2)[:2]
            assert (
                first.startswith("# Generated by mcpgen ") and "import os" in first
            )  # still inside the comment
            assert not second.startswith("import")


_ALLOWED_CALLS = {
    "Field",
    "ConfigDict",
    "ImportError",
    "load_package_tools",
    "PackageTools",
    "ToolBinding",
    "model_rebuild",
    "_call",
    "_call_structured",
    # the task namespaces (issue 34, _tasks.py): made per access, each forwarding to one runtime method
    "Start",
    "Resume",
    "AsyncStart",
    "AsyncResume",
    "_start",
    "_resume",
    "_attrgetter",
    "serve_main",
    "load_handlers",
    "handlers_getattr",
    "CliTool",
    "run_cli",
    "main",
}


# models.py's lazy import (`__getattr__` under `if not TYPE_CHECKING:`) and nothing else
_FACADE_CALLS = {"AttributeError", "getattr", "_import_module", "globals", "sorted"}


def test_no_code_beyond_the_plan(packages: tuple[GeneratedPackage, GeneratedPackage]) -> None:
    for path, module in _modules(packages).items():
        facade = path.endswith("/models.py")
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
                assert name in _ALLOWED_CALLS | (_FACADE_CALLS if facade else set()), (
                    path,
                    ast.unparse(node)[:80],
                )
            if isinstance(node, ast.Import | ast.ImportFrom):
                module_name = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                assert node.level == 1 if isinstance(node, ast.ImportFrom) and node.level else True
                assert (
                    module_name
                    in (
                        None,
                        "__future__",
                        "collections.abc",
                        "operator",
                        "typing",
                        "datetime",
                        "pydantic",
                        "models",
                        "base",
                        "handlers",
                        "client",
                        "_tasks",
                        *(["importlib"] if facade else []),
                    )
                    or module_name.startswith("mcpgen_runtime")
                    or re.fullmatch(r"(_models\.)?t\d{4,}", module_name)
                ), module_name
            assert not isinstance(node, ast.Lambda | ast.JoinedStr) or path.endswith(
                ("client.py", "base.py", "/models.py")
            ), path
        if facade:  # the two functions sit under `if not TYPE_CHECKING:`, with the table as data
            (guarded,) = [
                node
                for node in module.body
                if isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp)
            ]
            assert [f.name for f in guarded.body if isinstance(f, ast.FunctionDef)] == [
                "__getattr__",
                "__dir__",
            ]
            table = next(
                n for n in module.body if isinstance(n, ast.AnnAssign) and ast.unparse(n.target) == "_MODULES"
            )
            assert isinstance(table.value, ast.Dict)
            assert all(
                isinstance(v, ast.Constant) and re.fullmatch(r"t\d{4,}", v.value) for v in table.value.values
            )
        functions = [
            node.name for node in module.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        assert functions == (["main"] if path == "client/__main__.py" else []), path


def test_cli_table_holds_names_as_literals_only(packages: tuple[GeneratedPackage, GeneratedPackage]) -> None:
    """The client's __main__.py lists (wire name, method, models) per tool as string literals;
    descriptions and every other server text stay in tools.json (data)."""
    module = _modules(packages)["client/__main__.py"]
    table = next(
        node.value
        for node in module.body
        if isinstance(node, ast.Assign)
        and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["_TOOLS"]
    )
    assert isinstance(table, ast.Tuple)
    rows = []
    for entry in table.elts:
        assert isinstance(entry, ast.Call) and isinstance(entry.func, ast.Name) and entry.func.id == "CliTool"
        wire, method, *models = entry.args
        assert isinstance(wire, ast.Constant) and isinstance(method, ast.Constant)
        # model names (looked up in models.py when the tool runs): literals, never code
        assert all(isinstance(m, ast.Constant) and isinstance(m.value, str) for m in models)
        rows.append((wire.value, method.value))
    assert rows == [(tool["name"], EXPECTED_METHODS[tool["name"]]) for tool in HOSTILE_TOOLS]


def test_client_defines_exactly_the_planned_methods(
    packages: tuple[GeneratedPackage, GeneratedPackage],
) -> None:
    module = _modules(packages)["client/client.py"]
    assigned = {
        t.id
        for node in module.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    assert assigned == {"_RUNTIME_API", "_TOOL_DEFINITIONS"}
    classes = {node.name: node for node in module.body if isinstance(node, ast.ClassDef)}
    assert list(classes) == ["Client", "AsyncClient"]
    tools = [EXPECTED_METHODS[tool["name"]] for tool in HOSTILE_TOOLS]
    for cls in classes.values():
        methods = [n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        assert methods == ["start", "resume", *tools]  # the task namespaces' properties first
    tasks = _modules(packages)["client/_tasks.py"]
    assert not [node for node in tasks.body if isinstance(node, ast.Assign | ast.AnnAssign)]
    classes = {node.name: node for node in tasks.body if isinstance(node, ast.ClassDef)}
    assert list(classes) == ["Start", "Resume", "AsyncStart", "AsyncResume"]
    for cls in classes.values():
        methods = [n.name for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        assert methods == ["__init__", *tools]


def test_docstrings_are_the_cleaned_descriptions(
    packages: tuple[GeneratedPackage, GeneratedPackage], client_module: ModuleType
) -> None:
    handlers = ast.parse(packages[1].user_files["handlers.py"].decode("utf-8"))
    method = next(
        n for n in ast.walk(handlers) if isinstance(n, ast.AsyncFunctionDef) and n.name == "get_user_2"
    )
    raw = ast.get_docstring(method, clean=False)
    assert raw is not None
    first, *rest = raw.split("\n")
    unindented = "\n".join([first, *(line.removeprefix(" " * 8) for line in rest)])
    assert unindented.removesuffix("\n") == spelling.clean_text(EVIL)
    doc = inspect.getdoc(client_module.Client.get_user_2)
    assert doc.startswith('x"""; import os; os.system("echo pwned") #\\\n') and "\nArgs:\n    title: x" in doc
    assert inspect.getdoc(client_module.Client.get_user).rstrip() == '"""'  # black pads a closing quote
    assert inspect.getdoc(client_module.Client.get_user_3) == "\\"


def test_hostile_values_stay_data(client_module: ModuleType) -> None:
    from typing import Literal, get_args

    signature = inspect.signature(client_module.Client.get_user_2, eval_str=True)
    params = signature.parameters
    assert list(params)[:3] == ["self", "self_", "title"]  # required first, in `required` order
    assert params["uber"].default is UNSET  # schema defaults are documented, not sent
    doc = inspect.getdoc(client_module.Client.get_user_2) or ""
    assert 'uber: Defaults to "a\'b" when omitted.' in doc
    literal = get_args(params["uber"].annotation)[0]  # an alias in models: GetUser2InputUber = Literal[...]
    assert literal.__origin__ is Literal and EVIL in get_args(literal)
    # `get_user` is already an identifier and keeps it; `getUser` comes second
    assert (
        "get_user: Defaults to 1.5 when omitted." in doc
        and "get_user_2: Defaults to true when omitted." in doc
    )
    assert (
        params["tags"].default is UNSET and "tags: Defaults" not in doc
    )  # non-scalar defaults: left to the server
    assert "ref" in params and "m" in params  # `$ref`, `_m`: rebuilt from their words
    assert client_module.models.GetUser2NodeDef.model_fields["v"].description == EVIL
    assert not hasattr(client_module.models, "Evil") and not hasattr(client_module.models, "Evil2")


@pytest.mark.parametrize("is_async", [False, True])
def test_wire_names_sent_unchanged(client_module: ModuleType, is_async: bool) -> None:
    import asyncio

    sent: list[tuple[str, dict[str, Any]]] = []
    reply: list[Any] = [None]

    def record(name: str, arguments: dict[str, Any], *models: Any) -> Any:
        sent.append((name, arguments))
        return models[-1].model_validate(reply[0]) if len(models) == 2 else None

    async def arecord(*args: Any) -> Any:
        return record(*args)

    client = object.__new__(client_module.AsyncClient if is_async else client_module.Client)
    client._call = arecord if is_async else record
    client._call_structured = arecord if is_async else record

    def run(value: Any) -> Any:
        return asyncio.run(value) if is_async else value

    reply[0] = ["s"]
    assert run(client.get_user_3({"k": "v"})) == ["s"]
    assert sent[-1] == ("getUser", {"k": "v"})
    reply[0] = [{"a": 1}]
    items = run(client.ns_tool_v2("a", result="r", result_2=2))
    assert sent[-1] == ("ns.tool-v2", {"arguments": "a", "result": "r", "_result": 2})
    assert items[0].a == 1
    run(client.self_())
    assert sent[-1] == ("self", {})
    reply[0] = {"ok": True}
    assert run(client.get_user_2(title="t", self_=1, ref="r", m="m", uber=EVIL)).ok is True
    assert sent[-1][0] == "get-user"
    assert {"$ref": "r", "_m": "m", "über": EVIL, "self": 1, "title": "t"}.items() <= sent[-1][1].items()


def test_server_handlers_file(packages: tuple[GeneratedPackage, GeneratedPackage]) -> None:
    handlers = packages[1].user_files["handlers.py"].decode("utf-8")
    module = ast.parse(handlers)
    classes = [node for node in module.body if isinstance(node, ast.ClassDef)]
    assert [cls.name for cls in classes] == ["Server"]
    methods = [n.name for n in classes[0].body if isinstance(n, ast.AsyncFunctionDef)]
    assert methods == [EXPECTED_METHODS[tool["name"]] for tool in HOSTILE_TOOLS]
    base = ast.parse(packages[1].files["base.py"].decode("utf-8"))
    bindings = [
        n for n in ast.walk(base) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "ToolBinding"
    ]
    assert [ast.literal_eval(b.keywords[0].value) for b in bindings] == [
        tool["name"] for tool in HOSTILE_TOOLS
    ]


def test_templates_dir_prefers_the_wheel_layout(tmp_path: Path) -> None:
    from codegen.render import templates

    assert templates.templates_dir().name in ("templates", "_templates")
    assert (templates.templates_dir() / "client" / "client.py.jinja").is_file()
