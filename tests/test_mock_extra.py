"""The runtime's pytest plugin in a project that installed `mcpgen-runtime` without its `[mock]` extra.

A fresh virtualenv gets the runtime wheel (tests/wheels.py) and pytest, nothing else. The plugin
(entry point `pytest11`) loads in its every pytest run and costs nothing there; a test that asks for
the `mcp_mock` fixture fails with one line naming `pip install 'mcpgen-runtime[mock]'`, not an import
traceback, first without the extra's uvicorn and click, then (with `[server]` added) without its
hypothesis.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import ROOT, modules_after_pytest
from tests.wheels import Wheels, new_venv, ok, outside_env, run

pytestmark = [pytest.mark.peer, pytest.mark.timeout(900)]
INSTALL = "pip install 'mcpgen-runtime[mock]'"

USER_TESTS = f"""
import pytest

@pytest.mark.mcp_mock(spec={str(ROOT / "specs" / "weather.json")!r})
def test_with_a_mock(mcp_mock):
    mcp_mock.client.call_tool("get_weather", {{"location": "Oslo"}})

def test_without_one():
    pass
"""


@pytest.fixture(scope="module")
def lean(tmp_path_factory: pytest.TempPathFactory, wheels: Wheels) -> tuple[Path, Path, Wheels]:
    """(python of a venv with the runtime and pytest only, a project folder with the user's tests)."""
    root = tmp_path_factory.mktemp("mock-extra")
    python = new_venv(root / "venv", wheels.runtime, "pytest")
    project = root / "project"
    project.mkdir()
    (project / "test_user.py").write_text(USER_TESTS, "utf-8")
    return python, project, wheels


def _one_line_naming_the_extra(python: Path, project: Path, missing: str) -> None:
    done = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"], project)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    line = f"the mcp_mock fixture needs the mock extra ({missing} is not installed): {INSTALL}"
    rest = out.partition("ERROR at setup of test_with_a_mock")[2]
    assert rest.split("\n")[1] == line, out  # the error is that one line, under its header
    assert "Traceback" not in out and "ModuleNotFoundError" not in out and "File " not in out, out
    assert "1 passed, 1 error" in out, out


def test_the_fixture_without_the_extra_is_one_line(lean: tuple[Path, Path, Wheels]) -> None:
    python, project, _ = lean
    _one_line_naming_the_extra(python, project, "click")


def test_the_plugin_costs_nothing_in_a_run_that_uses_no_mock(lean: tuple[Path, Path, Wheels]) -> None:
    python, project, _ = lean
    folder = project.parent / "plain"
    folder.mkdir(exist_ok=True)
    (folder / "test_plain.py").write_text("def test_plain():\n    pass\n", "utf-8")
    with_plugin, done = modules_after_pytest(python, folder, env=outside_env())
    assert done.returncode == 0, done.stdout[-3000:]
    without, done = modules_after_pytest(python, folder, "-p", "no:mcpgen", env=outside_env())
    assert done.returncode == 0, done.stdout[-3000:]
    assert with_plugin - without == {"mcpgen_runtime", "mcpgen_runtime.pytest_plugin"}
    assert "pydantic" not in with_plugin and "httpx" not in with_plugin


def test_with_the_server_extra_but_no_hypothesis_it_is_one_line_too(lean: tuple[Path, Path, Wheels]) -> None:
    python, project, wheels = lean
    ok(run([python, "-m", "pip", "install", "--quiet", f"{wheels.runtime}[server]"], project))
    _one_line_naming_the_extra(python, project, "hypothesis")
