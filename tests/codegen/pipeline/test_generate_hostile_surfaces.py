"""Untrusted text in resources, resource templates and prompts never becomes code (issue 22).

Names, titles, descriptions, URIs, URI templates, template variables and prompt argument names are
hostile. The client must parse, call only the planned runtime helpers, carry the text only as
escaped docstrings and string literals, name every method and parameter safely (keywords, `self`,
runtime attributes), and still send the wire names, URIs and templates unchanged.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codegen.pipeline import build_client
from codegen.spec import GeneratedPackage, ValidatedSpec
from mcpgen_runtime.types import UNSET

EVIL = (
    'x"""; import os; os.system("echo pwned") #\\ \n\r\x00 \u202e\u2028 {{ 1 }} {% if x %} '
    "\\N{BULLET} ''' end\\"
)
EVIL_TEMPLATE = "x://{class}/{self}{/_m}{?%C3%BC,UNSET}#import;os.system(0)$(id)"
RESOURCES = [
    {"uri": 'x:"""; import os #\\', "name": EVIL, "description": EVIL},
    {"uri": "x:b", "name": "class"},
    {"uri": "x:c", "name": "Resources"},
]
TEMPLATES = [
    {"uriTemplate": EVIL_TEMPLATE, "name": EVIL, "title": EVIL, "description": EVIL},
    {"uriTemplate": "x://{a}", "name": "resource"},  # read_resource is the runtime's
    {"uriTemplate": "x://{b}", "name": "template"},
]
PROMPTS = [
    {
        "name": "class",
        "description": EVIL,
        "arguments": [
            {"name": "self", "required": True, "description": EVIL},
            {"name": "import", "required": True},
            {"name": "a-b"},
            {"name": "a_b"},
            {"name": EVIL},
        ],
    },
    {"name": EVIL},
    {"name": "x", "arguments": [{"name": "_m"}, {"name": "UNSET", "required": True}]},
]
TOOLS = [{"name": "read_template", "inputSchema": {"type": "object"}}]  # a tool takes the plain name


def hostile_spec() -> ValidatedSpec:
    spec = ValidatedSpec(
        source="specs/evil.json",
        tools=TOOLS,
        digest="0" * 64,
        resources=RESOURCES,
        resource_templates=TEMPLATES,
        prompts=PROMPTS,
    )
    return spec


@pytest.fixture(scope="module")
def package() -> GeneratedPackage:
    return build_client(hostile_spec(), package="hostile_surfaces")


@pytest.fixture(scope="module")
def module(package: GeneratedPackage, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("hostile_surfaces")
    for name, data in package.files.items():
        path = root / package.package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(package.package)
    finally:
        sys.path.remove(str(root))
        for name in list(sys.modules):
            if name.startswith("hostile_surfaces"):
                del sys.modules[name]


def test_only_planned_calls_and_no_text_outside_literals(package: GeneratedPackage) -> None:
    source = package.files["client.py"].decode("utf-8")
    assert "\u202e" not in source and "\x00" not in source and "\r" not in source
    tree = ast.parse(source)
    allowed = {"ImportError", "PackageTools", "_call", "_call_structured", "_read_template", "_get_prompt"}
    allowed |= {"Start", "Resume", "AsyncStart", "AsyncResume"}  # the task namespaces, made per access
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else None
            )
            assert name in allowed, ast.unparse(node)[:100]
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "os" not in names and "system" not in {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
    }


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def _read_template(self, template: str, values: dict[str, Any]) -> str:
        self.calls.append(("read", template, values))
        return "read"

    def _get_prompt(self, name: str, arguments: dict[str, Any]) -> str:
        self.calls.append(("prompt", name, arguments))
        return "prompt"


def _method(module: ModuleType, name: str) -> Any:
    return getattr(module.Client, name)


def test_safe_names_and_wire_text_unchanged(module: ModuleType) -> None:
    client = module.Client
    template_methods = [n for n in vars(client) if n.startswith("read_")]
    prompt_methods = [n for n in vars(client) if n.startswith("prompt_")]
    assert "read_resource_" in template_methods  # the runtime's read_resource is not shadowed
    assert "read_template_" in template_methods  # the tool method read_template is not either
    assert "read_template" in vars(client)  # the tool's
    assert "prompt_class" in prompt_methods
    recorder = Recorder()

    evil_read = next(n for n in template_methods if n.startswith("read_x_"))
    signature = inspect.signature(_method(module, evil_read))
    params = list(signature.parameters.values())[1:]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    assert [p.name for p in params] == ["class_", "self_", "m", "c3_bc", "unset"]
    _method(module, evil_read)(recorder, class_="../x", self_="#", m="?", c3_bc="ü", unset=UNSET)
    kind, template, values = recorder.calls[-1]
    assert (kind, template) == ("read", EVIL_TEMPLATE)
    assert values == {"class": "../x", "self": "#", "_m": "?", "%C3%BC": "ü", "UNSET": UNSET}

    signature = inspect.signature(_method(module, "prompt_class"))
    params = list(signature.parameters.values())[1:]
    assert [(p.name, p.default is inspect.Parameter.empty) for p in params][:2] == [
        ("self_", True),
        ("import_", True),
    ]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    _method(module, "prompt_class")(recorder, self_="s", import_="i")
    kind, name, arguments = recorder.calls[-1]
    assert (kind, name) == ("prompt", "class")
    assert set(arguments) == {"self", "import", "a-b", "a_b", EVIL}
    evil_prompt = next(n for n in prompt_methods if n not in ("prompt_class", "prompt_x"))
    _method(module, evil_prompt)(recorder)
    assert recorder.calls[-1][1] == EVIL


def test_resources_are_constants_with_the_exact_uris(module: ModuleType) -> None:
    constants = {name: value for name, value in vars(module.Resources).items() if name.isupper()}
    assert sorted(constants.values()) == sorted(r["uri"] for r in RESOURCES)
    assert "CLASS_" in constants and "RESOURCES" in constants


def test_docstrings_hold_the_text_escaped(module: ModuleType) -> None:
    doc = _method(module, "prompt_class").__doc__ or ""
    assert "import os" in doc and "\x00" not in doc and "\u202e" not in doc
    assert Path(module.__file__).read_text("utf-8").count('"""; import os') == 0
