"""A test server process with the real OpenTelemetry SDK: every span it ends is written as one
JSON line to the file named by MCPGEN_TEST_SPANS (stdout is the stdio protocol's).

Run: MCPGEN_TEST_SPANS=spans.jsonl python -m tests.runtime.telemetry.traced_server_app --stdio
     [--app legacy] (the legacy test server; default: the weather server)
     MCPGEN_TEST_SERVER_MODULE=conformance_server ... --http --port N (`python -m MODULE` traced:
     the cluster tests' replicas; each record names the process)
     MCPGEN_TEST_SERVER_SCRIPT=tests/peers/sdk_server.py ... (the official SDK's server, traced)
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class JsonLinesExporter(SpanExporter):
    def __init__(self, path: str) -> None:
        self._path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        # One O_APPEND write per span: several processes may share the file.
        fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            for span in spans:
                os.write(fd, (json.dumps({**span_record(span), "pid": os.getpid()}) + "\n").encode())
        finally:
            os.close(fd)
        return SpanExportResult.SUCCESS


def span_record(span: ReadableSpan) -> dict[str, Any]:
    assert span.context is not None
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": span.context.trace_id,
        "span_id": span.context.span_id,
        "parent_id": span.parent.span_id if span.parent is not None else None,
        "status": span.status.status_code.name,
        "attributes": dict(span.attributes or {}),
        "events": [{"name": e.name, "attributes": dict(e.attributes or {})} for e in span.events],
        "links": [link.context.span_id for link in span.links],
    }


def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(os.environ["MCPGEN_TEST_SPANS"])))
    trace.set_tracer_provider(provider)
    args = sys.argv[1:]
    script = os.environ.get("MCPGEN_TEST_SERVER_SCRIPT")  # e.g. the official SDK's peer
    if script is not None:
        import runpy

        sys.argv = [script, *args]
        runpy.run_path(script, run_name="__main__")
        return
    module = os.environ.get("MCPGEN_TEST_SERVER_MODULE")
    if module is not None:
        import runpy

        sys.argv = [module, *args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return
    if args[:2] == ["--app", "legacy"]:
        from tests.runtime.legacy_server_app import LegacyTestServer as server

        args = args[2:]
    else:
        from tests.runtime.weather_server_app import WeatherServer as server  # type: ignore[assignment]
    from mcpgen_runtime.server import serve_main

    sys.argv = [sys.argv[0], *args]
    serve_main(server)


if __name__ == "__main__":
    main()
