"""What OpenTelemetry instrumentation (mcpgen_runtime/telemetry.py) costs, side by side in one run.

    python -m bench.otel_bench [--duration 3] [--repeats 5] [--calls 2000] [--baseline REV] [--json FILE]

Four modes, each in processes of its own (providers are process-wide):

- `baseline`: the runtime as it was before telemetry.py existed (git REV, default: the parent of
  the commit that added it), extracted with `git archive` and put first on PYTHONPATH;
- `off`: OpenTelemetry not installed (`sys.modules` blocks `opentelemetry`: imports fail);
- `no-provider`: the API imported, no provider configured (its proxy providers);
- `sdk`: the SDK's TracerProvider with a BatchSpanProcessor (an exporter that drops the spans,
  so the export itself is not measured) and a MeterProvider with an in-memory reader.

Server: the generated `bench_server` per mode (`MCPGEN_BENCH_OTEL`, read by bench/serve.py), h11,
closed-loop load from bench/loadgen.py at concurrency 8, rounds interleaved, order rotating;
medians of req/s and server CPU µs per request. Client: `bench_client.Client.add(a=1, b=2)`
called `calls` times in a row in a subprocess per mode against one `off` server; medians of
latency and client CPU µs per call over repeats.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from . import _cli, loadgen, procstat
from .servers import EXTRAS, ROOT, Server, start

MODES = ("baseline", "off", "no-provider", "sdk")
ENV = "MCPGEN_BENCH_OTEL"
WITHIN = 0.03  # issue 23: off and no-provider within 3% of the baseline


def apply_mode(mode: str | None) -> None:
    """Put this process in `mode` (bench/serve.py and the client worker call it first)."""
    if mode in (None, "", "baseline"):
        return
    if mode == "off":
        for name in ("opentelemetry", "opentelemetry.trace", "opentelemetry.metrics"):
            sys.modules[name] = None  # type: ignore[assignment]  # imports fail: "not installed"
        return
    if mode == "no-provider":
        import opentelemetry.metrics
        import opentelemetry.trace  # noqa: F401

        return
    if mode != "sdk":
        raise SystemExit(f"unknown {ENV} mode {mode!r}")
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropping(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropping()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


def baseline_rev() -> str | None:
    """The parent of the commit that added telemetry.py (None when it is not committed yet)."""
    added = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "--", "runtime/mcpgen_runtime/telemetry.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.split()
    return f"{added[-1]}^" if added else None


@contextmanager
def baseline_tree(rev: str) -> Iterator[Path]:
    """`runtime/` of `rev`, extracted into a temporary directory."""
    where = Path(tempfile.mkdtemp(prefix="mcpgen-otel-baseline-"))
    try:
        archive = subprocess.run(
            ["git", "archive", rev, "runtime"], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
        yield where / "runtime"
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _env(mode: str, baseline: Path | None) -> dict[str, str]:
    env = {ENV: mode}
    if mode == "baseline" and baseline is not None:
        paths = [str(baseline), str(ROOT), str(ROOT / "generated")]
        if EXTRAS.is_dir():
            paths.append(str(EXTRAS))
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def _client_worker(url: str, calls: int) -> dict[str, float]:
    from bench_client import Client

    with Client(url) as client:
        for _ in range(200):
            client.add(a=1, b=2)
        lat = [0.0] * calls
        clock = time.perf_counter
        cpu0 = time.process_time()
        for i in range(calls):
            t = clock()
            client.add(a=1, b=2)
            lat[i] = clock() - t
        cpu = time.process_time() - cpu0
    return {"median_us": statistics.median(lat) * 1e6, "cpu_us": cpu / calls * 1e6}


def run(
    *,
    duration: float,
    warmup: float,
    repeats: int,
    calls: int,
    rev: str | None,
    parts_n: int = 3000,
    parts_rounds: int = 7,
    end_to_end: bool = True,
    log: Any = sys.stderr,
) -> dict[str, Any]:
    rev = rev or baseline_rev()
    modes = [m for m in MODES if m != "baseline" or rev is not None]
    server_rounds: list[dict[str, Any]] = []
    client_rounds: list[dict[str, Any]] = []
    with _maybe_baseline(rev) as baseline:
        servers: dict[str, Server] = {}
        try:
            for mode in modes if end_to_end else ():
                servers[mode] = start("ours", "h11", env=_env(mode, baseline))
            for server in servers.values():  # warm every server before any measured round
                loadgen.run_load("127.0.0.1", server.port, connections=8, duration=0.3, warmup=warmup)
            order = list(modes)
            for repeat in range(repeats if end_to_end else 0):
                shift = repeat % len(order)
                for mode in order[shift:] + order[:shift]:
                    server = servers[mode]
                    result = loadgen.run_load(
                        "127.0.0.1",
                        server.port,
                        connections=8,
                        duration=duration,
                        warmup=warmup,
                        sample=server.cpu_ticks,
                    )
                    cpu = (
                        result.server_cpu_ticks / procstat.CLK_TCK * 1e6 / result.requests
                        if result.server_cpu_ticks is not None and result.requests
                        else None
                    )
                    server_rounds.append(
                        {
                            "mode": mode,
                            "repeat": repeat,
                            "rps": result.rps,
                            "cpu_us": cpu,
                            "errors": result.errors,
                        }
                    )
                    step = f"rep {repeat + 1}/{repeats}] {mode:<11}"
                    print(f"  [server {step} {result.rps:8.0f} req/s", file=log)
                    url = f"http://127.0.0.1:{servers['off'].port}/mcp"
                    client = subprocess.run(
                        [sys.executable, "-m", "bench.otel_bench", "client-worker", url, str(calls)],
                        cwd=ROOT,
                        env={**_child_env(), **_env(mode, baseline)},
                        capture_output=True,
                        text=True,
                    )
                    if client.returncode != 0:
                        raise RuntimeError(f"client worker ({mode}) failed:\n{client.stderr[-3000:]}")
                    measured = json.loads(client.stdout)
                    client_rounds.append({"mode": mode, "repeat": repeat, **measured})
                    print(f"  [client {step} {measured['median_us']:8.1f} µs/call", file=log)
        finally:
            for server in servers.values():
                server.stop()
        # The same modes in-process, no sockets: what the load of a shared machine blurs less.
        parts: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
        for round_ in range(parts_rounds):
            shift = round_ % len(modes)
            for mode in modes[shift:] + modes[:shift]:
                done = subprocess.run(
                    [sys.executable, "-m", "bench.otel_bench", "parts-worker", str(parts_n)],
                    cwd=ROOT,
                    env={**_child_env(), **_env(mode, baseline)},
                    capture_output=True,
                    text=True,
                )
                if done.returncode != 0:
                    raise RuntimeError(f"parts worker ({mode}) failed:\n{done.stderr[-3000:]}")
                parts[mode].append(json.loads(done.stdout))
        print(f"  parts: {json.dumps(parts)}", file=log)
    return {
        "parts": {
            mode: {k: min((r[k] for r in runs if r[k] is not None), default=None) for k in runs[0]}
            for mode, runs in parts.items()
        },
        "server": server_rounds,
        "client": client_rounds,
        "settings": {
            "parts_rounds": parts_rounds,
            "parts_n": parts_n,
            "duration": duration,
            "warmup": warmup,
            "repeats": repeats,
            "calls": calls,
            "baseline": rev,
        },
        "machine": procstat.machine(),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def _child_env() -> dict[str, str]:
    from .servers import child_env

    return child_env()


@contextmanager
def _maybe_baseline(rev: str | None) -> Iterator[Path | None]:
    if rev is None:
        yield None
        return
    with baseline_tree(rev) as tree:
        yield tree


def summarize(data: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for mode in MODES:
        server = [r for r in data["server"] if r["mode"] == mode]
        client = [r for r in data["client"] if r["mode"] == mode]
        if not server:
            continue
        rows.append(
            {
                "mode": mode,
                "rps": statistics.median(r["rps"] for r in server),
                "server_cpu_us": statistics.median(r["cpu_us"] for r in server if r["cpu_us"] is not None),
                "client_us": statistics.median(r["median_us"] for r in client),
                "client_cpu_us": statistics.median(r["cpu_us"] for r in client),
                "errors": sum(r["errors"] for r in server),
            }
        )
    base = next((r for r in rows if r["mode"] == "baseline"), None)
    for row in rows:
        row["rps_vs_baseline"] = row["rps"] / base["rps"] if base else None
        row["client_vs_baseline"] = row["client_us"] / base["client_us"] if base else None
    return rows


LABELS = {
    "baseline": "before telemetry.py (baseline)",
    "off": "OpenTelemetry not installed",
    "no-provider": "installed, no provider configured",
    "sdk": "SDK: BatchSpanProcessor + MeterProvider",
}


def table(data: dict[str, Any]) -> str:
    rows = summarize(data)
    if not rows:
        return "(end-to-end rounds not run)"
    lines = [
        "| mode | server req/s | vs baseline | server CPU µs/req | client µs/call | vs baseline "
        "| client CPU µs/call | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        rps_ratio = f"{r['rps_vs_baseline']:.3f}" if r["rps_vs_baseline"] is not None else "-"
        client_ratio = f"{r['client_vs_baseline']:.3f}" if r["client_vs_baseline"] is not None else "-"
        lines.append(
            f"| {LABELS[r['mode']]} | {r['rps']:.0f} | {rps_ratio} | {r['server_cpu_us']:.0f} "
            f"| {r['client_us']:.1f} | {client_ratio} | {r['client_cpu_us']:.1f} | {r['errors']} |"
        )
    return "\n".join(lines)


def parts_table(data: dict[str, Any]) -> str:
    """CPU per operation in-process (no sockets): the minimum over the interleaved rounds."""
    parts = data.get("parts") or {}
    base = parts.get("baseline")
    lines = [
        "| mode | server ASGI app µs | handle_message µs | vs baseline | client core µs | vs baseline "
        "| `telemetry.active()` ns |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for mode in MODES:
        row = parts.get(mode)
        if row is None:
            continue
        server_ratio = f"{row['handle_message_us'] / base['handle_message_us']:.3f}" if base else "-"
        client_ratio = f"{row['client_core_us'] / base['client_core_us']:.3f}" if base else "-"
        active = "-" if row.get("active_ns") is None else f"{row['active_ns']:.0f}"
        lines.append(
            f"| {LABELS[mode]} | {row['asgi_us']:.1f} | {row['handle_message_us']:.1f} | {server_ratio} "
            f"| {row['client_core_us']:.1f} | {client_ratio} "
            f"| {active} |"
        )
    return "\n".join(lines)


def verdicts(data: dict[str, Any]) -> list[str]:
    rows = {r["mode"]: r for r in summarize(data)}
    if "baseline" not in (data.get("parts") or {}):
        return ["no baseline (telemetry.py is not committed): nothing to compare with"]
    out = []
    for mode in ("off", "no-provider") if rows else ():
        row = rows[mode]
        server_ok = row["rps_vs_baseline"] >= 1 - WITHIN
        client_ok = row["client_vs_baseline"] <= 1 + WITHIN
        out.append(
            f"{LABELS[mode]}: server {row['rps_vs_baseline']:.3f}x baseline req/s, client "
            f"{row['client_vs_baseline']:.3f}x baseline latency (within {WITHIN:.0%}) "
            f"{'PASS' if server_ok and client_ok else 'FAIL'}"
        )
    parts = data.get("parts") or {}
    if "baseline" in parts:
        base_parts = parts["baseline"]
        for mode in ("off", "no-provider"):
            server = parts[mode]["handle_message_us"] / base_parts["handle_message_us"]
            client = parts[mode]["client_core_us"] / base_parts["client_core_us"]
            ok = server <= 1 + WITHIN and client <= 1 + WITHIN
            out.append(
                f"{LABELS[mode]}, in-process CPU: handle_message {server:.3f}x, client core {client:.3f}x "
                f"baseline (within {WITHIN:.0%}) {'PASS' if ok else 'FAIL'}"
            )
    if not rows:
        return out
    sdk, base = rows["sdk"], rows["baseline"]
    out.append(
        f"{LABELS['sdk']}: server CPU +{sdk['server_cpu_us'] - base['server_cpu_us']:.0f} µs/req, "
        f"client +{sdk['client_us'] - base['client_us']:.1f} µs/call (measured, no target)"
    )
    return out


@click.group(invoke_without_command=True)
@click.option("--duration", type=float, default=3.0)
@click.option("--warmup", type=float, default=1.0)
@click.option("--repeats", type=int, default=5)
@click.option("--calls", type=int, default=2000)
@click.option("--baseline", "rev", help="git revision of the runtime before telemetry (default: found)")
@click.option("--parts-rounds", type=int, default=7, help="in-process rounds per mode (interleaved)")
@click.option("--parts-only", is_flag=True, help="only the in-process table (no servers, no sockets)")
@click.option("--json", "json_out", type=click.Path(path_type=Path))
@click.pass_context
def command(
    ctx: click.Context,
    duration: float,
    warmup: float,
    repeats: int,
    calls: int,
    rev: str | None,
    parts_rounds: int,
    parts_only: bool,
    json_out: Path | None,
) -> dict[str, Any] | None:
    if ctx.invoked_subcommand is not None:
        return None
    data = run(
        duration=duration,
        warmup=warmup,
        repeats=repeats,
        calls=calls,
        rev=rev,
        parts_rounds=parts_rounds,
        end_to_end=not parts_only,
    )
    if json_out is not None:
        json_out.write_text(json.dumps(data, indent=1))
    print(table(data))
    print()
    print(parts_table(data))
    for line in verdicts(data):
        print(f"- {line}")
    return data


@command.command("parts-worker", hidden=True)
@click.argument("n", type=int)
def parts_worker(n: int) -> None:
    """CPU per operation in-process, no sockets (bench/micro.py: the minimum of 5 runs of n)."""
    apply_mode(os.environ.get(ENV))
    from . import micro

    server = micro.server_app(n)
    check_ns = None
    try:
        from mcpgen_runtime import telemetry
    except ImportError:  # the baseline has no telemetry.py
        pass
    else:
        import timeit

        telemetry.active()
        check_ns = min(timeit.repeat(telemetry.active, number=100_000, repeat=5)) * 1e4
    print(
        json.dumps(
            {
                "asgi_us": server["ours_asgi_us"],
                "handle_message_us": server["ours_handle_message_us"],
                **micro.client_core(n),
                "active_ns": check_ns,
            }
        )
    )


@command.command("client-worker", hidden=True)
@click.argument("url")
@click.argument("calls", type=int)
def client_worker(url: str, calls: int) -> None:
    apply_mode(os.environ.get(ENV))
    print(json.dumps(_client_worker(url, calls)))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return _cli.run(command, argv)


if __name__ == "__main__":
    main()
