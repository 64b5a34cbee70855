"""Bearer tokens per request (`token_provider`, static headers) and the client's own retries —
version renegotiation (VER-02), header refresh (XHDR-20), re-issuing a lost read (HTTP-26) —
against our real server (which checks tokens, versions and `Mcp-Param-*` headers) and, for
the lost reply, a scripted one.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.errors import HttpStatusError, ResponseLostError
from mcpgen_runtime.server import BearerAuth, ServerConfig
from mcpgen_runtime.tools import tool_table
from tests.runtime._client_drivers import Recorded, Reply, ScriptedHttpServer, driver, result
from tests.runtime._client_helpers import LiveServer, WeatherAsyncClient, WeatherClient, WeatherServer
from tests.support import PYTHON, ROOT, subprocess_env

pytestmark = pytest.mark.timeout(60)

TOKENS = {f"token-{i}": f"user-{i}" for i in range(10)}


@pytest.fixture(scope="module")
def guarded() -> Iterator[LiveServer]:
    with LiveServer(WeatherServer(ServerConfig(page_size=None, auth=BearerAuth(TOKENS.get)))) as live:
        yield live


@pytest.fixture(scope="module")
def open_server() -> Iterator[LiveServer]:
    with LiveServer(WeatherServer(ServerConfig(page_size=None))) as live:
        yield live


def authorizations(live: LiveServer) -> list[str | None]:
    return [r.headers.get("authorization") for r in live.requests]


def test_sync_token_provider_is_asked_for_every_request(guarded: LiveServer) -> None:
    tokens = (f"token-{i}" for i in itertools.count())
    with WeatherClient(guarded.url, token_provider=lambda: next(tokens)) as client, guarded.recording():
        client.discover()
        client.get_weather_data("Paris")
        client.get_weather("Oslo")
        with client.listen() as sub:
            assert sub.acknowledged is not None
        assert authorizations(guarded)[:3] == ["Bearer token-1", "Bearer token-2", "Bearer token-3"]
        assert authorizations(guarded)[3] == "Bearer token-4"  # subscriptions/listen too
    # token-0 went into the cache partition of discover (CACHE-13); it never reached the server


def test_async_token_provider_may_be_a_coroutine(guarded: LiveServer) -> None:
    counter = itertools.count()

    async def provider() -> str:
        return f"token-{next(counter) % 10}"

    async def main(client: AsyncClient) -> list[str]:
        return [(await client.get_weather(city)).text for city in ("Paris", "Oslo")]

    with (
        driver(
            "async",
            lambda: WeatherClient(guarded.url),
            lambda: WeatherAsyncClient(guarded.url, token_provider=provider),
        ) as drv,
        guarded.recording(),
    ):
        texts = drv.run(main)
        assert "Paris" in texts[0] and "Oslo" in texts[1]
        # the first call's drift check lists the tools first (issue 35): a request, a token of its own
        assert [r.method for r in guarded.requests] == ["tools/list", "tools/call", "tools/call"]
        assert authorizations(guarded) == ["Bearer token-0", "Bearer token-1", "Bearer token-2"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_static_headers_and_missing_token(guarded: LiveServer, mode: str) -> None:
    with (
        driver(
            mode,
            lambda: Client(guarded.url, headers={"Authorization": "Bearer token-7"}),
            lambda: AsyncClient(guarded.url, headers={"Authorization": "Bearer token-7"}),
        ) as drv,
        guarded.recording(),
    ):
        assert "Rome" in drv("call_tool", "get_weather", {"location": "Rome"}).text
        assert authorizations(guarded) == ["Bearer token-7"]
    with (
        driver(mode, lambda: Client(guarded.url), lambda: AsyncClient(guarded.url)) as drv,
        pytest.raises(HttpStatusError) as info,
    ):
        drv("call_tool", "get_weather", {"location": "Rome"})
    assert info.value.status_code == 401


def test_bad_token_providers() -> None:
    async def coroutine() -> str:
        return "x"

    with pytest.raises(TypeError, match="coroutine"):
        Client("http://127.0.0.1:9/mcp", token_provider=coroutine)  # type: ignore[arg-type]

    def no_token() -> Any:
        return None

    with (
        ScriptedHttpServer(lambda rec: result(rec.body, {"content": []})) as server,
        Client(server.url, token_provider=no_token) as client,
        pytest.raises(TypeError, match="non-empty str"),
    ):
        client.call_tool("x")


def test_token_provider_unused_on_stdio() -> None:
    calls: list[int] = []
    command = [PYTHON, "-m", "tests.runtime.weather_server_app", "--stdio"]
    with Client.stdio(
        command,
        env={"PYTHONPATH": subprocess_env()["PYTHONPATH"]},
        cwd=ROOT,
        token_provider=lambda: str(calls.append(1)) or "t",
    ) as client:
        client.call_tool("get_weather", {"location": "Rome"})
    assert not calls  # stdio credentials come from the environment (BASE-25)


# -- retries ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_unsupported_version_is_renegotiated_with_our_server_ver02(
    open_server: LiveServer, mode: str
) -> None:
    with (
        driver(mode, lambda: Client(open_server.url), lambda: AsyncClient(open_server.url)) as drv,
        open_server.recording() as received,
    ):
        drv.client._core.use_protocol_version("2099-01-01")
        assert "Rome" in drv("call_tool", "get_weather", {"location": "Rome"}).text
        assert [r.headers["mcp-protocol-version"] for r in received] == ["2099-01-01", "2026-07-28"]
        assert [r.body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] for r in received] == [
            "2099-01-01",
            "2026-07-28",
        ]
        assert received[0].body["id"] != received[1].body["id"]
        assert drv.client.protocol_version == "2026-07-28"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_header_mismatch_refreshes_past_a_fresh_cache_and_retries_xhdr20(
    open_server: LiveServer, mode: str
) -> None:
    with driver(
        mode, lambda: WeatherClient(open_server.url), lambda: WeatherAsyncClient(open_server.url)
    ) as drv:
        drv("list_all_tools")  # the cache now holds a fresh listing
        stale = copy.deepcopy(list(spec.definition for spec in drv.client.tools.values()))
        sql = next(t for t in stale if t["name"] == "execute_sql")["inputSchema"]["properties"]
        del sql["region"]["x-mcp-header"]  # an old definition: no Mcp-Param-Region
        drv.client._core.tools = tool_table(stale)
        with open_server.recording() as received:
            result_ = drv.run(lambda c: c.execute_sql(region="us-west1", query="SELECT 1"))
        assert "us-west1" in result_.text
        assert [r.method for r in received] == ["tools/call", "tools/list", "tools/call"]
        assert (
            "mcp-param-region" not in received[0].headers
            and received[2].headers["mcp-param-region"] == "us-west1"
        )


def lost_then_answer(methods: list[str]) -> Any:
    """The first reply to each method is an SSE stream that ends before the response."""
    seen: set[str] = set()

    def app(rec: Recorded) -> Reply:
        method = rec.body["method"]
        methods.append(method)
        if method not in seen:
            seen.add(method)
            return Reply(content_type="text/event-stream", chunks=[b": keep-alive\n\n"])
        return result(
            rec.body,
            {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "public", "content": []},
        )

    return app


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_lost_read_is_reissued_but_a_lost_call_is_not_http26(mode: str) -> None:
    methods: list[str] = []
    with (
        ScriptedHttpServer(lost_then_answer(methods)) as server,
        driver(mode, lambda: Client(server.url), lambda: AsyncClient(server.url)) as drv,
    ):
        assert drv("list_all_tools") == []
        ids = [body["id"] for body in server.bodies("tools/list")]
        assert len(ids) == 2 and ids[0] != ids[1]  # a new request with a new id
        with pytest.raises(ResponseLostError):
            drv("call_tool", "x")
        assert methods == ["tools/list", "tools/list", "tools/call"]  # a tool call may have had effects
