"""Interop: the official MCP SDK client (mcp==2.3.0, tests/peers/sdk_client.py) against our server."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.runtime.server_helpers import SERVER_MODULE, SPEC_TOOL_NAMES, VERSION
from tests.support import PYTHON, ROOT, free_port, running_server, subprocess_env

PEER = str(ROOT / "tests" / "peers" / "sdk_client.py")
CALLS = [
    ("get_weather", {"location": "Slow"}),
    ("get_weather_data", {"location": "Paris"}),
    ("list_users", {}),
    ("execute_sql", {"region": "Zürich", "query": "SELECT 1"}),  # Mcp-Param-Region as Base64
    ("get_weather", {"location": "Atlantis"}),
    ("calculate_sum", {"a": 1, "b": 2.5}),
    ("get_current_time", {}),
    ("no_such_tool", {}),
]


def run_peer(*target: str) -> dict[str, Any]:
    args = [PYTHON, PEER, "--progress"]
    for name, arguments in CALLS:
        args += ["--call", name, json.dumps(arguments)]
    done = subprocess.run([*args, *target], cwd=ROOT, env=subprocess_env(), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    result = json.loads(done.stdout)
    assert isinstance(result, dict)
    return result


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    with running_server(
        [PYTHON, "-m", SERVER_MODULE, "--http", "--port", str(port), "--page-size", "2"], port
    ):
        yield f"http://127.0.0.1:{port}/mcp"


def check(out: dict[str, Any], pages: int) -> None:
    assert out["protocolVersion"] == VERSION
    assert out["serverInfo"] == {"name": "weather-test", "version": "1.2.3"}
    assert out["instructions"] == "Weather tools for tests."
    assert out["tools"] == SPEC_TOOL_NAMES and out["pages"] == pages
    calls = {f"{i}:{c['name']}": c for i, c in enumerate(out["calls"])}

    slow = calls["0:get_weather"]
    assert slow["isError"] is False and slow["content"][0]["text"] == "Weather in Slow: foggy"
    assert [p["progress"] for p in slow["progress"]] == [0, 50, 100]  # PROG-01..03

    data = calls["1:get_weather_data"]  # the SDK validates structuredContent against outputSchema
    assert data["structuredContent"] == {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65.0}
    assert json.loads(data["content"][0]["text"]) == data["structuredContent"]
    assert [u["name"] for u in calls["2:list_users"]["structuredContent"]] == ["Alice", "Bob"]
    assert calls["3:execute_sql"]["content"][0]["text"] == "Zürich: SELECT 1 -> 0 rows"

    assert calls["4:get_weather"]["isError"] is True
    assert "Atlantis" in calls["4:get_weather"]["content"][0]["text"]
    assert calls["5:calculate_sum"]["content"][0]["text"] == "3.5"
    assert calls["6:get_current_time"]["isError"] is True
    assert calls["7:no_such_tool"]["error"]["code"] == -32602  # TOOLS-22


def test_sdk_client_over_http(http_url: str) -> None:
    check(run_peer(http_url), pages=3)


def test_sdk_client_over_stdio() -> None:
    check(run_peer("--", PYTHON, "-m", SERVER_MODULE, "--stdio", "--page-size", "4"), pages=2)
