"""Generated code for the tasks extension (issue 34), from specs/task-tools.json: `execution.taskSupport`
kept in tools.json for clients and servers and shown in a task-capable tool's method docstring."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codegen.pipeline import build_client, build_server
from codegen.spec import GeneratedPackage, ValidatedSpec
from tests.codegen.pipeline.test_generate import load_spec
from tests.support import ROOT

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
