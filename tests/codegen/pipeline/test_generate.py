"""MODEL -> RENDER -> FORMAT end to end: build client and server packages from real tool lists,
write them to a temporary folder, import them and check what a user would see.

Each spec is built once per module: generating and importing the packages is the slow part.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codegen import RELEASE, pipeline
from codegen.model import naming
from codegen.pipeline import build_client, build_server
from codegen.render import models_module, toolsjson
from codegen.render.python import black_format, imports
from codegen.spec import GeneratedPackage, ValidatedSpec, canonical_digest
from mcpgen_runtime.pins import pin_all
from mcpgen_runtime.types import UNSET, Unset
from tests.support import PYTHON, ROOT, SHARED, needs_shared

# Real tool lists from ../shared join the repository's specs where it is beside the checkout
# (developer machines, CI); without it test_shared_specs_present reports them as skipped.
SHARED_SPECS = {
    "conformance": SHARED / "spec" / "conformance-tools.json",
    "github": SHARED / "realworld" / "github-tools.json",
}
SPECS = {
    "weather": ROOT / "specs" / "weather.json",
    "shapes": ROOT / "specs" / "shapes.json",
    **{key: path for key, path in SHARED_SPECS.items() if path.is_file()},
}


def test_shared_specs_present() -> None:
    for path in SHARED_SPECS.values():
        needs_shared(*path.relative_to(SHARED).parts)
    assert SHARED_SPECS.items() <= SPECS.items()


CLIENT_FILES = {"__init__.py", "__main__.py", "models.py", "client.py", "_tasks.py", "tools.json", "py.typed"}
SERVER_FILES = {"__init__.py", "models.py", "base.py", "__main__.py", "tools.json", "py.typed"}


def _top(files: dict[str, bytes]) -> set[str]:
    return {name for name in files if not name.startswith("_models/")}


def load_spec(path: Path) -> ValidatedSpec:
    """The real LOAD and VALIDATE stages when present, else the plain JSON wrapped by hand."""
    # Display names as a user would type them: never an absolute path (that would leak into headers).
    display = os.path.relpath(path, ROOT if path.is_relative_to(ROOT) else ROOT.parent)
    try:
        from codegen.load.document import load_file
        from codegen.validate.checks import validate
    except ImportError:  # pragma: no cover - stages written by another helper
        tools = json.loads(path.read_text("utf-8"))["tools"]
        return ValidatedSpec(source=display, tools=tools, digest=canonical_digest(tools))
    spec = validate(load_file(path))
    return ValidatedSpec(
        source=display,
        tools=spec.tools,
        digest=spec.digest,
        warnings=spec.warnings,
        resources=spec.resources,
        resource_templates=spec.resource_templates,
        prompts=spec.prompts,
    )


def clear_generator_caches() -> None:
    """Forget everything the generator memoises between builds (IR, models text, type nodes, black
    fallbacks)."""
    pipeline._IR_CACHE.clear()
    models_module._MODELS_JOBS.clear()
    imports._TYPE_MEMO.clear()
    toolsjson._TOOLS_JSON.clear()
    black_format._black_statement.cache_clear()


def build_every_model(models: ModuleType) -> int:
    """Build the validator of every model class in a generated models module (they are deferred
    until first use, `defer_build=True`), so a schema pydantic cannot build fails here. Returns the count."""
    from pydantic import BaseModel

    count = 0
    # models.py names every class (`_MODULES`) and imports its `_models/` module on first use
    for value in [getattr(models, name) for name in getattr(models, "_MODULES", vars(models))]:
        if (
            isinstance(value, type)
            and issubclass(value, BaseModel)
            and value.__module__.startswith(models.__name__.rpartition(".")[0])
        ):
            value.model_rebuild(force=True)
            count += 1
    return count


def write_package(root: Path, package: GeneratedPackage) -> Path:
    target = root / package.package
    target.mkdir(parents=True, exist_ok=True)
    for name, data in {**package.files, **package.user_files}.items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)  # deploy/
        (target / name).write_bytes(data)
    return target


@pytest.fixture(scope="module")
def specs() -> dict[str, ValidatedSpec]:
    return {key: load_spec(path) for key, path in SPECS.items()}


@pytest.fixture(scope="module")
def built(specs: dict[str, ValidatedSpec]) -> dict[str, tuple[GeneratedPackage, GeneratedPackage]]:
    return {
        key: (
            build_client(spec, package=f"gen_{key}_client"),
            build_server(spec, package=f"gen_{key}_server"),
        )
        for key, spec in specs.items()
    }


@pytest.fixture(scope="module")
def runtime_tool_return() -> Iterator[None]:
    """Until mcpgen_runtime.server exports `ToolReturn`, give the import a stand-in (reported)."""
    import mcpgen_runtime.server as server

    added = not hasattr(server, "ToolReturn")
    if added:
        server.ToolReturn = Any  # type: ignore[attr-defined]
    yield
    if added:
        delattr(server, "ToolReturn")


@pytest.fixture(scope="module")
def imported(
    built: dict[str, tuple[GeneratedPackage, GeneratedPackage]],
    tmp_path_factory: pytest.TempPathFactory,
    runtime_tool_return: None,
) -> Iterator[dict[str, ModuleType]]:
    root = tmp_path_factory.mktemp("generated")
    for client, server in built.values():
        write_package(root, client)
        write_package(root, server)
    sys.path.insert(0, str(root))
    try:
        import importlib

        modules = {}
        for key, (client, server) in built.items():
            modules[f"{key}_client"] = importlib.import_module(client.package)
            modules[f"{key}_server"] = importlib.import_module(server.package)
        yield modules
    finally:
        sys.path.remove(str(root))
        for name in list(sys.modules):
            if name.startswith("gen_"):
                del sys.modules[name]


# ------------------------------------------------------------------------------------- files


def test_file_sets(built: dict[str, tuple[GeneratedPackage, GeneratedPackage]]) -> None:
    for client, server in built.values():
        assert _top(client.files) == CLIENT_FILES and not client.user_files
        assert _top(server.files) == SERVER_FILES
        # `_models/` modules of consecutive tools, the same for both (models.py imports them on use)
        tools = json.loads(client.files["tools.json"])["tools"]
        modules = {name for name in client.files if name.startswith("_models/t")}
        assert 1 <= len(modules) <= len(tools) and "_models/__init__.py" in client.files
        assert {name: client.files[name] for name in modules} == {
            name: server.files[name] for name in modules
        }
        assert client.files["py.typed"] == server.files["py.typed"] == b""  # PEP 561, not partial
        assert set(server.user_files) == {
            "handlers.py",
            "Dockerfile",
            "deploy/nginx.conf",
            "deploy/compose.yaml",
        }


def test_headers(
    built: dict[str, tuple[GeneratedPackage, GeneratedPackage]], specs: dict[str, ValidatedSpec]
) -> None:
    for key, (client, server) in built.items():
        spec = specs[key]
        header = f"# Generated by mcpgen {RELEASE} from {spec.source} (sha256 {spec.digest}). DO NOT EDIT.\n"
        for name, data in [*client.files.items(), *server.files.items()]:
            if name.endswith(".py"):
                assert data.decode("utf-8").startswith(header), (key, name)
        handlers = server.user_files["handlers.py"].decode("utf-8")
        assert handlers.startswith(
            f"# Created by mcpgen {RELEASE} from {spec.source} (sha256 {spec.digest}).\n"
        )
        assert "DO NOT EDIT" not in handlers and "yours" in handlers.splitlines()[1]


def test_tools_json_is_the_validated_definitions(
    built: dict[str, tuple[GeneratedPackage, GeneratedPackage]], specs: dict[str, ValidatedSpec]
) -> None:
    for key, (client, server) in built.items():
        data = server.files["tools.json"]
        assert data.isascii() and data.endswith(b"}\n")
        assert json.loads(data) == {"tools": specs[key].tools}
        assert data == (json.dumps({"tools": specs[key].tools}, indent=2, ensure_ascii=True) + "\n").encode()
        # a client's adds each tool's pin (issue 35), computed by the runtime's one function
        pinned = {"tools": specs[key].tools, "pins": pin_all(specs[key].tools)}
        assert client.files["tools.json"] == (json.dumps(pinned, indent=2, ensure_ascii=True) + "\n").encode()


def test_python_files_parse_and_are_black_stable(
    built: dict[str, tuple[GeneratedPackage, GeneratedPackage]],
) -> None:
    import black

    for key, (client, server) in built.items():
        for name, data in [*client.files.items(), *server.files.items(), *server.user_files.items()]:
            if not name.endswith(".py"):
                continue
            text = data.decode("utf-8")
            assert text.endswith("\n") and "\r" not in text
            module = ast.parse(text, filename=name)
            if name.startswith("_models/"):
                classes = {node.name for node in module.body if isinstance(node, ast.ClassDef)}
                assert "Model" not in classes, key  # no stray root model of the container document
            if key == "weather":
                assert black.format_str(text, mode=black_format.BLACK_MODE) == text, name


def test_no_absolute_paths_or_timestamps(built: dict[str, tuple[GeneratedPackage, GeneratedPackage]]) -> None:
    for client, server in built.values():
        for data in [*client.files.values(), *server.files.values(), *server.user_files.values()]:
            text = data.decode("utf-8")
            assert str(ROOT) not in text and "/tmp/" not in text
            comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
            assert not any("timestamp" in line or "datamodel-codegen" in line for line in comments)


def test_every_model_builds(imported: dict[str, ModuleType]) -> None:
    for name, package in imported.items():
        assert build_every_model(package.models) > 0, name


# ------------------------------------------------------------------------------ client surface


def test_weather_client_signatures(imported: dict[str, ModuleType]) -> None:
    from mcpgen_runtime import client as runtime_client
    from mcpgen_runtime.content import ToolResult

    package = imported["weather_client"]
    models = package.models
    assert issubclass(package.Client, runtime_client.Client)
    assert issubclass(package.AsyncClient, runtime_client.AsyncClient)
    assert package.__all__ == ["AsyncClient", "Client", "models"]

    def params(method: Any) -> list[tuple[str, Any, Any, Any]]:
        signature = inspect.signature(method, eval_str=True)
        return [(p.name, p.kind, p.annotation, p.default) for p in signature.parameters.values()]

    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    keyword = inspect.Parameter.KEYWORD_ONLY
    empty = inspect.Parameter.empty
    for cls in (package.Client, package.AsyncClient):
        assert params(cls.get_weather) == [
            ("self", positional, empty, empty),
            ("location", positional, str, empty),
        ]
        assert inspect.signature(cls.get_weather, eval_str=True).return_annotation is ToolResult
        assert (
            inspect.signature(cls.get_weather_data, eval_str=True).return_annotation
            is models.GetWeatherDataOutput
        )
        assert (
            inspect.signature(cls.list_users, eval_str=True).return_annotation
            == list[models.ListUsersOutputItem]
        )
        # JSON "number": int | float, so an int argument is sent as an int (2, not 2.0); two required
        # parameters: keyword-only, in `required` order
        assert params(cls.calculate_sum)[1:] == [
            ("a", keyword, int | float, empty),
            ("b", keyword, int | float, empty),
        ]
        assert [name for name, *_ in params(cls.execute_sql)[1:]] == ["region", "query"]
        assert all(kind is keyword for _, kind, *_ in params(cls.execute_sql)[1:])
        assert params(cls.get_current_time) == [("self", positional, empty, empty)]
        assert cls.get_weather.__doc__.startswith("Get current weather information for a location")
        assert "location: City name or zip code" in cls.get_weather.__doc__
    for name in (
        "get_weather",
        "get_weather_data",
        "list_users",
        "execute_sql",
        "calculate_sum",
        "get_current_time",
    ):
        assert not inspect.iscoroutinefunction(getattr(package.Client, name))
        assert inspect.iscoroutinefunction(getattr(package.AsyncClient, name))
    tools = json.loads((Path(package.__file__).parent / "tools.json").read_text())["tools"]
    assert list(package.Client._tool_definitions_) == tools


def test_every_tool_has_a_method(imported: dict[str, ModuleType], specs: dict[str, ValidatedSpec]) -> None:
    for key, spec in specs.items():
        package = imported[f"{key}_client"]
        wire_names = [tool["name"] for tool in spec.tools]
        expected = naming.method_names(wire_names, extra_reserved=_model_import_names(package.models))
        for wire in wire_names:
            for cls in (package.Client, package.AsyncClient):
                method = getattr(cls, expected[wire])
                signature = inspect.signature(method, eval_str=True)
                params = list(signature.parameters.values())[1:]
                required = [p for p in params if p.default is inspect.Parameter.empty]
                # required parameters first; positional only when there is exactly one of them
                assert params[: len(required)] == required, (key, wire)
                positional = [p for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
                assert positional == (required if len(required) == 1 else []), (key, wire)
                # every optional parameter defaults to UNSET: left out unless given
                assert all(p.default is UNSET for p in params[len(required) :]), (key, wire)


def _model_import_names(models: ModuleType) -> set[str]:
    tree = ast.parse(Path(models.__file__).read_text("utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            for alias in node.names:
                names.update({alias.name, alias.asname or alias.name})
    return names


class _Recorder:
    """Stands in for the runtime's `_call*`: records what a generated method sends."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], type, type | None]] = []
        self.structured: Any = None

    def _call(self, name: str, arguments: dict[str, Any], input_model: type) -> str:
        self.calls.append((name, arguments, input_model, None))
        return "result"

    def _call_structured(
        self, name: str, arguments: dict[str, Any], input_model: type, output_model: type
    ) -> Any:
        self.calls.append((name, arguments, input_model, output_model))
        return output_model.model_validate(self.structured)

    async def _acall(self, *args: Any) -> Any:
        return self._call(*args)

    async def _acall_structured(self, *args: Any) -> Any:
        return self._call_structured(*args)


def _bind(cls: type, recorder: _Recorder, is_async: bool) -> Any:
    client = object.__new__(cls)
    client._call = recorder._acall if is_async else recorder._call  # type: ignore[attr-defined]
    client._call_structured = recorder._acall_structured if is_async else recorder._call_structured  # type: ignore[attr-defined]
    return client


@pytest.mark.parametrize("is_async", [False, True])
def test_methods_send_wire_names_unchanged(imported: dict[str, ModuleType], is_async: bool) -> None:
    needs_shared("realworld", "github-tools.json")
    weather = imported["weather_client"]
    github = imported["github_client"]

    def run(value: Any) -> Any:
        return asyncio.run(value) if is_async else value

    recorder = _Recorder()
    cls = weather.AsyncClient if is_async else weather.Client
    client = _bind(cls, recorder, is_async)
    assert run(client.get_weather("Paris")) == "result"
    assert recorder.calls[-1] == ("get_weather", {"location": "Paris"}, weather.models.GetWeatherInput, None)
    recorder.structured = [{"id": "1", "name": "n", "email": "e"}]
    users = run(client.list_users())
    assert [user.id for user in users] == ["1"] and isinstance(users[0], weather.models.ListUsersOutputItem)
    assert recorder.calls[-1][3] is weather.models.ListUsersOutput
    recorder.structured = {"temperature": 1, "conditions": "c", "humidity": 2}
    assert run(client.get_weather_data(location="Oslo")).conditions == "c"

    cls = github.AsyncClient if is_async else github.Client
    client = _bind(cls, recorder, is_async)
    run(
        client.add_comment_to_pending_review(
            owner="owner",
            repo="repo",
            pull_number=7,
            path="path",
            body="body",
            subject_type="LINE",
            start_line=3,
        )
    )
    name, arguments, model, _ = recorder.calls[-1]
    assert name == "add_comment_to_pending_review" and model is github.models.AddCommentToPendingReviewInput
    assert arguments["pullNumber"] == 7 and arguments["subjectType"] == "LINE" and arguments["startLine"] == 3
    assert arguments["line"] is UNSET  # optionals left out arrive as UNSET; the runtime drops them


def test_github_signature_shape(imported: dict[str, ModuleType]) -> None:
    needs_shared("realworld", "github-tools.json")
    github = imported["github_client"]
    signature = inspect.signature(github.Client.actions_list, eval_str=True)
    names = list(signature.parameters)
    assert names[:4] == ["self", "method", "owner", "repo"]
    assert signature.parameters["page"].kind is inspect.Parameter.KEYWORD_ONLY
    assert signature.parameters["page"].default is UNSET
    assert signature.parameters["workflow_runs_filter"].annotation == (
        github.models.ActionsListInputWorkflowRunsFilter | Unset
    )
    # the required parameters in the schema's `required` order, not its (sorted) property order
    create = inspect.signature(github.Client.create_pull_request, eval_str=True).parameters
    assert list(create)[1:6] == ["owner", "repo", "title", "head", "base"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for name, p in create.items() if name != "self")


# ------------------------------------------------------------------------------ server surface


def test_weather_server_base(imported: dict[str, ModuleType]) -> None:
    from mcpgen_runtime.server import ToolBinding, ToolContext, ToolServer

    package = imported["weather_server"]
    models = package.models
    assert package.__all__ == ["Server", "ServerBase", "models"]
    assert issubclass(package.Server, package.ServerBase) and issubclass(package.ServerBase, ToolServer)
    bindings = {binding.name: binding for binding in package.ServerBase._tool_bindings_}
    assert list(bindings) == [tool["name"] for tool in package.ServerBase._tool_definitions_]
    assert bindings["list_users"] == ToolBinding(
        name="list_users",
        method="list_users",
        input_model="ListUsersInput",
        output_model="ListUsersOutput",
        output_is_root=True,
    )
    assert package.ServerBase._tool_models_ == models.__name__
    assert bindings["get_weather"].output_model is None and not bindings["get_weather"].output_is_root
    signature = inspect.signature(package.ServerBase.get_weather_data, eval_str=True)
    assert [(p.name, p.annotation) for p in signature.parameters.values()] == [
        ("self", inspect.Parameter.empty),
        ("args", models.GetWeatherDataInput),
        ("ctx", ToolContext),
    ]
    assert signature.return_annotation is models.GetWeatherDataOutput
    assert inspect.iscoroutinefunction(package.Server.get_weather)
    assert package.Server.get_weather.__qualname__ == "Server.get_weather"  # overridden in handlers.py
    package.Server()  # definitions and bindings agree


class Loopback:
    """An in-process transport: each request goes straight to `ToolServer.handle_message`."""

    sends_headers = False

    def __init__(self, server: Any) -> None:
        self.server = server
        self.runner = asyncio.Runner()

    def request(
        self, message: dict[str, Any], headers: Any, *, timeout: Any, on_notification: Any = None
    ) -> Any:
        from mcpgen_runtime.server import IncomingRequest

        outcome = self.runner.run(self.server.handle_message(message, IncomingRequest()))
        return outcome.response, outcome.status

    def notify(self, message: dict[str, Any], headers: Any) -> None:
        pass

    def close(self) -> None:
        self.runner.close()


def test_client_tool_table_is_the_embedded_definitions(imported: dict[str, ModuleType]) -> None:
    client_pkg, server_pkg = imported["weather_client"], imported["weather_server"]
    with client_pkg.Client(transport=Loopback(server_pkg.Server())) as client:
        assert list(client.tools) == [tool["name"] for tool in client_pkg.Client._tool_definitions_]
        assert [param.header for param in client.tools["execute_sql"].header_params] == ["Mcp-Param-Region"]


def test_generated_client_calls_generated_server(imported: dict[str, ModuleType]) -> None:
    """Behaviour, not text: the weather client talks to the weather server in-process."""
    from mcpgen_runtime.errors import ToolError

    client_pkg, server_pkg = imported["weather_client"], imported["weather_server"]
    sm = server_pkg.models

    class Impl(server_pkg.Server):  # type: ignore[misc, name-defined]
        async def get_weather_data(self, args: Any, ctx: Any) -> Any:
            return sm.GetWeatherDataOutput(
                temperature=21.5, conditions=f"sunny in {args.location}", humidity=40
            )

        async def list_users(self, args: Any, ctx: Any) -> Any:
            return [sm.ListUsersOutputItem(id="1", name="Ada", email="ada@example.com")]

    with client_pkg.Client(transport=Loopback(Impl())) as client:
        data = client.get_weather_data("Paris")
        assert (
            isinstance(data, client_pkg.models.GetWeatherDataOutput) and data.conditions == "sunny in Paris"
        )
        users = client.list_users()
        assert [user.email for user in users] == ["ada@example.com"]
        with pytest.raises(ToolError, match="not implemented"):
            client.get_weather("Oslo")


# ---------------------------------------------------------------------------------- determinism


def test_rebuild_gives_identical_bytes(
    specs: dict[str, ValidatedSpec], built: dict[str, tuple[GeneratedPackage, GeneratedPackage]]
) -> None:
    clear_generator_caches()
    for key in [key for key in ("weather", "conformance") if key in SPECS]:
        client, server = built[key]
        again = build_client(specs[key], package=client.package)
        assert again.files == client.files
        again_server = build_server(specs[key], package=server.package)
        assert again_server.files == server.files and again_server.user_files == server.user_files


_DIGEST_SCRIPT = """
import hashlib, json, sys
from tests.codegen.pipeline.test_generate import SPECS, load_spec
from codegen.pipeline import build_client, build_server
out = {}
for key in [key for key in ("weather", "conformance", "shapes") if key in SPECS]:
    spec = load_spec(SPECS[key])
    client = build_client(spec, package=f"gen_{key}_client")
    server = build_server(spec, package=f"gen_{key}_server")
    for pkg in (client, server):
        for name, data in sorted({**pkg.files, **pkg.user_files}.items()):
            out[f"{pkg.package}/{name}"] = hashlib.sha256(data).hexdigest()
json.dump(out, sys.stdout, sort_keys=True)
"""


def test_same_bytes_under_other_hash_seeds(
    built: dict[str, tuple[GeneratedPackage, GeneratedPackage]],
) -> None:
    expected = {}
    for key in [key for key in ("weather", "conformance", "shapes") if key in SPECS]:
        for pkg in built[key]:
            for name, data in {**pkg.files, **pkg.user_files}.items():
                expected[f"{pkg.package}/{name}"] = hashlib.sha256(data).hexdigest()
    procs = [
        subprocess.Popen(
            [PYTHON, "-c", _DIGEST_SCRIPT],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": f"{ROOT / 'runtime'}:{ROOT}"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for seed in ("0", "4242")
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-2000:]
        assert json.loads(out) == expected
