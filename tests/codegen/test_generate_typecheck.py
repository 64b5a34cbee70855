"""Generated packages pass `mypy --strict`, pyright (strict) and `ruff check` with the project's rules.

Checked: the weather client and server, and the hostile tool list's client and server (every
escaping and renaming path). Server packages need `mcpgen_runtime.server.ToolReturn`; until the
runtime exports it their static checks are skipped with that reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.pipeline import build_client, build_server
from codegen.spec import GeneratedPackage
from tests.codegen.test_generate import SPECS, load_spec, write_package
from tests.codegen.test_generate_hostile import hostile_spec
from tests.support import ROOT

BIN = Path(sys.executable).parent
HAS_TOOL_RETURN = hasattr(__import__("mcpgen_runtime.server", fromlist=["ToolReturn"]), "ToolReturn")
needs_tool_return = pytest.mark.skipif(
    not HAS_TOOL_RETURN, reason="mcpgen_runtime.server does not export ToolReturn yet (generated base.py imports it)"
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], list[str]]:
    """(root, client packages, server packages) written under one temporary folder."""
    root = tmp_path_factory.mktemp("typed")
    weather = load_spec(SPECS["weather"])
    hostile = hostile_spec()
    clients: list[GeneratedPackage] = [
        build_client(weather, package="tc_weather_client"),
        build_client(hostile, package="tc_hostile_client"),
    ]
    servers: list[GeneratedPackage] = [
        build_server(weather, package="tc_weather_server"),
        build_server(hostile, package="tc_hostile_server"),
    ]
    for package in (*clients, *servers):
        write_package(root, package)
    return root, [p.package for p in clients], [p.package for p in servers]


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=300, check=False)


def _mypy(root: Path, packages: list[str]) -> None:
    config = root / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\nplugins = pydantic.mypy\nfollow_imports = silent\n"
                      "python_version = 3.11\n", "utf-8")
    args = [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(root / ".mypy_cache")]
    for package in packages:
        args += ["-p", package]
    result = _run(args, root, {"MYPYPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout + result.stderr


def _pyright(root: Path, packages: list[str]) -> None:
    pyright = BIN / "pyright"
    if not pyright.exists() or shutil.which("node") is None:
        pytest.skip("pyright or node not available")
    config = root / f"pyrightconfig-{packages[0]}.json"
    config.write_text(json.dumps({
        "typeCheckingMode": "strict", "pythonVersion": "3.11", "extraPaths": [str(ROOT)], "include": packages,
    }), "utf-8")
    result = _run([str(pyright), "--project", str(config), "--pythonpath", sys.executable], root)
    assert result.returncode == 0 and "0 errors" in result.stdout, result.stdout[-4000:] + result.stderr[-2000:]


def test_ruff_check(tree: tuple[Path, list[str], list[str]]) -> None:
    root, clients, servers = tree
    result = _run([
        str(BIN / "ruff"), "check", "--no-cache",
        "--config", str(ROOT / "pyproject.toml"),
        # in a user's project the runtime is a third-party package, as it is for pydantic
        "--config", "lint.isort.known-third-party = ['mcpgen_runtime']",
        *clients, *servers,
    ], root)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clients(tree: tuple[Path, list[str], list[str]]) -> None:
    root, clients, _ = tree
    _mypy(root, clients)


def test_pyright_strict_clients(tree: tuple[Path, list[str], list[str]]) -> None:
    root, clients, _ = tree
    _pyright(root, clients)


@needs_tool_return
def test_mypy_strict_servers(tree: tuple[Path, list[str], list[str]]) -> None:
    root, _, servers = tree
    _mypy(root, servers)


@needs_tool_return
def test_pyright_strict_servers(tree: tuple[Path, list[str], list[str]]) -> None:
    root, _, servers = tree
    _pyright(root, servers)
