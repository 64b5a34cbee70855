"""The pytest plugin as a user's project meets it: a fresh pytest process in an empty folder,
the plugin found through its `pytest11` entry point, the marker registered, clear errors, and a run
that uses no mock paying nothing for the plugin."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.support import ROOT, modules_after_pytest

USER_TESTS = """
import sys
import pytest

SPEC = {spec!r}

def test_the_plugin_costs_nothing_until_used():
    assert "mcpgen_runtime.client" not in sys.modules
    assert "hypothesis" not in sys.modules

@pytest.mark.mcp_mock(spec=SPEC, responses={{"tools": {{"get_weather": [{{"text": "Sunny"}}]}}}})
def test_marked(mcp_mock):
    assert mcp_mock.client.call_tool("get_weather", {{"location": "Oslo"}}).text == "Sunny"
    mcp_mock.assert_calls([("get_weather", {{"location": "Oslo"}})])

def test_unmarked(mcp_mock):
    pass

@pytest.mark.mcp_mock(spec=SPEC, responses={{"tools": {{"get_wether": []}}}})
def test_bad_responses(mcp_mock):
    pass
"""


def test_the_entry_point_names_the_plugin() -> None:
    (plugin,) = [ep for ep in entry_points(group="pytest11") if ep.name == "mcpgen"]
    assert plugin.value == "mcpgen_runtime.pytest_plugin"


def test_a_users_test_suite_with_the_fixture(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(USER_TESTS.format(spec=str(ROOT / "specs" / "weather.json")))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--strict-markers",
            "-rA",
            "test_user.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout
    assert "PASSED test_user.py::test_the_plugin_costs_nothing_until_used" in out, out
    assert "PASSED test_user.py::test_marked" in out, out
    assert "the mcp_mock fixture needs @pytest.mark.mcp_mock(spec=... or package=...)" in out, out
    assert "tools.get_wether: the spec has no tool 'get_wether'" in out, out
    assert "2 passed, 2 errors" in out, out


# What a test run that uses no mock must not pay for: the mock, the client, and their libraries.
HEAVY = (
    *("mcpgen_runtime.mock", "mcpgen_runtime.testing", "mcpgen_runtime.client", "pydantic", "uvicorn"),
    *("hypothesis", "httpx", "orjson", "jsonschema", "yaml", "click"),
)


@pytest.mark.peer
def test_a_run_that_uses_no_mock_imports_nothing_of_the_plugins_but_itself(tmp_path: Path) -> None:
    """The entry point loads the plugin in every pytest run of the environment: with it, a run imports
    `mcpgen_runtime` (an empty package) and the plugin (stdlib and pytest) and nothing more."""
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "runtime")}
    with_plugin, done = modules_after_pytest(sys.executable, tmp_path, env=env)
    assert done.returncode == 0, done.stdout[-3000:]
    without, done = modules_after_pytest(sys.executable, tmp_path, "-p", "no:mcpgen", env=env)
    assert done.returncode == 0, done.stdout[-3000:]
    assert with_plugin - without == {"mcpgen_runtime", "mcpgen_runtime.pytest_plugin"}
    assert not [name for name in with_plugin - without if name.startswith(HEAVY)]
