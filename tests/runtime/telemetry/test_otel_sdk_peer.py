"""Propagation with the official MCP Python SDK (mcp==2.3.0), which has OpenTelemetry of its own:
its client injects `traceparent` into `params._meta` and its server (the default
`OpenTelemetryMiddleware`) parents its span on it. Both directions make one connected trace:
an mcpgen client calling the SDK's server (a traced subprocess, tests/peers/sdk_server.py) and
the SDK's client calling an mcpgen server (both in this process)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp
import pytest
from opentelemetry.trace import SpanKind

from mcpgen_runtime.client import Client
from tests.runtime._client_helpers import LiveServer
from tests.runtime.telemetry.conftest import Recorded
from tests.runtime.telemetry.test_otel import one
from tests.runtime.weather_server_app import WeatherServer
from tests.support import PYTHON, ROOT, free_port, subprocess_env, wait_for_port

pytestmark = pytest.mark.timeout(60)

SDK_SERVER = str(ROOT / "tests" / "peers" / "sdk_server.py")


@pytest.fixture
def sdk_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    spans = tmp_path / "spans.jsonl"
    port = free_port()
    env = {**subprocess_env(), "MCPGEN_TEST_SPANS": str(spans), "MCPGEN_TEST_SERVER_SCRIPT": SDK_SERVER}
    proc = subprocess.Popen(
        [PYTHON, "-m", "tests.runtime.telemetry.traced_server_app", "--http", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", spans
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def records(path: Path, name: str) -> list[dict[str, Any]]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [r for r in map(json.loads, lines) if r["name"] == name]


def test_mcpgen_client_to_sdk_server(otel: Recorded, sdk_server: tuple[str, Path]) -> None:
    url, spans_file = sdk_server
    with Client(url, era="modern") as client:
        client.call_tool("get_weather", {"location": "Paris"})
    sent = one(otel.spans(), "tools/call get_weather", SpanKind.CLIENT)
    assert sent.context is not None
    served = records(spans_file, "tools/call get_weather")
    assert len(served) == 1
    assert served[0]["kind"] == "SERVER"
    assert served[0]["trace_id"] == sent.context.trace_id
    assert served[0]["parent_id"] == sent.context.span_id


def test_sdk_client_to_mcpgen_server(otel: Recorded) -> None:
    async def main(url: str) -> None:
        async with mcp.Client(url) as client:
            await client.call_tool("get_weather", {"location": "Paris"})

    with LiveServer(WeatherServer()) as live:
        asyncio.run(main(live.url))
        spans = otel.wait_for(
            lambda s: any(x.name == "tools/call get_weather" and x.kind == SpanKind.SERVER for x in s)
        )
    sent = [s for s in spans if s.kind == SpanKind.CLIENT and "tools/call" in s.name]
    assert len(sent) == 1, [s.name for s in spans]  # the SDK names it "MCP send tools/call get_weather"
    served = one(spans, "tools/call get_weather", SpanKind.SERVER)
    assert served.parent is not None and sent[0].context is not None
    assert served.parent.span_id == sent[0].context.span_id
    assert served.context is not None and served.context.trace_id == sent[0].context.trace_id
