"""Start and stop benchmark servers (bench/serve.py) as child processes on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import loadgen, procstat

ROOT = Path(__file__).resolve().parent.parent
# Optional fast parts (uvloop, httptools) and profilers live here, outside the project venv, so
# installing them never changes what `run_http` picks for the project's own tests (make bench-deps).
EXTRAS = ROOT / "bench" / ".venv-peers" / "site"

# Display names; the order is the table order.
LABELS = {
    "ours": "mcpgen (generated bench_server)",
    "sdk": "SDK MCPServer (defaults)",
    "sdk-json": "SDK MCPServer (json_response=True)",
    "fastmcp": "FastMCP",
    "bare": "bare ASGI (ceiling)",
}

# name -> (uvicorn --http, --loop)
VARIANTS = {
    "h11": ("h11", "asyncio"),
    "uvloop": ("httptools", "uvloop"),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def child_env() -> dict[str, str]:
    paths = [
        str(ROOT / "runtime"),
        str(ROOT),
        str(ROOT / "generated"),
    ]  # this tree's runtime, also in a worktree
    if EXTRAS.is_dir():
        paths.append(str(EXTRAS))
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONDONTWRITEBYTECODE": "1"}


def variant_available(variant: str) -> bool:
    http, loop = VARIANTS[variant]
    modules = [m for m in (http, loop) if m not in ("h11", "asyncio")]
    if not modules:
        return True
    code = "import " + ", ".join(modules)
    return subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True).returncode == 0


def server_available(kind: str) -> bool:
    module = {"sdk": "mcp", "sdk-json": "mcp", "fastmcp": "fastmcp"}.get(kind)
    if module is None:
        return True
    return (
        subprocess.run(
            [sys.executable, "-c", f"import {module}"], env=child_env(), capture_output=True
        ).returncode
        == 0
    )


@dataclass
class Server:
    kind: str
    variant: str
    port: int
    proc: subprocess.Popen[bytes]
    started_rss_kib: int = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def cpu_ticks(self) -> int:
        return procstat.cpu_ticks(self.pid)

    def peak_rss_kib(self) -> int:
        return procstat.status_kib(self.pid, "VmHWM")

    def command(self) -> list[str]:
        return [str(part) for part in self.proc.args]  # type: ignore[union-attr]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stderr is not None:
            self.proc.stderr.close()


def start(
    kind: str,
    variant: str = "h11",
    *,
    timeout: float = 30.0,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Server:
    """Start `kind` under uvicorn, wait until it answers add(1, 2) correctly. `extra_args` go to
    bench/serve.py (e.g. `--rate-limit`), `env` to the child (e.g. `MCPGEN_STORE`)."""
    http, loop = VARIANTS[variant]
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "bench.serve",
        kind,
        "--port",
        str(port),
        "--http",
        http,
        "--loop",
        loop,
        *extra_args,
    ]
    proc = subprocess.Popen(
        args, cwd=ROOT, env={**child_env(), **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    server = Server(kind, variant, port, proc)
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"{kind} exited with {proc.returncode} before serving:\n{err[-3000:]}")
        try:
            loadgen.probe("127.0.0.1", port)
        except (OSError, loadgen.BadResponse) as exc:
            last = exc
            if isinstance(exc, loadgen.BadResponse):
                server.stop()
                raise RuntimeError(f"{kind} answered add(1, 2) wrongly: {exc}") from exc
            time.sleep(0.05)
            continue
        server.started_rss_kib = procstat.status_kib(proc.pid, "VmRSS")
        return server
    server.stop()
    raise TimeoutError(f"{kind} did not serve within {timeout}s ({last!r})")


@contextlib.contextmanager
def running(kinds: list[str], variant: str = "h11") -> object:
    servers: list[Server] = []
    try:
        for kind in kinds:
            servers.append(start(kind, variant))
        yield servers
    finally:
        for server in servers:
            server.stop()


def start_module(package: str, *, timeout: float = 30.0) -> Server:
    """`python -m <generated package> --http --port N`, as a user runs it; waits until it listens."""
    port = free_port()
    args = [sys.executable, "-m", package, "--http", "--port", str(port)]
    proc = subprocess.Popen(
        args, cwd=ROOT, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    server = Server(package, "run_http", port, proc)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"{package} exited with {proc.returncode} before listening:\n{err[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        except OSError:
            time.sleep(0.05)
            continue
        return server
    server.stop()
    raise TimeoutError(f"{package} did not listen within {timeout}s")
