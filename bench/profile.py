"""Profile a benchmark server under load (py-spy) or the generated client (pyinstrument).

    python -m bench.profile server [KIND] [--variant h11|uvloop] [--seconds 8] [--connections 8]
    python -m bench.profile client [--calls 3000] [--async]

`server`: starts KIND (default `ours`) like the server benchmark, drives it with the load
generator and samples it with `py-spy record --format raw` (no restart, no instrumentation);
prints self and inclusive time per function; the raw stacks stay in bench/out/.
`client`: runs sequential `add(1, 2)` calls of the generated client against our server under
pyinstrument and prints its call tree. Both tools come from `make bench-deps`
(bench/.venv-peers); py-spy needs ptrace rights over the server (root, or CAP_SYS_PTRACE).
"""

from __future__ import annotations

import asyncio
import collections
import os
import subprocess
import sys
import time
from pathlib import Path

import click

from . import _cli, loadgen
from .servers import EXTRAS, ROOT, start

OUT = ROOT / "bench" / "out"


def profile_server(kind: str, variant: str, seconds: float, connections: int, top: int) -> Path:
    py_spy = EXTRAS / "bin" / "py-spy"
    if not py_spy.exists():
        raise SystemExit("py-spy is not installed: run `make bench-deps`")
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"pyspy-{kind}-{variant}-{time.strftime('%Y%m%d-%H%M%S')}.txt"
    server = start(kind, variant)
    try:
        loadgen.run_load("127.0.0.1", server.port, connections=connections, duration=0.5, warmup=0.5)
        spy = subprocess.Popen(
            [
                str(py_spy),
                "record",
                "--pid",
                str(server.pid),
                "--rate",
                "500",
                "--duration",
                str(int(seconds)),
                "--format",
                "raw",
                "--nonblocking",
                "-o",
                str(out),
            ],
            env={**os.environ, "PYTHONPATH": str(EXTRAS)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(0.5)
        result = loadgen.run_load(
            "127.0.0.1", server.port, connections=connections, duration=seconds, warmup=0.1
        )
        spy.wait(timeout=seconds + 30)
        print(f"{kind} ({variant}): {result.rps:.0f} req/s while sampled; stacks in {out}")
    finally:
        server.stop()
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in out.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        total += count
        frames = stack.split(";")
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    print(f"{total} samples\n-- self")
    for frame, count in own.most_common(top):
        print(f"{count / total * 100:5.1f}%  {frame}")
    print("-- inclusive")
    for frame, count in inclusive.most_common(top):
        print(f"{count / total * 100:5.1f}%  {frame}")
    return out


def profile_client(calls: int, use_async: bool) -> None:
    sys.path[:0] = [str(EXTRAS), str(ROOT), str(ROOT / "generated")]
    try:
        from pyinstrument import Profiler
    except ImportError:
        raise SystemExit("pyinstrument is not installed: run `make bench-deps`") from None
    from bench_client import AsyncClient, Client

    server = start("ours", "h11")
    url = f"http://127.0.0.1:{server.port}/mcp"
    profiler = Profiler(interval=0.0002)
    try:
        if use_async:

            async def run() -> None:
                async with AsyncClient(url, on_drift="ignore") as client:
                    for _ in range(200):
                        await client.add(a=1, b=2)
                    profiler.start()
                    for _ in range(calls):
                        await client.add(a=1, b=2)
                    profiler.stop()

            asyncio.run(run())
        else:
            with Client(url, on_drift="ignore") as client:
                for _ in range(200):
                    client.add(a=1, b=2)
                profiler.start()
                for _ in range(calls):
                    client.add(a=1, b=2)
                profiler.stop()
    finally:
        server.stop()
    print(profiler.output_text(unicode=True, color=False, show_all=False))


@click.group(help=__doc__.splitlines()[0] if __doc__ else None)
def command() -> None:
    pass


@command.command("server")
@click.argument("kind", required=False, default="ours")
@click.option("--variant", default="h11")
@click.option("--seconds", type=float, default=8)
@click.option("--connections", type=int, default=8)
@click.option("--top", type=int, default=30)
def server_command(kind: str, variant: str, seconds: float, connections: int, top: int) -> None:
    profile_server(kind, variant, seconds, connections, top)


@command.command("client")
@click.option("--calls", type=int, default=3000)
@click.option("--async", "use_async", is_flag=True)
def client_command(calls: int, use_async: bool) -> None:
    profile_client(calls, use_async)


def main(argv: list[str] | None = None) -> None:
    _cli.run(command, argv)


if __name__ == "__main__":
    main()
