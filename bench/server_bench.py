"""Server benchmark: every server side by side under the same load, rounds interleaved.

    python -m bench.server_bench [--servers ours,sdk,sdk-json,fastmcp,bare] [--concurrency 8,32]
                                 [--duration 3] [--warmup 1] [--repeats 5] [--variants h11,uvloop]
                                 [--legacy] [--json FILE]

Per variant (uvicorn `--http/--loop`: h11+asyncio, and httptools+uvloop when installed) all
servers are started once, one uvicorn worker each, on 127.0.0.1; then for every repeat, for
every concurrency, each server gets one round (`warmup` unmeasured + `duration` measured
seconds of closed-loop load from bench/loadgen.py), the server order rotating between repeats.
Recorded per round: req/s, p50/p99 latency, server CPU per request (utime+stime of the server
process in the window / requests) and the load generator's own CPU; per server: peak RSS
(VmHWM) after all rounds. Reported: medians over repeats, and each server's throughput as a
ratio of the bare-ASGI ceiling measured in the same repeat (median of the per-repeat ratios).

`eras` adds rounds in the initialize-based era (bench/loadgen.py `era="legacy"`: one 2025-11-25
session per connection) for the servers that speak it, interleaved with the modern rounds on
the same server processes; `legacy_summary`, `legacy_table` and `legacy_verdicts` report them
against our server's modern throughput of the same repeat (`python -m bench`, part
`legacy-server`).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import click

from . import _cli, loadgen, procstat
from .servers import LABELS, VARIANTS, Server, running, server_available, variant_available

ALL_SERVERS = list(LABELS)
CEILING = "bare"
ERAS = ["modern", "legacy"]
# The legacy-era comparison: our server in both eras, the official SDK (2.3.0) in the legacy era.
LEGACY_SERVERS: dict[str, list[loadgen.Era]] = {
    "ours": ["modern", "legacy"],
    "sdk": ["legacy"],
    "sdk-json": ["legacy"],
}
LEGACY_WITHIN = 0.85  # legacy throughput at least this fraction of modern (issue 10)


@dataclass
class Round:
    variant: str
    server: str
    concurrency: int
    repeat: int
    rps: float
    p50_us: float
    p99_us: float
    cpu_us_per_request: float | None
    loadgen_cpu: float  # fraction of one core
    requests: int
    errors: int
    first_error: str | None
    era: str = "modern"  # the client's era (loadgen), not the server's


def _round(
    server: Server, concurrency: int, repeat: int, duration: float, warmup: float, era: loadgen.Era = "modern"
) -> Round:
    result = loadgen.run_load(
        "127.0.0.1",
        server.port,
        connections=concurrency,
        duration=duration,
        warmup=warmup,
        sample=server.cpu_ticks,
        era=era,
    )
    cpu = (
        result.server_cpu_ticks / procstat.CLK_TCK * 1e6 / result.requests
        if result.server_cpu_ticks is not None and result.requests
        else None
    )
    return Round(
        server.variant,
        server.kind,
        concurrency,
        repeat,
        result.rps,
        result.percentile(0.5),
        result.percentile(0.99),
        cpu,
        result.loadgen_cpu / result.duration,
        result.requests,
        result.errors,
        result.first_error,
        era,
    )


def run(
    servers: list[str],
    concurrencies: list[int],
    variants: list[str],
    *,
    duration: float,
    warmup: float,
    repeats: int,
    eras: Mapping[str, Sequence[loadgen.Era]] | None = None,
    log: Any = sys.stderr,
) -> dict[str, Any]:
    """`eras`: which client eras drive each server (default: modern only)."""
    rounds: list[Round] = []
    memory: dict[str, dict[str, dict[str, int]]] = {}
    commands: dict[str, list[str]] = {}
    skipped: list[str] = []
    for variant in variants:
        if not variant_available(variant):
            skipped.append(
                f"variant {variant}: {' + '.join(VARIANTS[variant])} not installed (make bench-deps)"
            )
            continue
        kinds = [k for k in servers if server_available(k)]
        skipped += [
            f"{k}: not installed" for k in servers if k not in kinds and f"{k}: not installed" not in skipped
        ]
        with running(kinds, variant) as started:
            assert isinstance(started, list)
            # (server, era) pairs: the rounds of one repeat, order rotating between repeats.
            entries = [
                (server, era)
                for server in started
                for era in (eras.get(server.kind, ("modern",)) if eras is not None else ("modern",))
            ]
            for server, era in entries:
                commands.setdefault(f"{variant}/{server.kind}", server.command())
                # Warm every server (imports, caches, pydantic schemas) before any measured round.
                loadgen.run_load(
                    "127.0.0.1",
                    server.port,
                    connections=max(concurrencies),
                    duration=0.2,
                    warmup=min(warmup, 1.0),
                    era=era,
                )
            for repeat in range(repeats):
                for concurrency in concurrencies:
                    shift = repeat % len(entries)
                    for server, era in entries[shift:] + entries[:shift]:
                        r = _round(server, concurrency, repeat, duration, warmup, era)
                        rounds.append(r)
                        name = server.kind if era == "modern" else f"{server.kind}/{era}"
                        print(
                            f"  [{variant} rep {repeat + 1}/{repeats} c={concurrency:>3}] {name:<9} "
                            f"{r.rps:8.0f} req/s  p50 {r.p50_us / 1000:6.2f} ms  "
                            f"p99 {r.p99_us / 1000:6.2f} ms  "
                            f"cpu {r.cpu_us_per_request or 0:6.0f} us/req  errors {r.errors}",
                            file=log,
                            flush=True,
                        )
            memory[variant] = {
                s.kind: {"start_rss_kib": s.started_rss_kib, "peak_rss_kib": s.peak_rss_kib()}
                for s in started
            }
    return {
        "rounds": [asdict(r) for r in rounds],
        "memory": memory,
        "commands": commands,
        "skipped": skipped,
        "settings": {
            "servers": servers,
            "concurrency": concurrencies,
            "variants": variants,
            "duration": duration,
            "warmup": warmup,
            "repeats": repeats,
            "eras": {k: list(v) for k, v in eras.items()} if eras is not None else None,
        },
        "machine": procstat.machine(),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def summarize(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Medians per (variant, server, concurrency) and the median per-repeat ratio to the ceiling
    (modern-era rounds; `legacy_summary` reports the others)."""
    rounds = [r for r in (Round(**r) for r in data["rounds"]) if r.era == "modern"]
    ceiling = {(r.variant, r.concurrency, r.repeat): r.rps for r in rounds if r.server == CEILING}
    rows: list[dict[str, Any]] = []
    keys = sorted(
        {(r.variant, r.concurrency, r.server) for r in rounds},
        key=lambda k: (list(VARIANTS).index(k[0]), k[1], ALL_SERVERS.index(k[2])),
    )
    for variant, concurrency, server in keys:
        mine = [r for r in rounds if (r.variant, r.concurrency, r.server) == (variant, concurrency, server)]
        ratios = [
            r.rps / ceiling[(variant, concurrency, r.repeat)]
            for r in mine
            if ceiling.get((variant, concurrency, r.repeat))
        ]
        cpus = [r.cpu_us_per_request for r in mine if r.cpu_us_per_request is not None]
        mem = data["memory"].get(variant, {}).get(server, {})
        rows.append(
            {
                "variant": variant,
                "server": server,
                "concurrency": concurrency,
                "repeats": len(mine),
                "rps": statistics.median(r.rps for r in mine),
                "ratio": statistics.median(ratios) if ratios else None,
                "p50_ms": statistics.median(r.p50_us for r in mine) / 1000,
                "p99_ms": statistics.median(r.p99_us for r in mine) / 1000,
                "cpu_us": statistics.median(cpus) if cpus else None,
                "loadgen_cpu": statistics.median(r.loadgen_cpu for r in mine),
                "errors": sum(r.errors for r in mine),
                "peak_rss_mib": mem.get("peak_rss_kib", 0) / 1024 if mem else None,
            }
        )
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| uvicorn | conc | server | req/s | x ceiling | p50 ms | p99 ms | server CPU µs/req | peak RSS MiB "
        "| loadgen CPU | errors |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        http, loop = VARIANTS[row["variant"]]
        ratio = f"{row['ratio']:.2f}" if row["ratio"] is not None else "-"
        cpu = f"{row['cpu_us']:.0f}" if row["cpu_us"] is not None else "-"
        rss = f"{row['peak_rss_mib']:.1f}" if row["peak_rss_mib"] is not None else "-"
        lines.append(
            f"| {http}+{loop} | {row['concurrency']} | {LABELS[row['server']]} | "
            f"{row['rps']:.0f} | {ratio} | "
            f"{row['p50_ms']:.2f} | {row['p99_ms']:.2f} | {cpu} | {rss} | {row['loadgen_cpu'] * 100:.0f}% | "
            f"{row['errors']} |"
        )
    return "\n".join(lines)


def verdicts(rows: list[dict[str, Any]], data: dict[str, Any]) -> list[str]:
    """The targets of the issue, checked on this run."""
    out: list[str] = []
    for row in rows:
        if row["server"] == "ours" and row["ratio"] is not None:
            ok = row["ratio"] >= 0.6
            out.append(
                f"throughput {row['variant']} c={row['concurrency']}: {row['ratio']:.3f}x ceiling "
                f"(target ≥ 0.600) {'PASS' if ok else 'FAIL'}"
            )
    for variant, mem in data["memory"].items():
        if "ours" in mem and "sdk" in mem:
            ours, sdk = mem["ours"]["peak_rss_kib"], mem["sdk"]["peak_rss_kib"]
            out.append(
                f"peak RSS {variant}: ours {ours / 1024:.1f} MiB vs SDK {sdk / 1024:.1f} MiB "
                f"{'PASS' if ours <= sdk else 'FAIL'}"
            )
    return out


def legacy_summary(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Medians per (variant, concurrency, server, era), and each row's throughput as a ratio of
    our server's modern throughput in the same repeat (median of the per-repeat ratios)."""
    rounds = [Round(**r) for r in data["rounds"]]
    modern = {
        (r.variant, r.concurrency, r.repeat): r.rps for r in rounds if (r.server, r.era) == ("ours", "modern")
    }
    sdk_best: dict[tuple[str, int, int], float] = {}
    for r in rounds:
        if r.server in ("sdk", "sdk-json") and r.era == "legacy":
            key = (r.variant, r.concurrency, r.repeat)
            sdk_best[key] = max(sdk_best.get(key, 0.0), r.rps)
    rows: list[dict[str, Any]] = []
    keys = sorted(
        {(r.variant, r.concurrency, r.server, r.era) for r in rounds},
        key=lambda k: (list(VARIANTS).index(k[0]), k[1], ALL_SERVERS.index(k[2]), ERAS.index(k[3])),
    )
    for variant, concurrency, server, era in keys:
        mine = [
            r
            for r in rounds
            if (r.variant, r.concurrency, r.server, r.era) == (variant, concurrency, server, era)
        ]
        vs_modern = [
            r.rps / modern[(variant, concurrency, r.repeat)]
            for r in mine
            if modern.get((variant, concurrency, r.repeat))
        ]
        vs_sdk = [
            r.rps / sdk_best[(variant, concurrency, r.repeat)]
            for r in mine
            if sdk_best.get((variant, concurrency, r.repeat))
        ]
        cpus = [r.cpu_us_per_request for r in mine if r.cpu_us_per_request is not None]
        rows.append(
            {
                "variant": variant,
                "server": server,
                "era": era,
                "concurrency": concurrency,
                "repeats": len(mine),
                "rps": statistics.median(r.rps for r in mine),
                "vs_modern": statistics.median(vs_modern) if vs_modern else None,
                "vs_sdk_legacy": statistics.median(vs_sdk) if vs_sdk else None,
                "p50_ms": statistics.median(r.p50_us for r in mine) / 1000,
                "p99_ms": statistics.median(r.p99_us for r in mine) / 1000,
                "cpu_us": statistics.median(cpus) if cpus else None,
                "loadgen_cpu": statistics.median(r.loadgen_cpu for r in mine),
                "errors": sum(r.errors for r in mine),
            }
        )
    return rows


ERA_LABELS = {"modern": "2026-07-28 (stateless)", "legacy": f"{loadgen.LEGACY_VERSION} (session)"}


def legacy_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| uvicorn | conc | server | client era | req/s | ÷ mcpgen modern | p50 ms | p99 ms "
        "| server CPU µs/req | loadgen CPU | errors |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        http, loop = VARIANTS[row["variant"]]
        ratio = f"{row['vs_modern']:.2f}" if row["vs_modern"] is not None else "-"
        cpu = f"{row['cpu_us']:.0f}" if row["cpu_us"] is not None else "-"
        lines.append(
            f"| {http}+{loop} | {row['concurrency']} | {LABELS[row['server']]} | {ERA_LABELS[row['era']]} | "
            f"{row['rps']:.0f} | {ratio} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | {cpu} | "
            f"{row['loadgen_cpu'] * 100:.0f}% | {row['errors']} |"
        )
    return "\n".join(lines)


def legacy_verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """Issue 10: our legacy throughput within 15% of our modern throughput, and ahead of the
    official SDK serving the same legacy client (its faster mode)."""
    try:
        sdk = f"SDK {metadata.version('mcp')}"
    except metadata.PackageNotFoundError:
        sdk = "SDK"
    out: list[str] = []
    for row in rows:
        if (row["server"], row["era"]) != ("ours", "legacy"):
            continue
        where = f"{row['variant']} c={row['concurrency']}"
        if row["vs_modern"] is not None:
            ok = row["vs_modern"] >= LEGACY_WITHIN
            out.append(
                f"legacy throughput {where}: {row['vs_modern']:.3f}x our modern "
                f"(target ≥ {LEGACY_WITHIN:.3f}) {'PASS' if ok else 'FAIL'}"
            )
        if row["vs_sdk_legacy"] is not None:
            ok = row["vs_sdk_legacy"] > 1.0
            out.append(
                f"legacy vs {sdk} {where}: {row['vs_sdk_legacy']:.2f}x the SDK's faster legacy mode "
                f"(target > 1.00) {'PASS' if ok else 'FAIL'}"
            )
    return out


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


@click.command(help=__doc__.splitlines()[0] if __doc__ else None)
@click.option("--servers", "server_list", default=",".join(ALL_SERVERS))
@click.option("--concurrency", default="8,32")
@click.option("--variants", "variant_list", default="h11,uvloop")
@click.option("--duration", type=float, default=3.0)
@click.option("--warmup", type=float, default=1.0)
@click.option("--repeats", type=int, default=5)
@click.option(
    "--legacy", is_flag=True, help="the legacy-era comparison instead (LEGACY_SERVERS; --servers narrows it)"
)
@click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="write the raw rounds and the summary here"
)
def command(
    server_list: str,
    concurrency: str,
    variant_list: str,
    duration: float,
    warmup: float,
    repeats: int,
    legacy: bool,
    json_path: Path | None,
) -> dict[str, Any]:
    servers = [s for s in server_list.split(",") if s]
    variants = [v for v in variant_list.split(",") if v]
    if legacy:
        return _legacy_main(
            servers,
            _ints(concurrency),
            variants,
            duration=duration,
            warmup=warmup,
            repeats=repeats,
            json_path=json_path,
        )
    unknown = [s for s in servers if s not in ALL_SERVERS]
    if unknown:
        raise click.UsageError(f"unknown servers: {', '.join(unknown)} (known: {', '.join(ALL_SERVERS)})")
    if CEILING not in servers:
        servers.append(CEILING)  # ratios need the ceiling in the same run
    data = run(servers, _ints(concurrency), variants, duration=duration, warmup=warmup, repeats=repeats)
    rows = summarize(data)
    data["summary"] = rows
    data["verdicts"] = verdicts(rows, data)
    print(table(rows))
    for line in data["verdicts"]:
        print(line)
    for line in data["skipped"]:
        print(f"skipped: {line}")
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(data, indent=1))
    return data


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return _cli.run(command, argv)


def _legacy_main(
    servers: list[str],
    concurrency: list[int],
    variants: list[str],
    *,
    duration: float,
    warmup: float,
    repeats: int,
    json_path: Path | None,
) -> dict[str, Any]:
    eras = {kind: list(kind_eras) for kind, kind_eras in LEGACY_SERVERS.items() if kind in servers}
    if not eras:
        raise SystemExit(f"--legacy needs one of: {', '.join(LEGACY_SERVERS)}")
    data = run(
        list(eras), concurrency, variants, duration=duration, warmup=warmup, repeats=repeats, eras=eras
    )
    rows = legacy_summary(data)
    data["summary"] = rows
    data["verdicts"] = legacy_verdicts(rows)
    print(legacy_table(rows))
    for line in [*data["verdicts"], *(f"skipped: {line}" for line in data["skipped"])]:
        print(line)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(data, indent=1))
    return data


if __name__ == "__main__":
    main()
