"""Legacy (2025-11-25) sessions on two replicas sharing a real redis-server: a session opened on
one is served by the other, a stream produced on one resumes on the other (`Last-Event-ID`),
and the client's answer to a server-to-client request reaches the replica that asked, wherever
it was POSTed."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import httpx
import pytest

from tests.redis_server import RedisServer
from tests.runtime.legacy_helpers import LegacySession, call, iter_events, request

from .replicas import Replica, conformance_server

pytestmark = pytest.mark.timeout(60)

CAPS = {"elicitation": {}}


@pytest.fixture
def pair(redis_server: RedisServer) -> Iterator[tuple[LegacySession, LegacySession]]:
    """One session, as the client sees it through replica A and through replica B."""
    with (
        Replica(conformance_server(redis_server.url)) as a,
        Replica(conformance_server(redis_server.url)) as b,
        httpx.Client(base_url=a.url, timeout=10) as http_a,
        httpx.Client(base_url=b.url, timeout=10) as http_b,
    ):
        on_a = LegacySession(http_a, capabilities=CAPS)
        on_a.initialize()
        on_b = copy.copy(on_a)
        on_b.http = http_b
        yield on_a, on_b


def test_a_session_opened_on_one_replica_is_served_by_the_other(
    pair: tuple[LegacySession, LegacySession],
) -> None:
    on_a, on_b = pair
    listed = on_b.exchange(request(1, "tools/list"))
    assert listed.status == 200 and any(t["name"] == "test_simple_text" for t in listed.result["tools"])
    text = on_b.exchange(call(2, "test_simple_text")).result["content"][0]["text"]
    assert text
    assert on_b.exchange(request(3, "logging/setLevel", {"level": "error"})).result == {}
    # Another version header than the negotiated one is refused on B too: B knows the record.
    assert on_b.post(request(4, "tools/list"), **{"MCP-Protocol-Version": "2025-06-18"}).status_code == 400
    assert on_b.delete().status_code == 200  # ended on B: gone on A
    assert on_a.post(request(5, "tools/list")).status_code == 404


def test_a_stream_produced_on_one_replica_resumes_on_the_other(
    pair: tuple[LegacySession, LegacySession],
) -> None:
    on_a, on_b = pair
    closed = on_a.exchange(call(1, "test_reconnection"))  # priming event, then A closes the connection
    assert closed.response is None
    (priming,) = closed.events
    assert priming.id is not None
    with on_b.http.stream("GET", "", headers={**on_b.headers(), "Last-Event-ID": priming.id}) as resumed:
        assert resumed.status_code == 200
        messages = [e.message for e in iter_events(resumed.iter_lines())]
    final = messages[-1]
    assert final is not None and final["id"] == 1
    assert final["result"]["content"][0]["text"].startswith("Reconnection test completed")
    unknown = on_b.get(**{"Last-Event-ID": "nosuchstream-3"})
    assert unknown.status_code == 400


def test_an_answer_posted_to_the_other_replica_reaches_the_asking_call(
    pair: tuple[LegacySession, LegacySession],
) -> None:
    on_a, on_b = pair
    split = copy.copy(on_a)
    split.post = on_b.post  # type: ignore[method-assign]  # answers go to B, the call runs on A
    asked: list[str] = []

    def answer(received: dict[str, object]) -> dict[str, object]:
        asked.append(str(received["method"]))
        return {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}

    done = split.exchange(call(1, "test_elicitation", {"message": "Who are you?"}), answer)
    assert asked == ["elicitation/create"]
    assert done.result is not None and "action=accept" in done.result["content"][0]["text"]


def test_sessions_while_redis_is_down_get_503_then_initialize_again() -> None:
    redis = RedisServer()
    redis.start()
    try:
        with Replica(conformance_server(redis.url)) as a, httpx.Client(base_url=a.url, timeout=10) as http:
            opened = LegacySession(http, capabilities=CAPS)
            opened.initialize()
            redis.stop()
            down = opened.post(request(1, "tools/list"))
            assert down.status_code == 503 and down.headers["retry-after"] == "1"
            assert down.json()["error"]["data"]["retryable"] is True
            assert (
                LegacySession(http)
                .http.post(
                    "",
                    json=request(
                        0,
                        "initialize",
                        {
                            "protocolVersion": "2025-11-25",
                            "capabilities": {},
                            "clientInfo": {"name": "x", "version": "0"},
                        },
                    ),
                    headers=opened.headers(),
                )
                .status_code
                == 503
            )
            redis.start()  # an empty Redis (no persistence): the session is gone, a new one works
            assert opened.post(request(2, "tools/list")).status_code == 404
            again = LegacySession(http, capabilities=CAPS)
            again.initialize()
            assert again.exchange(request(3, "tools/list")).status == 200
    finally:
        redis.close()
