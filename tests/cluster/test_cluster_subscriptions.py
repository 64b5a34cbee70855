"""Resource subscriptions stay bounded across three replicas sharing Redis (harness.py): a legacy
session's URIs live in its shared record, so its count and bytes hold wherever each subscribe lands;
every replica refuses what nothing serves and URIs over `max_uri_length`, and leaves them out of a
listen stream's acknowledgment. The replicas run the generated conformance server with its
defaults (64 KiB of URIs per session or stream; `test://template/{id}/data` serves long ids).
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.cluster.harness import Cluster
from tests.runtime import legacy_helpers as legacy
from tests.runtime.server.core.test_subscriptions import SseReader, listen
from tests.runtime.server_helpers import call, mcp_headers

pytestmark = pytest.mark.timeout(60)


def _uri(index: int, size: int = 8000) -> str:
    head, tail = f"test://template/{index:04}", "/data"
    return head + "x" * (size - len(head) - len(tail)) + tail


def test_a_legacy_sessions_subscriptions_are_bounded_across_replicas(cluster: Cluster) -> None:
    replicas = cluster.replicas
    with httpx.Client(base_url=cluster.url, timeout=10) as through_nginx:
        session = legacy.LegacySession(through_nginx)
        session.initialize()
        answers = []
        for index in range(9):  # 8,000 bytes each: 8 fit in 64 KiB, wherever they land
            with httpx.Client(base_url=replicas[index % len(replicas)].url, timeout=10) as direct:
                session.http = direct
                reply = session.exchange(
                    legacy.request(index + 1, "resources/subscribe", {"uri": _uri(index)})
                )
                assert reply.response is not None
                answers.append(reply.response.get("error", {}).get("message", "ok"))
        assert answers[:8] == ["ok"] * 8
        assert answers[8].startswith("Too many resource subscriptions")
        for index, replica in enumerate(replicas):
            with httpx.Client(base_url=replica.url, timeout=10) as direct:
                session.http = direct
                unserved = session.exchange(
                    legacy.request(20 + index, "resources/subscribe", {"uri": "nothing://x"})
                )
                assert unserved.response is not None and unserved.response["error"]["code"] == -32002
                huge = {"uri": "test://template/" + "y" * 10_000 + "/data"}
                too_long = session.exchange(legacy.request(30 + index, "resources/subscribe", huge))
                assert too_long.response is not None and too_long.response["error"]["code"] == -32602
        # One unsubscribed through a replica makes room on another.
        session.http = httpx.Client(base_url=replicas[0].url, timeout=10)
        assert session.exchange(legacy.request(40, "resources/unsubscribe", {"uri": _uri(0)})).result == {}
        session.http.close()
        session.http = httpx.Client(base_url=replicas[1].url, timeout=10)
        assert (
            session.exchange(
                legacy.request(41, "resources/subscribe", {"uri": "test://watched-resource"})
            ).result
            == {}
        )
        session.http.close()


def test_every_replica_acknowledges_only_served_uris_within_the_bounds(cluster: Cluster) -> None:
    uris = ["nothing://x", "test://watched-resource", *(_uri(i) for i in range(12))]
    readers = [
        SseReader(replica.url, listen(5, resourceSubscriptions=uris, toolsListChanged=True))
        for replica in cluster.replicas
    ]
    try:
        for reader in readers:
            kind, ack = reader.wait_for(lambda item: item[0] == "event")
            assert kind == "event" and ack["method"] == "notifications/subscriptions/acknowledged"
            kept = ack["params"]["notifications"]["resourceSubscriptions"]
            assert kept == uris[1:10]  # 23 + 8 x 8,000 bytes fit in 64 KiB; a ninth would not
    finally:
        for reader in readers:
            reader.stop.set()
        # The readers stop at their next line: a tool change (shared through Redis) wakes them all.
        message = call(1, "test_trigger_tool_change", {})
        httpx.post(
            cluster.replicas[0].url, content=json.dumps(message).encode(), headers=mcp_headers(message)
        )
        for reader in readers:
            reader.close()
