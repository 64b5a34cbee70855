"""Bearer-token auth (HTTP-05), per-principal rate limits (SEC-03), requestState sealing
(MRTR-05..10) and progress throttling (PROG-07)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen_runtime.server import BearerAuth, IncomingRequest, RateLimit, ServerConfig, ToolContext
from mcpgen_runtime.server.core.ratelimit import RETRY_AFTER_KEY, RateLimiter
from mcpgen_runtime.server.core.request_state import StateCodec, StateError, principal_digest, request_digest
from tests.runtime.dynamic_server_app import DynamicServer
from tests.runtime.server_helpers import VERSION, call, mcp_headers, meta
from tests.support import PYTHON, ROOT, free_port, subprocess_env, wait_for_port

KEY = "unit-test-secret-0123456789"


# ---- StateCodec -------------------------------------------------------------------------------


def _seal(codec: StateCodec, **overrides: Any) -> str:
    fields: dict[str, Any] = {
        "principal": "p",
        "request": "r",
        "asked": ["k"],
        "carried": {"a": 1},
        "state": {"s": 2},
    }
    fields.update(overrides)
    return codec.seal(**fields)


def test_codec_round_trip_and_checks() -> None:
    now = [1000.0]
    codec = StateCodec([KEY], ttl_s=10, clock=lambda: now[0])
    token = _seal(codec)
    body = codec.open(token, principal="p", request="r")
    assert (body["a"], body["c"], body["s"]) == (["k"], {"a": 1}, {"s": 2})
    assert _seal(codec) != token  # nonce: never the same token twice
    with pytest.raises(StateError, match="different principal"):
        codec.open(token, principal="q", request="r")
    with pytest.raises(StateError, match="different request"):
        codec.open(token, principal="p", request="x")
    version, payload, mac = token.split(".")
    middle = len(payload) // 2
    forged = payload[:middle] + ("A" if payload[middle] != "A" else "B") + payload[middle + 1 :]
    with pytest.raises(StateError, match="integrity"):
        codec.open(f"{version}.{forged}.{mac}", principal="p", request="r")
    with pytest.raises(StateError, match="malformed"):
        codec.open("v2." + payload + "." + mac, principal="p", request="r")
    now[0] += 10
    with pytest.raises(StateError, match="expired"):
        codec.open(token, principal="p", request="r")


def test_codec_limits() -> None:
    codec = StateCodec([KEY], max_bytes=300)
    with pytest.raises(ValueError, match="limit"):
        _seal(codec, state={"big": "x" * 400})
    with pytest.raises(StateError, match="too large"):
        codec.open("v1." + "A" * 400 + ".B", principal="p", request="r")
    with pytest.raises(TypeError, match="JSON"):
        _seal(StateCodec([KEY]), state={"obj": object()})
    with pytest.raises(ValueError):
        StateCodec([])


def test_digests() -> None:
    assert principal_digest(None) == "" and principal_digest("a") != principal_digest("b")
    base = request_digest("tools/call", {"name": "t", "arguments": {"a": 1, "b": 2}, "_meta": {"x": 1}})
    assert base == request_digest(
        "tools/call", {"arguments": {"b": 2, "a": 1}, "name": "t", "requestState": "s", "inputResponses": {}}
    )
    assert request_digest("tools/call", {"name": "t"}) == request_digest(
        "tools/call", {"name": "t", "arguments": {}}
    )
    assert base != request_digest("tools/call", {"name": "t", "arguments": {"a": 1, "b": 3}})
    assert base != request_digest("prompts/get", {"name": "t", "arguments": {"a": 1, "b": 2}})


# ---- progress throttling (PROG-07) ---------------------------------------------------------------


def test_progress_interval_drops_bursts_but_never_the_final_update_prog07() -> None:
    sent: list[float] = []

    async def notify(message: dict[str, Any]) -> None:
        sent.append(message["params"]["progress"])

    async def scenario() -> None:
        ctx = ToolContext(
            tool_name="t",
            request_id=1,
            meta=meta(progressToken="p"),
            protocol_version=VERSION,
            client_capabilities={},
            notify=notify,
            progress_interval=60.0,
        )
        for value in (1, 2, 3):
            await ctx.report_progress(value, total=10)
        await ctx.report_progress(10, total=10)  # final: always sent

    asyncio.run(scenario())
    assert sent == [1, 10]


# ---- rate limits (SEC-03) -----------------------------------------------------------------------


def test_header_memo_is_bounded_and_skips_large_blocks() -> None:
    """Clients choose their headers: the server's memo of decoded header blocks must stay small."""
    from mcpgen_runtime.server.http.app import _HeaderTable

    classified: list[Any] = []

    def classify(headers: Any) -> Any:
        classified.append(headers)
        return headers

    table = _HeaderTable(classify)
    block = [(b"Content-Type", b"application/json"), (b"X-Trace", b"1"), (b"x-trace", b"2")]
    first = table.of(block)
    assert table.of(list(block)) is first and len(classified) == 1  # decoded and checked once
    assert dict(first) == {"content-type": "application/json", "x-trace": "1, 2"}  # RFC 9110 §5.3
    with pytest.raises(TypeError):
        first["content-type"] = "text/plain"  # type: ignore[index]  # shared, so read-only
    for n in range(1000):
        table.of([(b"x-trace", str(n).encode())])
    assert len(table._seen) <= _HeaderTable._LIMIT
    big = [(b"x-big", b"a" * 10_000)]
    before = len(classified)
    table.of(big)
    table.of(big)
    assert len(classified) == before + 2  # never kept: each request pays its own decoding


def test_token_bucket_refills_per_key() -> None:
    now = [0.0]
    limiter = RateLimiter(RateLimit(rate=2, burst=2), clock=lambda: now[0])
    assert [limiter.take("a") for _ in range(2)] == [0.0, 0.0]
    assert limiter.take("a") == pytest.approx(0.5)
    assert limiter.take("b") == 0.0  # another caller has its own bucket
    now[0] += 0.5
    assert limiter.take("a") == 0.0
    with pytest.raises(ValueError):
        RateLimit(rate=0)


def test_bucket_count_is_bounded() -> None:
    limiter = RateLimiter(RateLimit(rate=1, burst=1, max_callers=2))
    for key in "abc":
        limiter.take(key)
    assert len(limiter._buckets) == 2


def test_rate_limited_calls_become_is_error_results_sec03() -> None:
    server = DynamicServer(ServerConfig(rate_limit=RateLimit(rate=0.01, burst=2)))

    def whoami(principal: Any) -> dict[str, Any]:
        outcome = asyncio.run(server.handle_message(call(1, "whoami"), IncomingRequest(principal=principal)))
        assert outcome.status == 200 and outcome.response is not None
        return dict(outcome.response["result"])

    assert [whoami("alice")["isError"] for _ in range(2)] == [False, False]
    limited = whoami("alice")
    assert limited["isError"] is True and "Rate limit exceeded" in limited["content"][0]["text"]
    assert limited["_meta"][RETRY_AFTER_KEY] > 1000
    assert whoami("bob")["isError"] is False  # per principal


# ---- auth over HTTP (HTTP-05) -------------------------------------------------------------------


@pytest.fixture(scope="module")
def secured() -> Iterator[str]:
    port = free_port()
    env = {**subprocess_env(), "MCPGEN_TEST_AUTH": "1", "MCPGEN_TEST_RATE": "0.01,3"}
    proc = subprocess.Popen(
        [PYTHON, "-m", "tests.runtime.dynamic_server_app", "--http", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _post(url: str, message: dict[str, Any], token: str | None) -> httpx.Response:
    headers = mcp_headers(message)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(url, content=json.dumps(message).encode(), headers=headers, timeout=10)


@pytest.mark.parametrize(("token", "error"), [(None, None), ("wrong", "invalid_token")])
def test_missing_or_invalid_token_is_401(secured: str, token: str | None, error: str | None) -> None:
    response = _post(secured, call(1, "whoami"), token)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="mcp"')
    assert (f'error="{error}"' in challenge) if error else ("error=" not in challenge)


def test_malformed_authorization_is_401(secured: str) -> None:
    message = call(1, "whoami")
    headers = {**mcp_headers(message), "Authorization": "Basic dXNlcjpwYXNz"}
    response = httpx.post(secured, content=json.dumps(message).encode(), headers=headers, timeout=10)
    assert response.status_code == 401 and 'error="invalid_request"' in response.headers["www-authenticate"]


def test_principal_reaches_the_handler_and_binds_state_mrtr08(secured: str) -> None:
    assert (
        _post(secured, call(1, "whoami"), "token-carol").json()["result"]["content"][0]["text"] == "'carol'"
    )
    caps: dict[str, Any] = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    first = _post(secured, call(2, "ask", {}, **caps), "token-dave").json()["result"]
    retry = call(3, "ask", {}, **caps)
    retry["params"].update(
        requestState=first["requestState"],
        inputResponses={"user_name": {"action": "accept", "content": {"name": "D"}}},
    )
    stolen = _post(secured, retry, "token-eve").json()
    assert stolen["error"]["code"] == -32602 and "principal" in stolen["error"]["message"]
    assert _post(secured, retry, "token-dave").json()["result"]["content"][0]["text"] == "Hello, D!"


def test_rate_limit_is_per_principal_over_http(secured: str) -> None:
    texts = [_post(secured, call(i, "whoami"), "token-frank").json()["result"] for i in range(4)]
    assert [t["isError"] for t in texts] == [False, False, False, True]
    assert _post(secured, call(9, "whoami"), "token-grace").json()["result"]["isError"] is False


def test_optional_auth_serves_anonymous_callers() -> None:
    from mcpgen_runtime.server.core.bearer_auth import Unauthorized, authenticate

    auth = BearerAuth(
        lambda token: "someone" if token == "ok" else None,
        required=False,
        resource_metadata="https://example.com/.well-known/oauth-protected-resource",
    )
    assert asyncio.run(authenticate(auth, {})) is None
    assert asyncio.run(authenticate(auth, {"authorization": "bearer ok"})) == "someone"
    with pytest.raises(Unauthorized) as caught:
        asyncio.run(authenticate(auth, {"authorization": "Bearer nope"}))
    assert (
        'resource_metadata="https://example.com/.well-known/oauth-protected-resource"'
        in caught.value.challenge
    )

    async def verify(token: str) -> str | None:  # async verifiers work too
        return "async-user"

    assert asyncio.run(authenticate(BearerAuth(verify), {"authorization": "Bearer x"})) == "async-user"
