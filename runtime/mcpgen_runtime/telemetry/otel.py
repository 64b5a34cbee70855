"""Whether telemetry is on, cheaply: `active()` answers None until a tracer or meter provider is
configured (see the package's docstring), then the `Otel` handle (tracer, instruments, propagation)
made once; `set_enabled`, and the opt-in content capture (`set_capture_content`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from .._version import __version__

if TYPE_CHECKING:
    pass


CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# The conventions' explicit bucket advice for the operation and session durations (seconds).
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

_capture: bool | None = None  # None: read the environment on first use


def set_capture_content(enabled: bool) -> None:
    """Record tool arguments and results on spans (off by default: they may hold personal data)."""
    global _capture
    _capture = enabled


def capture_content() -> bool:
    global _capture
    if _capture is None:
        _capture = os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true", "yes")
    return _capture


class Otel:
    """The tracer and the instruments, made once a provider is configured."""

    __slots__ = (
        "client_duration",
        "client_session",
        "context",
        "extract",
        "inject",
        "server_duration",
        "server_session",
        "trace",
        "tracer",
    )

    def __init__(self, tracing: bool, metering: bool) -> None:
        from opentelemetry import context, metrics, propagate, trace

        self.trace = trace
        self.context = context
        self.inject = propagate.inject
        self.extract = propagate.extract
        self.tracer = trace.get_tracer("mcpgen_runtime", __version__) if tracing else None
        if metering:
            meter = metrics.get_meter("mcpgen_runtime", __version__)

            def histogram(name: str, what: str, buckets: tuple[float, ...]) -> Any:
                return meter.create_histogram(
                    name, unit="s", description=what, explicit_bucket_boundaries_advisory=buckets
                )

            self.client_duration = histogram(
                "mcp.client.operation.duration",
                "Duration of MCP requests as seen by the client",
                DURATION_BUCKETS,
            )
            self.server_duration = histogram(
                "mcp.server.operation.duration",
                "Duration of MCP requests as seen by the server",
                DURATION_BUCKETS,
            )
            self.client_session = histogram(
                "mcp.client.session.duration",
                "Duration of MCP sessions as seen by the client",
                DURATION_BUCKETS,
            )
            self.server_session = histogram(
                "mcp.server.session.duration",
                "Duration of MCP sessions as seen by the server",
                DURATION_BUCKETS,
            )
        else:
            self.client_duration = self.server_duration = None
            self.client_session = self.server_session = None


_otel: Otel | None = None
_final = False  # both providers configured: _otel never changes again
_trace_mod: Any = None
_metrics_mod: Any = None
_seen: tuple[Any, Any] = (None, None)  # the providers _probe last saw
_loaded = sys.modules.get  # bound once: `active()` runs for every message


_switched_off: tuple[Otel | None, bool] | None = None  # set_enabled(False): what to restore


def set_enabled(enabled: bool) -> None:
    """Turn this runtime's instrumentation off (and on again) while a provider stays configured
    for the rest of the program; on by default."""
    global _otel, _final, _switched_off
    if not enabled:
        if _switched_off is None:
            _switched_off = (_otel, _final)
            _otel, _final = None, True  # `active()` answers None at its first test
    elif _switched_off is not None:
        _otel, _final = _switched_off
        _switched_off = None


def active() -> Otel | None:
    """The instrumentation when a tracer or meter provider is configured, else None (cheap)."""
    if _final:
        return _otel
    if _trace_mod is None:
        if _loaded("opentelemetry.trace") is None and _loaded("opentelemetry.metrics") is None:
            return None  # nobody imported OpenTelemetry (or it is blocked), so nobody configured it
        return _probe()
    tracer_provider = _trace_mod._TRACER_PROVIDER
    meter_provider = _metrics_mod._METER_PROVIDER
    if tracer_provider is None and meter_provider is None:
        return None  # still the API's proxies: nothing would be recorded
    if tracer_provider is _seen[0] and meter_provider is _seen[1]:
        return _otel  # one of the two configured, as at the last look
    return _probe()


def _probe() -> Otel | None:
    global _otel, _final, _trace_mod, _metrics_mod, _seen
    try:
        from opentelemetry import trace
        from opentelemetry.metrics import _internal as metrics_internal
        from opentelemetry.metrics import get_meter_provider
    except ImportError:  # a broken or partial install counts as none
        return None
    # The public getters first: they load a provider named by OTEL_PYTHON_*_PROVIDER.
    tracer_provider = trace.get_tracer_provider()
    meter_provider = get_meter_provider()
    _trace_mod, _metrics_mod = trace, metrics_internal
    _seen = (trace._TRACER_PROVIDER, metrics_internal._METER_PROVIDER)
    tracing = not isinstance(tracer_provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
    metering = type(meter_provider).__name__ not in ("_ProxyMeterProvider", "NoOpMeterProvider")
    if not tracing and not metering:
        return None
    current = _otel
    if (
        current is None
        or (current.tracer is not None) != tracing
        or (current.client_duration is not None) != metering
    ):
        current = _otel = Otel(tracing, metering)
    _final = tracing and metering
    return current
