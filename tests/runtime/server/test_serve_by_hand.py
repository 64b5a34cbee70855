"""A person runs a generated server by hand (issue #21, trap 6): `python -m weather_server` in a
real subprocess prints one startup line on stderr (where, which revisions, how many tools), serves,
and on Ctrl-C (SIGINT) stops with one more line, exit code 0 and no traceback, over HTTP and stdio.
`--help`/`-h` name the package; the generated client's command line takes `-h` too.
"""

from __future__ import annotations

import selectors
import signal
import subprocess
import sys
import time
from typing import IO

import pytest

from mcpgen_runtime.client import Client
from tests.support import ROOT, free_port, subprocess_env

MODERN_AND_LEGACY = "(MCP 2026-07-28 and legacy 2025-11-25, 2025-06-18, 2025-03-26)"


def _read_line(stream: IO[bytes], timeout: float = 30.0) -> str:
    """One line of a child's pipe, or fail after `timeout` seconds."""
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        if not sel.select(timeout):
            pytest.fail(f"no line within {timeout}s")
    return stream.readline().decode()


def _start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "weather_server", *args],
        cwd=ROOT / "generated",
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _interrupt(proc: subprocess.Popen[bytes]) -> tuple[int, str, bytes]:
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, err.decode(), out


def test_http_server_says_where_it_listens_and_stops_cleanly_on_ctrl_c() -> None:
    port = free_port()
    proc = _start("--port", str(port), "--log-level", "warning")
    try:
        line = _read_line(proc.stderr)  # type: ignore[arg-type]
        url = f"http://127.0.0.1:{port}/mcp"
        assert line == f"weather_server: serving 6 tools on {url} {MODERN_AND_LEGACY}\n"
        with Client(url) as client:  # the line is printed once the port listens: the URL works
            assert len(client.list_all_tools()) == 6
    finally:
        code, rest, _ = _interrupt(proc)
    assert code == 0
    assert rest == "weather_server: stopped\n"


@pytest.mark.parametrize("extra", [[], ["--modern-only"]])
def test_stdio_server_says_so_and_stops_cleanly_on_ctrl_c(extra: list[str]) -> None:
    proc = _start("--stdio", *extra)
    try:
        line = _read_line(proc.stderr)  # type: ignore[arg-type]
        served = "(MCP 2026-07-28 only)" if extra else MODERN_AND_LEGACY
        assert line == f"weather_server: serving 6 tools on stdio {served}\n"
        time.sleep(0.5)  # let the loop start (a Ctrl-C before it must stop cleanly too)
    finally:
        code, rest, out = _interrupt(proc)
    assert code == 0
    assert rest == "weather_server: stopped\n"
    assert out == b""  # stdout stays the protocol's


def test_server_help_names_the_package() -> None:
    for flag in ("--help", "-h"):
        done = subprocess.run(
            [sys.executable, "-m", "weather_server", flag],
            cwd=ROOT / "generated",
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("Usage: python -m weather_server [OPTIONS]")
        assert "__main__" not in done.stdout


@pytest.mark.parametrize("args", [["-h"], ["get-weather-data", "-h"]])
def test_client_cli_takes_dash_h(args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "weather_client", *args],
        cwd=ROOT / "generated",
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        f"Usage: python -m weather_client {args[0] if len(args) > 1 else ''}".rstrip()
    )
    assert "Options:" in done.stdout and "-h, --help" in done.stdout
