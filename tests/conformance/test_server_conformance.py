"""The official MCP conformance suite (pinned harness, docs/RULES.md conformance §5) against the generated
conformance server: one server for the module, one harness run per scenario and version.

Every server scenario tagged 2026-07-28 must exit 0 with no FAILURE and no WARNING check, and so
must every tools-server scenario tagged with an initialize-based revision (2025-11-25, 2025-06-18,
2025-03-26), which the same server answers in legacy sessions, and every scenario of the tasks
extension (run without --spec-version); there is no expected-failures list.
The scenario lists and the runner live in conformance/server_scenarios.py (also usable from the
command line).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_runner() -> ModuleType:
    path = ROOT / "conformance" / "server_scenarios.py"
    spec = importlib.util.spec_from_file_location("mcpgen_conformance_server_scenarios", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


runner = _load_runner()

pytestmark = pytest.mark.skipif(
    not runner.harness_available(),
    reason="conformance harness not installed (make conformance-deps)",
)


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    port = runner.free_port()
    with runner.conformance_server(port):
        # The harness's dns-rebinding scenario needs a localhost URL (RULES.md conformance §5).
        yield f"http://localhost:{port}/mcp"


def test_every_applicable_scenario_is_run_or_excluded_with_a_reason() -> None:
    """The installed harness's 2026-07-28 server scenarios = ours + the documented exclusions
    (conformance §8)."""
    listed = set(runner.list_server_scenarios())
    ours = set(runner.SCENARIOS)
    assert not ours - listed, f"scenarios the harness does not know: {sorted(ours - listed)}"
    unaccounted = listed - ours - set(runner.EXCLUDED)
    assert not unaccounted, f"new harness scenarios to run or exclude: {sorted(unaccounted)}"
    assert not ours & set(runner.EXCLUDED)


@pytest.mark.parametrize("version", list(runner.LEGACY_SCENARIOS))
def test_every_legacy_scenario_is_run_or_excluded_with_a_reason(version: str) -> None:
    """The same for each initialize-based revision: its listed server scenarios = ours + exclusions."""
    listed = set(runner.list_server_scenarios(version))
    ours = set(runner.LEGACY_SCENARIOS[version])
    assert not ours - listed, f"scenarios the harness does not run at {version}: {sorted(ours - listed)}"
    unaccounted = listed - ours - set(runner.LEGACY_EXCLUDED)
    assert not unaccounted, f"new {version} harness scenarios to run or exclude: {sorted(unaccounted)}"


def test_every_extension_scenario_is_run() -> None:
    """The harness's [extension] server scenarios are ours (the tasks and skills extensions') or excluded."""
    listed = set(runner.list_extension_scenarios())
    ours = set(runner.EXTENSION_SCENARIOS)
    assert not ours - listed, f"scenarios the harness does not know: {sorted(ours - listed)}"
    unaccounted = listed - ours - set(runner.EXTENSION_EXCLUDED)
    assert not unaccounted, f"new extension scenarios to run or exclude: {sorted(unaccounted)}"


@pytest.mark.parametrize("scenario", runner.EXTENSION_SCENARIOS)
def test_extension_scenario(scenario: str, server_url: str, tmp_path: Path) -> None:
    """The tasks (issue 34) and skills (issue 37, SEP-2640) extensions: the harness runs these without
    --spec-version; the skills scenarios run against the skills the fixture server serves."""
    result = runner.run_scenario(scenario, server_url, tmp_path, spec_version=None)
    assert result.checks, result.describe_problems()
    if scenario.startswith("sep-2640-"):  # passed for real: the fixture server does serve skills
        assert not result.with_status("SKIPPED"), result.describe_problems()
    assert result.returncode == 0, result.describe_problems()
    assert not result.failures, result.describe_problems()
    assert not result.warnings, result.describe_problems()


@pytest.mark.parametrize("scenario", runner.SCENARIOS)
def test_server_scenario(scenario: str, server_url: str, tmp_path: Path) -> None:
    result = runner.run_scenario(scenario, server_url, tmp_path)
    assert result.checks, result.describe_problems()
    assert result.returncode == 0, result.describe_problems()
    assert not result.failures, result.describe_problems()
    assert not result.warnings, result.describe_problems()


@pytest.mark.parametrize(
    ("version", "scenario"),
    [(version, scenario) for version, scenarios in runner.LEGACY_SCENARIOS.items() for scenario in scenarios],
)
def test_legacy_server_scenario(version: str, scenario: str, server_url: str, tmp_path: Path) -> None:
    """The initialize-based wire: handshake, sessions, server-to-client requests, SSE resumption."""
    result = runner.run_scenario(scenario, server_url, tmp_path, spec_version=version)
    assert result.checks, result.describe_problems()
    assert result.returncode == 0, result.describe_problems()
    assert not result.failures, result.describe_problems()
    assert not result.warnings, result.describe_problems()
