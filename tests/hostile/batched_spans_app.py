"""The weather test server (`serve_main`, as `python -m PKG` runs it) with the real OpenTelemetry
SDK exporting through a batch processor, as a deployment's OTLP exporter does: spans wait in its
queue until the next scheduled export (60 s here) or a flush.

    MCPGEN_TEST_SPANS=PATH        each exported span, one JSON line (name, kind, attributes)
    MCPGEN_TEST_EXPORT_DELAY=S    every export first sleeps S seconds (a slow collector)

Run: python -m tests.hostile.batched_spans_app --http --port N | --stdio
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from mcpgen_runtime.server import serve_main
from tests.runtime.weather_server_app import WeatherServer


class SlowJsonLinesExporter(SpanExporter):
    def __init__(self, path: str | None, delay: float) -> None:
        self._path = path
        self._delay = delay

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        time.sleep(self._delay)
        if self._path is not None:
            with open(self._path, "a", encoding="utf-8") as out:
                for span in spans:
                    record = {
                        "name": span.name,
                        "kind": span.kind.name,
                        "attributes": dict(span.attributes or {}),
                    }
                    out.write(json.dumps(record) + "\n")
        return SpanExportResult.SUCCESS


def main() -> None:
    exporter = SlowJsonLinesExporter(
        os.environ.get("MCPGEN_TEST_SPANS"), float(os.environ.get("MCPGEN_TEST_EXPORT_DELAY", "0"))
    )
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=60_000))
    trace.set_tracer_provider(provider)
    serve_main(WeatherServer)


if __name__ == "__main__":
    main()
