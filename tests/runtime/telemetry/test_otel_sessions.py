"""OpenTelemetry in legacy sessions and over stdio.

Legacy (initialize-based) era over HTTP: the server's own request (`elicitation/create`) is a
CLIENT span inside the server's `tools/call` span, and the client answers it in a SERVER span
parented through the request's `_meta`; the user's callback runs inside that span; the spans
carry `mcp.session.id`; `mcp.client.session.duration` is recorded when the client closes.
stdio: the server is a real subprocess exporting its spans to a file (traced_server_app.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from mcpgen_runtime.client import Client, ElicitRequest, ElicitResult
from tests.runtime._client_helpers import LiveServer
from tests.runtime.legacy_server_app import LegacyTestServer
from tests.runtime.telemetry.conftest import Recorded
from tests.runtime.telemetry.test_otel import child_of, one
from tests.support import PYTHON, subprocess_env

pytestmark = pytest.mark.timeout(60)

TRACED_SERVER = [PYTHON, "-m", "tests.runtime.telemetry.traced_server_app"]


def test_legacy_session_with_an_elicitation(otel: Recorded) -> None:
    seen: list[trace.SpanContext] = []

    def name(request: ElicitRequest) -> ElicitResult:
        seen.append(trace.get_current_span().get_span_context())
        return ElicitResult.accept({"name": "Ada"})

    with LiveServer(LegacyTestServer()) as live:
        with Client(live.url, era="legacy", on_elicit=name) as client:
            result = client.call_tool("ask", {})
            session_id = client.transport.session_id  # type: ignore[attr-defined]
        spans = otel.wait_for(
            lambda s: any(x.name == "tools/call ask" and x.kind == SpanKind.SERVER for x in s)
        )
    assert "Hello, Ada!" in str(result.content)
    assert isinstance(session_id, str)

    call = one(spans, "tools/call ask", SpanKind.CLIENT)
    served = one(spans, "tools/call ask", SpanKind.SERVER)
    asked = one(spans, "elicitation/create", SpanKind.CLIENT)  # sent by the server
    answered = one(spans, "elicitation/create", SpanKind.SERVER)  # served by the client
    assert child_of(served, call) and child_of(asked, served) and child_of(answered, asked)
    assert [answered.context.span_id if answered.context else None] == [c.span_id for c in seen]
    for span in (call, served, asked, answered):
        assert span.status.status_code == StatusCode.UNSET
        attributes = span.attributes or {}
        assert attributes["mcp.session.id"] == session_id
        assert attributes["mcp.protocol.version"] == "2025-11-25"
    assert (answered.attributes or {})["jsonrpc.request.id"]

    initialize = one(spans, "initialize", SpanKind.CLIENT)
    assert child_of(one(spans, "initialize", SpanKind.SERVER), initialize)
    assert (one(spans, "initialize", SpanKind.SERVER).attributes or {})[
        "mcp.protocol.version"
    ] == "2025-11-25"
    assert child_of(one(spans, "notifications/initialized", SpanKind.CLIENT), initialize)

    recorded = otel.read_metrics()
    metric, points = recorded["mcp.client.session.duration"]
    assert metric.unit == "s" and [p.count for p in points] == [1]
    assert points[0].attributes["mcp.protocol.version"] == "2025-11-25"
    metric, points = recorded["mcp.server.session.duration"]  # the client's DELETE ended it
    assert metric.unit == "s" and [p.count for p in points] == [1]
    assert points[0].attributes == {
        "mcp.protocol.version": "2025-11-25",
        "network.transport": "tcp",
        "network.protocol.name": "http",
    }
    durations = recorded["mcp.server.operation.duration"][1]
    assert {p.attributes["mcp.method.name"] for p in durations} >= {"initialize", "tools/call"}
    asks = recorded["mcp.client.operation.duration"][1]
    assert {p.attributes["mcp.method.name"] for p in asks} >= {"elicitation/create", "tools/call"}


def read_spans(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_stdio(otel: Recorded, tmp_path: Path, era: str) -> None:
    spans_file = tmp_path / "spans.jsonl"
    env = {**subprocess_env(), "MCPGEN_TEST_SPANS": str(spans_file)}
    if era == "modern":
        with Client.stdio([*TRACED_SERVER, "--stdio"], env=env, era="modern") as client:
            client.call_tool("get_weather", {"location": "Atlantis"})
        tool = "get_weather"
    else:
        with Client.stdio(
            [*TRACED_SERVER, "--app", "legacy", "--stdio"],
            env=env,
            era="legacy",
            on_elicit=lambda request: ElicitResult.accept({"name": "Ada"}),
        ) as client:
            client.call_tool("ask", {})
        tool = "ask"
    sent = one(otel.spans(), f"tools/call {tool}", SpanKind.CLIENT)
    assert (sent.attributes or {})["network.transport"] == "pipe"
    assert "server.address" not in (sent.attributes or {})
    served = [s for s in read_spans(spans_file) if s["name"] == f"tools/call {tool}"]
    assert len(served) == 1
    record = served[0]
    assert record["kind"] == "SERVER" and record["parent_id"] == span_id(sent)
    assert sent.context is not None and record["trace_id"] == sent.context.trace_id
    assert record["attributes"]["network.transport"] == "pipe"
    assert record["attributes"]["jsonrpc.request.id"] == (sent.attributes or {})["jsonrpc.request.id"]
    if era == "modern":
        assert record["status"] == "ERROR" and record["attributes"]["error.type"] == "tool_error"
    else:
        asked = [s for s in read_spans(spans_file) if s["name"] == "elicitation/create"]
        assert len(asked) == 1 and asked[0]["parent_id"] == record["span_id"]
        answered = one(otel.spans(), "elicitation/create", SpanKind.SERVER)
        assert answered.parent is not None and answered.parent.span_id == asked[0]["span_id"]
