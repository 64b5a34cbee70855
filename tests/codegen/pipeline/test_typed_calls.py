"""Typed calls that cannot go wrong silently (issue 12), from a generated client to a generated
server over real HTTP (uvicorn on loopback, every request recorded as the server received it):

- required parameters in the schema's `required` order; one required parameter stays positional,
  two or more make every parameter keyword-only;
- optional parameters default to `UNSET` (left out); `None` is sent as JSON null where the schema
  allows null (Playwright's `browser_emulate_media` colorScheme);
- the client checks arguments against the tool's own inputSchema before sending: constraints the
  types cannot carry (`minLength` inside `anyOf`: GitHub's `issue_write.type=""`) and values a lax
  model would coerce (`"10"` for an integer) are refused with the pointer, and nothing is sent;
- identical `$defs` entries of several tools are one class (Notion's `richTextRequest`), with a
  name that does not depend on tool order.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import json
import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, get_args

import pytest

from codegen.errors import UnsupportedSchemaError
from codegen.model.build import build_models
from codegen.pipeline import build_client, build_server
from codegen.spec import GeneratedPackage, ValidatedSpec, canonical_digest
from mcpgen_runtime.client import ClientCore
from mcpgen_runtime.errors import ToolArgumentsError
from mcpgen_runtime.types import UNSET, Unset
from tests.codegen.pipeline.test_generate import clear_generator_caches, write_package
from tests.runtime._client_helpers import LiveServer
from tests.support import needs_shared

NULLABLE_SCHEME = {
    "anyOf": [{"type": "string", "enum": ["light", "dark", "no-preference"]}, {"type": "null"}],
    "description": "Emulated color scheme; null clears the override.",
}
RICH_TEXT = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "link": {"$ref": "#/$defs/link"}},
    "required": ["text"],
}
LINK = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}


def _page_tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "inputSchema": {
            "type": "object",
            "properties": {
                "page_id": {"type": "string"},
                "title": {"type": "array", "items": {"$ref": "#/$defs/richTextRequest"}},
            },
            "required": ["page_id"],
            "$defs": {"richTextRequest": RICH_TEXT, "link": LINK},
        },
    }


TOOLS: list[dict[str, Any]] = [
    {
        "name": "browser_emulate_media",
        "inputSchema": {
            "type": "object",
            "properties": {
                "colorScheme": NULLABLE_SCHEME,
                "media": {"anyOf": [{"type": "string", "enum": ["screen", "print"]}, {"type": "null"}]},
            },
        },
    },
    {
        "name": "create_pull_request",
        "inputSchema": {  # properties sorted, `required` in its own order
            "type": "object",
            "properties": {
                name: {"type": "string"} for name in ("base", "body", "head", "owner", "repo", "title")
            }
            | {"draft": {"type": "boolean"}},
            "required": ["owner", "repo", "title", "head", "base"],
        },
    },
    {
        "name": "issue_write",
        "inputSchema": {
            "type": "object",
            "properties": {
                "issue_number": {"type": "number"},
                "labels": {"type": "array", "items": {"type": "string"}},
                "method": {"type": "string", "enum": ["create", "update"]},
                "owner": {"type": "string"},
                "repo": {"type": "string"},
                "type": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]},
                "per_page": {"type": "integer", "minimum": 1, "maximum": 100, "default": 30},
                "point": {
                    "type": "array",
                    "prefixItems": [{"type": "number"}, {"type": "number"}],
                    "items": False,
                    "minItems": 2,
                },
            },
            "required": ["method", "owner", "repo"],
        },
    },
    {
        "name": "get_weather",
        "inputSchema": {
            "type": "object",
            "properties": {"units": {"type": "string", "enum": ["c", "f"]}, "location": {"type": "string"}},
            "required": ["location"],
        },
    },
    _page_tool("post_page"),
    _page_tool("patch_page"),
]


def _spec(tools: list[dict[str, Any]]) -> ValidatedSpec:
    return ValidatedSpec(source="typed-calls.json", tools=tools, digest=canonical_digest(tools))


@contextlib.contextmanager
def _importable(root: Path, *packages: GeneratedPackage) -> Iterator[None]:
    """`packages` written under `root` and importable until the block ends."""
    for package in packages:
        write_package(root, package)
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path.remove(str(root))
        names = tuple(package.package for package in packages)
        for name in [name for name in sys.modules if name.startswith(names)]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, ModuleType]]:
    with _importable(
        tmp_path_factory.mktemp("typed_calls"),
        build_client(_spec(TOOLS), package="tcalls_client"),
        build_server(_spec(TOOLS), package="tcalls_server"),
    ):
        yield importlib.import_module("tcalls_client"), importlib.import_module("tcalls_server.handlers")


class _Seen:
    """What the generated server's handlers received: the fields that were set, and their values."""

    calls: ClassVar[list[tuple[str, set[str], dict[str, Any]]]] = []


@pytest.fixture(scope="module")
def live(packages: tuple[ModuleType, ModuleType]) -> Iterator[LiveServer]:
    _, handlers = packages

    class Impl(handlers.Server):  # type: ignore[misc, name-defined]
        async def browser_emulate_media(self, args: Any, ctx: Any) -> str:
            return self._seen("browser_emulate_media", args)

        async def create_pull_request(self, args: Any, ctx: Any) -> str:
            return self._seen("create_pull_request", args)

        async def issue_write(self, args: Any, ctx: Any) -> str:
            return self._seen("issue_write", args)

        async def get_weather(self, args: Any, ctx: Any) -> str:
            return self._seen("get_weather", args)

        @staticmethod
        def _seen(name: str, args: Any) -> str:
            _Seen.calls.append((name, set(args.model_fields_set), args.model_dump()))
            return "ok"

    with LiveServer(Impl()) as server:
        yield server


def _sent(server: LiveServer) -> list[dict[str, Any]]:
    return [r.body["params"]["arguments"] for r in server.requests if r.method == "tools/call"]


# ------------------------------------------------------------------------------------ signatures


def test_one_required_parameter_stays_positional(packages: tuple[ModuleType, ModuleType]) -> None:
    params = inspect.signature(packages[0].Client.get_weather, eval_str=True).parameters
    assert [(p.name, p.kind.name) for p in params.values()] == [
        ("self", "POSITIONAL_OR_KEYWORD"),
        ("location", "POSITIONAL_OR_KEYWORD"),
        ("units", "KEYWORD_ONLY"),
    ]


def test_two_or_more_required_parameters_make_every_parameter_keyword_only(
    packages: tuple[ModuleType, ModuleType],
) -> None:
    for cls in (packages[0].Client, packages[0].AsyncClient):
        params = list(inspect.signature(cls.create_pull_request, eval_str=True).parameters.values())[1:]
        assert [p.name for p in params] == ["owner", "repo", "title", "head", "base", "body", "draft"]
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
        assert [p.default for p in params[5:]] == [UNSET, UNSET]


def test_optional_parameters_default_to_unset_and_none_only_where_null_is_allowed(
    packages: tuple[ModuleType, ModuleType],
) -> None:
    params = inspect.signature(packages[0].Client.browser_emulate_media, eval_str=True).parameters
    scheme = params["color_scheme"]
    assert scheme.default is UNSET and get_args(scheme.annotation)[1:] == (Unset, type(None))
    issue = inspect.signature(packages[0].Client.issue_write, eval_str=True).parameters
    assert get_args(issue["labels"].annotation) == (list[str], Unset)  # not nullable: no None
    assert issue["per_page"].default is UNSET  # the schema default is documented, not sent
    assert "per_page: Defaults to 30 when omitted." in (packages[0].Client.issue_write.__doc__ or "")


# --------------------------------------------------------------------------------------- the wire


def test_omitted_is_left_out_and_none_is_sent_as_null(
    packages: tuple[ModuleType, ModuleType], live: LiveServer
) -> None:
    with packages[0].Client(live.url) as client, live.recording():
        _Seen.calls.clear()
        client.browser_emulate_media()
        client.browser_emulate_media(color_scheme=None)
        client.browser_emulate_media(color_scheme="dark", media=None)
        assert _sent(live) == [{}, {"colorScheme": None}, {"colorScheme": "dark", "media": None}]
    assert [fields for _, fields, _ in _Seen.calls] == [set(), {"color_scheme"}, {"color_scheme", "media"}]


def test_keyword_arguments_reach_their_own_wire_names(
    packages: tuple[ModuleType, ModuleType], live: LiveServer
) -> None:
    with packages[0].Client(live.url) as client, live.recording():
        client.create_pull_request(
            owner="octocat", repo="hello", title="Add feature", head="feature", base="main"
        )
        client.get_weather("Berlin", units="c")
        [pull, weather] = _sent(live)
    assert pull == {
        "owner": "octocat",
        "repo": "hello",
        "title": "Add feature",
        "head": "feature",
        "base": "main",
    }
    assert weather == {"location": "Berlin", "units": "c"}


def test_values_are_sent_as_given(packages: tuple[ModuleType, ModuleType], live: LiveServer) -> None:
    with packages[0].Client(live.url) as client, live.recording():
        client.issue_write(method="update", owner="o", repo="r", issue_number=7, point=(1, 2.5))
        [sent] = _sent(live)
    assert sent == {"method": "update", "owner": "o", "repo": "r", "issue_number": 7, "point": [1, 2.5]}
    assert type(sent["issue_number"]) is int  # an int stays an int (JSON number)


@pytest.mark.parametrize(
    ("arguments", "pointer", "why"),
    [
        ({"type": ""}, "/type", "non-empty|too short|is not valid under any"),  # minLength inside anyOf
        ({"issue_number": "10"}, "/issue_number", "not of type"),  # no lax coercion of "10"
        ({"per_page": 0}, "/per_page", "less than the minimum"),
        ({"point": (1, "x")}, "/point/1", "not of type"),
        ({"issue_number": math.nan}, "/issue_number", "not a JSON number"),
        ({"labels": {"a", "b"}}, "/labels", "set is not a JSON value"),
    ],
)
def test_what_the_schema_refuses_is_never_sent(
    packages: tuple[ModuleType, ModuleType],
    live: LiveServer,
    arguments: dict[str, Any],
    pointer: str,
    why: str,
) -> None:
    with packages[0].Client(live.url) as client, live.recording():
        with pytest.raises(ToolArgumentsError, match=why) as info:
            client.issue_write(method="create", owner="o", repo="r", **arguments)
        assert info.value.pointer == pointer and info.value.tool == "issue_write"
        assert _sent(live) == []


def test_the_server_still_refuses_what_a_raw_call_sends(
    packages: tuple[ModuleType, ModuleType], live: LiveServer
) -> None:
    with packages[0].Client(live.url) as client:
        result = client.call_tool("issue_write", {"method": "create", "owner": "o", "repo": "r", "type": ""})
    assert result.is_error and "/type" in result.text


# ----------------------------------------------------------------------------------- shared $defs


def test_identical_defs_of_several_tools_are_one_class(packages: tuple[ModuleType, ModuleType]) -> None:
    client, models = packages[0], packages[0].models
    post = inspect.signature(client.Client.post_page, eval_str=True).parameters["title"].annotation
    patch = inspect.signature(client.Client.patch_page, eval_str=True).parameters["title"].annotation
    assert post == patch == list[models.RichTextRequestDef] | Unset
    assert models.RichTextRequestDef.model_fields["link"].annotation == models.LinkDef | None
    assert not [name for name in vars(models) if name.endswith(("PageRichTextRequestDef", "PageLinkDef"))]


def _class_names(tools: list[dict[str, Any]]) -> set[str]:
    return {model.name for model in build_models(tools)[1].models}


def test_shared_names_do_not_depend_on_tool_order() -> None:
    tools = [_page_tool("post_page"), _page_tool("patch_page"), _page_tool("create_page")]
    names = _class_names(tools)
    assert {"RichTextRequestDef", "LinkDef"} <= names
    assert names == _class_names(list(reversed(tools)))


def test_different_or_document_bound_defs_stay_apart() -> None:
    other = _page_tool("archive_page")
    other["inputSchema"]["$defs"]["link"] = {"type": "object", "properties": {"href": {"type": "string"}}}
    names = _class_names([_page_tool("post_page"), other])
    # the links differ, so the rich texts that reach them differ too
    assert {
        "PostPageRichTextRequestDef",
        "ArchivePageRichTextRequestDef",
        "PostPageLinkDef",
        "ArchivePageLinkDef",
    } <= names
    rooted = _page_tool("move_page")
    rooted["inputSchema"]["$defs"]["link"] = {"type": "object", "properties": {"parent": {"$ref": "#"}}}
    again = _page_tool("copy_page")
    again["inputSchema"]["$defs"]["link"] = rooted["inputSchema"]["$defs"]["link"]
    # a `$ref` to the root means something else in each tool: never shared
    assert {"MovePageLinkDef", "CopyPageLinkDef"} <= _class_names([rooted, again])


def test_sharing_is_bounded_on_hostile_shapes() -> None:
    """Keys are computed without recursion (a def nested as deep as JSON allows is refused by the
    builder's depth limit, not by a stack overflow) and once per entry (many tools sharing a web
    of entries that reference each other stay fast)."""
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(900):
        deep = {"type": "object", "properties": {"a": deep}}
    nested = [
        {
            "name": name,
            "inputSchema": {
                "type": "object",
                "properties": {"x": {"$ref": "#/$defs/d"}},
                "$defs": {"d": deep},
            },
        }
        for name in ("a", "b")
    ]
    with pytest.raises(UnsupportedSchemaError, match="SCHEMA-11"):
        build_models(nested)
    web = {
        f"d{i}": {
            "type": "object",
            "properties": {
                "left": {"$ref": f"#/$defs/d{(i + 1) % 40}"},
                "right": {"$ref": f"#/$defs/d{(i * 7) % 40}"},
            },
        }
        for i in range(40)
    }
    tools = [
        {
            "name": f"t{i}",
            "inputSchema": {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": web},
        }
        for i in range(200)
    ]
    started = time.monotonic()
    names = _class_names(tools)
    assert time.monotonic() - started < 20
    assert len([name for name in names if name.endswith("Def")]) == 40  # one class per entry, not per tool


def test_generated_files_stay_byte_identical() -> None:
    first = build_client(_spec(TOOLS), package="tcalls_client").files
    clear_generator_caches()
    assert build_client(_spec(TOOLS), package="tcalls_client").files == first


# --------------------------------------------------------------------------------- GitHub's 117 tools


@pytest.fixture(scope="module")
def github(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, list[dict[str, Any]]]]:
    tools = json.loads(needs_shared("realworld", "github-tools.json").read_text("utf-8"))["tools"]
    with _importable(
        tmp_path_factory.mktemp("typed_github"), build_client(_spec(tools), package="tcalls_github")
    ):
        yield importlib.import_module("tcalls_github"), tools


def _methods(package: ModuleType) -> dict[str, tuple[str, str]]:
    """Wire name -> (method name, input class) of every blocking client method, read from client.py."""
    tree = ast.parse(Path(package.client.__file__).read_text("utf-8"))
    client = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Client")
    found: dict[str, tuple[str, str]] = {}
    for method in client.body:
        # the task namespaces' properties (`start`, `resume`) call no tool
        if isinstance(method, ast.FunctionDef) and not method.decorator_list:
            call = next(
                n
                for n in ast.walk(method)
                if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and n.func.attr.startswith("_call")
            )
            wire, model = call.args[0], call.args[2]
            assert isinstance(wire, ast.Constant) and isinstance(model, ast.Attribute)
            found[wire.value] = (method.name, model.attr)
    return found


def test_every_github_method_takes_its_required_parameters_in_required_order(
    github: tuple[ModuleType, list[dict[str, Any]]],
) -> None:
    package, tools = github
    methods = _methods(package)
    reordered = 0
    for tool in tools:
        required = tool["inputSchema"].get("required", [])
        properties = list(tool["inputSchema"].get("properties", {}))
        reordered += [p for p in properties if p in required] != required
        method_name, input_class = methods[tool["name"]]
        params = list(
            inspect.signature(getattr(package.Client, method_name), eval_str=True).parameters.values()
        )[1:]
        fields = getattr(package.models, input_class).model_fields
        wire = [fields[p.name].serialization_alias or p.name for p in params[: len(required)]]
        assert wire == required, tool["name"]
        kinds = {p.kind for p in params[: len(required)]}
        assert kinds == (
            {inspect.Parameter.POSITIONAL_OR_KEYWORD}
            if len(required) == 1
            else {inspect.Parameter.KEYWORD_ONLY}
            if required
            else set()
        ), tool["name"]
    assert reordered >= 50  # the issue counted 58 tools whose sorted properties disagree with `required`


def test_github_issue_write_type_null_and_empty(github: tuple[ModuleType, list[dict[str, Any]]]) -> None:
    package, tools = github
    core = ClientCore(tools=tools)
    model = package.models.IssueWriteInput
    base = {"method": "update", "owner": "o", "repo": "r", "issue_number": 5}
    assert core.checks.prepare_arguments("issue_write", {**base, "type": None}, model) == {
        **base,
        "type": None,
    }
    assert core.checks.prepare_arguments("issue_write", {**base, "type": UNSET}, model) == base
    with pytest.raises(ToolArgumentsError) as info:  # minLength inside anyOf: no type can say it
        core.checks.prepare_arguments("issue_write", {**base, "type": ""}, model)
    assert info.value.pointer == "/type"
    annotation = inspect.signature(package.Client.issue_write, eval_str=True).parameters["type"].annotation
    assert get_args(annotation) == (str, Unset, type(None))


def test_schema_defaults_reach_docstrings_only_as_printable_text() -> None:
    hostile = 'x"""; import os #\u00a0\u202e\u2028\ud800 end'
    tool = {
        "name": "t",
        "inputSchema": {"type": "object", "properties": {"s": {"type": "string", "default": hostile}}},
    }
    source = (
        build_client(_spec([tool]), package="tcalls_defaults")
        .files["client.py"]
        .decode("utf-8", "surrogatepass")
    )
    assert all(ch.isprintable() or ch == "\n" for ch in source)
    assert '"""; import os' not in source.replace('\\"\\"\\"', "")
    # escaped for the docstring (its backslashes doubled in the source): the reader sees `\xa0...`
    assert "s: Defaults to" in source and r"\\xa0\\u202e\\u2028\\ud800 end" in source


def test_values_without_a_json_form_are_refused_where_they_are() -> None:
    from mcpgen_runtime.client.arguments import wire_arguments

    with pytest.raises(ToolArgumentsError) as info:
        wire_arguments("t", {"ok": 1, "a/b": {"x~": [1, {2}]}})
    assert info.value.pointer == "/a~1b/x~0/1" and "set is not a JSON value" in str(info.value)
    with pytest.raises(ToolArgumentsError, match="keys must be strings") as info:
        wire_arguments("t", {"m": {"k": {1: "v"}}})
    assert info.value.pointer == "/m/k"
    assert wire_arguments("t", {"u": UNSET, "n": None, "t": (1, (2, "x"))}) == {"n": None, "t": [1, [2, "x"]]}
