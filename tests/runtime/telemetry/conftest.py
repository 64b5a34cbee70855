"""The real OpenTelemetry SDK, configured once for the test process: every span goes to an
in-memory exporter, every metric to an in-memory reader (a provider is set once per process)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpgen_runtime import telemetry


@dataclass
class Recorded:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def wait_for(
        self, predicate: Callable[[list[ReadableSpan]], bool], timeout: float = 5.0
    ) -> list[ReadableSpan]:
        """The spans once `predicate` holds (a server thread ends its spans after replying)."""
        deadline = time.monotonic() + timeout
        while True:
            spans = self.spans()
            if predicate(spans) or time.monotonic() > deadline:
                return spans
            time.sleep(0.01)

    def named(self, name: str, kind: trace.SpanKind | None = None) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name and (kind is None or s.kind == kind)]

    def read_metrics(self) -> dict[str, tuple[Any, list[Any]]]:
        """Every metric recorded since the last read (reading resets them): name -> (metric, points)."""
        data = self.reader.get_metrics_data()
        found: dict[str, tuple[Any, list[Any]]] = {}
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, (metric, []))[1].extend(metric.data.data_points)
        return found


_RECORDED: Recorded | None = None


def _install() -> Recorded:
    global _RECORDED
    if _RECORDED is None:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        # Delta: each read returns what was recorded since the previous one (one test's worth).
        reader = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _RECORDED = Recorded(exporter, reader)
        telemetry.set_enabled(False)  # on only inside the `otel` fixture
    return _RECORDED


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """The SDK's providers (set once for the process) with the runtime's instrumentation on for
    this test only: tests elsewhere in the same process see the wire without trace context."""
    recorded = _install()
    recorded.exporter.clear()
    recorded.reader.get_metrics_data()  # drops what earlier tests recorded
    telemetry.set_enabled(True)
    try:
        yield recorded
    finally:
        telemetry.set_enabled(False)
        recorded.exporter.clear()
