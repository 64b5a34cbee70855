"""The command line of `generated/weather_client` against the demo server (`python -m weather_server
--http`, real uvicorn on loopback): every tool, wrong types, missing options, `--help`, `--json`,
`--format text` and every exit code. Most cases go through click's CliRunner (the same group and
exit-code handling `python -m weather_client` runs); a few run the package as a real subprocess,
over HTTP and over stdio.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mcpgen_runtime.cli import build_cli
from tests.interop._support import Client  # weather_client's (and generated/ on sys.path)
from tests.support import PYTHON, ROOT, free_port, running_server, subprocess_env

pytestmark = pytest.mark.timeout(90)

_MAIN = importlib.import_module("weather_client.__main__")
CLI = build_cli(Client, _MAIN._TOOLS, prog="weather", models=_MAIN._m)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, "-m", "weather_server", "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(CLI, list(args), input=input, catch_exceptions=False)


def call(url: str, *args: str) -> tuple[int, Any]:
    result = run("--url", url, *args)
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else None


# --------------------------------------------------------------------------------- every tool


def test_get_weather_prints_the_content_blocks(url: str) -> None:
    code, out = call(url, "get-weather", "--location", "Berlin")
    assert code == 0
    assert out == [
        {"type": "text", "text": "Current weather in Berlin:\nTemperature: 20.4°C\nConditions: snow"}
    ]


def test_get_weather_data_prints_the_checked_structured_content(url: str) -> None:
    """TOOLS-20: the structured content is checked against the outputSchema, then printed."""
    assert call(url, "get-weather-data", "--location", "Berlin") == (
        0,
        {"temperature": 20.4, "conditions": "snow", "humidity": 34.0},
    )


def test_list_users_prints_an_array(url: str) -> None:
    code, out = call(url, "list-users")
    assert code == 0
    assert [user["name"] for user in out] == ["Alice", "Bob"]


def test_execute_sql_success_and_is_error(url: str) -> None:
    code, out = call(url, "execute-sql", "--region", "us-west1", "--query", "SELECT 1")
    assert (code, out[0]["text"]) == (0, "Executed in us-west1: SELECT 1 (0 rows)")
    code, out = call(url, "execute-sql", "--region", "us-west1", "--query", "DROP TABLE users")
    assert (code, out[0]["text"]) == (1, "only SELECT statements are allowed in this demo")  # isError: exit 1


def test_calculate_sum_parses_numbers(url: str) -> None:
    assert call(url, "calculate-sum", "--a", "2", "--b", "40.5")[1][0]["text"] == "42.5"
    assert call(url, "calculate-sum", "--a", "-3", "--b", "1e2")[1][0]["text"] == "97.0"


def test_get_current_time(url: str) -> None:
    result = run("--url", url, "--format", "text", "get-current-time")
    assert result.exit_code == 0
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00\n", result.stdout)


# ------------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["calculate-sum", "--a", "two", "--b", "1"], "Invalid value for '--a': 'two' is not a number"),
        (["calculate-sum", "--a", "nan", "--b", "1"], "'nan' is not a number"),
        (["calculate-sum", "--a", "1"], "Missing option '--b'"),
        (["get-weather"], "Missing option '--location'"),
        (["get-weather", "--location", "x", "--days", "3"], "No such option '--days'"),
        (["get-wether", "--location", "x"], "No such command 'get-wether'"),
        (["calculate-sum", "--json", "[1, 2]"], "is not a JSON object"),
        (["calculate-sum", "--json", "{nope"], "is not valid JSON"),
        (["get-current-time", "--json", '{"x": 1}'], "invalid arguments at /: Additional properties"),
    ],
)
def test_usage_errors_exit_2_before_anything_is_sent(url: str, args: list[str], message: str) -> None:
    result = run("--url", url, *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stdout == ""


def test_connection_options_are_checked() -> None:
    assert run("get-current-time").exit_code == 2
    both = run("--url", "http://127.0.0.1:1/mcp", "--stdio", "x", "get-current-time")
    assert both.exit_code == 2 and "exactly one of --url URL or --stdio COMMAND" in both.stderr
    assert run("--url", "http://x/mcp", "--timeout", "0", "get-current-time").exit_code == 2
    assert run("--url", "http://x/mcp", "--header", "no colon", "get-current-time").exit_code == 2
    missing = run("--url", "http://x/mcp", "--token-env", "MCPGEN_TEST_UNSET_TOKEN", "get-current-time")
    assert missing.exit_code == 2 and "not set" in missing.stderr


# ---------------------------------------------------------------------------- --json, --format


def test_json_arguments_and_options_on_top(url: str, tmp_path: Any) -> None:
    assert call(url, "calculate-sum", "--json", '{"a": 1, "b": 2}')[1][0]["text"] == "3"
    assert call(url, "calculate-sum", "--json", '{"a": 1, "b": 2}', "--b", "5")[1][0]["text"] == "6"
    args = tmp_path / "args.json"
    args.write_text('{"location": "Paris"}', "utf-8")
    assert call(url, "get-weather-data", "--json", f"@{args}")[1]["conditions"]


def test_format_text(url: str) -> None:
    result = run("--url", url, "--format", "text", "get-weather", "--location", "Berlin")
    assert (result.exit_code, result.stdout) == (
        0,
        "Current weather in Berlin:\nTemperature: 20.4°C\nConditions: snow\n",
    )
    data = run("--url", url, "--format", "text", "get-weather-data", "--location", "Berlin")
    assert json.loads(data.stdout)["conditions"] == "snow"  # structured only: its JSON


# ------------------------------------------------------------------------------------- --help


def test_help_lists_every_tool_and_the_exit_codes() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in (
        "get-weather",
        "get-weather-data",
        "list-users",
        "execute-sql",
        "calculate-sum",
        "get-current-time",
    ):
        assert re.search(rf"^  {command} ", result.stdout, re.M), command
    assert "Weather Information Provider" in result.stdout  # titles as the short help
    assert "4 the server asked for input" in result.stdout


def test_tool_help_comes_from_the_schema() -> None:
    result = run("execute-sql", "--help")
    assert result.exit_code == 0
    assert "Execute SQL on Google Cloud Spanner" in result.stdout
    assert re.search(r"--region TEXT\s+The region to execute the query in \[required\]", result.stdout)
    assert re.search(r"--query TEXT\s+The SQL query to execute \[required\]", result.stdout)
    assert "--json ARGS" in result.stdout


# -------------------------------------------------------------------------------- exit code 3


def test_unreachable_server_exits_3() -> None:
    result = run("--url", f"http://127.0.0.1:{free_port()}/mcp", "--timeout", "5", "get-current-time")
    assert result.exit_code == 3
    assert result.stderr.startswith("Error: ConnectError")


def test_headers_and_bearer_token_reach_the_server(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo server ignores them; what matters is that the options are accepted and a call works."""
    monkeypatch.setenv("MCPGEN_TEST_TOKEN", "secret-token")
    result = run("--url", url, "--header", "X-Trace: 1", "--token-env", "MCPGEN_TEST_TOKEN", "list-users")
    assert result.exit_code == 0 and "secret-token" not in result.output


# ---------------------------------------------------------------------- as a real subprocess


def _module(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "weather_client", *args],
        cwd=ROOT,
        env=subprocess_env(),
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_python_m_over_http(url: str) -> None:
    done = _module("--url", url, "get-weather-data", "--location", "Berlin")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"temperature": 20.4, "conditions": "snow", "humidity": 34.0}
    done = _module("--url", url, "execute-sql", "--region", "eu", "--query", "DELETE")
    assert done.returncode == 1
    done = _module("--url", url, "calculate-sum", "--a", "x", "--b", "1")
    assert done.returncode == 2 and "'x' is not a number" in done.stderr
    done = _module("--url", f"http://127.0.0.1:{free_port()}/mcp", "list-users")
    assert done.returncode == 3


def test_python_m_over_stdio() -> None:
    server = f"{PYTHON} -m weather_server --stdio"
    done = _module("--stdio", server, "--format", "text", "calculate-sum", "--a", "2", "--b", "40.5")
    assert (done.returncode, done.stdout) == (0, "42.5\n"), done.stderr
    done = _module("--stdio", server, "list-users")
    assert done.returncode == 0 and len(json.loads(done.stdout)) == 2
    done = _module("--stdio", f"{PYTHON} -c 'import sys; sys.exit(5)'", "list-users")
    assert done.returncode == 3 and "exited" in done.stderr
