"""`make bench`: every benchmark, then bench/RESULTS.md.

    python -m bench [--quick] [--out bench/RESULTS.md]
                    [--skip server,client,layers,legacy-server,legacy-client,legacy-sessions,scale,micro,
                            tasks,roundtrips,otel,gen,imports,dcg]
                    [--variants h11,uvloop] [--duration S] [--repeats N] [--calls N]

Runs bench/server_bench.py (throughput side by side), bench/client_bench.py (per-call latency),
bench/client_layers.py (the client call taken apart), the legacy era (initialize-based
revisions: server throughput and client overhead in a 2025-11-25 session, by the same two
modules, and bench/legacy_sessions.py, the memory of idle sessions), bench/scale.py (1, 2, 4
replicas behind the shipped nginx configuration), bench/task_poll.py (a `tasks/get` poll beside a
`tools/call`, in-memory and Redis stores),
bench/roundtrips.py (cache and multi-round-trip request counts), bench/otel_bench.py (what
OpenTelemetry instrumentation costs: off, unconfigured, on), bench/micro.py (CPU of the
parts), bench/gen_bench.py (generator speed, beside main before issue #20),
bench/import_bench.py (what importing a generated client and its command line cost: runtime
alone, weather, 1,000 tools) and
bench/dcg_compare.py (mcpgen's models against datamodel-code-generator's; not with --quick),
writes the raw data to
bench/out/ and the tables to RESULTS.md. Text below the notes marker in an existing
RESULTS.md is kept, so hand-written analysis survives a rerun.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import click

from . import (
    _cli,
    client_bench,
    client_layers,
    legacy_sessions,
    loadgen,
    micro,
    otel_bench,
    procstat,
    roundtrips,
    scale,
    server_bench,
    task_poll,
)
from .servers import EXTRAS, LABELS, ROOT, VARIANTS

OUT = ROOT / "bench" / "out"
PARTS = (
    "server",
    "client",
    "layers",
    "legacy-server",
    "legacy-client",
    "legacy-sessions",
    "scale",
    "tasks",
    "micro",
    "roundtrips",
    "otel",
    "gen",
    "imports",
    "dcg",
)
NOTES_MARKER = "<!-- notes: everything below this line is hand-written and kept by `make bench` -->"
PACKAGES = [
    "uvicorn",
    "h11",
    "httptools",
    "uvloop",
    "mcp",
    "fastmcp",
    "starlette",
    "pydantic",
    "pydantic-core",
    "orjson",
    "httpx",
    "anyio",
]


def versions() -> dict[str, str]:
    found: dict[str, str] = {"mcpgen": _version("mcpgen")}
    for name in PACKAGES:
        found[name] = _version(name)
    return found


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        for dist in metadata.distributions(path=[str(EXTRAS)]):
            if dist.metadata["Name"].lower().replace("_", "-") == name:
                return f"{dist.version} (bench/.venv-peers)"
        return "not installed"


def _gen_bench(quick: bool) -> dict[str, Any] | None:
    script = ROOT / "bench" / "gen_bench.py"
    if not script.exists():
        return None
    # this tree beside main before issue #20 (gen_bench.BASELINE_REF), measured in one run
    quick_args = ["--repeat", "1", "--skip-stages"] if quick else []
    command = [sys.executable, "-m", "bench.gen_bench", *quick_args]
    started = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    except subprocess.TimeoutExpired:
        return {"command": " ".join(command[1:]), "returncode": None, "output": "timed out after 3600 s"}
    return {
        "command": " ".join(["python", *command[1:]]),
        "returncode": proc.returncode,
        "seconds": time.monotonic() - started,
        "output": (proc.stdout or "")[-8000:] + ((proc.stderr or "")[-2000:] if proc.returncode else ""),
    }


def _import_bench(quick: bool) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "bench.import_bench",
        *(["--repeat", "1", "--tools", "100"] if quick else []),
    ]
    started = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"command": " ".join(command[1:]), "returncode": None, "output": "timed out after 1800 s"}
    return {
        "command": " ".join(["python", *command[1:]]),
        "returncode": proc.returncode,
        "seconds": time.monotonic() - started,
        "output": (proc.stdout or "")[-8000:] + ((proc.stderr or "")[-2000:] if proc.returncode else ""),
    }


def _dcg_compare() -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.dcg_compare"]
    started = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    except subprocess.TimeoutExpired:
        return {
            "command": "python -m bench.dcg_compare",
            "returncode": None,
            "output": "timed out after 3600 s",
        }
    return {
        "command": "python -m bench.dcg_compare",
        "returncode": proc.returncode,
        "seconds": time.monotonic() - started,
        "output": (proc.stdout or "") + ((proc.stderr or "")[-2000:] if proc.returncode else ""),
    }


def _kept_notes(path: Path) -> str:
    if not path.exists():
        return ""
    text = path.read_text()
    at = text.find(NOTES_MARKER)
    return text[at + len(NOTES_MARKER) :].strip("\n") if at >= 0 else ""


def _shown(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return path


def _carried(results: dict[str, Any], part: str) -> list[str]:
    stamp = results.get("carried", {}).get(part)
    return [f"(Carried over from the run of {stamp}: `bench/out/{stamp}-{part}.json`.)", ""] if stamp else []


def tasks_section(polls: dict[str, Any], carried: list[str]) -> list[str]:
    """The RESULTS.md section of bench/task_poll.py's data."""
    settings = polls["settings"]
    return [
        "## Tasks: a `tasks/get` poll beside a `tools/call` (bench/task_poll.py)",
        "",
        *carried,
        "One replica of the generated bench_server (`python -m bench.serve ours --task-tool`: `add` "
        "and `sleep`, a tool that runs as a task), h11 + asyncio, on the in-memory store and on Redis (a "
        "local redis-server); the load generator sends one request shape per round, replies checked: "
        "`tools/call` of add(1, 2), `tasks/get` of a task still `working` and of a `completed` one "
        "(its result inlined); on Redis also a `tools/call` with the rate limit on (one store round "
        "trip per call, as a poll makes). The official SDK has no tasks (its `tools/call` for scale); "
        "the bare-ASGI ceiling answers both shapes with its canned reply. "
        f"{settings['concurrency']} connections, {settings['warmup']} s warm-up + "
        f"{settings['duration']} s measured, {settings['repeats']} interleaved repeats, medians. "
        "`÷ its tools/call`: req/s over the same server's (and store's) `tools/call` req/s.",
        "",
        task_poll.table(polls["summary"]),
        "",
        *[f"- {line}" for line in polls.get("verdicts", [])],
        *[f"- skipped: {line}" for line in polls.get("skipped", [])],
        "",
    ]


def otel_section(otel: dict[str, Any], carried: list[str]) -> list[str]:
    """The RESULTS.md section of bench/otel_bench.py's data."""
    return [
        "## OpenTelemetry: off, unconfigured, on",
        "",
        *carried,
        "bench/otel_bench.py: the generated bench_server and bench_client per mode, each in processes "
        "of its own; the baseline is the runtime before telemetry.py "
        f"(`{otel['settings']['baseline']}`). Server: h11, concurrency 8, "
        f"{otel['settings']['duration']:g} s per round, {otel['settings']['repeats']} interleaved "
        f"repeats, medians. Client: {otel['settings']['calls']} sequential `add(1, 2)` calls per "
        "repeat against "
        "one server, medians.",
        "",
        otel_bench.table(otel),
        "",
        "The same modes in-process, without sockets (bench/micro.py's server app, `handle_message` and "
        f"client core over a stub transport; CPU per operation, the minimum of "
        f"{otel['settings'].get('parts_rounds', 3)} interleaved rounds of 5 runs each):",
        "",
        otel_bench.parts_table(otel),
        "",
        *[f"- {line}" for line in otel_bench.verdicts(otel)],
        "",
    ]


def render(results: dict[str, Any], notes: str) -> str:
    machine = results["machine"]
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench` (`python -m bench{results['argv']}`) on {results['started']}, "
        f"in {results['seconds']:.0f} s. Raw data: `{_shown(results['data_dir'])}/{results['stamp']}-*.json` "
        "(git-ignored).",
        "",
        "## Machine and versions",
        "",
        f"- CPU: {machine['cpu']}, {machine['cores']} cores; kernel {machine['kernel']}; "
        f"Python {machine['python']}",
        "- CPU in use by other processes just before the run: "
        f"{results.get('cpu_in_use', 0) * 100:.0f}% of the machine; load average (1/5/15 min) at start: "
        f"{results['load_start']}; at end: {results['load_end']}",
    ]
    if results["busy"]:
        lines.append(
            "- **The machine was busy when this run started** (≥ 10% of its CPU in use by other "
            "processes): absolute numbers are noisy; ratios measured within one repeat are the robust part."
        )
    lines.append("- " + ", ".join(f"{name} {version}" for name, version in results["versions"].items()))
    lines.append("")
    server = results.get("server")
    if server:
        settings = server["settings"]
        lines += [
            "## Servers: throughput side by side",
            "",
            *_carried(results, "server"),
            f"One uvicorn worker per server on 127.0.0.1, same uvicorn settings for all (`bench/serve.py`: "
            "`http`/`loop` per row, `lifespan=auto`, `access_log=False`, no server/date header); the load "
            "generator (`bench/loadgen.py`: raw HTTP/1.1 keep-alive over asyncio, pre-built requests, "
            "responses checked) runs on the same machine. Each round: "
            f"{settings['warmup']} s warm-up + {settings['duration']} s measured at each concurrency "
            f"{settings['concurrency']}; {settings['repeats']} interleaved repeats, server order rotating; "
            "medians shown. `x ceiling` is the median over repeats of (req/s ÷ the bare-ASGI req/s of the "
            "same repeat). Server CPU is utime+stime of the server process in the window ÷ requests; peak "
            "RSS is VmHWM after all rounds. The request is a 2026-07-28 `tools/call` of `add(1, 2)` with "
            "`MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`; every server validates input and output.",
            "",
            server_bench.table(server["summary"]),
            "",
        ]
        lines += [f"- {line}" for line in server_bench.verdicts(server["summary"], server)]
        lines += [f"- skipped: {line}" for line in server["skipped"]]
        lines += ["", "Server commands (one per server and variant):", ""]
        lines += [
            f"- `{key}`: `{' '.join(Path(a).name if i == 0 else a for i, a in enumerate(cmd))}`"
            for key, cmd in server["commands"].items()
        ]
        lines.append("")
    client = results.get("client")
    if client:
        settings = client["settings"]
        server_command = " ".join(
            Path(client["server_command"][0]).name if i == 0 else a
            for i, a in enumerate(client["server_command"])
        )
        lines += [
            "## Clients: one sequential call",
            "",
            *_carried(results, "client"),
            f"Against our generated server (`{server_command}`), "
            f"{settings['calls']} sequential `add(1, 2)` calls per round, {settings['repeats']} interleaved "
            "repeats, medians of the per-round medians. Baseline (`raw POST`): the cheapest honest raw "
            "HTTP request, a pre-built request (bytes) on one kept-alive blocking socket with TCP_NODELAY, "
            "the reply read by Content-Length; no JSON work. Overhead = latency - the baseline's latency. "
            "Client CPU is this process's CPU time per call (includes the kernel's TCP work).",
            "",
            client_bench.table(client["summary"]),
            "",
        ]
        lines += [f"- {line}" for line in client_bench.verdicts(client["summary"])]
        engines = {k: v for k, v in client["engines"].items()}
        if engines:
            lines.append(f"- transport engines: {', '.join(f'{k}={v}' for k, v in engines.items())}")
        lines.append("")
    layers = results.get("layers")
    if layers:
        lines += [
            "### Where a client call's time goes",
            "",
            *_carried(results, "layers"),
            "bench/client_layers.py: each row adds one layer to the row above, against the bare ASGI app; "
            "minimum over interleaved rounds of the mean per call (noise only adds).",
            "",
            client_layers.table(layers),
            "",
        ]
    lines += _legacy_section(results)
    trips = results.get("roundtrips")
    if trips:
        lines += [
            "## Round trips",
            "",
            *_carried(results, "roundtrips"),
            "Requests that reached the server (bench/roundtrips.py).",
            "",
            roundtrips.table(trips),
            "",
        ]
    otel = results.get("otel")
    if otel:
        lines += otel_section(otel, _carried(results, "otel"))
    parts = results.get("micro")
    if parts:
        lines += [
            "## Parts (CPU per operation, in-process, no sockets)",
            "",
            *_carried(results, "micro"),
            "bench/micro.py: minimum over 5 runs.",
            "",
            micro.table(parts),
            "",
        ]
    gen = results.get("gen")
    if gen is not None:
        lines += [
            "## Generator (bench/gen_bench.py)",
            "",
            *_carried(results, "gen"),
            f"`{gen['command']}` (exit {gen['returncode']}):",
            "",
            "```",
            gen["output"].strip(),
            "```",
            "",
        ]
    elif "gen" not in results["skipped_parts"]:
        lines += [
            "## Generator",
            "",
            "bench/gen_bench.py does not exist yet; `make bench` runs it once it does.",
            "",
        ]
    imports = results.get("imports")
    if imports is not None:
        lines += [
            "## Importing generated clients (bench/import_bench.py)",
            "",
            *_carried(results, "imports"),
            f"`{imports['command']}` (exit {imports['returncode']}):",
            "",
            "```",
            imports["output"].strip(),
            "```",
            "",
        ]
    scaled = results.get("scale")
    if scaled is not None:
        lines += [
            "## Scale-out: replicas behind nginx (bench/scale.py)",
            "",
            *_carried(results, "scale"),
            f"The generated bench_server, one uvicorn worker per replica (h11), behind the "
            f"`deploy/nginx.conf` "
            f"`mcpgen server` ships (loopback addresses; nginx `worker_processes auto`), "
            f"{scaled['connections']} keep-alive connections of closed-loop `tools/call` (bench/loadgen.py); "
            "Redis store rows: a local redis-server (`MCPGEN_STORE`); rate limit on or off as labelled "
            "(on: one Redis script call per `tools/call`). Replicas, nginx, redis-server and "
            f"the load generator share the machine's {scaled['cores']} cores. CPU columns: what the replicas "
            "(together), nginx and redis-server spent per request inside the measured window.",
            "",
            scale.table(scaled),
            "",
        ]
        lines += [f"- {line}" for line in scaled.get("verdicts", [])]
        lines.append("")
    polls = results.get("tasks")
    if polls is not None:
        lines += tasks_section(polls, _carried(results, "tasks"))
    dcg = results.get("dcg")
    if dcg is not None:
        lines += [
            "## Model generators compared (bench/dcg_compare.py)",
            "",
            *_carried(results, "dcg"),
            f"`{dcg['command']}` (exit {dcg['returncode']}):",
            "",
            dcg["output"].strip(),
            "",
        ]
    lines += [NOTES_MARKER, "", notes.strip(), ""] if notes.strip() else [NOTES_MARKER, ""]
    return "\n".join(lines)


def _legacy_section(results: dict[str, Any]) -> list[str]:
    """The initialize-based era: server throughput, client overhead, idle sessions."""
    server, client, sessions = (
        results.get(part) for part in ("legacy-server", "legacy-client", "legacy-sessions")
    )
    if not (server or client or sessions):
        return []
    lines = [
        "## Legacy era (initialize-based revisions)",
        "",
        f"The same servers and clients speaking {loadgen.LEGACY_VERSION} in a session "
        "(`initialize`, `notifications/initialized`, then `Mcp-Session-Id` and `MCP-Protocol-Version` "
        "on every request, no `_meta`), as the SDK 1.x and TypeScript SDK clients do.",
        "",
    ]
    if server:
        settings = server["settings"]
        lines += [
            "### Servers: legacy `tools/call` throughput",
            "",
            *_carried(results, "legacy-server"),
            "Same uvicorn settings, load generator and request (`add(1, 2)`, responses checked) as the "
            "table above, except that the load generator is a legacy client: before the load every "
            "connection opens its own session on that connection (`initialize`, "
            "`notifications/initialized`; untimed) and ends it with DELETE afterwards. Our server takes "
            "both kinds of load in the same process, rounds interleaved with the SDK's (order rotating): "
            f"{settings['warmup']} s warm-up + {settings['duration']} s measured at each concurrency "
            f"{settings['concurrency']}, {settings['repeats']} repeats, medians shown. `÷ mcpgen modern` is "
            "the median over repeats of (req/s ÷ our server's modern req/s in the same repeat).",
            "",
            server_bench.legacy_table(server["summary"]),
            "",
        ]
        lines += [f"- {line}" for line in server_bench.legacy_verdicts(server["summary"])]
        lines += [f"- skipped: {line}" for line in server["skipped"]]
        lines.append("")
    if client:
        settings = client["settings"]
        lines += [
            "### Clients: one sequential call in a legacy session",
            "",
            *_carried(results, "legacy-client"),
            "Against our generated server (the same process serves both eras), as in the client table above: "
            f"{settings['calls']} sequential `add(1, 2)` calls per round, {settings['repeats']} interleaved "
            "repeats, medians of the per-round medians. Every client opens its session before its first "
            "measured call. Baseline: a pre-built legacy `tools/call` (bytes, with the session's headers) "
            "on one kept-alive blocking socket. Overhead = latency - the baseline's latency, compared "
            'with the SDK client\'s forced to its initialize handshake (`mode="legacy"`).',
            "",
            client_bench.table(client["summary"]),
            "",
        ]
        lines += [f"- {line}" for line in client_bench.verdicts(client["summary"])]
        if client["engines"]:
            lines.append(
                f"- transport engines: {', '.join(f'{k}={v}' for k, v in client['engines'].items())}"
            )
        lines.append("")
    if sessions:
        lines += [
            "### Idle legacy sessions: server memory",
            "",
            *_carried(results, "legacy-sessions"),
            f"bench/legacy_sessions.py: {sessions['rows'][0]['sessions']} sessions opened in-process "
            "(no sockets), each from an `initialize` declaring sampling, elicitation and roots; Python "
            "allocations (tracemalloc) still held once all are open and idle, after a garbage collection, "
            "per session.",
            "",
            legacy_sessions.table(sessions),
            "",
        ]
        lines += [f"- {line}" for line in legacy_sessions.verdicts(sessions)]
        lines.append("")
    return lines


@click.command(help=__doc__.splitlines()[0] if __doc__ else None)
@click.option("--quick", is_flag=True, help="a ~1 s taste of everything (the smoke test)")
@click.option("--out", type=click.Path(path_type=Path), default=ROOT / "bench" / "RESULTS.md")
@click.option("--no-write", is_flag=True, help="print, do not write RESULTS.md")
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path),
    default=OUT,
    help="where the raw JSON goes (default bench/out)",
)
@click.option("--skip", "skip_list", default="", help=f"comma list of: {','.join(PARTS)}")
@click.option("--variants", "variant_list", default=",".join(VARIANTS))
@click.option("--servers", "server_list", default=",".join(LABELS))
@click.option("--duration", type=float)
@click.option("--repeats", type=int)
@click.option("--calls", type=int)
@click.pass_obj
def command(
    argv_text: str,
    quick: bool,
    out: Path,
    no_write: bool,
    data_dir: Path,
    skip_list: str,
    variant_list: str,
    server_list: str,
    duration: float | None,
    repeats: int | None,
    calls: int | None,
) -> dict[str, Any]:
    skip = {part for part in skip_list.split(",") if part}
    if skip - set(PARTS):
        raise click.UsageError(
            f"unknown parts: {', '.join(sorted(skip - set(PARTS)))} (known: {', '.join(PARTS)})"
        )
    started = time.monotonic()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    data_dir.mkdir(parents=True, exist_ok=True)
    load_start = procstat.machine()["loadavg"]
    cpu_in_use = procstat.machine_busy(0.5 if quick else 2.0)  # by other processes, before we start
    results: dict[str, Any] = {
        "argv": argv_text,
        "stamp": stamp,
        "data_dir": str(data_dir),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": procstat.machine(),
        "versions": versions(),
        "load_start": load_start,
        "cpu_in_use": cpu_in_use,
        "busy": cpu_in_use >= 0.10,
        "skipped_parts": sorted(skip),
    }

    def save(name: str, data: Any) -> None:
        kind = "quick-" if quick else ""  # quick runs never stand in for real data (see `carried`)
        (data_dir / f"{stamp}-{kind}{name}.json").write_text(json.dumps(data, indent=1, default=str))

    if "server" not in skip:
        print("== servers", file=sys.stderr, flush=True)
        servers = [s for s in server_list.split(",") if s]
        if server_bench.CEILING not in servers:
            servers.append(server_bench.CEILING)
        data = server_bench.run(
            servers,
            [8] if quick else [8, 32],
            [v for v in variant_list.split(",") if v],
            duration=duration or (0.5 if quick else 3.0),
            warmup=0.2 if quick else 1.0,
            repeats=repeats or (1 if quick else 5),
        )
        data["summary"] = server_bench.summarize(data)
        data["verdicts"] = server_bench.verdicts(data["summary"], data)
        save("server", data)
        results["server"] = data
        print(server_bench.table(data["summary"]), flush=True)
    if "client" not in skip:
        print("== clients", file=sys.stderr, flush=True)
        # Many short rounds rather than a few long ones: on a shared machine every client then
        # sees the same mix of quiet and busy moments.
        cdata = client_bench.run(
            client_bench.CLIENTS,
            calls=calls or (100 if quick else 250),
            repeats=repeats or (1 if quick else 20),
        )
        cdata["summary"] = client_bench.summarize(cdata)
        cdata["verdicts"] = client_bench.verdicts(cdata["summary"])
        save("client", cdata)
        results["client"] = cdata
        print(client_bench.table(cdata["summary"]), flush=True)
    if "layers" not in skip:
        print("== client layers", file=sys.stderr, flush=True)
        results["layers"] = client_layers.run(100 if quick else 800, 1 if quick else 12)
        save("layers", results["layers"])
        print(client_layers.table(results["layers"]), flush=True)
    wanted = [s for s in server_list.split(",") if s]
    eras = {
        kind: list(kind_eras) for kind, kind_eras in server_bench.LEGACY_SERVERS.items() if kind in wanted
    }
    if "legacy-server" not in skip and not eras:
        print(
            "== servers, legacy era: skipped (--servers names none of "
            f"{', '.join(server_bench.LEGACY_SERVERS)})",
            file=sys.stderr,
            flush=True,
        )
    elif "legacy-server" not in skip:
        print("== servers, legacy era", file=sys.stderr, flush=True)
        ldata = server_bench.run(
            list(eras),
            [8] if quick else [8, 32],
            [v for v in variant_list.split(",") if v],
            duration=duration or (0.5 if quick else 3.0),
            warmup=0.2 if quick else 1.0,
            repeats=repeats or (1 if quick else 5),
            eras=eras,
        )
        ldata["summary"] = server_bench.legacy_summary(ldata)
        ldata["verdicts"] = server_bench.legacy_verdicts(ldata["summary"])
        save("legacy-server", ldata)
        results["legacy-server"] = ldata
        print(server_bench.legacy_table(ldata["summary"]), flush=True)
    if "legacy-client" not in skip:
        print("== clients, legacy era", file=sys.stderr, flush=True)
        lcdata = client_bench.run(
            client_bench.LEGACY_CLIENTS,
            calls=calls or (100 if quick else 250),
            repeats=repeats or (1 if quick else 20),
            baseline=client_bench.LEGACY_BASELINE,
            sdk=client_bench.LEGACY_SDK,
        )
        lcdata["summary"] = client_bench.summarize(lcdata)
        lcdata["verdicts"] = client_bench.verdicts(lcdata["summary"])
        save("legacy-client", lcdata)
        results["legacy-client"] = lcdata
        print(client_bench.table(lcdata["summary"]), flush=True)
    if "legacy-sessions" not in skip:
        print("== idle legacy sessions", file=sys.stderr, flush=True)
        sdata = legacy_sessions.run(legacy_sessions.SESSIONS)
        sdata["verdicts"] = legacy_sessions.verdicts(sdata)
        save("legacy-sessions", sdata)
        results["legacy-sessions"] = sdata
        print(legacy_sessions.table(sdata), flush=True)
    if "scale" not in skip:
        print("== scale-out behind nginx", file=sys.stderr, flush=True)
        scdata = scale.run(
            (1, 2) if quick else scale.DEFAULT_REPLICAS,
            duration=0.5 if quick else 3.0,
            warmup=0.2 if quick else 0.5,
        )
        scdata["verdicts"] = scale.verdicts(scdata)
        save("scale", scdata)
        results["scale"] = scdata
        print(scale.table(scdata), flush=True)
    if "tasks" not in skip:
        print("== a tasks/get poll beside a tools/call", file=sys.stderr, flush=True)
        tdata = task_poll.run(
            duration=0.5 if quick else duration or 2.0,
            warmup=0.2 if quick else 0.5,
            repeats=1 if quick else repeats or 5,
            concurrency=8,
        )
        save("tasks", tdata)
        results["tasks"] = tdata
        print(task_poll.table(tdata["summary"]), flush=True)
    if "roundtrips" not in skip:
        print("== round trips", file=sys.stderr, flush=True)
        results["roundtrips"] = roundtrips.run()
        save("roundtrips", results["roundtrips"])
        print(roundtrips.table(results["roundtrips"]), flush=True)
    if "otel" not in skip:
        print("== OpenTelemetry", file=sys.stderr, flush=True)
        odata = otel_bench.run(
            duration=1.0 if quick else duration or 3.0,
            warmup=0.3 if quick else 1.0,
            repeats=1 if quick else repeats or 5,
            calls=300 if quick else calls or 2000,
            rev=None,
            parts_n=300 if quick else 3000,
            parts_rounds=1 if quick else 7,
        )
        save("otel", odata)
        results["otel"] = odata
        print(otel_bench.table(odata), flush=True)
    if "micro" not in skip:
        print("== parts", file=sys.stderr, flush=True)
        results["micro"] = micro.run(300 if quick else 5000)
        save("micro", results["micro"])
        print(micro.table(results["micro"]), flush=True)
    if "gen" not in skip:
        print("== generator", file=sys.stderr, flush=True)
        results["gen"] = _gen_bench(quick)
        if results["gen"] is not None:
            save("gen", results["gen"])
            print(results["gen"]["output"], flush=True)
    if "imports" not in skip:
        print("== imports", file=sys.stderr, flush=True)
        results["imports"] = _import_bench(quick)
        save("imports", results["imports"])
        print(results["imports"]["output"], flush=True)
    if "dcg" not in skip and not quick:
        print("== model generators", file=sys.stderr, flush=True)
        results["dcg"] = _dcg_compare()
        save("dcg", results["dcg"])
        print(results["dcg"]["output"], flush=True)
    results["carried"] = {}
    if not quick:  # a partial run keeps the other sections from the latest full data
        for part in PARTS:
            if part in skip and part not in results:
                previous = sorted(
                    p
                    for p in data_dir.glob(f"*-{part}.json")
                    if re.fullmatch(rf"\d{{8}}-\d{{6}}-{part}\.json", p.name)
                )
                if previous:
                    results[part] = json.loads(previous[-1].read_text())
                    results["carried"][part] = previous[-1].name.split(f"-{part}")[0]
    results["load_end"] = procstat.machine()["loadavg"]
    results["seconds"] = time.monotonic() - started
    save("all", results)
    if not no_write:
        out.write_text(render(results, _kept_notes(out)))
        print(f"wrote {out}", file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = sys.argv[1:] if argv is None else argv
    argv_text = "" if argv is None and not args else " " + " ".join(args)
    return _cli.run(command, argv, obj=argv_text)  # the command line as RESULTS.md quotes it


if __name__ == "__main__":
    main()
