"""Helpers for tests that run real processes: free ports, servers started as subprocesses."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
# ../shared (spec pages, real tool lists) exists on developer machines and in CI, not in a user's clone.
SHARED = ROOT.parent / "shared"
# Real peers installed by `make test` (Makefile): the legacy-only official SDK 1.x, and Node 22 with
# the npm reference server beside the conformance harness.
SDK1_PYTHON = ROOT / "tests" / "peers" / ".venv-sdk1" / "bin" / "python"
NODE = ROOT / "conformance" / "node_modules" / "node" / "bin" / "node"
OIDC_PROVIDER = ROOT / "tests" / "peers" / "oidc" / "provider.mjs"  # needs tests/peers/oidc/node_modules
SERVER_EVERYTHING = (
    ROOT
    / "conformance"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)


def needs_shared(*parts: str) -> Path:
    """The path under ../shared; skips the calling test (or module, at import) when it is absent."""
    import pytest

    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"needs ../shared/{'/'.join(parts)} beside the checkout (developer machines and CI have it)",
            allow_module_level=True,
        )
    return path


def run_peer_script(
    python: Path, script: str, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`script` run by a peer's own venv (`python`), with none of ours on its path; never raises on
    its exit code."""
    return subprocess.run(
        [str(python), script, *args],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def needs_peer(path: Path, what: str) -> Path:
    """A peer installed by `make test`; skips the calling test when it is missing."""
    import pytest

    if not path.exists():
        pytest.skip(f"needs {what} ({path.relative_to(ROOT)}); `make test` installs it")
    return path


# Ports for servers the tests start. An ephemeral port (bind to 0, then release) can be handed to
# another xdist worker before our server binds it; that worker's server then answers our calls (CI
# once saw "Unknown tool" from a neighbour). So each worker draws from its own block below the
# kernel's ephemeral range (32768+ here), which client sockets never take either.
_PORT_BASE, _PORTS_PER_WORKER = 20000, 1500
_next_port = os.getpid() % _PORTS_PER_WORKER  # a pytest a test starts shares its worker's block


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")  # the serial run is one process: block 0
    return int(worker.removeprefix("gw") or 0) % 8


def interruptible() -> None:
    """`preexec_fn` of a process a test interrupts with SIGINT (Ctrl-C): SIGINT back to its default.
    A non-interactive shell starts background jobs with SIGINT ignored, children inherit that, and
    Python then installs no KeyboardInterrupt handler: the suite run that way would see no Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def free_port() -> int:
    """A loopback port nothing listens on, unique to this process's block among concurrent workers."""
    global _next_port
    first = _PORT_BASE + _worker_index() * _PORTS_PER_WORKER
    for _ in range(_PORTS_PER_WORKER):
        port = first + _next_port
        _next_port = (_next_port + 1) % _PORTS_PER_WORKER
        with socket.socket() as sock:
            try:  # no SO_REUSEADDR: a port still in TIME_WAIT is skipped too
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port in {first}..{first + _PORTS_PER_WORKER - 1}")


def wait_for_port(port: int, proc: subprocess.Popen[bytes] | None = None, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"server exited with {proc.returncode} before listening:\n{err[-4000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {timeout}s")


@contextlib.contextmanager
def running_server(
    args: Sequence[str], port: int, *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Start `args` (which must listen on `port`), wait until it accepts connections, stop it after."""
    full_env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT), str(ROOT / "generated")]),
        **(env or {}),
    }
    proc = subprocess.Popen(
        list(args), cwd=cwd or ROOT, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_for_port(port, proc)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


# httptools, the parser of `mcpgen-runtime[fast]`, kept outside the project venv so that uvicorn's "auto"
# stays h11 for every other test: make test puts it in the first, make bench-deps in the second.
FAST_SITES = (ROOT / "tests" / "peers" / ".site-fast", ROOT / "bench" / ".venv-peers" / "site")


def httptools_env() -> dict[str, str] | None:
    """The environment a server subprocess needs to serve under httptools; None when it is absent."""
    import importlib.util

    if importlib.util.find_spec("httptools") is not None:
        return {}
    for site in FAST_SITES:
        if (site / "httptools").is_dir():
            return {
                "PYTHONPATH": os.pathsep.join(
                    [str(ROOT / "runtime"), str(ROOT), str(ROOT / "generated"), str(site)]
                )
            }
    return None


def subprocess_env() -> dict[str, str]:
    """Environment for child processes that must import the project and generated packages."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT), str(ROOT / "generated")]),
    }


# A process forked from this one starts with this one's peak RSS (Linux keeps the larger at exec), so
# late in a long pytest run `ru_maxrss` of a child measures pytest. `peak_measured` runs a command as
# the child of a fresh, small Python instead, which forwards SIGTERM/SIGINT, takes the command's
# exit status as its own, and writes the command's own peak RSS (KiB) to a report file.
_PEAK_WRAPPER = r"""
import ctypes, os, resource, signal, subprocess, sys

def die_with_parent():
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: no orphan if the test kills us

child = subprocess.Popen(sys.argv[2:], preexec_fn=die_with_parent)
for number in (signal.SIGTERM, signal.SIGINT):
    signal.signal(number, lambda received, _frame: child.send_signal(received))
code = child.wait()
with open(sys.argv[1], "w") as report:
    report.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def peak_measured(args: list[str], report: Path) -> list[str]:
    """`args` run so that its own peak RSS lands in `report` (read it with `reported_peak_kib`)."""
    return [PYTHON, "-c", _PEAK_WRAPPER, str(report), *args]


def reported_peak_kib(report: Path) -> int:
    return int(report.read_text())


@dataclasses.dataclass(frozen=True)
class Measured:
    """A finished subprocess: its exit code (negative: the signal), output, time and peak RSS."""

    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    peak_rss_kib: int  # of the command alone (`peak_measured`), whatever this process holds


def run_measured(args: list[str], *, stdin: bytes = b"", timeout: float = 120.0, **popen: Any) -> Measured:
    """Run `args` to its end (killed after `timeout`), feeding `stdin`; `popen` goes to Popen
    (cwd, env, preexec_fn to set an rlimit...)."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "peak"
        started = time.monotonic()
        proc = subprocess.Popen(
            peak_measured(args, report),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            **popen,
        )
        output: dict[str, bytes] = {}

        def drain(name: str, stream: Any) -> None:
            output[name] = stream.read()

        readers = [
            threading.Thread(target=drain, args=(name, stream), daemon=True)
            for name, stream in (("out", proc.stdout), ("err", proc.stderr))
        ]
        for reader in readers:
            reader.start()
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(stdin)
        proc.stdin.close()
        for reader in readers:
            reader.join(max(0.0, timeout - (time.monotonic() - started)))
        if any(reader.is_alive() for reader in readers):
            proc.kill()
        proc.wait()
        seconds = time.monotonic() - started
        for reader in readers:
            reader.join(5)
        peak = reported_peak_kib(report) if report.exists() else 0
    return Measured(proc.returncode, output.get("out", b""), output.get("err", b""), seconds, peak)


# Written into a pytest run's folder by `modules_after_pytest`: the modules imported when it ends.
_MODULES_CONFTEST = """
import sys

def pytest_unconfigure(config):
    with open("modules.txt", "w") as f:
        f.write("\\n".join(sorted(sys.modules)))
"""


def modules_after_pytest(
    python: str | Path, folder: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """Run `python -m pytest ARGS` in `folder` (given a conftest.py that records `sys.modules` as the
    session ends): the modules it imported, and the run."""
    (folder / "conftest.py").write_text(_MODULES_CONFTEST, "utf-8")
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (folder / "modules.txt").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return set((folder / "modules.txt").read_text("utf-8").split()), done


def run_mcpgen(
    cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`mcpgen ARGS` run from `cwd` in a process of its own, with this checkout's code
    (`subprocess_env()` unless `env` is given); never raises on a non-zero exit."""
    return subprocess.run(
        [PYTHON, "-m", "codegen.cli", *args],
        cwd=cwd,
        env=subprocess_env() if env is None else env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
