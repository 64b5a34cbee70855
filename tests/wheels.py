"""The two distributions of this repository built as wheels, once per test run (xdist workers share them).

`mcpgen` (the generator, the root project) and `mcpgen-runtime` (runtime/, what generated code
imports) are built with `pip wheel --no-deps` into one directory; tests install them into fresh
virtualenvs, taking their other dependencies from the pip cache or the index, nothing from here.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import ROOT


@dataclass(frozen=True)
class Wheels:
    generator: Path  # mcpgen-*.whl
    runtime: Path  # mcpgen_runtime-*.whl


def outside_env() -> dict[str, str]:
    """This environment without what points into the checkout (PYTHONPATH, MYPYPATH, VIRTUAL_ENV)."""
    return {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "MYPYPATH", "VIRTUAL_ENV")
    }


def run(
    args: list[str | Path], cwd: Path, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run outside the checkout: no PYTHONPATH, MYPYPATH or VIRTUAL_ENV of ours leaks in."""
    return subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env={**outside_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.args}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result.stdout


def build(dist: Path) -> Wheels:
    for project in (ROOT, ROOT / "runtime"):
        ok(
            run(
                [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, project],
                dist.parent,
            )
        )
    [generator] = dist.glob("mcpgen-*.whl")
    [runtime] = dist.glob("mcpgen_runtime-*.whl")
    return Wheels(generator, runtime)


def build_once(tmp_path_factory: pytest.TempPathFactory) -> Wheels:
    """`build`, once per run: xdist workers (basetemp popen-gwN under the run's directory) take a lock
    on the run's directory and the first one builds; a run without workers builds in its own."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    dist = shared / "wheels" / "dist"
    dist.parent.mkdir(parents=True, exist_ok=True)
    with (shared / "wheels" / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = shared / "wheels" / ".built"
        if not done.exists():
            dist.mkdir(exist_ok=True)
            wheels = build(dist)
            done.touch()
            return wheels
    [generator] = dist.glob("mcpgen-*.whl")
    [runtime] = dist.glob("mcpgen_runtime-*.whl")
    return Wheels(generator, runtime)


def new_venv(where: Path, *requirements: str | Path) -> Path:
    """A fresh virtualenv with `requirements` installed; its python."""
    ok(run([sys.executable, "-m", "venv", where], where.parent))
    python = where / "bin" / "python"
    ok(run([python, "-m", "pip", "install", "--quiet", *requirements], where.parent))
    return python


def tagged_clone(base: Path, tag: str) -> Path:
    """A clone of this checkout's HEAD under `base`, with the annotated tag `tag`: what a release, or
    a pre-commit `rev:`, is built from."""
    clone = base / "mcpgen"
    ok(run(["git", "clone", "--quiet", "--no-local", ROOT, clone], base))
    ok(run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", tag, "-m", tag], clone))
    return clone
