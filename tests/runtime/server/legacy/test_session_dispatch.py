"""The legacy era's pieces in-process: the session store (idle expiry, cap, busy sessions), a
session's server-to-client requests (bound, answers, errors, the end), numbered streams with their
replay buffer, the sans-I/O wire rules (protocol/legacy/serving.py, protocol/legacy/sse_writer.py),
the dispatch of a session's messages, and the memory an idle session costs.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from typing import Any

import pytest

from mcpgen_runtime.protocol.legacy.serving import (
    carries_modern_meta,
    initialize_result,
    legacy_call_result,
    legacy_result,
    legacy_tools_page,
    log_level_allows,
    parse_initialize,
    server_request_params,
    unavailable_in,
)
from mcpgen_runtime.protocol.legacy.sse_writer import event_id, message_event, parse_event_id, priming_event
from mcpgen_runtime.server import ClientRequestError, LegacySessionOptions, ServerConfig
from mcpgen_runtime.server.core.config import IncomingRequest
from mcpgen_runtime.server.legacy.event_streams import EventStream
from mcpgen_runtime.server.legacy.session_dispatch import LegacyDispatcher, SessionChannel
from mcpgen_runtime.server.legacy.sessions import MemorySessionStore, Session, new_session_id
from tests.runtime.legacy_server_app import LegacyTestServer


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def make_session(session_id: str = "s") -> Session:
    return Session(session_id, None, "2025-11-25", {}, {})


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# ---- the store ----------------------------------------------------------------------------------


def test_store_expires_idle_sessions_but_not_busy_ones() -> None:
    clock = Clock()
    store = MemorySessionStore(idle_timeout_s=10, max_sessions=10, clock=clock)

    async def scenario() -> None:
        idle, busy = make_session("idle"), make_session("busy")
        assert await store.add(idle) and await store.add(busy)
        busy.get_stream = EventStream("g", replay=2, priming=False, retry_ms=None)  # attached: busy
        clock.now += 11
        assert await store.get("idle") is None  # expired on access
        assert await store.get("busy") is busy
        clock.now += 11
        assert await store.add(make_session("new"))  # expiry sweep on add: busy survives again
        assert len(store) == 2
        assert await store.remove("busy") is busy and await store.remove("busy") is None

    run(scenario())


def test_store_cap_evicts_the_least_recently_used_idle_session() -> None:
    clock = Clock()
    store = MemorySessionStore(idle_timeout_s=100, max_sessions=2, clock=clock)

    async def scenario() -> None:
        first, second = make_session("first"), make_session("second")
        await store.add(first)
        await store.add(second)
        await store.get("first")  # second is now least recently used
        assert await store.add(make_session("third"))
        assert await store.get("second") is None and await store.get("first") is first
        for held in ("first", "third"):  # both busy: nothing can be evicted
            session = await store.get(held)
            assert session is not None
            session.get_stream = EventStream("g", replay=2, priming=False, retry_ms=None)
        assert not await store.add(make_session("fourth"))

    run(scenario())


def test_session_ids_are_unguessable_visible_ascii() -> None:
    ids = {new_session_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 32 and all(0x21 <= ord(c) <= 0x7E for c in i) for i in ids)


# ---- server-to-client requests ------------------------------------------------------------------------


def test_requests_to_the_client_are_bounded_and_answered() -> None:
    async def scenario() -> None:
        session = make_session()
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        first = asyncio.ensure_future(session.ask_client("roots/list", {}, send, timeout=5, limit=1))
        await asyncio.sleep(0)
        with pytest.raises(ClientRequestError, match="unanswered"):
            await session.ask_client("roots/list", {}, send, timeout=5, limit=1)
        assert not session.answer({"jsonrpc": "2.0", "id": 999, "result": {}})  # never sent: dropped
        assert session.answer({"jsonrpc": "2.0", "id": sent[0]["id"], "result": {"roots": []}})
        assert await first == {"roots": []}
        assert not session.answer({"jsonrpc": "2.0", "id": sent[0]["id"], "result": {}})  # late duplicate

        failing = asyncio.ensure_future(session.ask_client("roots/list", {}, send, timeout=5, limit=1))
        await asyncio.sleep(0)
        session.answer({"jsonrpc": "2.0", "id": sent[-1]["id"], "error": {"code": -32601, "message": "nope"}})
        with pytest.raises(ClientRequestError, match="-32601: nope"):
            await failing

        ended = asyncio.ensure_future(session.ask_client("roots/list", {}, send, timeout=5, limit=1))
        await asyncio.sleep(0)
        session.end()
        with pytest.raises(ClientRequestError, match="session ended"):
            await ended

        with pytest.raises(ClientRequestError, match=r"within 0\.05 s"):
            await session.ask_client("roots/list", {}, send, timeout=0.05, limit=1)
        assert sent[-1]["method"] == "notifications/cancelled"
        assert not session.busy

    run(scenario())


# ---- streams --------------------------------------------------------------------------------------------


def test_stream_numbers_events_and_keeps_a_bounded_replay_buffer() -> None:
    async def scenario() -> None:
        stream = EventStream("7", replay=5, priming=True, retry_ms=300)
        stream.open()
        assert stream.take() == [priming_event("7-0", 300)]
        for index in range(20):
            stream.emit({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": index}})
            if index % 4 == 3:
                assert len(stream.take()) == 4  # a connection that keeps up
        assert not stream.closing
        for index in range(6):
            stream.emit(
                {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 20 + index}}
            )
        assert stream.closing  # one that falls more than `replay` events behind is ended
        stream.detach()
        stream.emit({"jsonrpc": "2.0", "id": 1, "result": {}})
        assert stream.take() == []  # detached: buffered only
        replay = stream.attach(after=0)  # older events than the buffer holds are gone
        assert [parse_event_id(chunk.split(b"\n")[0][4:].decode()) for chunk in replay] == [
            ("7", n) for n in range(23, 28)
        ]
        old_wake = stream.wake
        stream.attach(after=None)
        assert (
            old_wake.is_set() and stream.wake is not old_wake
        )  # the old connection learns it lost the stream
        stream.finish(None)
        stream.emit({"jsonrpc": "2.0", "method": "late"})
        assert stream.take() == []

    run(scenario())


def test_sse_encoding_and_event_ids() -> None:
    assert message_event(b"{}", "1-2") == b"id: 1-2\nevent: message\ndata: {}\n\n"
    assert message_event(b"{}") == b"event: message\ndata: {}\n\n"
    assert priming_event("3-0") == b"id: 3-0\ndata:\n\n"
    assert parse_event_id(event_id("12", 5)) == ("12", 5)
    for garbage in ("", "-", "abc", "1-x", "1-", "-1", "x" * 100, "1-\u0661"):
        assert parse_event_id(garbage) is None


# ---- the wire rules (protocol/legacy/serving.py) -----------------------------------------------------


def test_initialize_params_and_result() -> None:
    requested, handshake = parse_initialize(
        {
            "protocolVersion": "2024-11-05",
            "capabilities": {"roots": {}},
            "clientInfo": {"name": "c", "version": "1"},
        }
    )
    assert requested == "2024-11-05" and handshake.protocol_version == "2025-11-25"
    assert handshake.capabilities == {"roots": {}}
    for bad in (
        None,
        [],
        {},
        {"protocolVersion": 1},
        {"protocolVersion": "2025-06-18", "capabilities": []},
        {"protocolVersion": "2025-06-18", "clientInfo": "me"},
    ):
        with pytest.raises(ValueError):
            parse_initialize(bad)
    result = initialize_result("2025-03-26", {"tools": {}}, {"name": "s", "version": "1", "title": "S"}, None)
    assert result == {
        "protocolVersion": "2025-03-26",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"},
    }


def test_results_lose_what_legacy_revisions_lack() -> None:
    server_meta = {"io.modelcontextprotocol/serverInfo": {"name": "s"}}
    modern = {
        "content": [],
        "isError": False,
        "resultType": "complete",
        "ttlMs": 5,
        "cacheScope": "public",
        "_meta": server_meta,
    }
    assert legacy_result(modern) == {"content": [], "isError": False}
    assert modern["resultType"] == "complete"  # not changed in place
    mixed = {"resultType": "complete", "_meta": {**server_meta, "dev.example/x": 1}}
    assert legacy_result(mixed) == {"_meta": {"dev.example/x": 1}}
    assert "structuredContent" not in legacy_call_result({"content": [], "structuredContent": [1, 2]})
    assert legacy_call_result({"content": [], "structuredContent": {"a": 1}})["structuredContent"] == {"a": 1}
    page = {
        "tools": [
            {"name": "a", "outputSchema": {"type": "array"}},
            {"name": "b", "outputSchema": {"type": "object"}},
        ],
        "resultType": "complete",
        "ttlMs": 1,
        "cacheScope": "public",
    }
    assert legacy_tools_page(page) == {
        "tools": [{"name": "a"}, {"name": "b", "outputSchema": {"type": "object"}}]
    }


def test_log_levels_versions_and_era_markers() -> None:
    assert log_level_allows(None, "debug") and log_level_allows("warning", "error")
    assert not log_level_allows("warning", "info") and not log_level_allows("info", "nonsense")
    assert unavailable_in("elicitation/create", "2025-03-26") and not unavailable_in(
        "elicitation/create", "2025-06-18"
    )
    assert not unavailable_in("sampling/createMessage", "2025-03-26")
    form = {"mode": "form", "message": "m", "requestedSchema": {}}
    assert server_request_params("elicitation/create", form, "2025-06-18") == {
        "message": "m",
        "requestedSchema": {},
    }
    assert server_request_params("elicitation/create", form, "2025-11-25") is form
    assert carries_modern_meta({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
    assert not carries_modern_meta({"_meta": {"progressToken": 1}}) and not carries_modern_meta(None)


# ---- a session's messages, in-process ---------------------------------------------------------------------


def test_session_messages_in_process() -> None:
    """LegacyDispatcher without a transport: handshake, then requests whose asks go through a channel."""
    server = LegacyTestServer(
        ServerConfig(name="unit", legacy_sessions=LegacySessionOptions(client_request_timeout_s=1))
    )
    era = LegacyDispatcher(server)
    outcome, handshake = era.initialize(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-03-26", "capabilities": {"roots": {}}},
        }
    )
    assert handshake is not None and outcome.response is not None
    assert outcome.response["result"]["capabilities"]["logging"] == {}
    session = era.open_session(handshake, None, None)

    async def scenario() -> None:
        written: list[dict[str, Any]] = []

        async def write(message: dict[str, Any]) -> None:
            written.append(message)
            if "id" in message and "method" in message:  # answer at once, as a client would
                asyncio.get_running_loop().call_soon(
                    session.answer,
                    {"jsonrpc": "2.0", "id": message["id"], "result": {"roots": [{"uri": "file:///x"}]}},
                )

        request = IncomingRequest(
            "direct", None, write, None, None, None, None, SessionChannel(era.options, session, write)
        )
        roots = await era.handle(
            session, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "roots"}}, request
        )
        assert roots.response == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"content": [{"type": "text", "text": "file:///x"}], "isError": False},
        }
        ask = await era.handle(
            session, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ask"}}, request
        )
        assert ask.response is not None  # elicitation does not exist in 2025-03-26: refused, nothing sent
        assert (
            ask.response["result"]["isError"] is True
            and "elicitation" in ask.response["result"]["content"][0]["text"]
        )
        assert [m["method"] for m in written] == ["roots/list"]
        bad = await era.handle(
            session, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": []}, request
        )
        assert bad.status == 200 and bad.response is not None and bad.response["error"]["code"] == -32602

    run(scenario())


def test_idle_session_memory_budget() -> None:
    """An idle legacy session costs at most 8 KiB (10,000 sessions, measured with tracemalloc,
    each from an initialize as the SDK clients send it)."""
    server = LegacyTestServer(ServerConfig(name="unit"))
    era = LegacyDispatcher(server)
    store = MemorySessionStore(idle_timeout_s=3600, max_sessions=20_000)
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "sampling": {},
            "elicitation": {"form": {}, "url": {}},
            "roots": {"listChanged": True},
        },
        "clientInfo": {"name": "conformance-test-client", "version": "1.0.0"},
    }

    async def scenario(count: int) -> None:
        for _ in range(count):
            message = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    **params,
                    "capabilities": {k: dict(v) for k, v in params["capabilities"].items()},
                    "clientInfo": dict(params["clientInfo"]),
                },
            }
            _, handshake = era.initialize(message)
            assert handshake is not None
            assert await store.add(era.open_session(handshake, new_session_id(), None))

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run(scenario(10_000))
        gc.collect()
        per_session = (tracemalloc.get_traced_memory()[0] - before) / 10_000
    finally:
        tracemalloc.stop()
    assert len(store) == 10_000
    print(f"idle legacy session: {per_session:.0f} bytes")
    assert per_session <= 8 * 1024
