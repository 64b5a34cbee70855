"""What one `tasks/get` poll costs beside one `tools/call`, on one replica (issue 34: a poll must not
cost more than a call).

    python -m bench.task_poll [--duration 2] [--warmup 0.5] [--repeats 5] [--concurrency 8] [--json FILE]

Our generated bench_server (`python -m bench.serve ours --task-tool`: `add`, and `sleep`, a tool that
runs as a task) on the in-memory store and on Redis (a local redis-server, `MCPGEN_STORE`), h11 +
asyncio, takes closed-loop load from bench/loadgen.py of three requests in turn, rounds interleaved:
`tools/call` of add(1, 2), `tasks/get` of a task still `working` (a `sleep` of an hour) and of a
`completed` one (its result inlined); on Redis also a `tools/call` with the rate limit on
(bench/scale.py's unreached limit: one store round trip per call, as a poll makes). The official SDK
(no tasks) serves the `tools/call` only; the bare-ASGI ceiling answers both requests with its canned
reply (replies not checked). Recorded per round: req/s, p50/p99, server CPU per request and, on Redis,
redis-server's CPU per request.
"""

from __future__ import annotations

import contextlib
import json
import socket
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson

from . import _cli, loadgen, procstat, servers
from .proxy import find_binary
from .scale import UNREACHED_RATE_LIMIT, _Redis

EXTENSION = "io.modelcontextprotocol/tasks"
CAPABILITIES = b'{"extensions":{"' + EXTENSION.encode() + b'":{}}}'
_META = (
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":' + CAPABILITIES + b"}"
)
REQUESTS = ("tools/call", "tasks/get working", "tasks/get completed")
RATE_LIMITED = "redis, rate limit on"
WITHIN = 1.05  # a poll's CPU per request at most this times a call's (CPU ticks of 10 ms: noise)


def _check_task(status: str) -> Any:
    def check(content_type: bytes, body: bytes) -> None:
        try:
            result = orjson.loads(body)["result"]
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
            raise loadgen.BadResponse(f"not a tasks/get result: {body[:300]!r}") from exc
        if result.get("status") != status:
            raise loadgen.BadResponse(f"task not {status}: {body[:300]!r}")

    return check


def poll(task_id: str, status: str, *, checked: bool = True) -> loadgen.Request:
    """`tasks/get` of `task_id`, the extension declared; replies must say `status` when `checked`."""
    body = b'{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":"' + task_id.encode()
    body += b'",' + _META + b"}}"
    return loadgen.Request("tasks/get", task_id, body, _check_task(status) if checked else None)


def start_task(port: int, seconds: float) -> str:
    """One `sleep` called with the extension declared: the id of the task it became."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep",'
    body += b'"arguments":{"seconds":%s},' % str(seconds).encode() + _META + b"}}"
    call = loadgen.Request("tools/call", "sleep", body, None)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        request = call.head("127.0.0.1", port, "/mcp") + b"%d\r\n\r\n" % len(body) + body
        _, status, _, reply = loadgen.exchange(sock, request)
    result = orjson.loads(reply).get("result") or {}
    if status != 200 or result.get("resultType") != "task":
        raise loadgen.BadResponse(f"sleep did not become a task: HTTP {status} {reply[:300]!r}")
    return str(result["taskId"])


def wait_completed(port: int, task_id: str, timeout: float = 10.0) -> None:
    request = poll(task_id, "completed")
    deadline = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        while True:
            body = request.body_template % 1
            _, _, _, reply = loadgen.exchange(
                sock, request.head("127.0.0.1", port, "/mcp") + b"%d\r\n\r\n" % len(body) + body
            )
            if orjson.loads(reply)["result"].get("status") == "completed":
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the task did not complete: {reply[:300]!r}")
            time.sleep(0.02)


@contextlib.contextmanager
def _targets(redis: _Redis | None) -> Iterator[list[tuple[str, str, servers.Server, Any, dict[str, Any]]]]:
    """(server label, store, server, redis or None, {request: loadgen.Request}) for every row."""
    started: list[servers.Server] = []
    try:
        rows: list[tuple[str, str, servers.Server, Any, dict[str, Any]]] = []
        stores: list[tuple[str, _Redis | None]] = [("memory", None)]
        if redis is not None:
            stores.append(("redis", redis))
        for store, backend in stores:
            env = backend.env if backend is not None else {"MCPGEN_STORE": "memory"}
            ours = servers.start("ours", "h11", extra_args=("--task-tool",), env=env)
            started.append(ours)
            working = start_task(ours.port, 3600)
            done = start_task(ours.port, 0.01)
            wait_completed(ours.port, done)
            requests = {
                "tools/call": loadgen.ADD,
                "tasks/get working": poll(working, "working"),
                "tasks/get completed": poll(done, "completed"),
            }
            rows.append(("ours", store, ours, backend, requests))
        if redis is not None:  # a call that touches the store once, as a poll on Redis does
            limited = servers.start("ours", "h11", extra_args=UNREACHED_RATE_LIMIT, env=redis.env)
            started.append(limited)
            rows.append(("ours", RATE_LIMITED, limited, redis, {"tools/call": loadgen.ADD}))
        if servers.server_available("sdk"):
            sdk = servers.start("sdk", "h11")
            started.append(sdk)
            rows.append(("sdk", "-", sdk, None, {"tools/call": loadgen.ADD}))
        bare = servers.start("bare", "h11")
        started.append(bare)
        canned = {"tools/call": loadgen.ADD, "tasks/get working": poll("x" * 32, "working", checked=False)}
        rows.append(("bare", "-", bare, None, canned))
        yield rows
    finally:
        for server in started:
            server.stop()


def run(
    *, duration: float, warmup: float, repeats: int, concurrency: int, log: Any = sys.stderr
) -> dict[str, Any]:
    redis_bin = find_binary("redis-server")
    redis = _Redis(redis_bin) if redis_bin is not None else None
    rounds: list[dict[str, Any]] = []
    try:
        with _targets(redis) as targets:
            entries = [(t, name) for t in targets for name in t[4]]
            for (_, _, server, _, requests), name in entries:  # warm every server and path
                loadgen.run_load(
                    "127.0.0.1",
                    server.port,
                    connections=concurrency,
                    duration=0.2,
                    warmup=0.3,
                    request=requests[name],
                )
            for repeat in range(repeats):
                shift = repeat % len(entries)
                for (label, store, server, backend, requests), name in entries[shift:] + entries[:shift]:
                    sample_redis = backend.cpu_ticks if backend is not None else None
                    redis0 = sample_redis() if sample_redis is not None else 0
                    result = loadgen.run_load(
                        "127.0.0.1",
                        server.port,
                        connections=concurrency,
                        duration=duration,
                        warmup=warmup,
                        sample=server.cpu_ticks,
                        request=requests[name],
                    )
                    # redis-server's CPU over warm-up and window, per request of the window's rate
                    redis_ticks = sample_redis() - redis0 if sample_redis is not None else None
                    per = procstat.CLK_TCK / 1e6
                    total = result.rps * (duration + warmup) if result.rps else 0
                    row = {
                        "server": label,
                        "store": store,
                        "request": name,
                        "repeat": repeat,
                        "rps": result.rps,
                        "p50_us": result.percentile(0.5),
                        "p99_us": result.percentile(0.99),
                        "cpu_us": (result.server_cpu_ticks or 0) / per / result.requests
                        if result.requests
                        else None,
                        "redis_cpu_us": redis_ticks / per / total
                        if redis_ticks is not None and total
                        else None,
                        "errors": result.errors,
                        "first_error": result.first_error,
                    }
                    rounds.append(row)
                    print(
                        f"  [rep {repeat + 1}/{repeats}] {label:<5} {store:<20} {name:<20} "
                        f"{result.rps:8.0f} req/s  p50 {row['p50_us'] / 1000:6.2f} ms  "
                        f"cpu {row['cpu_us'] or 0:5.0f} us/req  errors {result.errors}",
                        file=log,
                        flush=True,
                    )
    finally:
        if redis is not None:
            redis.stop()
    data: dict[str, Any] = {
        "rounds": rounds,
        "settings": {"duration": duration, "warmup": warmup, "repeats": repeats, "concurrency": concurrency},
        "skipped": [] if redis is not None else ["redis: redis-server not installed"],
        "machine": procstat.machine(),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    data["summary"] = summarize(data)
    data["verdicts"] = verdicts(data["summary"])
    return data


def summarize(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Medians per (server, store, request); `vs_call`: req/s ÷ the same server's tools/call req/s."""
    rounds = data["rounds"]
    keys = list(dict.fromkeys((r["server"], r["store"], r["request"]) for r in rounds))
    order = {"ours": 0, "sdk": 1, "bare": 2}
    stores = {"memory": 0, "redis": 1, RATE_LIMITED: 2}
    keys.sort(key=lambda k: (order.get(k[0], 9), stores.get(k[1], 9), REQUESTS.index(k[2])))
    medians: dict[tuple[str, str, str], dict[str, Any]] = {}
    for key in keys:
        mine = [r for r in rounds if (r["server"], r["store"], r["request"]) == key]

        def median(field: str, rows: list[dict[str, Any]] = mine) -> float | None:
            values = [r[field] for r in rows if r[field] is not None]
            return statistics.median(values) if values else None

        medians[key] = {
            "server": key[0],
            "store": key[1],
            "request": key[2],
            "repeats": len(mine),
            "rps": median("rps"),
            "p50_ms": (median("p50_us") or 0) / 1000,
            "p99_ms": (median("p99_us") or 0) / 1000,
            "cpu_us": median("cpu_us"),
            "redis_cpu_us": median("redis_cpu_us"),
            "errors": sum(r["errors"] for r in mine),
        }
    for (server, store, _), row in medians.items():
        call = medians.get((server, store, "tools/call"))
        row["vs_call"] = row["rps"] / call["rps"] if call and call["rps"] and row["rps"] else None
    return list(medians.values())


LABELS = {
    "ours": "mcpgen (generated bench_server)",
    "sdk": "SDK MCPServer (defaults)",
    "bare": "bare ASGI (ceiling)",
}


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| server | store | request | req/s | ÷ its tools/call | p50 ms | p99 ms | server CPU µs/req "
        "| redis-server CPU µs/req | errors |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        ratio = f"{row['vs_call']:.2f}" if row["vs_call"] is not None else "-"
        cpu = f"{row['cpu_us']:.0f}" if row["cpu_us"] is not None else "-"
        redis = f"{row['redis_cpu_us']:.0f}" if row["redis_cpu_us"] is not None else "-"
        lines.append(
            f"| {LABELS.get(row['server'], row['server'])} | {row['store']} | `{row['request']}` | "
            f"{row['rps']:.0f} | {ratio} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f} | {cpu} | {redis} | "
            f"{row['errors']} |"
        )
    return "\n".join(lines)


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """A poll costs no more than a call on the same server and store (server + redis-server CPU per
    request: the machine's work; within WITHIN); on Redis also against a call that makes one store
    round trip, as the poll does."""
    out: list[str] = []
    calls = {(r["server"], r["store"]): r for r in rows if r["request"] == "tools/call"}

    def cpu(row: dict[str, Any]) -> float:
        return float(row["cpu_us"]) + (row["redis_cpu_us"] or 0)

    for row in rows:
        if row["server"] != "ours" or row["request"] == "tools/call" or row["cpu_us"] is None:
            continue
        for store, what in (
            (row["store"], "`tools/call`"),
            (RATE_LIMITED, "`tools/call` with the rate limit on"),
        ):
            call = calls.get(("ours", store))
            if call is None or call["cpu_us"] is None or (store == RATE_LIMITED and row["store"] != "redis"):
                continue
            ok = cpu(row) <= cpu(call) * WITHIN
            out.append(
                f"`{row['request']}` on the {row['store']} store: {cpu(row):.0f} µs of CPU per request vs "
                f"{cpu(call):.0f} µs per {what} ({row['rps'] / call['rps']:.2f}x its req/s; target: "
                f"≤ {WITHIN:.2f}x its CPU) {'PASS' if ok else 'FAIL'}"
            )
    return out


@click.command(help=__doc__.splitlines()[0] if __doc__ else None)
@click.option("--duration", type=float, default=2.0)
@click.option("--warmup", type=float, default=0.5)
@click.option("--repeats", type=int, default=5)
@click.option("--concurrency", type=int, default=8)
@click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="write the raw rounds and the summary"
)
def command(
    duration: float, warmup: float, repeats: int, concurrency: int, json_path: Path | None
) -> dict[str, Any]:
    data = run(duration=duration, warmup=warmup, repeats=repeats, concurrency=concurrency)
    print(table(data["summary"]))
    for line in [*data["verdicts"], *(f"skipped: {s}" for s in data["skipped"])]:
        print(line)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(data, indent=1))
    return data


def main(argv: list[str] | None = None) -> dict[str, Any]:
    return _cli.run(command, argv)


if __name__ == "__main__":
    main()
