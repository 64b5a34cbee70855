"""Legacy-era interop: real clients of the initialize-based revisions against our generated servers,
over Streamable HTTP and stdio.

Peers: the last 1.x release of the official SDK (mcp==1.30.0, legacy only; tests/peers/sdk1_client.py
in tests/peers/.venv-sdk1) and SDK 2.3.0 forced to its initialize handshake (`Client(mode="legacy")`,
tests/peers/sdk_client.py --mode legacy). Servers: `python -m weather_server` (page size 2: three
pages) and `python -m conformance_server`, both generated, with the handlers they always had.

What must hold: the handshake negotiates 2025-11-25; every tools/list page is read; plain,
structured and failing calls look as a legacy client expects (no `resultType`; a non-object
structured output travels as text only); and the conformance tools that ask for input do so with
real server-to-client requests the SDK answers through its elicitation and sampling callbacks,
while progress and log messages reach its callbacks (respecting `logging/setLevel`).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.interop._support import OUR_STDIO, WEATHER_NAMES
from tests.support import PYTHON, ROOT, SDK1_PYTHON, free_port, needs_peer, running_server, subprocess_env

pytestmark = pytest.mark.timeout(90)

SDK1_CLIENT = ROOT / "tests" / "peers" / "sdk1_client.py"
SDK2_CLIENT = ROOT / "tests" / "peers" / "sdk_client.py"
CONFORMANCE_STDIO = [PYTHON, "-m", "conformance_server", "--stdio"]
PEERS = ("sdk1", "sdk2-legacy")
TRANSPORTS = ("http", "stdio")

WEATHER_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_weather", {"location": "Berlin"}),
    ("get_weather_data", {"location": "Berlin"}),  # an object outputSchema: structuredContent
    ("list_users", {}),  # an array outputSchema: text only for a legacy client
    ("execute_sql", {"region": "Zürich", "query": "SELECT 1"}),  # x-mcp-header: no Mcp-Param-* in legacy
    ("calculate_sum", {"a": "two", "b": 1}),  # invalid arguments: a tool error
    ("no_such_tool", {}),  # unknown tool: a JSON-RPC error
]
USER = {"username": "ada", "email": "ada@example.org"}
ASKING_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("test_elicitation", {"message": "Who are you?"}),
    ("test_sampling", {"prompt": "What is the capital of France?"}),
    ("test_tool_with_progress", {}),
    ("test_tool_with_logging", {}),
    ("test_error_handling", {}),
    ("test_reconnection", {}),  # HTTP: the result arrives on a GET resumed with Last-Event-ID
]


@pytest.fixture(scope="module")
def conformance_http_url() -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, "-m", "conformance_server", "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def run_peer(
    peer: str, target: list[str], calls: list[tuple[str, dict[str, Any]]], *extra: str
) -> dict[str, Any]:
    if peer == "sdk1":
        args = [str(needs_peer(SDK1_PYTHON, "the official SDK 1.x")), str(SDK1_CLIENT)]
    else:
        args = [PYTHON, str(SDK2_CLIENT), "--mode", "legacy"]
    for name, arguments in calls:
        args += ["--call", name, json.dumps(arguments)]
    done = subprocess.run(
        [*args, *extra, *target], cwd=ROOT, env=subprocess_env(), capture_output=True, timeout=75
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert [call["name"] for call in report["calls"]] == [name for name, _ in calls]
    return report


def text(call: dict[str, Any]) -> str:
    assert "error" not in call, call
    return "".join(block["text"] for block in call["content"] if block["type"] == "text")


@pytest.fixture(scope="module", params=[(p, t) for p in PEERS for t in TRANSPORTS], ids=lambda p: "-".join(p))
def weather(request: pytest.FixtureRequest) -> dict[str, Any]:
    peer, transport = request.param
    target = [request.getfixturevalue("our_http_url")] if transport == "http" else ["--", *OUR_STDIO]
    return run_peer(peer, target, WEATHER_CALLS)


@pytest.fixture(scope="module", params=[(p, t) for p in PEERS for t in TRANSPORTS], ids=lambda p: "-".join(p))
def asking(request: pytest.FixtureRequest) -> dict[str, Any]:
    peer, transport = request.param
    target = (
        [request.getfixturevalue("conformance_http_url")]
        if transport == "http"
        else ["--", *CONFORMANCE_STDIO]
    )
    extra = [
        "--progress",
        "--log-level",
        "info",
        "--elicit-accept",
        json.dumps(USER),
        "--sample-text",
        "Paris",
    ]
    return run_peer(peer, target, ASKING_CALLS, *extra)


def test_handshake_and_every_page(weather: dict[str, Any]) -> None:
    """VER-07..10: a legacy client gets the newest legacy revision, our serverInfo and capabilities
    (tools, and logging for logging/setLevel), and follows our cursors through all three pages."""
    assert weather["protocolVersion"] == "2025-11-25"
    assert weather["serverInfo"]["name"] == "weather_server"
    assert {"tools", "logging"} <= set(weather["capabilities"])
    assert weather["tools"] == WEATHER_NAMES
    assert weather["pages"] == 3


def test_calls_read_as_legacy_results(weather: dict[str, Any]) -> None:
    weather_call, data, users, sql, invalid, unknown = weather["calls"]
    assert sql["isError"] is False and "Zürich" in text(sql)
    assert text(weather_call).startswith("Current weather in Berlin")
    assert data["structuredContent"] == {"temperature": 20.4, "conditions": "snow", "humidity": 34.0}
    assert json.loads(text(users))[0]["name"] == "Alice" and users["structuredContent"] is None
    assert invalid["isError"] is True and "/a" in text(invalid)
    assert unknown["error"]["code"] == -32602 and "no_such_tool" in unknown["error"]["message"]


def test_asks_are_real_client_requests(asking: dict[str, Any]) -> None:
    """ctx.elicit and ctx.sample in the unchanged handlers reach the SDK's callbacks; the answers
    come back into the same call."""
    report = asking
    elicit, sample = report["calls"][:2]
    assert text(elicit) == f"User response: action=accept, content={json.dumps(USER, sort_keys=True)}"
    assert text(sample) == "LLM response: Paris"
    assert report["samplings"] and report["samplings"][0]["maxTokens"] == 100
    if report["elicitations"] and "message" in report["elicitations"][0]:
        assert report["elicitations"][0]["message"] == "Who are you?"


def test_progress_logging_errors_and_polling(asking: dict[str, Any]) -> None:
    report = asking
    progress, logging_call, error, reconnection = report["calls"][2:]
    assert [p["progress"] for p in progress["progress"]] == [0, 50, 100]
    assert text(logging_call) == "Logging test completed."
    assert [log["data"] for log in report["logs"]] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert error["isError"] is True
    assert text(reconnection).startswith("Reconnection test completed")


@pytest.mark.parametrize("peer", PEERS)
def test_set_level_filters_log_messages(peer: str) -> None:
    """logging/setLevel error: the tool's info messages are not sent (stdio)."""
    report = run_peer(
        peer, ["--", *CONFORMANCE_STDIO], [("test_tool_with_logging", {})], "--log-level", "error"
    )
    assert text(report["calls"][0]) == "Logging test completed."
    assert report["logs"] == []
