"""Scale-out: throughput and latency of 1, 2 and 4 replicas of the generated bench_server behind
the nginx configuration `mcpgen server` ships (bench/proxy.py), against one replica served
directly (the reference: no proxy, in-memory store).

Every row drives the same closed loops (bench/loadgen.py, `connections` keep-alive connections
to nginx, or to the replica for the reference) and reads the CPU the replicas and nginx spent
inside the measured window, so the table also says what one request costs in CPU on each side:
what more cores would buy, on a machine where the replicas, nginx and the load generator now
share two. Rows with the Redis store (`MCPGEN_STORE` on the replicas) join once the shared store
is there; `store` only labels the rows until then.

    python -m bench.scale [--duration S] [--connections N] [--replicas 1,2,4]
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from . import loadgen, procstat, servers
from .proxy import Nginx, find_binary

DEFAULT_REPLICAS = (1, 2, 4)
CONNECTIONS = 16


def _row(label: str, replicas: list[servers.Server], nginx: Nginx | None, *, connections: int, duration: float,
         warmup: float) -> dict[str, Any]:
    ticks: list[tuple[int, int]] = []

    def sample() -> int:
        side = (sum(r.cpu_ticks() for r in replicas), nginx.cpu_ticks() if nginx is not None else 0)
        ticks.append(side)
        return sum(side)

    port = nginx.port if nginx is not None else replicas[0].port
    result = loadgen.run_load("127.0.0.1", port, connections=connections, duration=duration, warmup=warmup,
                              sample=sample)
    (replica0, nginx0), (replica1, nginx1) = ticks[0], ticks[-1]
    per_request = 1e6 / procstat.CLK_TCK / max(result.requests, 1)  # µs of CPU per tick, per request
    return {
        "setup": label, "replicas": len(replicas), "proxy": nginx is not None, "connections": connections,
        "rps": result.rps, "p50_us": result.percentile(0.50), "p99_us": result.percentile(0.99),
        "errors": result.errors, "first_error": result.first_error,
        "replica_cpu_us": (replica1 - replica0) * per_request, "nginx_cpu_us": (nginx1 - nginx0) * per_request,
        "loadgen_cpu_us": result.loadgen_cpu * 1e6 / max(result.requests, 1),
    }


def run(replica_counts: tuple[int, ...] = DEFAULT_REPLICAS, *, connections: int = CONNECTIONS, duration: float = 3.0,
        warmup: float = 0.5, store: str = "memory") -> dict[str, Any]:
    binary = find_binary("nginx")
    data: dict[str, Any] = {"rows": [], "skipped": [], "store": store, "cores": os.cpu_count(),
                            "connections": connections}
    reference = servers.start("ours")
    try:
        data["rows"].append(_row("1 replica, direct (reference)", [reference], None, connections=connections,
                                 duration=duration, warmup=warmup))
    finally:
        reference.stop()
    if binary is None:
        data["skipped"].append("nginx is not installed (`make services` installs it as root): no proxied rows")
        return data
    for count in replica_counts:
        replicas = [servers.start("ours") for _ in range(count)]
        nginx = Nginx(binary, [f"127.0.0.1:{r.port}" for r in replicas], package="bench_server",
                      port=servers.free_port())
        try:
            nginx.start()
            data["rows"].append(_row(f"{count} replica{'s' if count > 1 else ''} behind nginx", replicas, nginx,
                                     connections=connections, duration=duration, warmup=warmup))
        finally:
            nginx.stop()
            for replica in replicas:
                replica.stop()
    return data


def table(data: dict[str, Any]) -> str:
    lines = ["| setup | req/s | p50 µs | p99 µs | errors | replica CPU µs/req | nginx CPU µs/req |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for row in data["rows"]:
        nginx_cpu = f"{row['nginx_cpu_us']:,.0f}" if row["proxy"] else "(no proxy)"
        lines.append(f"| {row['setup']} | {row['rps']:,.0f} | {row['p50_us']:,.0f} | {row['p99_us']:,.0f} | "
                     f"{row['errors']} | {row['replica_cpu_us']:,.0f} | {nginx_cpu} |")
    return "\n".join(lines)


def verdicts(data: dict[str, Any]) -> list[str]:
    rows = data["rows"]
    out: list[str] = []
    reference = rows[0]
    proxied = [row for row in rows if row["proxy"]]
    if proxied:
        one = proxied[0]
        out.append(f"nginx costs {one['nginx_cpu_us']:,.0f} µs of CPU per request in front of one replica; "
                   f"median latency {one['p50_us'] - reference['p50_us']:+,.0f} µs, "
                   f"{one['rps']:,.0f} vs {reference['rps']:,.0f} req/s direct.")
        best = max(proxied, key=lambda row: row["rps"])
        most = max(row["replicas"] for row in proxied)
        beyond = (f"; {most} replicas do not beat that here, the cores being taken" if best["replicas"] < most else "")
        out.append(f"On {data['cores']} cores shared by the replicas, nginx and the load generator, "
                   f"{best['replicas']} replica(s) give the most: {best['rps']:,.0f} req/s "
                   f"(p99 {best['p99_us']:,.0f} µs){beyond}.")
        server_cpu = best["replica_cpu_us"] + best["nginx_cpu_us"]
        if server_cpu > 0:
            per_core = 1e6 / server_cpu
            out.append(f"Prediction: a request costs {best['replica_cpu_us']:,.0f} µs in a replica and "
                       f"{best['nginx_cpu_us']:,.0f} µs in nginx, so each core given to the cluster adds about "
                       f"{per_core:,.0f} req/s (8 cores: ~{8 * per_core:,.0f} req/s, one replica per core, the load "
                       "generated elsewhere), as long as the store keeps up.")
    out.extend(f"skipped: {line}" for line in data["skipped"])
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--connections", type=int, default=CONNECTIONS)
    parser.add_argument("--replicas", default=",".join(map(str, DEFAULT_REPLICAS)))
    args = parser.parse_args(argv)
    counts = tuple(int(part) for part in args.replicas.split(",") if part)
    data = run(counts, connections=args.connections, duration=args.duration, warmup=args.warmup)
    print(table(data))
    for line in verdicts(data):
        print(f"- {line}")
    return data


if __name__ == "__main__":
    main()
