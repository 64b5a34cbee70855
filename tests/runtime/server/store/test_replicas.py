"""Two replicas of the conformance server (two uvicorn servers on different ports) sharing one
real redis-server: what one replica issued or recorded holds on the other."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcpgen_runtime.errors import ServiceUnavailableError
from mcpgen_runtime.server import RateLimit
from tests.redis_server import RedisServer
from tests.runtime.server_helpers import call, request

from .replicas import Replica, conformance_server, with_store

STATE_TOOL = "test_input_required_result_request_state"
CONFIRMED = {"confirm": {"action": "accept", "content": {"ok": True}}}
ELICIT = {"elicitation": {}}


def _round_one(replica: Replica, id_: int = 1) -> tuple[dict[str, Any], str]:
    message = call(id_, STATE_TOOL, {}, capabilities=ELICIT)
    response = replica.post(message)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["resultType"] == "input_required"
    return message, result["requestState"]


def _retry(replica: Replica, message: dict[str, Any], state: str, id_: int) -> Any:
    retry = {
        **message,
        "id": id_,
        "params": {**message["params"], "inputResponses": CONFIRMED, "requestState": state},
    }
    return replica.post(retry)


def test_a_retry_completes_on_the_other_replica_and_single_use_state_is_refused_everywhere_after(
    redis_server: RedisServer,
) -> None:
    with (
        Replica(conformance_server(redis_server.url)) as a,
        Replica(conformance_server(redis_server.url)) as b,
    ):
        message, state = _round_one(a)
        done = _retry(b, message, state, 2)
        assert done.status_code == 200, done.text
        text = done.json()["result"]["content"][0]["text"]
        assert text.startswith("state-ok")
        for replica, id_ in ((a, 3), (b, 4)):  # redeemed on B: refused by A and by B again
            again = _retry(replica, message, state, id_)
            assert again.status_code == 400
            error = again.json()["error"]
            assert error["code"] == -32602 and "already used" in error["message"]


def test_a_tampered_state_is_refused_by_every_replica(redis_server: RedisServer) -> None:
    with (
        Replica(conformance_server(redis_server.url)) as a,
        Replica(conformance_server(redis_server.url)) as b,
    ):
        message, state = _round_one(a)
        for replica, id_ in ((a, 2), (b, 3)):
            refused = _retry(replica, message, state + "-TAMPERED", id_)
            assert refused.status_code == 400 and refused.json()["error"]["code"] == -32602
        assert _retry(b, message, state, 4).status_code == 200  # the untouched state still works


def test_a_state_that_is_not_single_use_may_be_retried_on_both(redis_server: RedisServer) -> None:
    tool = "test_input_required_result_multi_round"
    with (
        Replica(conformance_server(redis_server.url)) as a,
        Replica(conformance_server(redis_server.url)) as b,
    ):
        message = call(1, tool, {}, capabilities=ELICIT)
        state = a.post(message).json()["result"]["requestState"]
        answers = {"step1": {"action": "accept", "content": {"name": "Ada"}}}
        for replica, id_ in ((a, 2), (b, 3)):
            retry = {
                **message,
                "id": id_,
                "params": {**message["params"], "inputResponses": answers, "requestState": state},
            }
            assert replica.post(retry).json()["result"]["resultType"] == "input_required"


def test_the_rate_limit_holds_across_replicas(redis_server: RedisServer) -> None:
    limit = RateLimit(rate=0.2, burst=4)
    with (
        Replica(conformance_server(redis_server.url, rate_limit=limit)) as a,
        Replica(conformance_server(redis_server.url, rate_limit=limit)) as b,
    ):
        outcomes = []
        for id_ in range(8):
            replica = a if id_ % 2 else b
            result = replica.post(call(id_, "test_simple_text", {})).json()["result"]
            outcomes.append(bool(result.get("isError")))
        assert outcomes == [False] * 4 + [True] * 4  # one bucket of 4, not two


def test_redis_down_answers_503_retryable_and_service_returns_with_redis() -> None:
    from mcpgen_runtime.client import Client

    redis = RedisServer()
    redis.start()
    try:
        limit = RateLimit(rate=100.0, burst=100)
        with Replica(conformance_server(redis.url, rate_limit=limit)) as a:
            message = call(1, "test_simple_text", {})
            assert a.post(message).status_code == 200
            redis.stop()
            started = time.monotonic()
            down = a.post(message)
            assert time.monotonic() - started < 3.0  # no hang: 0.02 s at worst on 2 loaded cores
            assert down.status_code == 503 and down.headers["retry-after"] == "1"
            error = down.json()["error"]
            assert "store is unavailable" in error["message"] and error["data"]["retryable"] is True
            with Client(a.url) as client, pytest.raises(ServiceUnavailableError) as caught:
                client.call_tool("test_simple_text", {})
            assert caught.value.retryable and caught.value.retry_after_s == 1.0
            redis.start()  # same port
            deadline = time.monotonic() + 10
            while a.post(message).status_code != 200:
                assert time.monotonic() < deadline, "service did not return with Redis"
                time.sleep(0.2)
            with Client(a.url) as client:
                assert client.call_tool("test_simple_text", {}).text
    finally:
        redis.close()


def _tool_names(replica: Replica) -> list[str]:
    return [t["name"] for t in replica.post(request(50, "tools/list")).json()["result"]["tools"]]


def test_a_listen_stream_on_one_replica_hears_changes_made_on_the_other(redis_server: RedisServer) -> None:
    from tests.runtime.dynamic_server_app import DynamicServer
    from tests.runtime.server.core.test_subscriptions import SseReader, listen

    with (
        Replica(with_store(DynamicServer, redis_server.url, keepalive_s=0.5)) as a,
        Replica(with_store(DynamicServer, redis_server.url)) as b,
    ):
        reader = SseReader(a.url, listen(7, toolsListChanged=True))
        try:
            reader.wait_for(lambda item: item[0] == "event")  # acknowledged
            assert b.post(call(1, "mutate", {"op": "touch"})).status_code == 200
            _, event = reader.wait_for(
                lambda item: item[0] == "event" and "list_changed" in item[1]["method"]
            )
            assert event["method"] == "notifications/tools/list_changed"
            assert event["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7

            # The run-time tool set: both know the handler of "extra" once each added it; then B's
            # changes rule.
            b.post(call(2, "mutate", {"op": "add"}))
            a.post(call(2, "mutate", {"op": "add"}))
            assert "extra" in _tool_names(a) and "extra" in _tool_names(b)
            b.post(call(3, "mutate", {"op": "remove"}))
            _eventually(lambda: "extra" not in _tool_names(a))
            unknown = a.post(call(4, "extra", {"x": 1}))
            assert unknown.json()["error"]["code"] == -32602
            b.post(call(5, "mutate", {"op": "add"}))
            _eventually(lambda: "extra" in _tool_names(a))
            assert "extra got ['x']" in a.post(call(6, "extra", {"x": 1})).text
            changes = [
                item for item in reader.items if item[0] == "event" and "list_changed" in item[1]["method"]
            ]
            assert len(changes) >= 3  # touch, remove, add (coalesced at most, never lost)
        finally:
            reader.close()


def _eventually(check: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the change did not reach the other replica"
        time.sleep(0.05)


def test_the_client_reads_a_retryable_error_from_its_status_or_its_data() -> None:
    from mcpgen_runtime.errors import InvalidParamsError, RemoteError

    over_http = RemoteError.from_error({"code": -32603, "message": "x"}, http_status=503)
    on_stdio = RemoteError.from_error(
        {"code": -32603, "message": "x", "data": {"retryable": True, "retryAfterMs": 250}}
    )
    assert isinstance(over_http, ServiceUnavailableError) and over_http.retry_after_s == 1.0
    assert isinstance(on_stdio, ServiceUnavailableError) and on_stdio.retry_after_s == 0.25
    plain = RemoteError.from_error({"code": -32602, "message": "x"}, http_status=400)
    assert isinstance(plain, InvalidParamsError) and not getattr(plain, "retryable", False)
    hostile = RemoteError.from_error(
        {"code": -32603, "message": "x", "data": {"retryable": True, "retryAfterMs": 10**12}}
    )
    assert isinstance(hostile, ServiceUnavailableError) and hostile.retry_after_s == 1.0  # bounded


def test_fan_out_comes_back_after_a_redis_restart() -> None:
    from tests.runtime.dynamic_server_app import DynamicServer
    from tests.runtime.server.core.test_subscriptions import SseReader, listen

    redis = RedisServer()
    redis.start()
    try:
        with (
            Replica(with_store(DynamicServer, redis.url, keepalive_s=0.5)) as a,
            Replica(with_store(DynamicServer, redis.url, keepalive_s=0.5)) as b,
        ):
            reader = SseReader(a.url, listen(7, toolsListChanged=True))
            try:
                reader.wait_for(lambda item: item[0] == "event")  # acknowledged (A joined the fan-out)
                redis.stop()
                assert b.post(call(1, "mutate", {"op": "touch"})).status_code == 200  # not shared: logged
                redis.start()
                deadline = time.monotonic() + 10
                while not [i for i in reader.items if i[0] == "event" and "list_changed" in i[1]["method"]]:
                    assert time.monotonic() < deadline, "A's pub/sub did not come back"
                    b.post(call(2, "mutate", {"op": "touch"}))
                    time.sleep(0.3)
            finally:
                reader.close()
    finally:
        redis.close()
