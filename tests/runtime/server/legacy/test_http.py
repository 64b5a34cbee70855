"""Legacy (initialize-based) sessions on Streamable HTTP, against tests/runtime/legacy_server_app.py
in a real uvicorn process, spoken to in raw HTTP (tests/runtime/legacy_helpers.py).

The handshake and session rules (2025-11-25 `basic-transports.mdx § Session Management`), the
result shapes of those revisions, real server-to-client requests with their bounds, streams with
numbered events, resumption and polling, the GET stream, and the protections both eras share
(Origin, body limit, auth, rate limits) — including the bad inputs: a client that never answers,
floods, another principal's session, a deleted session replayed.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.runtime.legacy_helpers import (
    LegacySession,
    call,
    iter_events,
    notification,
    request,
)
from tests.support import PYTHON, free_port, running_server

pytestmark = pytest.mark.timeout(60)

APP = "tests.runtime.legacy_server_app"
ALICE, BOB = "token-alice", "token-bob"
ELICIT_CAPS = {"elicitation": {}, "sampling": {}, "roots": {"listChanged": True}}
EVENT_ID = re.compile(r"[^-\s]+-\d+\Z")


@contextlib.contextmanager
def serve(env: dict[str, str], *args: str) -> Iterator[str]:
    port = free_port()
    with running_server([PYTHON, "-m", APP, "--http", "--port", str(port), *args], port, env=env):
        yield f"http://localhost:{port}/mcp"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """Auth on (token-<name>), 1 s for client answers, 3 pending requests, 5 events replayed."""
    env = {"MCPGEN_TEST_AUTH": "1", "MCPGEN_TEST_SESSIONS": "50,60,1.0,3,5", "MCPGEN_TEST_KEEPALIVE": "0.3"}
    with serve(env) as served:
        yield served


@pytest.fixture(scope="module")
def small_url() -> Iterator[str]:
    """No auth; 3 sessions at most, idle after 1 s; 2 pending requests; tool calls limited to 3 per burst."""
    env = {"MCPGEN_TEST_SESSIONS": "3,1.0,5,2,5", "MCPGEN_TEST_RATE": "0.5,3"}
    with serve(env) as served:
        yield served


@pytest.fixture
def http(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=10) as client:
        yield client


def session(http: httpx.Client, *, token: str | None = ALICE, **kwargs: Any) -> LegacySession:
    opened = LegacySession(http, token=token, **kwargs)
    opened.initialize()
    return opened


def name_answer(received: dict[str, Any]) -> dict[str, Any]:
    assert received["method"] == "elicitation/create"
    return {"action": "accept", "content": {"name": "Ada"}}


# ---- handshake and session ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "negotiated"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ],
)
def test_initialize_negotiates_and_opens_a_session(
    http: httpx.Client, requested: str, negotiated: str
) -> None:
    """Version negotiation of every legacy revision: the requested one when spoken, else the newest;
    a session id of visible ASCII from a CSPRNG; capabilities include logging (setLevel)."""
    opened = LegacySession(http, token=ALICE, version=requested)
    result = opened.initialize()
    assert result["protocolVersion"] == negotiated
    assert set(result["capabilities"]) >= {"tools", "logging"}
    info = result["serverInfo"]
    assert info["name"] == "legacy-test" and info["version"] == "1.0.0"
    assert ("title" in info) == (negotiated >= "2025-06-18")  # Implementation.title arrived in 2025-06-18
    assert "resultType" not in result and "_meta" not in result
    assert opened.session_id is not None and re.fullmatch(r"[\x21-\x7e]{32,}", opened.session_id)
    assert session(http).session_id != opened.session_id


def test_results_have_the_legacy_shape(http: httpx.Client) -> None:
    """BASE-11, CACHE-08 from the client's side: no resultType, ttlMs, cacheScope or serverInfo _meta;
    ping and logging/setLevel answer exactly {}."""
    opened = session(http)
    listing = opened.exchange(request(1, "tools/list")).result
    assert set(listing) == {"tools"} and [t["name"] for t in listing["tools"]][:2] == ["ask", "ask_three"]
    assert set(opened.exchange(call(2, "whoami")).result) == {"content", "isError"}
    assert opened.exchange(request(3, "ping")).result == {}
    assert opened.exchange(request(4, "logging/setLevel", {"level": "info"})).result == {}
    bad_level = opened.exchange(request(5, "logging/setLevel", {"level": "loud"}))
    assert bad_level.status == 200 and bad_level.response is not None
    assert bad_level.response["error"]["code"] == -32602
    for method in ("server/discover", "subscriptions/listen", "no/such"):  # JSON-RPC errors with HTTP 200
        missing = opened.exchange(request(6, method))
        assert missing.status == 200 and missing.response is not None
        assert missing.response["error"]["code"] == -32601


def test_requests_need_the_session(http: httpx.Client) -> None:
    """A legacy request without Mcp-Session-Id is 400; an unknown one 404."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {ALICE}",
    }
    missing = http.post(
        "", json=request(1, "tools/list"), headers={**headers, "MCP-Protocol-Version": "2025-11-25"}
    )
    assert missing.status_code == 400 and "Mcp-Session-Id" in missing.json()["error"]["message"]
    unknown = http.post(
        "", json=request(1, "tools/list"), headers={**headers, "Mcp-Session-Id": "no-such-session"}
    )
    assert unknown.status_code == 404


def test_version_header_must_match_the_session(http: httpx.Client) -> None:
    """MCP-Protocol-Version after initialize: the negotiated one, or none (the session knows it)."""
    opened = session(http)
    assert opened.post(request(1, "ping"), **{"MCP-Protocol-Version": "2025-06-18"}).status_code == 400
    assert opened.post(request(2, "ping"), **{"MCP-Protocol-Version": "garbage"}).status_code == 400
    opened.send_version = False
    assert opened.post(request(3, "ping")).json()["result"] == {}


def test_deleted_session_is_gone_for_good(http: httpx.Client) -> None:
    """DELETE ends the session; replaying its id afterwards gets 404 on every verb."""
    opened = session(http)
    assert opened.delete().status_code == 200
    assert opened.post(request(1, "tools/list")).status_code == 404
    assert opened.get().status_code == 404
    assert opened.delete().status_code == 404
    assert opened.post(notification("notifications/initialized")).status_code == 404


def test_another_principal_cannot_use_a_session(http: httpx.Client) -> None:
    """A session is bound to the principal that opened it: another one is told it does not exist."""
    alice = session(http)
    assert "alice" in alice.exchange(call(1, "whoami")).result["content"][0]["text"]
    mallory = LegacySession(http, token=BOB)
    mallory.session_id, mallory.negotiated = alice.session_id, alice.negotiated
    assert mallory.post(call(2, "whoami")).status_code == 404
    assert mallory.get().status_code == 404
    assert mallory.delete().status_code == 404
    mallory.token = None
    assert mallory.post(call(3, "whoami")).status_code == 401
    assert "alice" in alice.exchange(call(4, "whoami")).result["content"][0]["text"]  # untouched


def test_origin_and_body_limits_apply_to_sessions(http: httpx.Client) -> None:
    opened = session(http)
    assert opened.post(request(1, "ping"), Origin="http://evil.example.com").status_code == 403
    assert opened.get(Origin="http://evil.example.com").status_code == 403
    huge = opened.post(call(2, "whoami", {"pad": "x" * (4 * 1024 * 1024)}))
    assert huge.status_code == 413
    assert opened.exchange(request(3, "ping")).result == {}


def test_modern_requests_beside_sessions(http: httpx.Client) -> None:
    """The same endpoint still serves 2026-07-28 statelessly; a session id on a modern request is
    ignored (HTTP-24)."""
    opened = session(http)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    message = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "whoami", "_meta": meta}}
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "whoami",
        "Authorization": f"Bearer {ALICE}",
        "Mcp-Session-Id": str(opened.session_id),
    }
    reply = http.post("", json=message, headers=headers)
    assert reply.status_code == 200 and reply.json()["result"]["resultType"] == "complete"
    assert "mcp-session-id" not in reply.headers


# ---- server-to-client requests ----------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
def test_elicit_becomes_a_request_on_the_calls_stream(http: httpx.Client, version: str) -> None:
    """ctx.elicit in a session: elicitation/create on the POST's SSE stream, answered by a POST
    (202), the handler continues. Events are numbered `<stream>-<n>`; 2025-11-25 opens with a
    priming event (id, retry, empty data)."""
    opened = session(http, version=version, capabilities=ELICIT_CAPS)
    done = opened.exchange(call(1, "ask"), answer=name_answer)
    assert done.result["content"][0]["text"] == "Hello, Ada!"
    assert done.headers["content-type"].startswith("text/event-stream")
    (asked,) = done.requests
    assert asked["params"]["message"] == "What is your name?"
    assert asked["params"]["requestedSchema"]["properties"] == {"name": {"type": "string"}}
    assert ("mode" in asked["params"]) == (version == "2025-11-25")  # mode arrived in 2025-11-25
    assert all(event.id is not None and EVENT_ID.match(event.id) for event in done.events)
    if version == "2025-11-25":
        assert done.events[0].data == "" and done.events[0].retry is not None
    else:
        assert done.events[0].message is not None


def test_several_asks_at_once(http: httpx.Client) -> None:
    """need() x3 + ask(): elicitation, sampling and roots requests go out together."""
    opened = session(http, capabilities=ELICIT_CAPS)

    def answer(received: dict[str, Any]) -> dict[str, Any]:
        return {
            "elicitation/create": {"action": "accept", "content": {"name": "Ada"}},
            "sampling/createMessage": {
                "role": "assistant",
                "model": "m",
                "content": {"type": "text", "text": "Hi"},
            },
            "roots/list": {"roots": [{"uri": "file:///tmp"}]},
        }[received["method"]]

    done = opened.exchange(call(1, "ask_three"), answer=answer)
    assert done.result["content"][0]["text"] == "Hi, Ada; 1 root(s)"
    assert sorted(r["method"] for r in done.requests) == [
        "elicitation/create",
        "roots/list",
        "sampling/createMessage",
    ]
    assert len({r["id"] for r in done.requests}) == 3


def test_undeclared_capability_is_never_asked(http: httpx.Client) -> None:
    """A client that declared no elicitation gets a tool error naming it, and no request."""
    opened = session(http, capabilities={"sampling": {}})
    done = opened.exchange(call(1, "ask"), answer=name_answer)
    assert done.result["isError"] is True and "elicitation" in done.result["content"][0]["text"]
    assert done.requests == []


def test_a_client_that_never_answers_gets_a_bounded_wait(http: httpx.Client) -> None:
    """The server waits client_request_timeout_s (1 s here), tells the client with
    notifications/cancelled, and the tool fails with a clear message."""
    opened = session(http, capabilities=ELICIT_CAPS)
    started = time.monotonic()
    done = opened.exchange(call(1, "ask"), answer=lambda received: None)
    assert 0.9 < time.monotonic() - started < 5  # 1.04 s at worst on 2 loaded cores
    assert (
        done.result["isError"] is True
        and "did not answer elicitation/create" in done.result["content"][0]["text"]
    )
    (asked,) = done.requests
    cancelled = [n for n in done.notifications if n["method"] == "notifications/cancelled"]
    assert cancelled and cancelled[0]["params"]["requestId"] == asked["id"]


def test_an_error_answer_fails_the_ask(http: httpx.Client) -> None:
    opened = session(http, capabilities=ELICIT_CAPS)
    with http.stream(
        "POST", "", content=json.dumps(call(1, "ask")).encode(), headers=opened.headers()
    ) as reply:
        events = iter_events(reply.iter_lines())
        asked = next(m for m in (e.message for e in events) if m is not None and "method" in m)
        error = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "error": {"code": -1, "message": "user closed the dialog"},
        }
        assert opened.post(error).status_code == 202
        final = next(m for m in (e.message for e in events) if m is not None and m.get("id") == 1)
    text = final["result"]["content"][0]["text"]
    assert final["result"]["isError"] is True and "user closed the dialog" in text


def test_answers_and_notifications_floods_are_cheap(http: httpx.Client) -> None:
    """Responses to requests never sent and unknown notifications are accepted and dropped."""
    opened = session(http)
    for index in range(300):
        assert opened.post({"jsonrpc": "2.0", "id": 10_000 + index, "result": {}}).status_code == 202
        assert opened.post(notification("notifications/whatever", {"n": index})).status_code == 202
    assert opened.exchange(request(1, "ping")).result == {}


# ---- notifications on the call's stream -------------------------------------------------------------


def test_progress_and_log_messages(http: httpx.Client) -> None:
    """Progress for the request's token; ctx.log sends notifications/message from the session's level."""
    opened = session(http)
    progress = opened.exchange(call(1, "progress", {"steps": 3}, progressToken="tok"))
    assert [(n["params"]["progressToken"], n["params"]["progress"]) for n in progress.notifications] == [
        ("tok", 1),
        ("tok", 2),
        ("tok", 3),
    ]
    everything = opened.exchange(call(2, "log"))
    assert [n["params"]["level"] for n in everything.notifications] == ["debug", "info", "warning", "error"]
    assert everything.notifications[0]["params"] == {
        "level": "debug",
        "logger": "legacy-test",
        "data": {"level was": "debug"},
    }
    assert opened.exchange(request(3, "logging/setLevel", {"level": "warning"})).result == {}
    filtered = opened.exchange(call(4, "log"))
    assert [n["params"]["level"] for n in filtered.notifications] == ["warning", "error"]


def test_cancelled_notification_stops_the_call(http: httpx.Client) -> None:
    opened = session(http)
    before = opened.exchange(call(1, "cancelled")).result["content"][0]["text"]
    with http.stream(
        "POST", "", content=json.dumps(call(2, "sleep", {"seconds": 30})).encode(), headers=opened.headers()
    ) as reply:
        events = iter_events(reply.iter_lines())
        assert next(events).data == ""  # the priming event: the handler runs
        cancel = notification("notifications/cancelled", {"requestId": 2, "reason": "user gave up"})
        assert opened.post(cancel).status_code == 202
        rest = [e.message for e in events]  # the stream ends without a response
    assert not [m for m in rest if m is not None and m.get("id") == 2]
    after = opened.exchange(call(3, "cancelled")).result["content"][0]["text"]
    assert int(after) == int(before) + 1


def test_disconnect_is_not_cancellation_and_the_stream_resumes(http: httpx.Client) -> None:
    """Leaving the POST stream does not cancel the call; GET with Last-Event-ID replays what
    followed and delivers the result."""
    opened = session(http)
    before = opened.exchange(call(1, "cancelled")).result["content"][0]["text"]
    with http.stream(
        "POST", "", content=json.dumps(call(2, "sleep", {"seconds": 0.4})).encode(), headers=opened.headers()
    ) as reply:
        seen = next(iter_events(reply.iter_lines()))  # the priming event, then the client leaves
    assert seen.id is not None and seen.data == ""
    time.sleep(0.6)
    with http.stream("GET", "", headers={**opened.headers(), "Last-Event-ID": seen.id}) as resumed:
        assert resumed.status_code == 200
        messages = [e.message for e in iter_events(resumed.iter_lines())]
    assert messages[-1] is not None and messages[-1]["result"]["content"][0]["text"] == "slept"
    assert opened.exchange(call(3, "cancelled")).result["content"][0]["text"] == before


def test_sse_polling(http: httpx.Client) -> None:
    """2025-11-25: ctx.close_sse_stream ends the response after the priming event (with retry); the
    result waits for the client's GET with Last-Event-ID."""
    opened = session(http)
    closed = opened.exchange(call(1, "poll"))
    assert closed.response is None
    (priming,) = closed.events
    assert (
        priming.data == "" and priming.retry == 200 and priming.id is not None
    )  # LegacySessionOptions.retry_ms
    with http.stream("GET", "", headers={**opened.headers(), "Last-Event-ID": priming.id}) as resumed:
        messages = [e.message for e in iter_events(resumed.iter_lines())]
    assert messages[-1] is not None and messages[-1]["result"]["content"][0]["text"] == "polled"
    # Delivered: the stream is gone, and a garbage id names nothing.
    assert opened.get(**{"Last-Event-ID": priming.id}).status_code == 400
    assert opened.get(**{"Last-Event-ID": "x" * 500}).status_code == 400


def test_no_polling_before_2025_11_25(http: httpx.Client) -> None:
    """2025-06-18 keeps a POST stream open until its response: close_sse_stream does nothing, and
    there is no priming event."""
    opened = session(http, version="2025-06-18")
    done = opened.exchange(call(1, "poll"))
    assert done.result["content"][0]["text"] == "polled"


def test_get_stream_carries_list_changed(http: httpx.Client) -> None:
    """The standalone GET stream: priming event, list_changed when the tool set changes, keep-alive
    comments; one per session (409)."""
    opened = session(http)
    with http.stream(
        "GET", "", headers={k: v for k, v in opened.headers().items() if k != "Content-Type"}
    ) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        events = iter_events(lines)
        priming = next(events)
        assert priming.data == "" and priming.id is not None
        assert opened.get().status_code == 409
        other = session(http)
        assert other.exchange(call(1, "mutate", {"op": "add"})).result["content"][0]["text"] == "add done"
        changed = next(e for e in events if e.message is not None)
        assert changed.message == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        assert "extra" in [t["name"] for t in opened.exchange(request(2, "tools/list")).result["tools"]]
        other.exchange(call(3, "mutate", {"op": "remove"}))
    assert opened.get(Accept="application/json").status_code == 406


def test_get_and_delete_without_a_session_stay_405(http: httpx.Client) -> None:
    """HTTP-23 for modern clients: GET/DELETE without Mcp-Session-Id are not legacy requests."""
    for verb in ("GET", "DELETE"):
        reply = http.request(
            verb, "", headers={"Accept": "text/event-stream", "Authorization": f"Bearer {ALICE}"}
        )
        assert reply.status_code == 405 and reply.headers["allow"] == "POST"


# ---- limits: the session cap, idle expiry, rate limits, pending requests -------------------------------


def test_session_cap_and_idle_expiry(small_url: str) -> None:
    """At the cap the least recently used idle session ends (its client gets 404); when every session
    is busy, initialize gets 503; idle sessions end after idle_timeout_s."""
    with httpx.Client(base_url=small_url, timeout=10) as http:
        first, second, third = (session(http, token=None) for _ in range(3))
        assert second.exchange(request(1, "ping")).result == {}  # first is now the least recently used
        fourth = session(http, token=None)
        assert first.post(request(2, "ping")).status_code == 404
        assert second.post(request(3, "ping")).status_code == 200
        with contextlib.ExitStack() as streams:  # every session busy: an open GET stream each
            for busy in (second, third, fourth):
                response = streams.enter_context(http.stream("GET", "", headers=busy.headers()))
                assert response.status_code == 200
            refused = http.post(
                "",
                json=request(0, "initialize", {"protocolVersion": "2025-11-25"}),
                headers={"Content-Type": "application/json", "Accept": "application/json"},
            )
            assert refused.status_code == 503
        time.sleep(1.3)
        assert third.post(request(4, "ping")).status_code == 404  # idle past 1 s


def test_rate_limit_and_pending_bound_apply_to_sessions(small_url: str) -> None:
    """SEC-03 for legacy calls; at most 2 server-to-client requests wait per session here, so a
    handler asking for three at once fails cleanly (the two sent are cancelled)."""
    with httpx.Client(base_url=small_url, timeout=10) as http:
        opened = session(http, token=None, capabilities=ELICIT_CAPS)
        done = opened.exchange(call(1, "ask_three"), answer=lambda received: None)
        assert done.result["isError"] is True
        assert "unanswered requests" in done.result["content"][0]["text"]
        results = [opened.exchange(call(10 + i, "whoami")).result for i in range(4)]
        limited = [r for r in results if r["isError"]]
        assert limited and "Rate limit exceeded" in limited[0]["content"][0]["text"]


def test_modern_only_answers_initialize_with_its_versions() -> None:
    """VER-08: modern_only names the versions it speaks in the error to initialize; GET/DELETE with
    a session id stay 405 (HTTP-23/24)."""
    with serve({}, "--modern-only") as served, httpx.Client(base_url=served, timeout=10) as http:
        message = request(
            0,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        )
        reply = http.post(
            "",
            json=message,
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        assert reply.status_code == 400 and "mcp-session-id" not in reply.headers
        error = reply.json()["error"]
        assert error["data"]["supported"] == ["2026-07-28"] and "2026-07-28" in error["message"]
        assert (
            http.get("", headers={"Mcp-Session-Id": "abc", "Accept": "text/event-stream"}).status_code == 405
        )
