"""`python -m PKG` honours the standard OTEL_* variables when the SDK is installed
(server/otel_setup.py, called by serve_main): a real server process with
`OTEL_TRACES_EXPORTER=console` prints its spans, parented on this process's client span;
what cannot work stops the server at start with exit 2 and one line."""

from __future__ import annotations

import json
import signal
import subprocess
from typing import Any

import pytest
from opentelemetry.trace import SpanKind

from mcpgen_runtime.client import Client
from tests.runtime.telemetry.conftest import Recorded
from tests.runtime.telemetry.test_otel import one
from tests.support import PYTHON, free_port, subprocess_env, wait_for_port

pytestmark = pytest.mark.timeout(60)

SERVER = [PYTHON, "-m", "tests.runtime.weather_server_app"]
CLEAN = {k: v for k, v in subprocess_env().items() if not k.startswith("OTEL_")}


def console_spans(stdout: str) -> list[dict[str, Any]]:
    """The JSON objects the console exporter printed (one indented object per span)."""
    decoder = json.JSONDecoder()
    spans, index = [], 0
    while (start := stdout.find("{", index)) != -1:
        value, index = decoder.raw_decode(stdout, start)
        spans.append(value)
    return spans


def test_console_exporter_from_the_environment(otel: Recorded) -> None:
    port = free_port()
    env = {**CLEAN, "OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "weather-otel-test"}
    proc = subprocess.Popen(
        [*SERVER, "--http", "--port", str(port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        wait_for_port(port, proc)
        with Client(f"http://127.0.0.1:{port}/mcp", era="modern") as client:
            client.call_tool("get_weather", {"location": "Paris"})
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: drains, exits 0, and the SDK flushes at exit
        stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 0, stderr.decode()[-2000:]
    sent = one(otel.spans(), "tools/call get_weather", SpanKind.CLIENT)
    assert sent.context is not None
    printed = [s for s in console_spans(stdout.decode()) if s.get("name") == "tools/call get_weather"]
    assert len(printed) == 1
    span = printed[0]
    assert span["kind"] == "SpanKind.SERVER"
    assert span["parent_id"] == f"0x{sent.context.span_id:016x}"
    assert span["context"]["trace_id"] == f"0x{sent.context.trace_id:032x}"
    assert span["resource"]["attributes"]["service.name"] == "weather-otel-test"


@pytest.mark.parametrize(
    ("variables", "args", "says"),
    [
        ({"OTEL_TRACES_EXPORTER": "console"}, ["--stdio"], "OTEL_TRACES_EXPORTER=console writes to stdout"),
        ({"OTEL_TRACES_EXPORTER": "no-such-exporter"}, ["--stdio"], "cannot configure OpenTelemetry"),
        ({"OTEL_TRACES_EXPORTER": "zipkin_json"}, ["--stdio"], "(pip install opentelemetry-exporter-zipkin)"),
    ],
)
def test_what_cannot_work_stops_the_server(variables: dict[str, str], args: list[str], says: str) -> None:
    done = subprocess.run(
        [*SERVER, *args], env={**CLEAN, **variables}, capture_output=True, text=True, timeout=30, input=""
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot start" in lines[0] and says in lines[0], done.stderr


def test_nothing_configured_without_export_variables() -> None:
    code = (
        "import os, sys\n"
        "from mcpgen_runtime.server.otel_setup import configure_from_environment\n"
        "assert configure_from_environment(stdio=False) is False\n"
        "assert not any(m.startswith('opentelemetry') for m in sys.modules)\n"
    )
    done = subprocess.run([PYTHON, "-c", code], env=CLEAN, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
