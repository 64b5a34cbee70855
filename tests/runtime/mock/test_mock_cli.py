"""`mcpgen mock` (codegen/cli/mock.py): what stops it before it serves, and how it says so.

Serving itself is proven over real sockets and pipes by tests/interop/test_mock_sdk_client.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from codegen.cli import main
from tests.support import ROOT, subprocess_env

WEATHER = str(ROOT / "specs" / "weather.json")


def test_help_names_the_options() -> None:
    result = CliRunner().invoke(main, ["mock", "--help"])
    assert result.exit_code == 0
    for option in ("--http", "--stdio", "--host", "--port", "--seed", "--responses"):
        assert option in result.output


def test_a_bad_responses_entry_stops_it_with_the_entry_named(tmp_path: Path) -> None:
    responses = tmp_path / "responses.yaml"
    responses.write_text("tools:\n  get_weather_data:\n    - structured: {temperature: warm}\n")
    result = CliRunner().invoke(main, ["mock", WEATHER, "--responses", str(responses)])
    assert result.exit_code == 1
    assert (
        "tools.get_weather_data[0].structured: does not match the outputSchema of 'get_weather_data'"
        in result.output
    )


def test_unreadable_or_unusable_specs_stop_it(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["mock", str(tmp_path / "nope.json")])
    assert missing.exit_code == 1 and "nope.json" in missing.output
    broken = tmp_path / "broken.json"
    broken.write_text('{"tools": [{"name": "bad name!", "inputSchema": {"type": "string"}}]}')
    unusable = CliRunner().invoke(main, ["mock", str(broken)])
    assert unusable.exit_code == 1 and "not usable" in unusable.output
    usage = CliRunner().invoke(main, ["mock", WEATHER, "--port", "0"])
    assert usage.exit_code == 2


def test_without_the_mock_extra_it_says_what_to_install(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    # As if hypothesis were not installed: importing it fails the way a missing module does.
    (shadow / "hypothesis.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'hypothesis'\", name='hypothesis')\n"
    )
    env = subprocess_env()
    env["PYTHONPATH"] = f"{shadow}:{env['PYTHONPATH']}"
    done = subprocess.run(
        [sys.executable, "-c", "from codegen.cli import main; main()", "mock", WEATHER],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "hypothesis is not installed" in done.stderr
    assert "pip install 'mcpgen-runtime[mock]'" in done.stderr


def test_a_mock_process_keeps_hypothesis_files_out_of_the_folder_it_runs_in(tmp_path: Path) -> None:
    from mcpgen_runtime.client import Client
    from mcpgen_runtime.mock import running_mock

    env = {**subprocess_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    with running_mock(spec=WEATHER, transport="stdio") as mock:
        assert mock.command is not None
        with Client.stdio(mock.command, env=env, cwd=tmp_path) as client:
            assert client.call_tool("get_weather_data", {"location": "Berlin"}).is_error is False
    assert not (tmp_path / ".hypothesis").exists()
    assert (tmp_path / "cache" / "mcpgen" / "hypothesis").is_dir()


def _runtime_mock(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m mcpgen_runtime.mock` (mock/command.py), the runtime's own command line."""
    return subprocess.run(
        [sys.executable, "-m", "mcpgen_runtime.mock", *args],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_runtime_mock_help_and_usage_errors() -> None:
    for flag in ("-h", "--help"):
        shown = _runtime_mock(flag)
        assert shown.returncode == 0 and shown.stdout.startswith(
            "Usage: python -m mcpgen_runtime.mock [OPTIONS] [SPEC]"
        )
        assert "--responses FILE" in shown.stdout and "--seed" in shown.stdout
        assert "--replay CASSETTE" in shown.stdout and "--error-rate P" in shown.stdout
    nothing = _runtime_mock()
    assert nothing.returncode == 2 and "give SPEC or --replay CASSETTE" in nothing.stderr
    both = _runtime_mock(WEATHER, "--http", "--stdio")
    assert both.returncode == 2 and "--http and --stdio: choose one" in both.stderr
    missing = _runtime_mock(str(ROOT / "nope.json"))
    assert missing.returncode == 1 and missing.stderr.startswith("error: ") and "nope.json" in missing.stderr
