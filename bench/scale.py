"""Scale-out: throughput and latency of 1, 2 and 4 replicas of the generated bench_server on the
Redis store (`MCPGEN_STORE=redis://…`, a local redis-server) behind the nginx configuration
`mcpgen server` ships (bench/proxy.py), against one replica served directly on the in-memory
store (the reference: no proxy, no network besides the client's).

What the Redis store costs per call is measured on one replica served directly, four ways: in-memory
or Redis store, and a call that does not touch the store (no rate limit: a plain `tools/call`) or
one that does (a rate limit high enough never to refuse: one Lua script call per `tools/call`).
The proxied rows keep the rate limit on, so every call of theirs goes to Redis.

Every row drives the same closed loops (bench/loadgen.py, `connections` keep-alive connections
to nginx, or to the replica) and reads the CPU the replicas, nginx and redis-server spent inside
the measured window, so the table also says what one request costs in CPU on each side: what more
cores would buy, on a machine where all of them and the load generator now share two.

    python -m bench.scale [--duration S] [--connections N] [--replicas 1,2,4]
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from typing import Any

import click

from . import _cli, loadgen, procstat, servers
from .proxy import Nginx, find_binary, wait_for_port

DEFAULT_REPLICAS = (1, 2, 4)
CONNECTIONS = 16
# A rate limit no load here reaches: it only makes every call take a token from the store.
UNREACHED_RATE_LIMIT = ("--rate-limit", "1000000000/1000000000")
STATE_SECRET = "bench-scale-shared-state-secret-0123456789"


class _Redis:
    """A redis-server on loopback, no persistence, for the measured window's CPU too."""

    def __init__(self, binary: str) -> None:
        self.port = servers.free_port()
        self._dir = tempfile.TemporaryDirectory(prefix="mcpgen-bench-redis-")
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self._dir.name,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, self.proc)

    @property
    def env(self) -> dict[str, str]:
        return {"MCPGEN_STORE": f"redis://127.0.0.1:{self.port}/0", "MCPGEN_STATE_SECRET": STATE_SECRET}

    def cpu_ticks(self) -> int:
        return procstat.cpu_ticks(self.proc.pid)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self._dir.cleanup()


@contextlib.contextmanager
def _replicas(count: int, redis: _Redis | None, *, rate_limit: bool) -> Iterator[list[servers.Server]]:
    started: list[servers.Server] = []
    try:
        for _ in range(count):
            started.append(
                servers.start(
                    "ours",
                    extra_args=UNREACHED_RATE_LIMIT if rate_limit else (),
                    env=redis.env if redis is not None else None,
                )
            )
        yield started
    finally:
        for replica in started:
            replica.stop()


def _row(
    label: str,
    replicas: list[servers.Server],
    nginx: Nginx | None,
    *,
    connections: int,
    duration: float,
    warmup: float,
    redis: _Redis | None = None,
    rate_limit: bool = False,
) -> dict[str, Any]:
    ticks: list[tuple[int, int, int]] = []

    def sample() -> int:
        side = (
            sum(r.cpu_ticks() for r in replicas),
            nginx.cpu_ticks() if nginx is not None else 0,
            redis.cpu_ticks() if redis is not None else 0,
        )
        ticks.append(side)
        return sum(side)

    port = nginx.port if nginx is not None else replicas[0].port
    result = loadgen.run_load(
        "127.0.0.1", port, connections=connections, duration=duration, warmup=warmup, sample=sample
    )
    (replica0, nginx0, redis0), (replica1, nginx1, redis1) = ticks[0], ticks[-1]
    per_request = 1e6 / procstat.CLK_TCK / max(result.requests, 1)  # µs of CPU per tick, per request
    return {
        "setup": label,
        "replicas": len(replicas),
        "proxy": nginx is not None,
        "connections": connections,
        "store": "redis" if redis is not None else "memory",
        "rate_limit": rate_limit,
        "redis_cpu_us": (redis1 - redis0) * per_request,
        "rps": result.rps,
        "p50_us": result.percentile(0.50),
        "p99_us": result.percentile(0.99),
        "errors": result.errors,
        "first_error": result.first_error,
        "replica_cpu_us": (replica1 - replica0) * per_request,
        "nginx_cpu_us": (nginx1 - nginx0) * per_request,
        "loadgen_cpu_us": result.loadgen_cpu * 1e6 / max(result.requests, 1),
    }


def run(
    replica_counts: tuple[int, ...] = DEFAULT_REPLICAS,
    *,
    connections: int = CONNECTIONS,
    duration: float = 3.0,
    warmup: float = 0.5,
) -> dict[str, Any]:
    nginx_bin, redis_bin = find_binary("nginx"), find_binary("redis-server")
    data: dict[str, Any] = {"rows": [], "skipped": [], "cores": os.cpu_count(), "connections": connections}
    load: dict[str, Any] = {"connections": connections, "duration": duration, "warmup": warmup}

    def direct(label: str, redis: _Redis | None, *, rate_limit: bool) -> None:
        with _replicas(1, redis, rate_limit=rate_limit) as (replica,):
            data["rows"].append(_row(label, [replica], None, redis=redis, rate_limit=rate_limit, **load))

    direct("1 replica, direct, in-memory store (reference)", None, rate_limit=False)
    direct("1 replica, direct, in-memory store, rate limit on", None, rate_limit=True)
    if redis_bin is None:
        data["skipped"].append(
            "redis-server is not installed (`make services` installs it as root): no Redis rows"
        )
        return data
    redis = _Redis(redis_bin)
    try:
        direct("1 replica, direct, Redis store (call does not touch it)", redis, rate_limit=False)
        direct(
            "1 replica, direct, Redis store, rate limit on (one script call per call)", redis, rate_limit=True
        )
        if nginx_bin is None:
            data["skipped"].append(
                "nginx is not installed (`make services` installs it as root): no proxied rows"
            )
            return data
        for count in replica_counts:
            with _replicas(count, redis, rate_limit=True) as replicas:
                nginx = Nginx(
                    nginx_bin,
                    [f"127.0.0.1:{r.port}" for r in replicas],
                    package="bench_server",
                    port=servers.free_port(),
                )
                try:
                    nginx.start()
                    label = (
                        f"{count} replica{'s' if count > 1 else ''} behind nginx, Redis store, rate limit on"
                    )
                    data["rows"].append(_row(label, replicas, nginx, redis=redis, rate_limit=True, **load))
                finally:
                    nginx.stop()
    finally:
        redis.stop()
    return data


def table(data: dict[str, Any]) -> str:
    lines = [
        "| setup | req/s | p50 µs | p99 µs | errors | replica CPU µs/req | nginx CPU µs/req | "
        "redis CPU µs/req |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in data["rows"]:
        nginx_cpu = f"{row['nginx_cpu_us']:,.0f}" if row["proxy"] else "(no proxy)"
        redis_cpu = f"{row['redis_cpu_us']:,.0f}" if row.get("store") == "redis" else "(no Redis)"
        lines.append(
            f"| {row['setup']} | {row['rps']:,.0f} | {row['p50_us']:,.0f} | {row['p99_us']:,.0f} | "
            f"{row['errors']} | {row['replica_cpu_us']:,.0f} | {nginx_cpu} | {redis_cpu} |"
        )
    return "\n".join(lines)


def _direct(rows: list[dict[str, Any]], store: str, rate_limit: bool) -> dict[str, Any] | None:
    return next(
        (
            row
            for row in rows
            if not row["proxy"] and row.get("store") == store and row.get("rate_limit") == rate_limit
        ),
        None,
    )


def _store_cost(redis: dict[str, Any], memory: dict[str, Any], what: str) -> str:
    return (
        f"on a call that {what}, the Redis store costs "
        f"{redis['replica_cpu_us'] - memory['replica_cpu_us']:+,.0f} µs "
        f"of replica CPU and {redis['redis_cpu_us']:,.0f} µs in redis-server per call; latency p50 "
        f"{redis['p50_us'] - memory['p50_us']:+,.0f} µs, p99 {redis['p99_us'] - memory['p99_us']:+,.0f} µs "
        f"({redis['rps']:,.0f} vs {memory['rps']:,.0f} req/s in memory)"
    )


def verdicts(data: dict[str, Any]) -> list[str]:
    rows = data["rows"]
    out: list[str] = []
    reference = rows[0]
    costs = [
        _store_cost(redis, memory, what)
        for redis, memory, what in (
            (_direct(rows, "redis", True), _direct(rows, "memory", True), "touches it (rate limit on)"),
            (
                _direct(rows, "redis", False),
                _direct(rows, "memory", False),
                "does not touch it (no rate limit)",
            ),
        )
        if redis is not None and memory is not None
    ]
    if costs:
        out.append("One replica served directly: " + "; ".join(costs) + ".")
    proxied = [row for row in rows if row["proxy"]]
    if proxied:
        one = proxied[0]
        same_store = _direct(rows, one.get("store", "memory"), one.get("rate_limit", False)) or reference
        out.append(
            f"nginx costs {one['nginx_cpu_us']:,.0f} µs of CPU per request in front of one replica; "
            f"median latency {one['p50_us'] - same_store['p50_us']:+,.0f} µs, "
            f"{one['rps']:,.0f} vs {same_store['rps']:,.0f} req/s direct (same store and rate limit)."
        )
        best = max(proxied, key=lambda row: row["rps"])
        most = max(row["replicas"] for row in proxied)
        beyond = (
            f"; {most} replicas do not beat that here, the cores being taken"
            if best["replicas"] < most
            else ""
        )
        out.append(
            f"On {data['cores']} cores shared by the replicas, nginx, redis-server and the load generator, "
            f"{best['replicas']} replica(s) give the most: {best['rps']:,.0f} req/s "
            f"(p99 {best['p99_us']:,.0f} µs){beyond}; the in-memory reference on one replica, direct: "
            f"{reference['rps']:,.0f} req/s (p99 {reference['p99_us']:,.0f} µs)."
        )
        server_cpu = best["replica_cpu_us"] + best["nginx_cpu_us"] + best.get("redis_cpu_us", 0.0)
        if server_cpu > 0:
            per_core = 1e6 / server_cpu
            redis_cpu = best.get("redis_cpu_us", 0.0)
            ceiling = (
                f"; one redis-server (one thread) at {redis_cpu:,.0f} µs per call tops out near "
                f"{1e6 / redis_cpu:,.0f} req/s"
                if redis_cpu > 0
                else ""
            )
            out.append(
                f"Prediction: a request costs {best['replica_cpu_us']:,.0f} µs in a replica, "
                f"{best['nginx_cpu_us']:,.0f} µs in nginx and {redis_cpu:,.0f} µs in redis-server, so each "
                f"core given to the cluster adds about {per_core:,.0f} req/s (8 cores: ~{8 * per_core:,.0f} "
                f"req/s, one replica per core, the load generated elsewhere){ceiling}."
            )
    out.extend(f"skipped: {line}" for line in data["skipped"])
    return out


@click.command(help=__doc__.split("\n\n")[0] if __doc__ else None)
@click.option("--duration", type=float, default=3.0)
@click.option("--warmup", type=float, default=0.5)
@click.option("--connections", type=int, default=CONNECTIONS)
@click.option("--replicas", default=",".join(map(str, DEFAULT_REPLICAS)))
def command(duration: float, warmup: float, connections: int, replicas: str) -> dict[str, Any]:
    counts = tuple(int(part) for part in replicas.split(",") if part)
    data = run(counts, connections=connections, duration=duration, warmup=warmup)
    print(table(data))
    for line in verdicts(data):
        print(f"- {line}")
    return data


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return _cli.run(command, argv)


if __name__ == "__main__":
    main()
