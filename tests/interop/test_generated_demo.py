"""Proof, scenario 5: `make demo` (scripts/demo.py) runs to completion and prints typed results.

The script validates specs/weather.json, runs `mcpgen generate`, starts
`python -m weather_server --http` and calls every tool through the generated client.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.support import PYTHON, ROOT

pytestmark = pytest.mark.timeout(60)


def test_demo_runs_and_prints_typed_results() -> None:
    """VER-03, TOOLS-19/22/23, XHDR-01: the user-facing path end to end — discover, list, every
    tool through the generated Client with typed outputs, and the isError call as ToolError."""
    done = subprocess.run([PYTHON, "scripts/demo.py"], cwd=ROOT, capture_output=True, text=True, timeout=50)
    assert done.returncode == 0, f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    lines = done.stdout.splitlines()

    def line(prefix: str) -> str:
        found = [text for text in lines if text.startswith(prefix)]
        assert len(found) == 1, f"no single line starting with {prefix!r} in:\n{done.stdout}"
        return found[0]

    assert "specs/weather.json: 6 tool(s) usable, 0 excluded, 0 warning(s)" in lines
    assert re.fullmatch(r"server listening on http://127\.0\.0\.1:\d+/mcp", line("server listening on "))
    assert re.fullmatch(
        r"server/discover -> \[.*'2026-07-28'.*\] tools: \{'listChanged': (True|False)\}",
        line("server/discover ->"),
    )
    assert line("tools/list      ->") == (
        "tools/list      -> ['get_weather', 'get_weather_data', 'list_users', 'execute_sql', "
        "'calculate_sum', 'get_current_time']"
    )
    assert line("get_weather('Berlin')").endswith(
        r"-> 'Current weather in Berlin:\nTemperature: 20.4°C\nConditions: snow'"
    )
    assert line("get_weather_data('Berlin')").endswith(
        "-> GetWeatherDataOutput(temperature=20.4, conditions='snow', humidity=34.0)"
    )
    assert line("list_users()").endswith(
        "-> [ListUsersOutputItem(id='1', name='Alice', email='alice@example.com'), "
        "ListUsersOutputItem(id='2', name='Bob', email='bob@example.com')]"
    )
    assert line("execute_sql(region='us-west1', query='SELECT 1')").startswith(
        "execute_sql(region='us-west1', query='SELECT 1') -> 'Executed in us-west1: SELECT 1 (0 rows)'"
    )
    assert line("calculate_sum(a=2, b=40.5)").endswith("-> '42.5'")
    assert re.search(r"-> '\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00'$", line("get_current_time()"))
    assert line("execute_sql(region='us-west1', query='DROP TABLE users')") == (
        "execute_sql(region='us-west1', query='DROP TABLE users') -> ToolError: "
        "'only SELECT statements are allowed in this demo'"
    )
    # one call through the generated command line, JSON on stdout
    assert re.search(
        r"\$ python -m weather_client --url http://127\.0\.0\.1:\d+/mcp get-weather-data "
        r"--location Berlin\n\{\n  \"temperature\": 20\.4,\n  \"conditions\": \"snow\",\n"
        r"  \"humidity\": 34\.0\n\}\n\(exit code 0;",
        done.stdout,
    )
    assert "server stopped" in lines
    # and what a changed spec would break (mcpgen diff)
    assert re.search(
        r"breaking +compatible +get_current_time +/ +tool `get_current_time` removed", done.stdout
    )
    assert re.search(
        r"breaking +compatible +get_weather_data +/inputSchema/properties/units +required property",
        done.stdout,
    )
    assert lines[-1].startswith("(exit code 1:")
