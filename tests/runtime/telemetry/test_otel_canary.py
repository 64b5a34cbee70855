"""No token, `Authorization` value or `Mcp-Param-*` value reaches a span or a metric, with
content capture off (the default) and on (`gen_ai.tool.call.arguments`/`.result`: recorded,
with the header-mirrored argument redacted)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.trace import SpanKind

from mcpgen_runtime import telemetry
from mcpgen_runtime.client import Client
from tests.runtime._client_helpers import LiveServer
from tests.runtime.server_helpers import SPEC_TOOL_NAMES
from tests.runtime.telemetry.conftest import Recorded
from tests.runtime.telemetry.test_otel import one
from tests.runtime.weather_server_app import SPEC, WeatherServer

pytestmark = pytest.mark.timeout(60)

TOKEN = "tok-CANARY-7f3a9c"
REGION = "region-CANARY-41d2"


@pytest.fixture(params=[False, True], ids=["content-off", "content-on"])
def capture(request: pytest.FixtureRequest) -> Iterator[bool]:
    telemetry.set_capture_content(request.param)
    yield request.param
    telemetry.set_capture_content(False)


def everything(otel: Recorded) -> str:
    """Every span attribute, event, link and status text, and every metric attribute, as text;
    except the opted-in tool result: this tool's output repeats the region (its own text)."""
    texts: list[Any] = []
    for span in otel.spans():
        attributes = {k: v for k, v in (span.attributes or {}).items() if k != "gen_ai.tool.call.result"}
        texts.append([span.name, attributes, span.status.description])
        texts.extend([e.name, dict(e.attributes or {})] for e in span.events)
        texts.extend(dict(link.attributes or {}) for link in span.links)
    for _, points in otel.read_metrics().values():
        texts.extend(dict(p.attributes) for p in points)
    return json.dumps(texts, default=str)


def test_secrets_never_recorded(otel: Recorded, capture: bool) -> None:
    tools = json.loads(SPEC.read_text())["tools"]
    assert "execute_sql" in SPEC_TOOL_NAMES
    with LiveServer(WeatherServer()) as live:
        with (
            live.recording() as received,
            Client(live.url, era="modern", tools=tools, token_provider=lambda: TOKEN) as client,
        ):
            result = client.call_tool("execute_sql", {"region": REGION, "query": "SELECT 1"})
        otel.wait_for(lambda s: any(x.kind == SpanKind.SERVER for x in s))
    assert not result.is_error
    # The canaries did cross the wire, in the headers they must stay out of telemetry from.
    call = next(r for r in received if r.method == "tools/call")
    assert call.headers["authorization"] == f"Bearer {TOKEN}"
    assert REGION in call.headers["mcp-param-region"] or call.headers["mcp-param-region"].startswith("=?")

    recorded = everything(otel)
    assert TOKEN not in recorded
    assert REGION not in recorded
    sent = one(otel.spans(), "tools/call execute_sql", SpanKind.CLIENT)
    served = one(otel.spans(), "tools/call execute_sql", SpanKind.SERVER)
    for span in (sent, served):
        attributes = span.attributes or {}
        if not capture:
            assert "gen_ai.tool.call.arguments" not in attributes
            assert "gen_ai.tool.call.result" not in attributes
        else:
            assert json.loads(str(attributes["gen_ai.tool.call.arguments"])) == {
                "region": "[redacted]",
                "query": "SELECT 1",
            }
    if capture:
        result_text = str((sent.attributes or {})["gen_ai.tool.call.result"])
        assert "SELECT 1 -> 0 rows" in result_text
        assert "gen_ai.tool.call.result" in (served.attributes or {})


def test_rejected_headers_are_not_recorded(otel: Recorded, capture: bool) -> None:
    """A `Mcp-Param-Region` that disagrees with the body (-32020) and a bearer token: the error
    span says what failed, never the values."""
    import httpx

    from tests.runtime.server_helpers import call, mcp_headers

    message = call(3, "execute_sql", {"region": "eu", "query": "SELECT 1"})
    headers = {**mcp_headers(message), "Mcp-Param-Region": REGION, "Authorization": f"Bearer {TOKEN}"}
    with LiveServer(WeatherServer()) as live:
        reply = httpx.post(live.url, json=message, headers=headers, timeout=10)
        otel.wait_for(lambda s: any(x.kind == SpanKind.SERVER for x in s))
    assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020
    served = one(otel.spans(), "tools/call execute_sql", SpanKind.SERVER)
    assert (served.attributes or {})["error.type"] == "-32020"
    recorded = everything(otel)
    assert TOKEN not in recorded and REGION not in recorded
