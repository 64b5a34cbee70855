"""stdio: the weather server as a real subprocess, spoken to in raw JSON lines."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.runtime.server_helpers import SERVER_MODULE, SPEC_TOOL_NAMES, VERSION, StdioPeer, call, request
from tests.support import PYTHON, ROOT, subprocess_env


@pytest.fixture(scope="module")
def peer() -> Iterator[StdioPeer]:
    server = StdioPeer("--page-size", "4")
    yield server
    assert server.close() == 0


def test_discover_list_call_stdio01(peer: StdioPeer) -> None:
    """STDIO-01, VER-03, BASE-06/08: one message per line, answered by id."""
    peer.send(request("d", "server/discover"))
    discover = peer.recv()
    assert discover["id"] == "d" and discover["result"]["supportedVersions"] == [VERSION]
    assert discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "weather-test"

    peer.send(request(1, "tools/list"))
    first = peer.recv()["result"]
    peer.send(request(2, "tools/list", {"cursor": first["nextCursor"]}))
    second = peer.recv()["result"]
    assert [t["name"] for t in first["tools"] + second["tools"]] == SPEC_TOOL_NAMES
    assert "nextCursor" not in second and second["ttlMs"] == 60000

    peer.send(call(3, "get_weather_data", {"location": "Paris"}))
    result = peer.recv()["result"]
    assert result["structuredContent"]["conditions"] == "Partly cloudy"


def test_no_header_checks_on_stdio(peer: StdioPeer) -> None:
    """x-mcp-header mirroring is HTTP-only: a stdio call needs no Mcp-Param-Region."""
    peer.send(call(4, "execute_sql", {"region": "eu", "query": "SELECT 1"}))
    assert peer.recv()["result"]["content"][0]["text"] == "eu: SELECT 1 -> 0 rows"


def test_stray_print_goes_to_stderr_stdio03(peer: StdioPeer) -> None:
    """STDIO-03: calculate_sum print()s; stdout still carries only the JSON-RPC answer."""
    peer.send(call(5, "calculate_sum", {"a": 1, "b": 2}))
    response = peer.recv()
    assert response["id"] == 5 and response["result"]["content"][0]["text"] == "3"
    time.sleep(0.1)
    assert b"debug: adding 1.0 2.0" in peer.stderr


def test_errors_keep_the_loop_alive(peer: StdioPeer) -> None:
    peer.send_raw(b'{"jsonrpc": "2.0", "id": 6, \n')
    assert peer.recv() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    peer.send_raw(b"\n")  # blank lines are skipped
    peer.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}})
    assert peer.recv()["error"]["code"] == -32602  # BASE-31
    peer.send(request(8, "initialize"))
    assert peer.recv()["error"]["code"] == -32601
    peer.send(call(9, "get_weather", {"location": "Atlantis"}))
    assert peer.recv()["result"]["isError"] is True


def test_notifications_get_no_answer_base16(peer: StdioPeer) -> None:
    peer.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}})
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}})
    peer.send(request(10, "server/discover"))
    assert peer.recv()["id"] == 10  # nothing came before it


def test_requests_run_concurrently(peer: StdioPeer) -> None:
    peer.send(call(11, "execute_sql", {"region": "eu", "query": "SLEEP 0.5"}))
    peer.send(call(12, "get_weather", {"location": "Paris"}))
    assert peer.recv()["id"] == 12
    assert peer.recv()["result"]["content"][0]["text"] == "slept 0.5s in eu"


def test_progress_notifications_prog01_prog03(peer: StdioPeer) -> None:
    peer.send(call(13, "get_weather", {"location": "Slow"}, progressToken="tok"))
    progress = [peer.recv() for _ in range(3)]
    assert all(
        p["method"] == "notifications/progress" and p["params"]["progressToken"] == "tok" for p in progress
    )
    assert [p["params"]["progress"] for p in progress] == [0, 50, 100]
    assert peer.recv()["id"] == 13


def test_cancelled_request_stops_and_is_not_answered_stdio09(peer: StdioPeer) -> None:
    """STDIO-09, CANCEL-09: notifications/cancelled stops the handler; no response follows."""
    peer.send(call("slow", "execute_sql", {"region": "eu", "query": "SLEEP 30"}, progressToken=1))
    assert peer.recv()["method"] == "notifications/progress"  # the handler is running
    peer.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "slow", "reason": "test"},
        }
    )
    peer.send(call(14, "execute_sql", {"region": "eu", "query": "CANCELLED"}))
    answer = peer.recv()
    assert answer["id"] == 14 and answer["result"]["content"][0]["text"] == "1"
    # A late cancellation for a finished request is ignored (CANCEL-11/13).
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 14}})
    peer.send(request(15, "server/discover"))
    assert peer.recv()["id"] == 15


def test_exits_on_eof_stdio11() -> None:
    """STDIO-11: closing stdin ends the server promptly with status 0; stdout holds only messages."""
    lines = [json.dumps(request(i, "tools/list")) for i in range(3)]
    started = time.monotonic()
    done = subprocess.run(
        [PYTHON, "-m", SERVER_MODULE, "--stdio"],
        input="\n".join(lines).encode() + b"\n",
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert time.monotonic() - started < 12  # a process's start and exit: 3.83 s at worst on 2 loaded cores
    out = done.stdout.decode().splitlines()
    assert sorted(json.loads(line)["id"] for line in out) == [0, 1, 2]
