"""`python -m PKG` (cli.py) configures the OpenTelemetry SDK from the standard `OTEL_*` variables,
as `opentelemetry-instrument` does; what is then recorded is mcpgen_runtime/telemetry/'s."""

from __future__ import annotations

import logging
import os
import re
import sys
from typing import Final

__all__ = ["EXPORT_VARIABLES", "FLUSH_TIMEOUT_S", "configure_from_environment", "flush"]

_LOG = logging.getLogger("mcpgen.server")
FLUSH_TIMEOUT_S: Final = 5.0

# Any of these asks for export; without one a server configures nothing.
EXPORT_VARIABLES = (
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)


def configure_from_environment(*, stdio: bool) -> bool:
    """Configure the OpenTelemetry SDK from the standard `OTEL_*` variables, as
    `opentelemetry-instrument` does, for a generated server's `python -m PKG` (server/cli.py).

    Nothing happens unless one of `EXPORT_VARIABLES` is set (and `OTEL_SDK_DISABLED` is not
    true), or when a tracer provider is already configured (the user's code, or the program runs
    under `opentelemetry-instrument`). An OTLP endpoint alone means the OTLP exporters, as in
    `opentelemetry-distro`. ValueError, with what to fix, when the SDK or a named exporter is not
    installed, or when a console exporter would write to the stdout that stdio speaks on. True
    when it configured the SDK."""
    env = os.environ
    if not any(env.get(name) for name in EXPORT_VARIABLES):
        return False
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.sdk._configuration import _OTelSDKConfigurator
    except ImportError:
        raise ValueError(
            "OTEL_* export variables are set but opentelemetry-sdk is not installed "
            "(pip install opentelemetry-sdk opentelemetry-exporter-otlp)"
        ) from None
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False  # configured already
    otlp = any(env.get(name) for name in EXPORT_VARIABLES[2:])
    for signal in ("OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"):
        if not env.get(signal) and otlp:  # what an OTLP endpoint means (opentelemetry-distro's default)
            env[signal] = "otlp"
        if stdio and "console" in env.get(signal, ""):
            raise ValueError(f"{signal}=console writes to stdout, which carries the protocol on --stdio")
    env.setdefault("OTEL_LOGS_EXPORTER", "none")  # this runtime logs to stderr
    try:
        _OTelSDKConfigurator().configure()  # type: ignore[no-untyped-call]
    except Exception as exc:  # a named exporter that is not installed (an entry point lookup)
        raise ValueError(
            f"cannot configure OpenTelemetry from OTEL_* variables: {exc}{_install_hint(exc)}"
        ) from None
    return True


# The distributions providing the SDK's exporter entry points (`otlp` is `otlp_proto_grpc`, …).
_EXPORTER_PACKAGES = {
    "otlp": "opentelemetry-exporter-otlp",
    "zipkin": "opentelemetry-exporter-zipkin",
    "prometheus": "opentelemetry-exporter-prometheus",
}


def _install_hint(exc: Exception) -> str:
    """What to install when the SDK found no exporter of that name."""
    found = re.match(r"Requested component '([^']+)' not found", str(exc))
    if found is None:
        return ""
    package = _EXPORTER_PACKAGES.get(found.group(1).split("_")[0])
    if package is not None:
        return f" (pip install {package})"
    return " (install the package that provides this exporter, or fix the name)"


def flush(timeout_s: float = FLUSH_TIMEOUT_S) -> None:
    """Export what the configured providers still hold (spans queued by a batch processor, metrics
    not yet collected) before the process ends, for at most `timeout_s` per provider: a server
    stopped by SIGTERM or Ctrl-C loses no telemetry of its last calls. Nothing to do (and nothing
    imported) when no program part loaded OpenTelemetry."""
    if "opentelemetry.trace" not in sys.modules and "opentelemetry.metrics" not in sys.modules:
        return
    from opentelemetry import metrics, trace

    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        force_flush = getattr(provider, "force_flush", None)  # the SDK's; the API's proxies have none
        if callable(force_flush):
            try:
                force_flush(int(timeout_s * 1000))
            except Exception:  # an exporter's failure must not turn a clean stop into a traceback
                _LOG.warning("flushing telemetry failed", exc_info=True)
