"""A server answers MCP on its path only (issue 33, item 6): `python -m PACKAGE` on `/mcp`, an app
mounted in another ASGI app on `<mount>/mcp` and at its mount point. Any other path is a plain 404
without JSON-RPC, in both eras; the probes and the OAuth metadata (`/.well-known/…`) keep answering.
Real processes and uvicorn on loopback."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcpgen_runtime.client import Client
from tests.runtime._client_helpers import WeatherServer
from tests.runtime.legacy_helpers import request as legacy_request
from tests.runtime.server_helpers import call, mcp_headers
from tests.support import PYTHON, free_port, running_server, wait_for_port

pytestmark = pytest.mark.peer

CALL = call(1, "get_weather", {"location": "Oslo"})
LEGACY_INITIALIZE = legacy_request(
    0,
    "initialize",
    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
)
LEGACY_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _assert_plain_404(response: httpx.Response) -> None:
    assert response.status_code == 404, (response.request.url, response.text)
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "Not Found\n"  # no JSON-RPC: nothing on this path speaks MCP


def _assert_nothing_but(http: httpx.Client, endpoints: list[str], elsewhere: list[str]) -> None:
    """MCP (both eras) on each of `endpoints`; every path of `elsewhere` a plain 404 for every verb
    and era."""
    for endpoint in endpoints:
        assert http.post(endpoint, json=CALL, headers=mcp_headers(CALL)).json()["result"]["content"]
        legacy = http.post(endpoint, json=LEGACY_INITIALIZE, headers=LEGACY_HEADERS)
        assert legacy.status_code == 200 and "mcp-session-id" in legacy.headers, (endpoint, legacy.text)
    for path in elsewhere:
        _assert_plain_404(http.post(path, json=CALL, headers=mcp_headers(CALL)))
        _assert_plain_404(http.post(path, json=LEGACY_INITIALIZE, headers=LEGACY_HEADERS))
        _assert_plain_404(http.get(path, headers={"Accept": "text/event-stream"}))
        _assert_plain_404(http.delete(path, headers={"Mcp-Session-Id": "x"}))


def test_a_generated_server_answers_mcp_on_its_path_only() -> None:
    port = free_port()
    with (
        running_server([PYTHON, "-m", "weather_server", "--http", "--port", str(port)], port),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http,
    ):
        _assert_nothing_but(http, ["/mcp", "/mcp/"], ["/wrong", "/", "/mcp/x", "/mcpx", "/.well-known/x"])
        assert http.get("/healthz").json() == {"status": "ok"}
        assert http.head("/readyz").status_code == 200
        assert http.get("/mcp").status_code == 405  # the endpoint's GET without a session (HTTP-23)
        with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert client.call_tool("get_weather", {"location": "Oslo"}).text


def test_oauth_metadata_keeps_answering_beside_the_endpoint() -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    command = [PYTHON, "-m", "weather_server", "--http", "--port", str(port)]
    command += ["--oauth-issuer", "https://auth.example", "--resource", resource]
    base = f"http://127.0.0.1:{port}"
    with running_server(command, port), httpx.Client(base_url=base, timeout=10) as http:
        for well_known in (
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ):
            assert http.get(well_known).json()["resource"] == resource
        assert http.post("/mcp", json=CALL, headers=mcp_headers(CALL)).status_code == 401
        _assert_plain_404(http.post("/wrong", json=CALL, headers=mcp_headers(CALL)))


@contextlib.contextmanager
def _serving(app: Any) -> Iterator[str]:
    port = free_port()
    served = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=served.run, daemon=True)
    thread.start()
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        served.should_exit = True
        thread.join(10)


def test_a_mounted_app_answers_where_it_is_mounted() -> None:
    async def other(request: Any) -> PlainTextResponse:
        return PlainTextResponse("the host application's")

    host = Starlette(
        routes=[Route("/other", other), Mount("/tools", app=WeatherServer().asgi_app())],
    )
    with _serving(host) as base, httpx.Client(base_url=base, timeout=10) as http:
        _assert_nothing_but(
            http, ["/tools/mcp", "/tools/mcp/"], ["/tools/wrong", "/tools/mcp/x", "/tools/healthz/x"]
        )
        _assert_nothing_but(http, ["/tools/"], [])  # the mount point itself
        assert http.get("/tools/healthz").json() == {"status": "ok"}  # probes under the mount point
        assert http.get("/other").text == "the host application's"
        with Client(f"{base}/tools/mcp") as client:
            assert client.call_tool("get_weather", {"location": "Oslo"}).text


def test_the_endpoint_path_is_the_apps_to_choose() -> None:
    with pytest.raises(ValueError, match="starts with '/'"):
        WeatherServer().asgi_app(path="mcp")
    with (
        _serving(WeatherServer().asgi_app(path="/v1/mcp")) as base,
        httpx.Client(base_url=base, timeout=10) as http,
    ):
        _assert_nothing_but(http, ["/v1/mcp"], ["/mcp", "/v1"])
