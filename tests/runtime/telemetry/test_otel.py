"""OpenTelemetry on both sides, checked against the MCP semantic conventions with the real SDK:
client and server in one process (the server under uvicorn on loopback, in a thread), every
span and metric read back from the in-memory exporter and reader.

What each test pins: span names (`{mcp.method.name} {target}`), kinds (CLIENT / SERVER),
attributes, status and parentage (the server span is a child of the client span through
`params._meta`), for a tool call, an `isError` result, a JSON-RPC error, a cancelled call, a
paginated list, a multi-round-trip call, and the duration histograms with their buckets.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from mcpgen_runtime import telemetry
from mcpgen_runtime.client import AsyncClient, Client, ElicitRequest, ElicitResult
from mcpgen_runtime.errors import InvalidParamsError
from tests.runtime._client_helpers import LiveServer
from tests.runtime.legacy_server_app import LegacyTestServer
from tests.runtime.telemetry.conftest import Recorded
from tests.runtime.weather_server_app import WeatherServer

pytestmark = pytest.mark.timeout(60)


def one(spans: list[ReadableSpan], name: str, kind: SpanKind) -> ReadableSpan:
    found = [s for s in spans if s.name == name and s.kind == kind]
    assert len(found) == 1, [(s.name, s.kind) for s in spans]
    return found[0]


def child_of(child: ReadableSpan, parent: ReadableSpan) -> bool:
    assert child.parent is not None and parent.context is not None and child.context is not None
    return (
        child.parent.span_id == parent.context.span_id and child.context.trace_id == parent.context.trace_id
    )


def has_server(name: str, count: int = 1) -> Any:
    return lambda spans: sum(1 for s in spans if s.name == name and s.kind == SpanKind.SERVER) >= count


@pytest.fixture
def weather() -> Any:
    with LiveServer(WeatherServer()) as live:
        yield live


def test_tool_call_client_and_server_spans(otel: Recorded, weather: LiveServer) -> None:
    with Client(weather.url, era="modern") as client:
        client.call_tool("get_weather", {"location": "Paris"})
    spans = otel.wait_for(has_server("tools/call get_weather"))
    sent = one(spans, "tools/call get_weather", SpanKind.CLIENT)
    served = one(spans, "tools/call get_weather", SpanKind.SERVER)
    assert child_of(served, sent)
    assert sent.status.status_code == served.status.status_code == StatusCode.UNSET
    for span in (sent, served):
        attributes = dict(span.attributes or {})
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "get_weather"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["mcp.protocol.version"] == "2026-07-28"
        assert attributes["network.transport"] == "tcp"
        assert attributes["network.protocol.name"] == "http"
        assert "error.type" not in attributes
        assert "gen_ai.tool.call.arguments" not in attributes  # content is opt-in
    assert sent.attributes is not None and served.attributes is not None
    assert sent.attributes["jsonrpc.request.id"] == served.attributes["jsonrpc.request.id"]
    assert sent.attributes["server.address"] == "127.0.0.1"
    assert sent.attributes["server.port"] == weather.port
    assert "server.address" not in served.attributes

    recorded = otel.read_metrics()
    for name in ("mcp.client.operation.duration", "mcp.server.operation.duration"):
        metric, points = recorded[name]
        assert metric.unit == "s"
        point = next(p for p in points if p.attributes.get("gen_ai.tool.name") == "get_weather")
        assert point.count == 1
        assert tuple(point.explicit_bounds) == telemetry.DURATION_BUCKETS
        assert point.attributes["mcp.method.name"] == "tools/call"
        assert "jsonrpc.request.id" not in point.attributes  # one value per request: spans only


def test_tool_error_is_tool_error(otel: Recorded, weather: LiveServer) -> None:
    with Client(weather.url, era="modern") as client:
        result = client.call_tool("get_weather", {"location": "Atlantis"})
    assert result.is_error
    spans = otel.wait_for(has_server("tools/call get_weather"))
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        span = one(spans, "tools/call get_weather", kind)
        assert span.status.status_code == StatusCode.ERROR
        assert span.attributes is not None
        assert span.attributes["error.type"] == "tool_error"
        assert "rpc.response.status_code" not in span.attributes
    points = otel.read_metrics()["mcp.server.operation.duration"][1]
    assert [p.attributes["error.type"] for p in points] == ["tool_error"]


def test_jsonrpc_error(otel: Recorded, weather: LiveServer) -> None:
    with Client(weather.url, era="modern") as client, pytest.raises(InvalidParamsError):
        client.call_tool("no_such_tool", {})
    spans = otel.wait_for(has_server("tools/call no_such_tool"))
    sent = one(spans, "tools/call no_such_tool", SpanKind.CLIENT)
    served = one(spans, "tools/call no_such_tool", SpanKind.SERVER)
    assert child_of(served, sent)
    for span in (sent, served):
        assert span.status.status_code == StatusCode.ERROR
        assert span.attributes is not None
        assert span.attributes["error.type"] == "-32602"
        assert span.attributes["rpc.response.status_code"] == "-32602"


def test_cancelled_call(otel: Recorded, weather: LiveServer) -> None:
    """No tool table: the first request lacks Mcp-Param-Region (-32020), the client re-lists the
    tools (XHDR-20) and sends the call again, then gives up. One CLIENT span covers both sends;
    the re-listing is its child."""

    async def main() -> None:
        async with AsyncClient(weather.url, era="modern") as client:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    await client.call_tool("execute_sql", {"region": "eu", "query": "SLEEP 10"})

    asyncio.run(main())
    spans = otel.wait_for(has_server("tools/call execute_sql", 2))
    sent = one(spans, "tools/call execute_sql", SpanKind.CLIENT)
    mismatch, served = sorted(
        (s for s in spans if s.name == "tools/call execute_sql" and s.kind == SpanKind.SERVER),
        key=lambda s: s.start_time or 0,
    )
    assert child_of(mismatch, sent) and child_of(served, sent)
    assert child_of(one(spans, "tools/list", SpanKind.CLIENT), sent)
    assert (mismatch.attributes or {})["error.type"] == "-32020"
    for span in (sent, served):  # HTTP-21: the dropped stream cancels the handler
        assert span.status.status_code == StatusCode.ERROR
        assert span.attributes is not None
        assert span.attributes["error.type"] == "asyncio.exceptions.CancelledError"
    assert served.end_time is not None and sent.start_time is not None
    assert (served.end_time - sent.start_time) / 1e9 < 5  # cancelled, not slept out


def test_paginated_list(otel: Recorded) -> None:
    config = dataclasses.replace(WeatherServer.default_config(), page_size=2)
    with LiveServer(WeatherServer(config)) as live, Client(live.url, era="modern", cache=False) as client:
        tools = client.list_all_tools()
    assert len(tools) == 6
    spans = otel.wait_for(has_server("tools/list", 3))
    sent = sorted(otel.named("tools/list", SpanKind.CLIENT), key=lambda s: s.start_time or 0)
    served = sorted(otel.named("tools/list", SpanKind.SERVER), key=lambda s: s.start_time or 0)
    assert len(sent) == len(served) == 3  # one span per page, on both sides
    assert len({s.context.trace_id for s in sent if s.context}) == 3  # each page: its own operation
    for page, answer in zip(sent, served, strict=True):
        assert child_of(answer, page)
        assert "gen_ai.operation.name" not in (page.attributes or {})
    assert len(spans) == 6


def test_mrtr_rounds_are_one_trace(otel: Recorded) -> None:
    def name(request: ElicitRequest) -> ElicitResult:
        inner = trace.get_current_span()  # the user's callback runs inside the call's span
        assert inner.get_span_context().is_valid
        return ElicitResult.accept({"name": "Ada"})

    with LiveServer(LegacyTestServer()) as live, Client(live.url, era="modern", on_elicit=name) as client:
        result = client.call_tool("ask", {})
    assert result.structured_content is None and "Hello, Ada!" in str(result.content)
    spans = otel.wait_for(has_server("tools/call ask", 2))
    sent = one(spans, "tools/call ask", SpanKind.CLIENT)  # one span across both rounds
    rounds = [s for s in spans if s.name == "tools/call ask" and s.kind == SpanKind.SERVER]
    assert len(rounds) == 2
    assert all(child_of(round_, sent) for round_ in rounds)
    ids = {(r.attributes or {})["jsonrpc.request.id"] for r in rounds}
    assert len(ids) == 2  # MRTR-19: each round is a new request
    assert all(r.status.status_code == StatusCode.UNSET for r in [*rounds, sent])
    assert sent.status.status_code == StatusCode.UNSET


def test_off_records_nothing_without_a_provider_in_a_fresh_process() -> None:
    """Without a configured provider the runtime never imports OpenTelemetry (free when off)."""
    import subprocess

    from tests.support import PYTHON, subprocess_env

    code = (
        "import sys\n"
        "from mcpgen_runtime import telemetry\n"
        "from mcpgen_runtime.client import Client\n"
        "from mcpgen_runtime.server import ToolServer\n"
        "assert telemetry.active() is None\n"
        "assert not any(m.startswith('opentelemetry') for m in sys.modules), sorted(sys.modules)\n"
        "import opentelemetry.trace\n"
        "assert telemetry.active() is None  # imported, but only the API's proxy provider\n"
    )
    done = subprocess.run([PYTHON, "-c", code], env=subprocess_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_http_traceparent_header_is_a_link(otel: Recorded, weather: LiveServer) -> None:
    """The `_meta` context is the parent; the HTTP request's own `traceparent` header (another
    trace, as an HTTP-level proxy or client instrumentation would send) becomes a link."""
    import httpx

    from tests.runtime.server_helpers import call, mcp_headers

    meta_parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    header_parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    message = call(7, "get_weather", {"location": "Paris"}, traceparent=meta_parent)
    headers = {**mcp_headers(message), "traceparent": header_parent}
    reply = httpx.post(weather.url, json=message, headers=headers, timeout=10)
    assert reply.status_code == 200
    spans = otel.wait_for(has_server("tools/call get_weather"))
    served = one(spans, "tools/call get_weather", SpanKind.SERVER)
    assert served.parent is not None and served.context is not None
    assert served.context.trace_id == 0x0AF7651916CD43DD8448EB211C80319C
    assert served.parent.span_id == 0xB7AD6B7169203331 and served.parent.is_remote
    assert [(link.context.trace_id, link.context.span_id) for link in served.links] == [
        (0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7)
    ]
    assert (served.attributes or {})["jsonrpc.request.id"] == "7"


def test_no_meta_context_starts_a_trace(otel: Recorded, weather: LiveServer) -> None:
    import httpx

    from tests.runtime.server_helpers import call, mcp_headers

    message = call(8, "get_weather", {"location": "Paris"})
    assert httpx.post(weather.url, json=message, headers=mcp_headers(message), timeout=10).status_code == 200
    served = one(
        otel.wait_for(has_server("tools/call get_weather")), "tools/call get_weather", SpanKind.SERVER
    )
    assert served.parent is None and not served.links


def test_providers_configured_one_after_the_other_in_a_fresh_process() -> None:
    """A meter provider first, a tracer provider later: each is picked up when it appears, and
    the instrumentation is made once per combination, not per message."""
    import subprocess

    from tests.support import PYTHON, subprocess_env

    code = (
        "from opentelemetry import metrics, trace\n"
        "from opentelemetry.sdk.metrics import MeterProvider\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from mcpgen_runtime import telemetry\n"
        "assert telemetry.active() is None\n"
        "metrics.set_meter_provider(MeterProvider())\n"
        "first = telemetry.active()\n"
        "assert first is not None and first.tracer is None and first.server_duration is not None\n"
        "assert telemetry.active() is first\n"
        "trace.set_tracer_provider(TracerProvider())\n"
        "both = telemetry.active()\n"
        "assert both is not None and both is not first and both.tracer is not None\n"
        "assert telemetry.active() is both\n"
    )
    done = subprocess.run([PYTHON, "-c", code], env=subprocess_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_switched_off_sends_no_trace_context(otel: Recorded, weather: LiveServer) -> None:
    """`set_enabled(False)`: no span, no metric, no `traceparent` in `_meta`, provider or not."""
    telemetry.set_enabled(False)
    try:
        with weather.recording() as received, Client(weather.url, era="modern") as client:
            client.call_tool("get_weather", {"location": "Paris"})
    finally:
        telemetry.set_enabled(True)
    assert otel.spans() == [] and otel.read_metrics() == {}
    call = next(r for r in received if r.method == "tools/call")
    assert "traceparent" not in call.body["params"]["_meta"]
    with weather.recording() as received, Client(weather.url, era="modern") as client:
        client.call_tool("get_weather", {"location": "Paris"})
    call = next(r for r in received if r.method == "tools/call")
    assert "traceparent" in call.body["params"]["_meta"]
