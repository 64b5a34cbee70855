"""Which resource URIs a client may subscribe to, and how many (resource_subscriptions.py), in both
eras, in-process: served URIs only, `max_uri_length`, the count and bytes of one session or stream,
listen streams per principal (per connection when anonymous), and the `may_subscribe` hook deciding
per principal (the update for a URI reaches only the principals it allowed).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen_runtime.server import IncomingRequest, ServerConfig
from mcpgen_runtime.server.core.config import LegacySessionOptions
from mcpgen_runtime.server.legacy.session_dispatch import LegacyDispatcher
from mcpgen_runtime.server.legacy.sessions import Session
from tests.runtime.server_helpers import request
from tests.runtime.surfaces_server_app import SurfacesServer

SUB_ID = "io.modelcontextprotocol/subscriptionId"
UPDATED = "notifications/resources/updated"


class Guarded(SurfacesServer):
    """Only alice may watch note://readme (as if its reader refused everyone else)."""

    async def may_subscribe(self, uri: str, principal: Any) -> bool:
        return uri != "note://readme" or principal == "alice"


class Broken(SurfacesServer):
    async def may_subscribe(self, uri: str, principal: Any) -> bool:
        raise RuntimeError("the policy store is down")


class Stream:
    """One listen stream in-process, as `principal` on the connection `notify` names."""

    def __init__(self, server: SurfacesServer, id_: int, principal: Any = None, **filter_: Any) -> None:
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        message = request(id_, "subscriptions/listen", {"notifications": filter_})
        incoming = IncomingRequest("http", None, self.notify, principal)
        self.task = asyncio.ensure_future(server.handle_message(message, incoming))

    async def notify(self, message: dict[str, Any]) -> None:
        self.messages.put_nowait(message)

    async def first(self) -> dict[str, Any]:
        """The acknowledgment's filter, or the error that refused the stream."""
        getter = asyncio.ensure_future(self.messages.get())
        done, _ = await asyncio.wait([self.task, getter], timeout=2, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            ack = getter.result()
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            notifications: dict[str, Any] = ack["params"]["notifications"]
            return notifications
        getter.cancel()
        assert self.task in done, "neither an acknowledgment nor an answer"
        response = self.task.result().response
        assert response is not None
        return {"error": response["error"]}

    def received(self) -> list[dict[str, Any]]:
        got = []
        while not self.messages.empty():
            got.append(self.messages.get_nowait())
        return got


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def subscribe(id_: int, uri: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": "resources/subscribe", "params": {"uri": uri}}


def test_listen_keeps_served_permitted_uris_within_the_bounds() -> None:
    async def scenario() -> dict[str, Any]:
        server = Guarded(
            ServerConfig(
                max_uri_length=64, legacy_sessions=LegacySessionOptions(max_resource_subscriptions=4)
            )
        )
        uris = [
            "note://readme",  # bob may not
            "nothing://x",  # not served
            "file:///" + "a" * 100,  # served, longer than 64 characters
            "note://notes/a",
            "note://notes/a",  # a repeat: one URI
            "file:///b",
            "note://notes/c",  # the fifth distinct: past max_resource_subscriptions, not looked at
        ]
        ack = await Stream(server, 1, "bob", resourceSubscriptions=uris).first()
        server.close_subscriptions()
        return ack

    assert run(scenario()) == {"resourceSubscriptions": ["note://notes/a"]}


def test_listen_uri_bytes_per_stream() -> None:
    async def scenario() -> list[str]:
        server = SurfacesServer(
            ServerConfig(legacy_sessions=LegacySessionOptions(max_resource_subscription_bytes=100))
        )
        uris = [f"file:///{i}/" + "x" * 30 for i in range(5)]  # 41 bytes each: two fit in 100
        ack = await Stream(server, 1, resourceSubscriptions=uris).first()
        server.close_subscriptions()
        kept: list[str] = ack["resourceSubscriptions"]
        return kept

    assert run(scenario()) == [f"file:///{i}/" + "x" * 30 for i in range(2)]


def test_an_update_reaches_only_the_principals_the_hook_allowed() -> None:
    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        server = Guarded()
        alice = Stream(server, 1, "alice", resourceSubscriptions=["note://readme"])
        bob = Stream(server, 1, "bob", resourceSubscriptions=["note://readme", "note://logo"])
        assert await alice.first() == {"resourceSubscriptions": ["note://readme"]}
        assert await bob.first() == {"resourceSubscriptions": ["note://logo"]}
        assert server.notify_resource_updated("note://readme") == 1
        await asyncio.sleep(0.05)
        server.close_subscriptions()
        await asyncio.gather(alice.task, bob.task)
        return alice.received(), bob.received()

    to_alice, to_bob = run(scenario())
    assert [m["params"]["uri"] for m in to_alice if m.get("method") == UPDATED] == ["note://readme"]
    assert [m for m in to_bob if m.get("method") == UPDATED] == []


def test_listen_streams_per_principal_and_per_anonymous_connection() -> None:
    async def scenario() -> None:
        server = SurfacesServer(ServerConfig(max_listen_streams=2))
        a1 = Stream(server, 1, "alice", toolsListChanged=True)
        a2 = Stream(server, 2, "alice", toolsListChanged=True)
        assert "error" not in await a1.first() and "error" not in await a2.first()
        refused = await Stream(server, 3, "alice", toolsListChanged=True).first()
        assert refused["error"]["code"] == -32600 and "at most 2" in refused["error"]["message"]
        assert "error" not in await Stream(server, 4, "bob", toolsListChanged=True).first()
        a1.task.cancel()  # alice closes one: room for another
        await asyncio.sleep(0)
        assert "error" not in await Stream(server, 5, "alice", toolsListChanged=True).first()

        # Anonymous: per connection (the stream's sink; stdio has one for all its streams).
        shared: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def sink(message: dict[str, Any]) -> None:
            shared.put_nowait(message)

        outcomes = []
        for id_ in (10, 11, 12):
            message = request(id_, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            task = asyncio.ensure_future(server.handle_message(message, IncomingRequest("stdio", None, sink)))
            await asyncio.sleep(0.01)
            outcomes.append(task)
        assert outcomes[2].done() and outcomes[2].result().response["error"]["code"] == -32600
        assert not outcomes[0].done() and not outcomes[1].done()
        assert (
            "error" not in await Stream(server, 13, None, toolsListChanged=True).first()
        )  # another connection
        server.close_subscriptions()
        await asyncio.sleep(0.01)

    run(scenario())


def test_a_failing_hook_refuses() -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any] | None]:
        server = Broken()
        ack = await Stream(server, 1, resourceSubscriptions=["note://readme"]).first()
        server.close_subscriptions()
        session = Session("s", None, "2025-11-25", {}, {})
        outcome = await LegacyDispatcher(server).handle(
            session, subscribe(2, "note://readme"), IncomingRequest()
        )
        return ack, outcome.response

    ack, legacy = run(scenario())
    assert ack == {"resourceSubscriptions": []}
    assert legacy is not None and legacy["error"]["code"] == -32002


def test_legacy_subscribe_refusals() -> None:
    async def scenario() -> list[Any]:
        options = LegacySessionOptions(max_resource_subscriptions=2, max_resource_subscription_bytes=40)
        dispatcher = LegacyDispatcher(Guarded(ServerConfig(max_uri_length=32, legacy_sessions=options)))
        session = Session("s", None, "2025-06-18", {}, {})
        answers = []
        for id_, uri, principal in [
            (1, "file:///" + "é" * 25, None),  # 33 characters: over max_uri_length
            (2, "nothing://x", None),  # not served
            (3, "note://readme", "bob"),  # bob may not
            (4, "note://readme", "alice"),  # 13 bytes
            (5, "note://readme", "alice"),  # again: no change, no count
            (6, "note://notes/" + "z" * 19, None),  # 32 bytes: 45 together, over 40
            (7, "note://logo", None),  # 11 bytes: 24 together
            (8, "file:///q", None),  # a third URI: over max_resource_subscriptions
        ]:
            outcome = await dispatcher.handle(
                session, subscribe(id_, uri), IncomingRequest(principal=principal)
            )
            assert outcome.response is not None
            error = outcome.response.get("error")
            answers.append("ok" if error is None else f"{error['code']} {error['message'][:8]}")
        answers.append(sorted(session.resource_subscriptions or ()))
        return answers

    assert run(scenario()) == [
        "-32602 URI of 3",  # URI of 33 characters is over this server's limit of 32
        "-32002 Resource",
        "-32002 Resource",
        "ok",
        "ok",
        "-32602 Too many",
        "ok",
        "-32602 Too many",
        ["note://logo", "note://readme"],
    ]


@pytest.mark.parametrize("field", ["max_uri_length", "max_listen_streams"])
def test_bad_limits_stop_the_server_at_start(field: str) -> None:
    with pytest.raises(ValueError):
        ServerConfig(**{field: 0})
    with pytest.raises(ValueError):
        LegacySessionOptions(max_resource_subscription_bytes=0)
