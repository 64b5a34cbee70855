"""A legacy (initialize-based) client on stdio, against tests/runtime/legacy_server_app.py as a real
subprocess, in raw JSON lines: the process becomes one legacy session after `initialize`; asks
are requests on stdout answered on stdin; log messages respect logging/setLevel; cancellation,
timeouts and modern messages beside the session.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.runtime.legacy_helpers import call, notification, request
from tests.runtime.server_helpers import StdioPeer, meta

pytestmark = pytest.mark.timeout(60)

APP = "tests.runtime.legacy_server_app"
CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}


@pytest.fixture
def peer() -> Iterator[StdioPeer]:
    """A fresh process per test: the session is the process. Client answers are awaited 1 s."""
    server = StdioPeer(module=APP, env={"MCPGEN_TEST_SESSIONS": "10,60,1.0,3,5"})
    try:
        yield server
    finally:
        server.close()


def initialize(
    peer: StdioPeer, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
) -> dict[str, Any]:
    peer.send(
        request(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "legacy-stdio", "version": "0"},
            },
        )
    )
    answer = peer.recv()
    assert answer["id"] == 0
    peer.send(notification("notifications/initialized"))
    return dict(answer["result"])


def until_response(peer: StdioPeer, id_: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The response to `id_` and everything the server wrote before it."""
    before: list[dict[str, Any]] = []
    while True:
        message = peer.recv()
        if message.get("id") == id_ and "method" not in message:
            return message, before
        before.append(message)


def test_initialize_makes_the_process_a_session(peer: StdioPeer) -> None:
    result = initialize(peer, "2025-06-18")
    assert result["protocolVersion"] == "2025-06-18"
    assert set(result["capabilities"]) >= {"tools", "logging"}
    peer.send(request(1, "tools/list"))
    listing, _ = until_response(peer, 1)
    assert set(listing["result"]) == {"tools"}  # no resultType, ttlMs, cacheScope, serverInfo
    peer.send(request(2, "ping"))
    assert until_response(peer, 2)[0]["result"] == {}
    peer.send(
        request(3, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}})
    )
    assert until_response(peer, 3)[0]["error"]["code"] == -32600  # once per process


def test_asks_are_requests_on_stdout(peer: StdioPeer) -> None:
    """ctx.elicit / ctx.sample / ctx.list_roots: requests written to stdout, answers read from stdin."""
    initialize(peer, capabilities=CAPS)
    peer.send(call(1, "ask_three"))
    asked = {}
    for _ in range(3):
        message = peer.recv()
        assert "method" in message and "id" in message, message
        asked[message["method"]] = message
    assert asked["elicitation/create"]["params"]["mode"] == "form"
    answers = {
        "elicitation/create": {"action": "accept", "content": {"name": "Ada"}},
        "sampling/createMessage": {
            "role": "assistant",
            "model": "m",
            "content": {"type": "text", "text": "Hi"},
        },
        "roots/list": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
    }
    for method, message in asked.items():
        peer.send({"jsonrpc": "2.0", "id": message["id"], "result": answers[method]})
    done, _ = until_response(peer, 1)
    assert done["result"]["content"][0]["text"] == "Hi, Ada; 2 root(s)"


def test_unanswered_request_and_undeclared_capability(peer: StdioPeer) -> None:
    initialize(peer, capabilities={"elicitation": {}})
    started = time.monotonic()
    peer.send(call(1, "ask"))
    done, before = until_response(peer, 1)
    assert 0.9 < time.monotonic() - started < 5  # 1.01 s at worst on 2 loaded cores
    assert done["result"]["isError"] is True and "did not answer" in done["result"]["content"][0]["text"]
    assert [m["method"] for m in before] == ["elicitation/create", "notifications/cancelled"]
    peer.send(call(2, "sample"))  # sampling was not declared: no request, a clear tool error
    refused, before = until_response(peer, 2)
    assert before == [] and "sampling" in refused["result"]["content"][0]["text"]


def test_log_level_and_progress(peer: StdioPeer) -> None:
    initialize(peer)
    peer.send(request(1, "logging/setLevel", {"level": "warning"}))
    assert until_response(peer, 1)[0]["result"] == {}
    peer.send(call(2, "log"))
    _, before = until_response(peer, 2)
    assert [m["params"]["level"] for m in before] == ["warning", "error"]
    peer.send(call(3, "progress", {"steps": 2}, progressToken=7))
    _, before = until_response(peer, 3)
    assert [(m["method"], m["params"]["progress"]) for m in before] == [
        ("notifications/progress", 1),
        ("notifications/progress", 2),
    ]


def test_cancel_and_modern_messages_beside_the_session(peer: StdioPeer) -> None:
    initialize(peer)
    peer.send(call(1, "sleep", {"seconds": 30}))
    time.sleep(0.2)
    peer.send(notification("notifications/cancelled", {"requestId": 1}))
    peer.send(call(2, "cancelled"))
    done, _ = until_response(peer, 2)  # nothing for request 1 comes first (CANCEL-09)
    assert done["result"]["content"][0]["text"] == "1"
    # A request with modern _meta is still served statelessly (VER-07..10).
    peer.send(request(3, "server/discover", {"_meta": meta()}))
    discover, _ = until_response(peer, 3)
    assert discover["result"]["supportedVersions"] == ["2026-07-28"]


def test_list_changed_reaches_a_legacy_client(peer: StdioPeer) -> None:
    initialize(peer)
    peer.send(call(1, "mutate", {"op": "add"}))
    received = [peer.recv(), peer.recv()]
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in received


def test_modern_only_names_its_versions() -> None:
    """VER-08 on stdio: a modern-only server answers initialize with an error naming 2026-07-28."""
    server = StdioPeer("--modern-only", module=APP)
    try:
        server.send(
            request(
                0,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "old", "version": "1"},
                },
            )
        )
        error = server.recv()["error"]
        assert error["data"]["supported"] == ["2026-07-28"] and "2026-07-28" in error["message"]
        server.send(request(1, "ping"))  # no session was opened: still the modern era
        assert server.recv()["error"]["code"] == -32602
    finally:
        server.close()
