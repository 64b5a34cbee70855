"""Generated code for the tasks extension (issue 34), from specs/task-tools.json: `execution.taskSupport`
kept in tools.json for clients and servers and shown in a task-capable tool's method docstring; the
typed namespaces `client.start.<tool>(...)` and `client.resume.<tool>(task_id)` of both clients, which
hand the runtime's `_start_task` / `_resume_task` exactly what the plain method hands `_call`
(their types are checked by test_generate_typecheck.py, the handles' behaviour by the runtime's tests)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from codegen.pipeline import build_client, build_server
from codegen.spec import GeneratedPackage, ValidatedSpec
from tests.codegen.pipeline.test_generate import load_spec, write_package
from tests.support import ROOT

pytestmark = pytest.mark.peer  # building a package forks a copy of the generator (parallel.py)

SPEC = ROOT / "specs" / "task-tools.json"


@pytest.fixture(scope="module")
def spec() -> ValidatedSpec:
    return load_spec(SPEC)


@pytest.fixture(scope="module")
def client(spec: ValidatedSpec) -> GeneratedPackage:
    return build_client(spec, package="gen_tasks_client")


def _method_doc(source: str, cls: str, method: str) -> str:
    import ast

    tree = ast.parse(source)
    klass = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    func = next(
        n for n in klass.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == method
    )
    return ast.get_docstring(func) or ""


def test_tools_json_keeps_execution_for_clients_and_servers(
    spec: ValidatedSpec, client: GeneratedPackage
) -> None:
    server = build_server(spec, package="gen_tasks_server")
    wanted = {t["name"]: t.get("execution") for t in json.loads(SPEC.read_text("utf-8"))["tools"]}
    for package in (client, server):
        tools: list[dict[str, Any]] = json.loads(package.files["tools.json"])["tools"]
        assert {t["name"]: t.get("execution") for t in tools} == wanted


@pytest.mark.parametrize("cls", ["Client", "AsyncClient"])
def test_task_capable_methods_say_so_in_their_docstring(client: GeneratedPackage, cls: str) -> None:
    source = client.files["client.py"].decode("utf-8")
    crunch = _method_doc(source, cls, "crunch")
    assert 'Task-capable (`execution.taskSupport` "optional"): the server may run a call as a task.' in crunch
    assert "`start.crunch(...)` returns a handle at once" in crunch
    assert crunch.index("Task-capable") < crunch.index("Args:")
    report = _method_doc(source, cls, "build_report")
    assert '"required"): the server runs every call as a task' in report
    for plain in ("ping", "start_"):  # "forbidden", absent
        assert "Task-capable" not in _method_doc(source, cls, plain)


# ------------------------------------------------------------------ client.start / client.resume


@pytest.fixture(scope="module")
def package(client: GeneratedPackage, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("tasks")
    write_package(root, client)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(client.package)
    finally:
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.startswith(client.package)]:
            del sys.modules[name]


class Recorded:
    """What a generated namespace method handed the runtime: `_start_task` / `_resume_task`'s arguments."""

    def __init__(self, method: str, *args: Any, **kwargs: Any) -> None:
        self.method, self.args, self.kwargs = method, args, kwargs


def _recording(base: type[Any]) -> type[Any]:
    """The generated client class with the runtime's two task methods recording their arguments
    (their behaviour is the client runtime's, tested there): what generated code must pass them."""

    class RecordingClient(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:  # no connection: the namespaces only forward
            pass

        def _start_task(self, *args: Any, **kwargs: Any) -> Recorded:
            return Recorded("start", *args, **kwargs)

        def _resume_task(self, *args: Any, **kwargs: Any) -> Recorded:
            return Recorded("resume", *args, **kwargs)

    return RecordingClient


def _async_recording(base: type[Any]) -> type[Any]:
    class RecordingAsyncClient(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            pass

        async def _start_task(self, *args: Any, **kwargs: Any) -> Recorded:
            return Recorded("start", *args, **kwargs)

        def _resume_task(self, *args: Any, **kwargs: Any) -> Recorded:
            return Recorded("resume", *args, **kwargs)

    return RecordingAsyncClient


def _forwarded(package: ModuleType, start: Callable[..., Any], resume: Callable[..., Any]) -> None:
    """The recorded `_start_task` / `_resume_task` calls of both clients say the same."""
    m = package.models
    crunch = start("crunch", 3)
    assert (crunch.method, crunch.args, crunch.kwargs) == (
        "start",
        ("crunch", {"count": 3}, m.CrunchInput),
        {},
    )
    report = start("build_report", project="p", quarter=2, format="html")
    assert report.args == (
        "build_report",
        {"project": "p", "quarter": 2, "format": "html"},
        m.BuildReportInput,
        m.BuildReportOutput,
    )
    assert report.kwargs == {}
    jobs = start("list_jobs")
    assert jobs.args == ("list_jobs", {}, m.ListJobsInput, m.ListJobsOutput)
    assert set(jobs.kwargs) == {"finish"}
    # the plain method returns `_result.root`: so does the handle's result
    output = m.ListJobsOutput.model_validate([{"id": "a"}])
    assert jobs.kwargs["finish"](output) is output.root
    renamed = start("start_", what="x")  # a tool named `start`: method `start_`, wire name unchanged
    assert renamed.args == ("start", {"what": "x"}, m.StartInput)

    assert resume("crunch", "tid-1").args == ("crunch", "tid-1")
    assert resume("build_report", "tid-2").args == ("build_report", "tid-2", m.BuildReportOutput)
    listed = resume("list_jobs", "tid-3")
    assert listed.args == ("list_jobs", "tid-3", m.ListJobsOutput) and set(listed.kwargs) == {"finish"}
    assert resume("start_", "tid-4").args == ("start", "tid-4")
    assert listed.method == "resume"


def test_blocking_namespaces_forward_every_tool_to_the_runtime(package: ModuleType) -> None:
    client = _recording(package.Client)()
    _forwarded(
        package,
        lambda tool, *a, **k: getattr(client.start, tool)(*a, **k),
        lambda tool, task_id: getattr(client.resume, tool)(task_id),
    )


def test_async_namespaces_forward_every_tool_to_the_runtime(package: ModuleType) -> None:
    client = _async_recording(package.AsyncClient)()
    _forwarded(
        package,
        lambda tool, *a, **k: asyncio.run(getattr(client.start, tool)(*a, **k)),
        lambda tool, task_id: getattr(client.resume, tool)(task_id),  # no I/O: a plain method
    )
    assert inspect.iscoroutinefunction(type(client.start).crunch)
    assert not inspect.iscoroutinefunction(type(client.resume).crunch)


@pytest.mark.parametrize("cls", ["Client", "AsyncClient"])
def test_namespaces_have_the_plain_methods_parameters(package: ModuleType, cls: str) -> None:
    client_class = getattr(package, cls)
    client = (_recording if cls == "Client" else _async_recording)(client_class)()
    start, resume = client.start, client.resume
    assert client.start is not start  # made per access: a namespace holds nothing but the method
    assert not hasattr(start, "__dict__") and not hasattr(resume, "__dict__")
    assert type(start).__module__ == type(resume).__module__ == f"{package.__name__}._tasks"
    tools = [
        name for name in vars(client_class) if not name.startswith("_") and name not in ("start", "resume")
    ]
    assert tools == ["crunch", "build_report", "list_jobs", "ping", "start_"]
    handle = "AsyncTaskHandle" if cls == "AsyncClient" else "TaskHandle"
    for tool in tools:
        plain = inspect.signature(getattr(client_class, tool))
        started = inspect.signature(getattr(type(start), tool))
        assert started.parameters == plain.parameters, tool
        assert started.return_annotation == f"{handle}[{plain.return_annotation}]"
        assert list(inspect.signature(getattr(type(resume), tool)).parameters) == ["self", "task_id"]


def test_namespaces_are_imported_on_first_use_only(client: GeneratedPackage, tmp_path: Path) -> None:
    """Importing the client or its command line does not import _tasks.py (117 GitHub tools: about
    1 ms of import time and 4 MB per 1,000 tools saved); `start` or `resume` imports it."""
    write_package(tmp_path, client)
    name = client.package
    probe = f"""
import sys
import {name}.__main__
from {name} import AsyncClient, Client
assert "{name}._tasks" not in sys.modules, "imported with the client"
client = Client.__new__(Client)
client.start, AsyncClient.__new__(AsyncClient).resume
assert "{name}._tasks" in sys.modules
"""
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "runtime"), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
