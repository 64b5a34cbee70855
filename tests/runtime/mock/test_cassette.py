"""Cassettes without I/O beyond a temporary file: scrubbing, matching, replayed answers, the YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.mock.cassette import (
    SCRUBBED,
    CassetteError,
    Scrubber,
    dump_cassette,
    load_cassette,
    request_key,
)
from mcpgen_runtime.mock.record import Recorder
from mcpgen_runtime.mock.replay import MISS_CODE, Replayer

CANARY = "canary-7f3a9c2e51d04b"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def call(request_id: Any, tool: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def result(request_id: Any, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}


def test_headers_are_scrubbed_and_their_secrets_wherever_they_reappear() -> None:
    scrubber = Scrubber(headers=["X-Tenant-Key-Id"])
    recorded = scrubber.header_map(
        [
            ("Authorization", f"Bearer {CANARY}"),
            ("Cookie", f"sid={CANARY}"),
            ("X-Upstream-Token", CANARY + "2"),
            ("x-tenant-key-id", "tenant-42-secret"),
            ("Mcp-Session-Id", "abc123"),
            ("Accept", "application/json"),
        ]
    )
    assert recorded == {
        "authorization": SCRUBBED,
        "cookie": SCRUBBED,
        "x-upstream-token": SCRUBBED,
        "x-tenant-key-id": SCRUBBED,
        "mcp-session-id": "[session]",
        "accept": "application/json",
    }
    echoed = scrubber.value({"result": {"content": [{"type": "text", "text": f"you sent {CANARY} ok"}]}})
    assert CANARY not in repr(echoed) and "tenant-42-secret" not in repr(scrubber.value("tenant-42-secret"))
    assert echoed["result"]["content"][0]["text"] == f"you sent {SCRUBBED} ok"


def test_bodies_lose_meta_auth_fields_secret_members_and_token_shaped_strings() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJlc2lnbmF0dXJl"
    message = {
        "params": {
            "_meta": {"progressToken": "p-1", "com.example/authToken": CANARY, "com.example/trace": "t-1"},
            "arguments": {
                "password": CANARY,
                "api_key": CANARY,
                "note": f"token ghp_{'a' * 36} and {jwt}, Bearer {CANARY}",
                "city": "Oslo",
            },
        }
    }
    scrubbed = Scrubber().value(message)
    assert CANARY not in repr(scrubbed) and "ghp_" not in repr(scrubbed) and jwt not in repr(scrubbed)
    assert scrubbed["params"]["_meta"] == {
        "progressToken": "p-1",  # kept: progress notifications refer to it
        "com.example/authToken": SCRUBBED,
        "com.example/trace": "t-1",
    }
    assert scrubbed["params"]["arguments"]["city"] == "Oslo"
    assert message["params"]["arguments"]["password"] == CANARY  # the input is not changed


def test_the_key_ignores_ids_and_meta_and_matches_initialize_on_its_version() -> None:
    a = call(1, "echo", {"message": "hi", "n": 1}, progressToken="x", **MODERN_META)
    b = call("z", "echo", {"n": 1, "message": "hi"}, **MODERN_META)
    assert request_key(a) == request_key(b)
    assert (
        request_key(a)[0] == "modern"
        and request_key(call(1, "echo", {"message": "hi", "n": 1}))[0] == "legacy"
    )
    assert request_key(a) != request_key(call(1, "echo", {"message": "hi", "n": 2}, **MODERN_META))
    sdk = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
           "clientInfo": {"name": "sdk"}, "capabilities": {"roots": {}}}}  # fmt: skip
    ours = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "clientInfo": {"name": "mcpgen"}, "capabilities": {}}}  # fmt: skip
    assert request_key(sdk) == request_key(ours)


def write(tmp_path: Path, interactions: list[dict[str, Any]]) -> Path:
    path = tmp_path / "c.yaml"
    path.write_bytes(dump_cassette(interactions, "http://127.0.0.1:1/mcp"))
    return path


def test_replay_answers_in_order_then_repeats_the_last_under_the_clients_id_and_token(tmp_path: Path) -> None:
    recorded = call(3, "count", {"steps": 2}, progressToken="progress-1")
    progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "progress-1", "progress": 1}}  # fmt: skip
    path = write(
        tmp_path,
        [
            {"request": recorded, "messages": [progress], "response": result(3, "first")},
            {"notification": {"jsonrpc": "2.0", "method": "notifications/initialized"}},
            {"request": call(4, "count", {"steps": 2}), "messages": [], "response": result(4, "second")},
        ],
    )
    replayer = Replayer(path)
    texts = []
    for request_id in (10, 11, 12):
        incoming = call(request_id, "count", {"steps": 2}, progressToken=f"mine-{request_id}")
        entry = replayer.find(incoming)
        assert entry is not None
        answer = replayer.answer(incoming, entry)
        assert answer[-1]["id"] == request_id
        texts.append(answer[-1]["result"]["content"][0]["text"])
        if len(answer) == 2:
            assert answer[0]["params"]["progressToken"] == f"mine-{request_id}"
    assert texts == ["first", "second", "second"]
    missing = call(13, "count", {"steps": 3})
    assert replayer.find(missing) is None
    error = replayer.miss(missing)
    assert error["id"] == 13 and error["error"]["code"] == MISS_CODE
    assert (
        "no recorded answer for tools/call 'count' with arguments {\"steps\":3}" in error["error"]["message"]
    )
    assert error["error"]["data"]["tool"] == "count" and replayer.misses == [
        "tools/call 'count' with arguments {\"steps\":3}"
    ]


def test_the_recorder_writes_the_same_bytes_for_the_same_traffic(tmp_path: Path) -> None:
    def session(path: Path, token: str) -> bytes:
        recorder = Recorder(path, "stdio: node")
        recorder.client_message(call(1, "add", {"a": 1}, progressToken=token))
        recorder.server_message({"jsonrpc": "2.0", "method": "notifications/progress",
                                 "params": {"progressToken": token, "progress": 1}})  # fmt: skip
        recorder.server_message(result(1, "2025-11-25\nsecond line"))
        recorder.client_message({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
        return path.read_bytes()

    first, second = session(tmp_path / "a.yaml", "rnd-81f2"), session(tmp_path / "b.yaml", "rnd-00aa")
    assert first == second and b"progress-1" in first and b"rnd-" not in first
    loaded = load_cassette(tmp_path / "a.yaml")
    (exchange,) = loaded.exchanges
    assert exchange["response"]["result"]["content"][0]["text"] == "2025-11-25\nsecond line"  # a string
    assert exchange["messages"][0]["params"]["progressToken"] == "progress-1"
    assert loaded.interactions[1] == {
        "notification": {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("interactions: []\n", "not an mcpgen cassette"),
        ("cassette: 1\ninteractions: {}\n", "'interactions' must be a list"),
        ("cassette: 1\ninteractions:\n- request: {id: 1}\n", "/interactions/0/request"),
        ("cassette: 1\ninteractions:\n- hello: 1\n", "/interactions/0: expected one of"),
        ("cassette: 1\ninteractions: [\n", "not valid YAML"),
    ],
)
def test_a_bad_cassette_is_refused_with_the_file_and_the_place(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError, match=r"bad\.yaml") as info:
        load_cassette(path)
    assert message in str(info.value)


def test_a_stdio_recording_replayed_over_http_streams_the_servers_messages(tmp_path: Path) -> None:
    """Recorded on stdio, an answer has no `stream`: over HTTP it goes out as SSE when the server
    sent anything before its response (progress here), else as JSON; an HTTP recording's own
    `stream: false` stays JSON."""
    import asyncio

    from mcpgen_runtime import _json
    from mcpgen_runtime.mock.replay import ReplayApp

    recorded = call(3, "count", {"steps": 2}, progressToken="progress-1")
    progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "progress-1", "progress": 1, "total": 2}}  # fmt: skip
    path = write(
        tmp_path,
        [
            {"request": recorded, "messages": [progress], "response": result(3, "counted")},
            {"request": call(4, "quick", {}), "messages": [], "response": result(4, "quick")},
            {
                "request": call(5, "http", {}),
                "status": 200,
                "stream": False,
                "messages": [progress],
                "response": result(5, "json"),
            },
        ],
    )
    app = ReplayApp(Replayer(path))

    def post(message: dict[str, Any]) -> tuple[dict[bytes, bytes], bytes]:
        sent: list[dict[str, Any]] = []
        body = [{"type": "http.request", "body": _json.dumps(message), "more_body": False}]

        async def receive() -> dict[str, Any]:
            return body.pop(0)

        async def send(event: dict[str, Any]) -> None:
            sent.append(event)

        scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}
        asyncio.run(app(scope, receive, send))
        return dict(sent[0]["headers"]), b"".join(e.get("body", b"") for e in sent[1:])

    headers, body = post(call(10, "count", {"steps": 2}, progressToken="mine"))
    assert headers[b"content-type"].startswith(b"text/event-stream")
    events = [_json.loads(line[len(b"data: ") :]) for line in body.splitlines() if line.startswith(b"data: ")]
    assert events[0]["params"]["progressToken"] == "mine" and events[-1]["id"] == 10
    headers, body = post(call(11, "quick", {}))
    assert headers[b"content-type"] == b"application/json" and _json.loads(body)["id"] == 11
    headers, body = post(call(12, "http", {}))
    assert headers[b"content-type"] == b"application/json"


def test_a_handshake_missing_from_a_modern_recording_is_explained(tmp_path: Path) -> None:
    """Recorded over HTTP by a 2026-07-28 client, a cassette holds no handshake: a stdio client's
    server/discover probe and initialize fallback miss, and the miss says how to replay it."""
    modern = write(tmp_path, [{"request": call(1, "echo", {}, **MODERN_META), "response": result(1, "hi")}])
    replayer = Replayer(modern)
    initialize = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25"},
    }
    for message in ({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}, initialize):
        assert replayer.find(message) is None
        assert "--era modern" in replayer.miss(message)["error"]["message"]
    assert "--era" not in replayer.miss(call(3, "other", {}, **MODERN_META))["error"]["message"]
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    with_handshake = write(legacy, [{"request": {**initialize, "id": 1}, "response": result(1, "")}])
    assert (
        "--era"
        not in Replayer(with_handshake).miss({**initialize, "params": {"protocolVersion": "x"}})["error"][
            "message"
        ]
    )
