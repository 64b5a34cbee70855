"""Proof, scenario 2: the official SDK client (mcp==2.3.0, tests/peers/sdk_client.py) against our
generated server, `python -m weather_server` (handlers.py demo data), over HTTP and stdio.

The SDK client negotiates with `server/discover`, lists every page (the server runs with
`--page-size 2`, so 6 tools take 3 pages), makes the calls below in order, and prints one JSON
report; each transport runs the script once per module and the tests read that report.
On HTTP the SDK mirrors `x-mcp-header` arguments into `Mcp-Param-*` and our server checks them.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.interop._support import OUR_STDIO, PROTOCOL, SDK_CLIENT, WEATHER_NAMES
from tests.support import PYTHON, ROOT, subprocess_env

pytestmark = pytest.mark.timeout(60)

# label -> (tool, arguments); sent in this order.
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "weather": ("get_weather", {"location": "Berlin"}),
    "data": ("get_weather_data", {"location": "Berlin"}),
    "users": ("list_users", {}),
    "sql": ("execute_sql", {"region": "us-west1", "query": "SELECT 1"}),
    "sql_unicode": ("execute_sql", {"region": "Zürich", "query": "SELECT 2"}),  # header as Base64
    "sql_rejected": ("execute_sql", {"region": "us-west1", "query": "DROP TABLE users"}),
    "sum": ("calculate_sum", {"a": 2, "b": 40.5}),
    "sum_invalid": ("calculate_sum", {"a": "two", "b": 1}),
    "time": ("get_current_time", {}),
    "unknown": ("no_such_tool", {}),
}


@pytest.fixture(scope="module", params=["http", "stdio"])
def report(request: pytest.FixtureRequest) -> dict[str, Any]:
    target = [request.getfixturevalue("our_http_url")] if request.param == "http" else ["--", *OUR_STDIO]
    args = [PYTHON, str(SDK_CLIENT)]
    for name, arguments in CALLS.values():
        args += ["--call", name, json.dumps(arguments)]
    done = subprocess.run([*args, *target], cwd=ROOT, env=subprocess_env(), capture_output=True, timeout=45)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    out: dict[str, Any] = json.loads(done.stdout)
    assert [call["name"] for call in out["calls"]] == [name for name, _ in CALLS.values()]
    out["by_label"] = dict(zip(CALLS, out["calls"], strict=True))
    return out


def call(report: dict[str, Any], label: str) -> dict[str, Any]:
    result: dict[str, Any] = report["by_label"][label]
    return result


def texts(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"] if block["type"] == "text"]


def test_negotiation(report: dict[str, Any]) -> None:
    """VER-03/04, TOOLS-01, BASE-37: the SDK negotiates 2026-07-28 via server/discover and sees
    the tools capability and our serverInfo."""
    assert report["protocolVersion"] == PROTOCOL
    assert report["serverInfo"] == {"name": "weather_server", "version": "0.0.0"}
    assert "tools" in report["capabilities"]


def test_lists_every_page(report: dict[str, Any]) -> None:
    """PAGE-02/04, TOOLS-02/04: the SDK follows our opaque cursors through 3 pages to all 6 tools."""
    assert report["tools"] == WEATHER_NAMES
    assert report["pages"] == 3


def test_get_weather(report: dict[str, Any]) -> None:
    result = call(report, "weather")
    assert result["isError"] is False
    assert texts(result) == ["Current weather in Berlin:\nTemperature: 20.4°C\nConditions: snow"]
    assert result["structuredContent"] is None


def test_get_weather_data_structured(report: dict[str, Any]) -> None:
    """TOOLS-18/19: structuredContent matches outputSchema (the SDK validates it) and the text
    block carries the same JSON."""
    result = call(report, "data")
    expected = {"temperature": 20.4, "conditions": "snow", "humidity": 34.0}
    assert result["isError"] is False
    assert result["structuredContent"] == expected
    assert [json.loads(text) for text in texts(result)] == [expected]


def test_list_users_array(report: dict[str, Any]) -> None:
    """TOOLS-18: an array outputSchema gives an array structuredContent (and the same JSON as text)."""
    result = call(report, "users")
    expected = [
        {"id": "1", "name": "Alice", "email": "alice@example.com"},
        {"id": "2", "name": "Bob", "email": "bob@example.com"},
    ]
    assert result["isError"] is False
    assert result["structuredContent"] == expected
    assert [json.loads(text) for text in texts(result)] == [expected]


def test_execute_sql(report: dict[str, Any]) -> None:
    """XHDR-17/23 (server side): on HTTP our server accepts the SDK's Mcp-Param-Region, plain and
    Base64-encoded (it would answer -32020 to a missing or mismatched one)."""
    assert texts(call(report, "sql")) == ["Executed in us-west1: SELECT 1 (0 rows)"]
    assert texts(call(report, "sql_unicode")) == ["Executed in Zürich: SELECT 2 (0 rows)"]
    assert call(report, "sql")["isError"] is False and call(report, "sql_unicode")["isError"] is False


def test_execute_sql_rejection_is_error(report: dict[str, Any]) -> None:
    """TOOLS-22: a handler's ToolExecutionError is an isError result, not a JSON-RPC error."""
    result = call(report, "sql_rejected")
    assert result["isError"] is True
    assert texts(result) == ["only SELECT statements are allowed in this demo"]


def test_calculate_sum(report: dict[str, Any]) -> None:
    result = call(report, "sum")
    assert result["isError"] is False and texts(result) == ["42.5"]


def test_invalid_arguments_is_error_naming_the_field(report: dict[str, Any]) -> None:
    """SEC-01, TOOLS-22: arguments failing inputSchema are an isError result that names the tool,
    the field (JSON pointer /a) and the rule, so a model can correct itself."""
    result = call(report, "sum_invalid")
    assert result["isError"] is True
    assert texts(result) == [
        "Invalid arguments for tool 'calculate_sum' at /a: 'two' is not of type 'number'"
    ]


def test_get_current_time(report: dict[str, Any]) -> None:
    result = call(report, "time")
    assert result["isError"] is False
    stamp = datetime.fromisoformat(texts(result)[0])
    assert abs((datetime.now(UTC) - stamp).total_seconds()) < 120


def test_unknown_tool_is_invalid_params(report: dict[str, Any]) -> None:
    """TOOLS-22: an unknown tool is the JSON-RPC error -32602, which the SDK raises as MCPError."""
    assert call(report, "unknown")["error"] == {"code": -32602, "message": "Unknown tool: no_such_tool"}
