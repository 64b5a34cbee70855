"""Generated packages pass `mypy --strict`, pyright (strict) and `ruff check` with the project's rules.

Checked, client and server each: every spec in specs/, the hostile tool list of
test_generate_hostile.py, every file of the hostile corpus (tests/hostile/corpus) and a sample of
the synthetic spec (specs/tools/make_synthetic.py). All packages go to one temporary folder and
each checker runs once over all of them; mypy and pyright run at the same time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from codegen.pipeline import build_client, build_server
from codegen.spec import ValidatedSpec, canonical_digest
from tests.codegen.pipeline.test_generate import load_spec, write_package
from tests.codegen.pipeline.test_generate_hostile import hostile_spec
from tests.support import ROOT

BIN = Path(sys.executable).parent
SYNTHETIC_SAMPLE = 25


def _make_tools(count: int) -> list[dict[str, object]]:
    sys.path.insert(0, str(ROOT / "specs" / "tools"))
    try:
        from make_synthetic import make_tools
    finally:
        sys.path.remove(str(ROOT / "specs" / "tools"))
    return make_tools(count)


def specs_to_check() -> dict[str, ValidatedSpec]:
    specs = {path.stem.replace("-", "_"): load_spec(path) for path in sorted((ROOT / "specs").glob("*.json"))}
    specs["hostile"] = hostile_spec()
    for path in sorted((ROOT / "tests" / "hostile" / "corpus").glob("*.json")):
        specs[f"corpus_{path.stem}"] = load_spec(path)
    tools = _make_tools(SYNTHETIC_SAMPLE)
    specs["synthetic"] = ValidatedSpec(source="synthetic.json", tools=tools, digest=canonical_digest(tools))
    return specs


# What a user's code sees of the task namespaces (issue 34): each `assert_type` fails both checkers
# unless `client.start.<tool>(...)` / `client.resume.<tool>(id)` is the handle of the plain method's type.
TASK_USAGE = """\
from typing import assert_type

from mcpgen_runtime.client import AsyncTaskHandle, TaskHandle
from mcpgen_runtime.content import ToolResult

from tc_task_tools_client import AsyncClient, Client
from tc_task_tools_client import models as m


def blocking(client: Client) -> m.BuildReportOutput:
    assert_type(client.start.crunch(3), TaskHandle[ToolResult])
    assert_type(client.start.list_jobs(), TaskHandle[list[m.ListJobsOutputItem]])
    assert_type(client.start.start_(what="x"), TaskHandle[ToolResult])
    assert_type(client.resume.crunch("id"), TaskHandle[ToolResult])
    assert_type(client.resume.list_jobs("id").result(), list[m.ListJobsOutputItem])
    handle: TaskHandle[m.BuildReportOutput] = client.start.build_report(project="p", quarter=1)
    assert_type(handle.task_id, str | None)
    assert_type(client.resume.build_report("id"), TaskHandle[m.BuildReportOutput])
    return handle.result()


async def asynchronous(client: AsyncClient) -> m.BuildReportOutput:
    assert_type(await client.start.crunch(3), AsyncTaskHandle[ToolResult])
    assert_type(client.resume.list_jobs("id"), AsyncTaskHandle[list[m.ListJobsOutputItem]])
    assert_type(await client.resume.crunch("id").result(), ToolResult)
    handle = await client.start.build_report(project="p", quarter=1, format="html")
    assert_type(handle, AsyncTaskHandle[m.BuildReportOutput])
    return await handle.result()
"""


@dataclass
class Tree:
    root: Path
    packages: list[str]
    mypy: subprocess.Popen[str]
    pyright: subprocess.Popen[str] | None


def _start(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        args,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    root = tmp_path_factory.mktemp("typed")
    packages: list[str] = []
    for key, spec in specs_to_check().items():
        for package in (
            build_client(spec, package=f"tc_{key}_client"),
            build_server(spec, package=f"tc_{key}_server"),
        ):
            write_package(root, package)
            packages.append(package.package)
    (root / "tc_task_usage").mkdir()
    (root / "tc_task_usage" / "__init__.py").write_text(TASK_USAGE, "utf-8")
    packages.append("tc_task_usage")
    (root / "mypy.ini").write_text(
        "[mypy]\nstrict = True\nplugins = pydantic.mypy\nfollow_imports = silent\npython_version = 3.11\n",
        "utf-8",
    )
    mypy = _start(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(root / "mypy.ini"),
            "--cache-dir",
            str(root / ".mypy_cache"),
            *(arg for p in packages for arg in ("-p", p)),
        ],
        root,
        {"MYPYPATH": os.pathsep.join([str(ROOT), str(ROOT / "runtime")])},
    )
    pyright = None
    if (BIN / "pyright").exists() and shutil.which("node") is not None:
        (root / "pyrightconfig.json").write_text(
            json.dumps(
                {
                    "typeCheckingMode": "strict",
                    "pythonVersion": "3.11",
                    "extraPaths": [str(ROOT), str(ROOT / "runtime")],
                    "include": packages,
                }
            ),
            "utf-8",
        )
        pyright = _start(
            [
                str(BIN / "pyright"),
                "--project",
                str(root / "pyrightconfig.json"),
                "--pythonpath",
                sys.executable,
            ],
            root,
        )
    tree = Tree(root, packages, mypy, pyright)
    try:
        yield tree
    finally:
        for proc in (mypy, pyright):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=600)
    return proc.returncode, out


def test_every_spec_is_checked(tree: Tree) -> None:
    for spec in (ROOT / "specs").glob("*.json"):
        assert f"tc_{spec.stem.replace('-', '_')}_client" in tree.packages
    assert len(tree.packages) >= 2 * 8
    assert "tc_task_tools_client" in tree.packages and "tc_task_usage" in tree.packages


def test_ruff_check(tree: Tree) -> None:
    result = subprocess.run(
        [
            str(BIN / "ruff"),
            "check",
            "--no-cache",
            "--config",
            str(ROOT / "pyproject.toml"),
            # in a user's project the runtime is a third-party package, as it is for pydantic
            "--config",
            "lint.isort.known-third-party = ['mcpgen_runtime']",
            # generated code's lines follow the target's line-length setting, and literals (descriptions,
            # schemas) the formatter cannot split run past it: the repository's 110 columns do not apply
            "--config",
            "lint.extend-ignore = ['E501']",
            *tree.packages,
        ],
        cwd=tree.root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict(tree: Tree) -> None:
    code, out = _finish(tree.mypy)
    assert code == 0, out[-6000:]


def test_pyright_strict(tree: Tree) -> None:
    if tree.pyright is None:
        pytest.skip("pyright or node not available")
    code, out = _finish(tree.pyright)
    assert code == 0 and "0 errors" in out, out[-6000:]
