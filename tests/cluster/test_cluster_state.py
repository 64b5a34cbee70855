"""Shared state across three replica processes behind the shipped nginx, on the Redis store with
one MCPGEN_STATE_SECRET (harness.py): what one replica issued or recorded holds on the others.

nginx round-robins (per worker), so where a case needs "on another replica" the test addresses
the replicas directly (`replica.url`) for the step that must land there, and goes through nginx
for the rest; through nginx, consecutive requests of one client are spread over the replicas.
"""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

import httpx
import pytest

from mcpgen_runtime.client import Client, ElicitResult
from mcpgen_runtime.errors import ServiceUnavailableError
from tests.cluster.harness import Cluster
from tests.runtime import legacy_helpers as legacy
from tests.runtime.server.core.test_subscriptions import SseReader, listen
from tests.runtime.server_helpers import call, mcp_headers
from tests.support import ROOT, SDK1_PYTHON, needs_peer, subprocess_env

pytestmark = pytest.mark.timeout(60)

STATE_TOOL = "test_input_required_result_request_state"  # single-use requestState (MRTR-11)
CONFIRMED = {"confirm": {"action": "accept", "content": {"ok": True}}}
ELICIT = {"elicitation": {}}


def _post(url: str, message: dict[str, Any]) -> httpx.Response:
    return httpx.post(url, content=json.dumps(message).encode(), headers=mcp_headers(message), timeout=10)


def _round_one(url: str) -> tuple[dict[str, Any], str]:
    message = call(1, STATE_TOOL, {}, capabilities=ELICIT)
    result = _post(url, message).json()["result"]
    assert result["resultType"] == "input_required"
    return message, result["requestState"]


def _retry_message(message: dict[str, Any], state: str, id_: int) -> dict[str, Any]:
    return {
        **message,
        "id": id_,
        "params": {**message["params"], "inputResponses": CONFIRMED, "requestState": state},
    }


def _retry(url: str, message: dict[str, Any], state: str, id_: int) -> httpx.Response:
    return _post(url, _retry_message(message, state, id_))


def _every_url(cluster: Cluster) -> list[str]:
    """Each replica directly, then nginx once per replica (round robin reaches them all)."""
    return [replica.url for replica in cluster.replicas] + [cluster.url] * len(cluster.replicas)


def test_mrtr_retry_on_another_replica_completes_and_the_redeemed_state_is_refused_everywhere(
    cluster: Cluster,
) -> None:
    first, second = cluster.replicas[0], cluster.replicas[1]
    message, state = _round_one(first.url)
    done = _retry(second.url, message, state, 2)
    assert done.status_code == 200, done.text
    assert done.json()["result"]["content"][0]["text"].startswith("state-ok")
    for id_, url in enumerate(_every_url(cluster), start=3):
        again = _retry(url, message, state, id_)
        assert again.status_code == 400, (url, again.text)
        error = again.json()["error"]
        assert error["code"] == -32602 and "already used" in error["message"], (url, error)


def test_a_tampered_state_is_refused_by_every_replica(cluster: Cluster) -> None:
    message, state = _round_one(cluster.replicas[2].url)
    tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
    for id_, url in enumerate(_every_url(cluster), start=2):
        refused = _retry(url, message, tampered, id_)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == -32602, (url, refused.text)
    assert _retry(cluster.url, message, state, 99).status_code == 200  # the untouched state still works, once


def test_the_runtime_client_completes_multi_round_trip_calls_through_nginx(cluster: Cluster) -> None:
    """Each call's round two is a new request that nginx sends to the next replica."""
    with Client(
        cluster.url, on_elicit=lambda request: ElicitResult.accept({"ok": True}), timeout=10
    ) as client:
        for _ in range(len(cluster.replicas) + 1):
            assert client.call_tool(STATE_TOOL, {}).text.startswith("state-ok")


def test_a_legacy_session_opened_through_nginx_is_served_by_every_replica(cluster: Cluster) -> None:
    with httpx.Client(base_url=cluster.url, timeout=10) as through_nginx:
        session = legacy.LegacySession(through_nginx, capabilities=ELICIT)
        session.initialize()
        for index, replica in enumerate(cluster.replicas):
            with httpx.Client(base_url=replica.url, timeout=10) as direct:
                session.http = direct
                listed = session.exchange(legacy.request(10 + index, "tools/list"))
                assert listed.status == 200 and any(
                    t["name"] == "test_simple_text" for t in listed.result["tools"]
                )
                assert session.exchange(legacy.call(20 + index, "test_simple_text")).result["content"][0][
                    "text"
                ]
        with httpx.Client(base_url=cluster.replicas[0].url, timeout=10) as direct:
            session.http = direct
            assert session.delete().status_code == 200
        session.http = through_nginx
        for id_ in range(30, 30 + len(cluster.replicas)):  # ended on one: gone on all
            assert session.post(legacy.request(id_, "tools/list")).status_code == 404


def test_last_event_id_resumes_a_stream_on_another_replica(cluster: Cluster) -> None:
    with (
        httpx.Client(base_url=cluster.replicas[0].url, timeout=10) as on_a,
        httpx.Client(base_url=cluster.replicas[1].url, timeout=10) as on_b,
    ):
        session = legacy.LegacySession(on_a, capabilities=ELICIT)
        session.initialize()
        closed = session.exchange(legacy.call(1, "test_reconnection"))  # priming event, then A closes
        assert closed.response is None
        (priming,) = closed.events
        assert priming.id is not None
        with on_b.stream("GET", "", headers={**session.headers(), "Last-Event-ID": priming.id}) as resumed:
            assert resumed.status_code == 200
            messages = [event.message for event in legacy.iter_events(resumed.iter_lines())]
        final = messages[-1]
        assert final is not None and final["id"] == 1
        assert final["result"]["content"][0]["text"].startswith("Reconnection test completed")


def test_the_runtime_legacy_client_resumes_through_nginx(cluster: Cluster) -> None:
    """era="legacy": the client's GET with Last-Event-ID goes to whichever replica nginx picks."""
    with Client(cluster.url, era="legacy", timeout=10) as client:
        for _ in range(len(cluster.replicas)):
            assert client.call_tool("test_reconnection", {}).text.startswith("Reconnection test completed")


def test_the_official_sdk1_client_keeps_its_session_across_replicas(cluster: Cluster) -> None:
    """The official SDK 1.x (legacy-only), through nginx: one session, every request of it a new one
    to nginx, so its calls, the answer to an elicitation and its Last-Event-ID resume land on
    replicas other than the one that opened the session."""
    user = {"username": "ada", "email": "ada@example.org"}
    calls = [("test_simple_text", {})] * len(cluster.replicas) + [
        ("test_elicitation", {"message": "Who are you?"}),
        ("test_tool_with_progress", {}),
        ("test_reconnection", {}),
    ]
    args = [
        str(needs_peer(SDK1_PYTHON, "the official SDK 1.x")),
        str(ROOT / "tests" / "peers" / "sdk1_client.py"),
        "--progress",
        "--elicit-accept",
        json.dumps(user),
    ]
    for name, arguments in calls:
        args += ["--call", name, json.dumps(arguments)]
    done = subprocess.run(
        [*args, cluster.url], cwd=ROOT, env=subprocess_env(), capture_output=True, timeout=50, check=False
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-4000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["protocolVersion"] == "2025-11-25" and report["sessionId"]
    texts = [
        "".join(block["text"] for block in call["content"] if block["type"] == "text")
        for call in report["calls"]
    ]
    assert all(not call.get("isError") and "error" not in call for call in report["calls"]), report["calls"]
    assert texts[: len(cluster.replicas)] == ["This is a simple text response for testing."] * len(
        cluster.replicas
    )
    elicited, progress, reconnection = texts[len(cluster.replicas) :]
    assert elicited == f"User response: action=accept, content={json.dumps(user, sort_keys=True)}"
    assert progress.startswith("Progress test completed") and report["calls"][-2]["progress"]
    assert reconnection.startswith("Reconnection test completed")


def _list_changed(reader: SseReader) -> list[Any]:
    return [
        item
        for item in reader.items
        if item[0] == "event" and item[1].get("method") == "notifications/tools/list_changed"
    ]


def test_a_listen_stream_on_one_replica_hears_a_change_caused_on_another(cluster: Cluster) -> None:
    on_a = SseReader(cluster.replicas[0].url, listen(7, toolsListChanged=True))
    via_nginx = SseReader(cluster.url, listen(8, toolsListChanged=True))
    try:
        for reader in (on_a, via_nginx):
            reader.wait_for(lambda item: item[0] == "event")  # acknowledged: subscribed
        caused = _post(cluster.replicas[1].url, call(1, "test_trigger_tool_change", {}))
        assert caused.status_code == 200, caused.text
        for reader, subscription in ((on_a, 7), (via_nginx, 8)):
            reader.wait_for(lambda item, reader=reader: bool(_list_changed(reader)))
            (change,) = _list_changed(reader)
            assert change[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == subscription
    finally:
        # The readers stop at their next line; the replicas' keep-alive is 15 s, so a change wakes them.
        on_a.stop.set()
        via_nginx.stop.set()
        _post(cluster.replicas[1].url, call(2, "test_trigger_tool_change", {}))
        on_a.close()
        via_nginx.close()


def test_the_rate_limit_holds_across_replicas(cluster: Cluster) -> None:
    """Four calls of budget (refilled at one per 20 s) for this caller, wherever its calls land."""
    cluster.restart_replicas("--rate-limit", "0.05/4")
    try:
        outcomes = []
        for id_ in range(9):  # replica 0, 1, 2, 0, 1, ...: three buckets would allow all nine
            result = _post(cluster.replicas[id_ % 3].url, call(id_, "test_simple_text", {})).json()["result"]
            outcomes.append(bool(result.get("isError")))
        assert outcomes == [False] * 4 + [True] * 5, outcomes
        for id_ in range(20, 23):  # and through nginx
            assert _post(cluster.url, call(id_, "test_simple_text", {})).json()["result"]["isError"] is True
    finally:
        cluster.restart_replicas()


def test_redis_restarted_mid_run(cluster: Cluster) -> None:
    message, state = _round_one(cluster.url)
    cluster.stop_redis()
    try:
        for id_, url in enumerate(_every_url(cluster), start=2):  # what needs the store: clear, quick 503s
            started = time.monotonic()
            down = _retry(url, message, state, id_)
            assert time.monotonic() - started < 3.0  # no hang
            assert down.status_code == 503 and down.headers["retry-after"] == "1", (url, down.text)
            assert "store is unavailable" in down.json()["error"]["message"]
            assert down.json()["error"]["data"]["retryable"] is True
        with (
            Client(cluster.url, era="legacy", timeout=10) as client,
            pytest.raises(ServiceUnavailableError) as caught,
        ):
            client.call_tool("test_simple_text", {})  # a legacy session lives in the store
        assert caught.value.retryable
        for replica in cluster.replicas:  # a balancer polling readiness would hold traffic back
            unready = httpx.get(f"http://{replica.address}/readyz", timeout=5)
            assert (unready.status_code, unready.json()) == (503, {"status": "unready", "failed": ["store"]})
        # What does not need the store goes on: a plain modern call on every replica.
        for url in _every_url(cluster):
            assert _post(url, call(50, "test_simple_text", {})).status_code == 200
    finally:
        cluster.start_redis()
    for id_, replica in enumerate(cluster.replicas, start=60):  # at once: no 503 from a stale connection
        fresh_message, fresh_state = _round_one(replica.url)
        redeemed_fresh = _retry(replica.url, fresh_message, fresh_state, id_)
        assert redeemed_fresh.status_code == 200, (replica.url, redeemed_fresh.text)
    # Full service after: the state issued before the outage is still valid (signed, not stored) and,
    # Redis having restarted empty, single-use once more across replicas.
    redeemed = _retry(cluster.replicas[0].url, message, state, 70)
    assert redeemed.json()["result"]["content"][0]["text"].startswith("state-ok")
    for id_, replica in enumerate(cluster.replicas[1:], start=71):
        assert _retry(replica.url, message, state, id_).status_code == 400
    test_the_runtime_client_completes_multi_round_trip_calls_through_nginx(cluster)
    test_a_legacy_session_opened_through_nginx_is_served_by_every_replica(cluster)
    test_a_listen_stream_on_one_replica_hears_a_change_caused_on_another(cluster)
