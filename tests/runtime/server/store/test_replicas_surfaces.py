"""Resources and prompts on two replicas sharing one real redis-server (issue 22): a resource update
or a prompt-list change made on one replica reaches listen streams (2026-07-28) and subscribed legacy
sessions (resources/subscribe) on the other, and the run-time prompt set follows the last change."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx

from tests.redis_server import RedisServer
from tests.runtime import legacy_helpers as legacy
from tests.runtime.server.core.test_subscriptions import SseReader, listen
from tests.runtime.server_helpers import call, request
from tests.runtime.surfaces_server_app import SurfacesServer

from .replicas import Replica, with_store

UPDATED = "notifications/resources/updated"
NAME_LATE = {"Mcp-Name": "late"}  # prompts/get carries its name in a header too


def _prompt_names(replica: Replica) -> list[str]:
    """Every page of prompts/list; a listing that changed between pages (its cursor refused, as a
    server may once the set changes) is read again from the start."""
    names: list[str] = []
    params: dict[str, Any] = {}
    while True:
        answer = replica.post(request(50, "prompts/list", params)).json()
        if "error" in answer and params:
            assert answer["error"]["code"] == -32602, answer
            names, params = [], {}
            continue
        page = answer["result"]
        names += [p["name"] for p in page["prompts"]]
        if "nextCursor" not in page:
            return names
        params = {"cursor": page["nextCursor"]}


def _eventually(check: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the change did not reach the other replica"
        time.sleep(0.05)


def test_updates_and_prompt_changes_reach_listen_streams_on_the_other_replica(
    redis_server: RedisServer,
) -> None:
    with (
        Replica(with_store(SurfacesServer, redis_server.url, keepalive_s=0.5)) as a,
        Replica(with_store(SurfacesServer, redis_server.url)) as b,
    ):
        reader = SseReader(a.url, listen(7, resourceSubscriptions=["note://readme"], promptsListChanged=True))
        try:
            _, ack = reader.wait_for(lambda item: item[0] == "event")
            assert ack["params"]["notifications"] == {
                "promptsListChanged": True,
                "resourceSubscriptions": ["note://readme"],
            }
            assert b.post(call(1, "touch", {"uri": "note://other"})).status_code == 200
            assert b.post(call(2, "touch", {"uri": "note://readme"})).status_code == 200
            _, event = reader.wait_for(lambda item: item[0] == "event" and item[1]["method"] == UPDATED)
            assert event["params"]["uri"] == "note://readme"
            assert event["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 7

            # The run-time prompt set: both replicas know "late" once each added it; then B rules.
            a.post(call(3, "grow", {}))
            b.post(call(4, "grow", {}))
            reader.wait_for(
                lambda item: item[0] == "event" and item[1]["method"] == "notifications/prompts/list_changed"
            )
            b.post(call(5, "shrink", {}))
            _eventually(lambda: "late" not in _prompt_names(a))
            assert (
                a.post(request(6, "prompts/get", {"name": "late"}), NAME_LATE).json()["error"]["code"]
                == -32602
            )
            b.post(call(7, "grow", {}))
            _eventually(lambda: "late" in _prompt_names(a))
            got = a.post(request(8, "prompts/get", {"name": "late"}), NAME_LATE).json()["result"]
            assert got["messages"][0]["content"]["text"] == "late"
            updates = [i for i in reader.items if i[0] == "event" and i[1]["method"] == UPDATED]
            assert [u[1]["params"]["uri"] for u in updates] == ["note://readme"]  # never note://other
        finally:
            reader.close()


class GetStream:
    """A legacy session's GET stream read on its own thread."""

    def __init__(self, session: legacy.LegacySession, url: str) -> None:
        self.messages: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        headers = {k: v for k, v in session.headers().items() if k != "Content-Type"}
        self.thread = threading.Thread(target=self._pump, args=(url, headers), daemon=True)
        self.thread.start()

    def _pump(self, url: str, headers: dict[str, str]) -> None:
        try:
            with httpx.Client(timeout=15) as client, client.stream("GET", url, headers=headers) as response:
                for line in response.iter_lines():
                    if line.startswith("data:") and line[5:].strip():
                        with self.cond:
                            self.messages.append(json.loads(line[5:]))
                            self.cond.notify_all()
        except httpx.HTTPError:
            pass

    def wait_for(self, method: str, timeout: float = 5.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for message in self.messages:
                    if message.get("method") == method:
                        return message
                remaining = deadline - time.monotonic()
                assert remaining > 0, f"{method} not seen; got {self.messages}"
                self.cond.wait(remaining)


def test_a_legacy_subscription_made_through_one_replica_is_honoured_by_the_other(
    redis_server: RedisServer,
) -> None:
    with (
        Replica(with_store(SurfacesServer, redis_server.url, keepalive_s=0.5)) as a,
        Replica(with_store(SurfacesServer, redis_server.url)) as b,
    ):
        session = legacy.LegacySession(a.http)
        session.initialize()
        stream = GetStream(session, a.url)  # the session's GET stream, on A
        on_b = legacy.LegacySession(b.http)
        on_b.session_id, on_b.negotiated = session.session_id, session.negotiated
        subscribed = on_b.exchange(legacy.request(1, "resources/subscribe", {"uri": "note://readme"}))
        assert subscribed.result == {}
        time.sleep(0.2)  # the GET stream is attached
        assert b.post(call(2, "touch", {"uri": "note://other"})).status_code == 200
        assert b.post(call(3, "touch", {"uri": "note://readme"})).status_code == 200
        update = stream.wait_for(UPDATED)
        assert update["params"] == {"uri": "note://readme"}
        assert all(
            m["params"]["uri"] == "note://readme" for m in stream.messages if m.get("method") == UPDATED
        )
        session.delete()
