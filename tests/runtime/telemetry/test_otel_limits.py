"""What a peer's text costs a span (span_values.py): span names, attribute values, the status text
and captured content are cut to their documented sizes; with content capture on, arguments whose
names look secret are masked at any depth, on the server's span and the client's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.trace import SpanKind

from mcpgen_runtime import telemetry
from mcpgen_runtime.client import Client
from mcpgen_runtime.masking import looks_secret
from mcpgen_runtime.telemetry.span_values import (
    ATTRIBUTE_MAX,
    CONTENT_MAX,
    CUT_MARK,
    MASK,
    SPAN_NAME_MAX,
    masked_arguments,
)
from tests.runtime._client_helpers import LiveServer
from tests.runtime.server_helpers import call, mcp_headers, request
from tests.runtime.telemetry.conftest import Recorded
from tests.runtime.weather_server_app import WeatherServer

pytestmark = pytest.mark.timeout(60)

CANARY = "s3cr3t-CANARY-9b1e"


@pytest.fixture
def capture() -> Iterator[None]:
    telemetry.set_capture_content(True)
    yield
    telemetry.set_capture_content(False)


@pytest.fixture
def weather() -> Iterator[LiveServer]:
    with LiveServer(WeatherServer()) as live:
        yield live


def _post(live: LiveServer, message: dict[str, Any]) -> httpx.Response:
    return httpx.post(live.url, json=message, headers=mcp_headers(message), timeout=30)


def _server_spans(otel: Recorded) -> list[Any]:
    spans = otel.wait_for(lambda s: any(x.kind == SpanKind.SERVER for x in s))
    return [s for s in spans if s.kind == SpanKind.SERVER]


def test_long_uri_method_and_id_are_cut(otel: Recorded, weather: LiveServer) -> None:
    uri = "file:///" + "a" * 100_000
    message = request("i" * 50_000, "resources/read", {"uri": uri})
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v" * 50_000
    _post(weather, message)
    (span,) = _server_spans(otel)
    assert span.name == f"resources/read {uri}"[:SPAN_NAME_MAX] + CUT_MARK
    attributes = dict(span.attributes or {})
    assert attributes["mcp.resource.uri"] == uri[:ATTRIBUTE_MAX] + CUT_MARK
    assert attributes["jsonrpc.request.id"] == "i" * ATTRIBUTE_MAX + CUT_MARK
    for value in attributes.values():
        assert not isinstance(value, str) or len(value) <= ATTRIBUTE_MAX + len(CUT_MARK)
    assert len(span.status.description or "") <= ATTRIBUTE_MAX + len(CUT_MARK)


def test_long_method_name_is_cut_in_name_and_status(otel: Recorded, weather: LiveServer) -> None:
    method = "x/" + "m" * 100_000
    message = request(1, method, {})
    reply = httpx.post(
        weather.url, json=message, headers={**mcp_headers(call(1, "t")), "Mcp-Method": "x"}, timeout=30
    )
    assert reply.status_code in (200, 400)
    (span,) = _server_spans(otel)
    assert len(span.name) == SPAN_NAME_MAX + len(CUT_MARK)
    assert (span.attributes or {})["mcp.method.name"] == method[:ATTRIBUTE_MAX] + CUT_MARK
    assert len(span.status.description or "") <= ATTRIBUTE_MAX + len(CUT_MARK)


def test_captured_arguments_are_cut_and_secrets_masked(
    otel: Recorded, weather: LiveServer, capture: None
) -> None:
    arguments = {
        "region": "eu",
        "query": "q" * 50_000,
        "api_key": CANARY,
        "options": {"Password": CANARY, "rows": [{"accessToken": CANARY, "n": 1}]},
        "Authorization": CANARY,
    }
    _post(weather, call(7, "execute_sql", arguments))
    (span,) = _server_spans(otel)
    recorded = str((span.attributes or {})["gen_ai.tool.call.arguments"])
    assert CANARY not in recorded
    assert len(recorded) == CONTENT_MAX + len(CUT_MARK) and recorded.endswith(CUT_MARK)


def test_masked_on_the_client_span_too(otel: Recorded, weather: LiveServer, capture: None) -> None:
    with Client(weather.url, era="modern") as client:
        client.call_tool("execute_sql", {"region": "eu", "query": "SELECT 1", "client_secret": CANARY})
    spans = otel.wait_for(lambda s: any(x.kind == SpanKind.SERVER for x in s))
    sent = [s for s in spans if s.kind == SpanKind.CLIENT and s.name == "tools/call execute_sql"]
    assert sent, [(s.name, s.kind) for s in spans]
    for span in spans:
        assert CANARY not in json.dumps(dict(span.attributes or {}))
    recorded = json.loads(str((sent[0].attributes or {})["gen_ai.tool.call.arguments"]))
    assert (recorded["query"], recorded["client_secret"]) == ("SELECT 1", MASK)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("password", True),
        ("db_PASSWORD", True),
        ("apiKey", True),
        ("X-Api-Key", True),
        ("refresh_token", True),
        ("clientSecret", True),
        ("authorization", True),
        ("credentials", True),
        ("query", False),
        ("region", False),
        ("location", False),
    ],
)
def test_secret_looking_names(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret


def test_masking_copies_and_bounds_depth() -> None:
    arguments: dict[str, Any] = {"a": {"token": CANARY}, "header": "h"}
    deep: dict[str, Any] = {"password": CANARY}
    for _ in range(200):
        deep = {"next": deep}
    arguments["deep"] = deep
    masked = masked_arguments(arguments, [("header",)])
    assert arguments["a"]["token"] == CANARY and arguments["header"] == "h"  # the call's own are unchanged
    assert masked["a"] == {"token": MASK} and masked["header"] == MASK
    assert CANARY not in json.dumps(masked)
