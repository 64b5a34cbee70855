"""Era detection and the legacy handshake against scripted stdio peers that misbehave the ways
real servers do (protocol/legacy/detect.py, client/legacy_flows.py): every case ends in a typed error or a
bounded wait, never a hang.

A peer here is a real subprocess running `SCRIPT` with a plan: for each method, the line(s) it
writes back (`"silent"` writes nothing, `"garbage"` writes 1000 non-JSON lines, past the
client's limit). Its own log of what it received is read back to check the wire.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.client import Client
from mcpgen_runtime.errors import (
    InvalidParamsError,
    MethodNotFoundError,
    ProtocolError,
    RequestTimeoutError,
    UnsupportedProtocolVersionError,
)
from mcpgen_runtime.server import ServerConfig
from tests.runtime._client_helpers import LiveServer, WeatherServer

pytestmark = pytest.mark.timeout(60)

SCRIPT = r"""
import json, sys
plan, log = json.loads(sys.argv[1]), open(sys.argv[2], "a")
for line in sys.stdin:
    message = json.loads(line)
    log.write(line); log.flush()
    if "id" not in message:
        continue
    answer = plan.get(message["method"], plan.get("*", "silent"))
    if answer == "silent":
        continue
    if answer == "garbage":
        sys.stdout.write("this is not JSON\n" * 1000); sys.stdout.flush(); continue
    if isinstance(answer, dict) and "flood" in answer:
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                           "params": {"level": "info", "data": "x" * 100}}) + "\n"
        sys.stdout.write(note * answer["flood"]); answer = answer["reply"]
    if isinstance(answer, list) and answer and isinstance(answer[0], dict) and "step" in answer[0]:
        answer = answer.pop(0)["reply"] if len(answer) > 1 else answer[0]["reply"]
    reply = {"jsonrpc": "2.0", "id": message["id"], **answer}
    if "result" in reply and reply["result"] == "echo-version":
        reply["result"] = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {},
                           "serverInfo": {"name": "scripted", "version": "1"}}
    sys.stdout.write(json.dumps(reply) + "\n"); sys.stdout.flush()
"""

INIT_OK = {"result": "echo-version"}
NOT_FOUND = {"error": {"code": -32601, "message": "Method not found"}}
TOOL_OK = {"result": {"content": [{"type": "text", "text": "ok"}], "execution": {"taskSupport": "forbidden"}}}


def peer(tmp_path: Path, plan: dict[str, Any]) -> tuple[list[str], Path]:
    script = tmp_path / "peer.py"
    script.write_text(SCRIPT)
    log = tmp_path / "received.jsonl"
    return [sys.executable, str(script), json.dumps(plan), str(log)], log


def received(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_any_non_modern_error_on_the_probe_means_legacy(tmp_path: Path) -> None:
    command, log = peer(
        tmp_path, {"server/discover": NOT_FOUND, "initialize": INIT_OK, "tools/call": TOOL_OK}
    )
    with Client.stdio(command) as client:
        result = client.call_tool("anything", {"x": 1})
    assert result.text == "ok" and client.era == "legacy"  # no resultType: complete; `execution` tolerated
    methods = [message.get("method") for message in received(log)]
    assert methods == ["server/discover", "initialize", "notifications/initialized", "tools/call"]
    call = received(log)[-1]
    assert "_meta" not in call["params"]  # no modern protocol _meta in the legacy era


def test_a_silent_probe_times_out_into_legacy(tmp_path: Path) -> None:
    command, _ = peer(tmp_path, {"server/discover": "silent", "initialize": INIT_OK, "tools/call": TOOL_OK})
    started = time.monotonic()
    with Client.stdio(command, timeout=1.0) as client:
        assert client.call_tool("anything").text == "ok"
    # the probe waited the client's 1 s, not PROBE_TIMEOUT (5 s): 1.09 s at worst on 2 loaded cores
    assert client.era == "legacy" and time.monotonic() - started < 3.5


def test_a_server_that_never_answers_gets_a_bounded_wait(tmp_path: Path) -> None:
    command, _ = peer(tmp_path, {"*": "silent"})
    started = time.monotonic()
    with Client.stdio(command, timeout=0.5) as client, pytest.raises(RequestTimeoutError):
        client.call_tool("anything")
    assert time.monotonic() - started < 3.5  # 1.08 s at worst on 2 loaded cores


def test_garbage_on_the_probe_is_a_protocol_error(tmp_path: Path) -> None:
    command, _ = peer(tmp_path, {"*": "garbage"})
    with Client.stdio(command, timeout=2.0) as client, pytest.raises(ProtocolError, match="non-JSON"):
        client.discover()


def test_a_modern_error_on_the_probe_keeps_the_client_modern(tmp_path: Path) -> None:
    unsupported = {
        "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2099-01-01"], "requested": "2026-07-28"},
        }
    }
    command, log = peer(tmp_path, {"server/discover": unsupported, "initialize": INIT_OK})
    with Client.stdio(command) as client, pytest.raises(UnsupportedProtocolVersionError):
        client.discover()
    assert "initialize" not in [message.get("method") for message in received(log)]  # never keyed to fallback


def test_no_revision_in_common_names_both_sides(tmp_path: Path) -> None:
    old = {"result": {"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": {"name": "old"}}}
    command, _ = peer(tmp_path, {"initialize": old})
    with Client.stdio(command, era="legacy") as client, pytest.raises(ProtocolError) as caught:
        client.discover()
    assert "2024-11-05" in str(caught.value) and "2025-11-25" in str(caught.value)


def test_a_refused_revision_is_retried_with_one_from_the_servers_list(tmp_path: Path) -> None:
    refused = {
        "error": {
            "code": -32602,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2025-03-26"], "requested": "2025-11-25"},
        }
    }
    plan = {
        "initialize": [{"step": 1, "reply": refused}, {"step": 2, "reply": INIT_OK}],
        "tools/call": TOOL_OK,
    }
    command, log = peer(tmp_path, plan)
    with Client.stdio(command, era="legacy") as client:
        assert client.call_tool("t").text == "ok"
        assert client.protocol_version == "2025-03-26"
    offered = [m["params"]["protocolVersion"] for m in received(log) if m.get("method") == "initialize"]
    assert offered == ["2025-11-25", "2025-03-26"]


def test_a_notification_flood_is_bounded(tmp_path: Path) -> None:
    from mcpgen_runtime.transport.stdio import UNSOLICITED_LIMIT

    plan = {"initialize": INIT_OK, "tools/call": {"flood": 20_000, "reply": TOOL_OK}}
    command, _ = peer(tmp_path, plan)
    with Client.stdio(command, era="legacy") as client:
        listener = client.transport.unsolicited()  # type: ignore[attr-defined]
        assert client.call_tool("t").text == "ok"  # read past 20,000 notifications
        kept = client.transport._unsolicited[0]  # type: ignore[attr-defined]
        assert len(kept) == UNSOLICITED_LIMIT  # the oldest were dropped
        assert next(listener)["method"] == "notifications/message"
        listener.close()


def test_forced_modern_never_probes_or_initializes(tmp_path: Path) -> None:
    command, log = peer(tmp_path, {"tools/call": TOOL_OK})
    with Client.stdio(command, era="modern") as client:
        assert client.call_tool("t").text == "ok"
    assert [m.get("method") for m in received(log)] == ["tools/call"]


def test_era_is_checked() -> None:
    with pytest.raises(ValueError, match="era must be one of"):
        Client("http://127.0.0.1:9/mcp", era="2025")  # type: ignore[arg-type]


# -- HTTP: a legacy server with sessions, on loopback ---------------------------------------


class LegacyHttpPeer:
    """A minimal 2025-11-25 Streamable HTTP server: sessions, 404 for an expired one, GET 405."""

    def __init__(
        self, *, expire_first_call: bool = False, early_close: bool = False, slow: float = 0
    ) -> None:
        import http.server
        import threading

        self.requests: list[tuple[str, dict[str, str], dict[str, Any] | None]] = []
        self.sessions = 0
        self.expire_first_call = expire_first_call
        self.early_close = early_close
        self.slow = slow
        peer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(
                self,
                status: int,
                body: bytes = b"",
                headers: dict[str, str] | None = None,
                content_type: str = "application/json",
            ) -> None:
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up on a slow reply
                    self.wfile.write(body)

            def do_GET(self) -> None:
                peer.requests.append(("GET", dict(self.headers), None))
                self._reply(405)

            def do_DELETE(self) -> None:
                peer.requests.append(("DELETE", dict(self.headers), None))
                self._reply(200)

            def do_POST(self) -> None:
                message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                peer.requests.append(("POST", dict(self.headers), message))
                method = message.get("method")
                if method == "initialize":
                    peer.sessions += 1
                    result = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw", "version": "1"},
                    }
                    body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                    self._reply(200, body, {"Mcp-Session-Id": f"session-{peer.sessions}"})
                elif "id" not in message:
                    self._reply(202)
                elif self.headers.get("Mcp-Session-Id") != f"session-{peer.sessions}":
                    self._reply(
                        400, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no session"}}'
                    )
                elif peer.expire_first_call:
                    peer.expire_first_call = False
                    self._reply(
                        404,
                        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}',
                    )
                elif peer.slow and message.get("method") == "tools/call":
                    time.sleep(peer.slow)
                    self._reply(
                        200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}).encode()
                    )
                elif peer.early_close:
                    self._reply(200, b": keep-alive\n\n", content_type="text/event-stream")
                else:
                    result = {"content": [{"type": "text", "text": f"ok in session-{peer.sessions}"}]}
                    self._reply(
                        200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                    )

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_http_falls_back_on_a_legacy_400_and_keeps_the_session() -> None:
    peer = LegacyHttpPeer()
    try:
        with Client(peer.url) as client:
            assert client.call_tool("t").text == "ok in session-1"
            assert client.era == "legacy"
        first, init, *_ = [r for r in peer.requests if r[0] == "POST"]
        assert first[2] is not None and first[2]["method"] == "tools/call"  # the modern attempt
        assert init[2] is not None and init[2]["method"] == "initialize"
        call = [r for r in peer.requests if r[2] and r[2].get("method") == "tools/call"][-1]
        assert call[1]["Mcp-Session-Id"] == "session-1" and call[1]["MCP-Protocol-Version"] == "2025-11-25"
        assert "Mcp-Method" not in call[1]
        deletes = [r for r in peer.requests if r[0] == "DELETE"]
        assert len(deletes) == 1 and deletes[0][1]["Mcp-Session-Id"] == "session-1"
    finally:
        peer.close()


def test_an_expired_session_is_reopened_once() -> None:
    peer = LegacyHttpPeer(expire_first_call=True)
    try:
        with Client(peer.url, era="legacy") as client:
            assert client.call_tool("t").text == "ok in session-2"
        assert peer.sessions == 2
    finally:
        peer.close()


def test_a_stream_closed_early_without_an_event_id_loses_the_call() -> None:
    from mcpgen_runtime.errors import ResponseLostError

    peer = LegacyHttpPeer(early_close=True)
    try:
        with Client(peer.url, era="legacy", timeout=5) as client, pytest.raises(ResponseLostError):
            client.call_tool("t")
    finally:
        peer.close()


def cancelled_ids(peer: LegacyHttpPeer) -> list[Any]:
    return [
        r[2]["params"]["requestId"]
        for r in peer.requests
        if r[2] is not None and r[2].get("method") == "notifications/cancelled"
    ]


def test_a_timed_out_legacy_http_call_is_cancelled_by_notification() -> None:
    peer = LegacyHttpPeer(slow=2.0)
    try:
        with Client(peer.url, era="legacy") as client, pytest.raises(RequestTimeoutError):
            client.call_tool("t", timeout=0.3)
        call = next(r[2] for r in peer.requests if r[2] is not None and r[2].get("method") == "tools/call")
        assert cancelled_ids(peer) == [call["id"]]
    finally:
        peer.close()


def test_a_cancelled_legacy_http_task_is_cancelled_by_notification() -> None:
    import asyncio

    from mcpgen_runtime.client import AsyncClient

    peer = LegacyHttpPeer(slow=2.0)

    async def main() -> None:
        async with AsyncClient(peer.url, era="legacy") as client:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call_tool("t"), 0.3)

    try:
        asyncio.run(main())
        call = next(r[2] for r in peer.requests if r[2] is not None and r[2].get("method") == "tools/call")
        assert cancelled_ids(peer) == [call["id"]]
    finally:
        peer.close()


@pytest.mark.parametrize(
    ("first_call", "error", "status"),
    [
        (lambda client: client.call_tool("no_such_tool", {}), InvalidParamsError, 400),
        (lambda client: client.get_prompt("no_such_prompt", {}), MethodNotFoundError, 404),
    ],
    ids=["unknown tool", "unknown method"],
)
def test_a_modern_servers_answer_to_a_bad_first_request_keeps_the_client_modern(
    first_call: Any, error: type[Exception], status: int
) -> None:
    """VER-10: a 400/404 carrying the request's own id and -32602/-32601 is the server having read
    the request and refused it; falling back to `initialize` would send it twice and leave the
    client on the legacy era for its lifetime (and give the legacy error codes)."""
    with LiveServer(WeatherServer(ServerConfig(page_size=None))) as live, Client(live.url) as client:
        with pytest.raises(error) as caught:
            first_call(client)
        assert caught.value.http_status == status  # type: ignore[attr-defined]
        assert client.era == "modern"
        assert live.count("initialize") == 0
        assert len([r for r in live.requests if r.method not in (None, "server/discover")]) == 1
        assert client.call_tool("get_weather", {"location": "Oslo"}).is_error is False
