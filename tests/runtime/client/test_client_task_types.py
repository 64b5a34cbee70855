"""`TaskHandle[X]` / `AsyncTaskHandle[X]` are precise for mypy (strict) and pyright: what generated
code declares (`client.start.<tool>(...) -> TaskHandle[Out]`) is what `.result()` gives."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

pytestmark = [pytest.mark.peer, pytest.mark.timeout(120)]  # runs the type checkers

BIN = Path(sys.executable).parent
SNIPPET = """
from __future__ import annotations

import operator
from typing import cast

from pydantic import BaseModel

from mcpgen_runtime.client import AsyncClient, AsyncTaskHandle, Client, TaskHandle, TaskState


class In(BaseModel):
    n: int


class Out(BaseModel):
    total: int


def blocking(client: Client) -> None:
    handle = cast(TaskHandle[Out], client._start_task("crunch", {"n": 1}, In, Out))
    reveal_type(handle.result())
    state: TaskState = handle.wait(timeout=1.0)
    resumed = cast(TaskHandle[int], client._resume_task("crunch", "id", Out, operator.attrgetter("total")))
    reveal_type(resumed.result())


async def asynchronous(client: AsyncClient) -> None:
    handle = cast(AsyncTaskHandle[Out], await client._start_task("crunch", {"n": 1}, In, Out))
    reveal_type(await handle.result())
    reveal_type(client._resume_task("crunch", "id"))
"""
EXPECTED = ["Out", "int", "Out", "AsyncTaskHandle[Any]"]


@pytest.fixture
def snippet(tmp_path: Path) -> Path:
    path = tmp_path / "snippet.py"
    path.write_text(SNIPPET)
    return path


def _env() -> dict[str, str]:
    return {**os.environ, "MYPYPATH": os.pathsep.join([str(ROOT), str(ROOT / "runtime")])}


def _revealed(lines: list[str], marker: str) -> list[str]:
    return [line.rsplit(marker, 1)[1].strip().strip('"') for line in lines if marker in line]


def test_mypy_sees_the_handles_type(snippet: Path) -> None:
    run = subprocess.run(
        [str(BIN / "mypy"), "--strict", "--no-incremental", str(snippet)],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=snippet.parent,
    )
    assert run.returncode == 0, run.stdout
    revealed = _revealed(run.stdout.splitlines(), "Revealed type is ")
    assert [name.rsplit(".", 1)[-1] for name in revealed] == EXPECTED


def test_pyright_sees_the_handles_type(snippet: Path) -> None:
    if not (BIN / "pyright").exists() or shutil.which("node") is None:
        pytest.skip("needs pyright and node (the dev environment)")
    run = subprocess.run(
        [str(BIN / "pyright"), "--pythonpath", sys.executable, str(snippet)],
        capture_output=True,
        text=True,
        env={**_env(), "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "runtime")])},
        cwd=snippet.parent,
    )
    assert run.returncode == 0, run.stdout
    revealed = [line.rsplit(" is ", 1)[1].strip('"') for line in run.stdout.splitlines() if "Type of" in line]
    assert revealed == EXPECTED
