"""A person runs a generated server by hand (issue #21, trap 6): `python -m weather_server` in a
real subprocess prints one startup line on stderr (where, which revisions, how many tools,
resources, resource templates and prompts), serves, and on Ctrl-C (SIGINT) stops with one more
line, exit code 0 and no traceback, over HTTP and stdio. `--help`/`-h` name the package; the
generated client's command line takes `-h` too.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest
from click.testing import CliRunner

from codegen.cli import main
from mcpgen_runtime.client import Client
from mcpgen_runtime.server.cli import startup_line
from tests.runtime.surfaces_server_app import SurfacesServer
from tests.support import ROOT, free_port, subprocess_env

MODERN_AND_LEGACY = "(MCP 2026-07-28 and legacy 2025-11-25, 2025-06-18, 2025-03-26)"


def _read_line(stream: IO[bytes], timeout: float = 30.0) -> str:
    """One line of a child's pipe, or fail after `timeout` seconds."""
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        if not sel.select(timeout):
            pytest.fail(f"no line within {timeout}s")
    return stream.readline().decode()


def _start(
    *args: str, package: str = "weather_server", where: Path = ROOT / "generated"
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", package, *args],
        cwd=where,
        env={**subprocess_env(), "PYTHONPATH": f"{where}{os.pathsep}{subprocess_env()['PYTHONPATH']}"},
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


@pytest.fixture(scope="module")
def everything_server(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A server generated from specs/everything.json (2 tools, 7 resources, 2 templates, 4 prompts)."""
    where = tmp_path_factory.mktemp("everything")
    args = [
        "server",
        str(ROOT / "specs" / "everything.json"),
        "-o",
        str(where),
        "--package",
        "everything_server",
    ]
    done = CliRunner().invoke(main, args, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return where


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_the_startup_line_counts_resources_templates_and_prompts(
    transport: str, everything_server: Path
) -> None:
    port = free_port()
    args = ["--stdio"] if transport == "stdio" else ["--port", str(port)]
    proc = _start(*args, package="everything_server", where=everything_server)
    try:
        line = _read_line(proc.stderr)  # type: ignore[arg-type]
    finally:
        code, rest, _ = _interrupt(proc)
    where = "stdio" if transport == "stdio" else f"http://127.0.0.1:{port}/mcp"
    served = "2 tools, 7 resources, 2 resource templates, 4 prompts"
    assert line == f"everything_server: serving {served} on {where} {MODERN_AND_LEGACY}\n"
    assert (code, rest) == (0, "everything_server: stopped\n")


def test_the_startup_line_says_one_of_each_in_the_singular() -> None:
    server = SurfacesServer()
    for name in list(server.tools)[1:]:
        server.remove_tool(name, notify=False)
    surfaces = server.surfaces
    assert surfaces is not None
    for resource in surfaces.resources[1:]:
        server.remove_resource(resource["uri"], notify=False)
    for template in surfaces.resource_templates[1:]:
        server.remove_resource_template(template["uriTemplate"], notify=False)
    for prompt in surfaces.prompts[1:]:
        server.remove_prompt(prompt["name"], notify=False)
    served = "1 tool, 1 resource, 1 resource template, 1 prompt"
    assert startup_line("notes", server, "stdio") == f"notes: serving {served} on stdio {MODERN_AND_LEGACY}"


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
