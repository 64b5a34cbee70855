"""The lean runtime on its own: what a program that ships generated bindings installs.

A fresh virtualenv gets only the `mcpgen-runtime` wheel (tests/wheels.py) and copies of the
generated weather client and server. The client calls a server over Streamable HTTP and over
stdio; nothing of the generator (black, jinja2, click) nor uvicorn is installed. With the
`[server]` extra added, the generated server runs from that same venv and answers the client.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import ROOT, free_port, running_server, wait_for_port
from tests.wheels import Wheels, new_venv, ok, run

pytestmark = pytest.mark.timeout(900)
GENERATED = ROOT / "generated"

CALL_HTTP = """
import json, sys
from weather_client import Client
with Client(sys.argv[1]) as client:
    print(json.dumps(client.get_weather_data("Berlin").model_dump()))
"""

CALL_STDIO = """
import json, sys
from weather_client import Client
command = [sys.argv[1], "-m", "weather_server", "--stdio"]
with Client.stdio(command, env={"PYTHONPATH": sys.argv[2]}) as client:
    print(json.dumps(client.get_weather_data("Berlin").model_dump()))
"""


@pytest.fixture(scope="module")
def lean(tmp_path_factory: pytest.TempPathFactory, wheels: Wheels) -> Iterator[tuple[Path, Path, Wheels]]:
    """(python of a venv with only mcpgen-runtime, the project's src/ holding the generated packages)."""
    root = tmp_path_factory.mktemp("lean")
    python = new_venv(root / "venv", wheels.runtime)
    src = root / "src"
    for package in ("weather_client", "weather_server"):
        shutil.copytree(GENERATED / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    yield python, src, wheels


def _installed(python: Path) -> set[str]:
    listed = json.loads(ok(run([python, "-m", "pip", "list", "--format", "json"], python.parent)))
    return {entry["name"].lower() for entry in listed}


def _expected_reading() -> dict[str, object]:
    sys.path.insert(0, str(GENERATED))
    try:
        from weather_server.handlers import _reading
    finally:
        sys.path.remove(str(GENERATED))
    return _reading("Berlin").model_dump()


def test_runtime_alone_installs_nothing_of_the_generator(lean: tuple[Path, Path, Wheels]) -> None:
    python, _, _ = lean
    installed = _installed(python)
    assert "mcpgen-runtime" in installed and "pydantic" in installed
    assert not installed & {"mcpgen", "black", "jinja2", "click", "uvicorn"}, sorted(installed)


def test_generated_client_calls_over_http_with_the_runtime_alone(lean: tuple[Path, Path, Wheels]) -> None:
    python, src, _ = lean
    port = free_port()
    with running_server([sys.executable, "-m", "weather_server", "--http", "--port", str(port)], port):
        out = ok(run([python, "-c", CALL_HTTP, f"http://127.0.0.1:{port}/mcp"], src))
    assert json.loads(out) == _expected_reading()


def test_generated_client_calls_over_stdio_with_the_runtime_alone(lean: tuple[Path, Path, Wheels]) -> None:
    python, src, _ = lean
    # The server process is the dev environment's; the client side is the lean venv's.
    out = ok(run([python, "-c", CALL_STDIO, sys.executable, str(GENERATED)], src))
    assert json.loads(out) == _expected_reading()


def test_the_command_line_asks_for_the_cli_extra(lean: tuple[Path, Path, Wheels]) -> None:
    python, src, _ = lean
    result = run([python, "-m", "weather_client", "--help"], src)
    assert result.returncode != 0 and "pip install 'mcpgen-runtime[cli]'" in result.stderr, result.stderr[
        -2000:
    ]


def test_generated_server_runs_with_the_server_extra(lean: tuple[Path, Path, Wheels]) -> None:
    python, src, wheels = lean
    ok(run([python, "-m", "pip", "install", "--quiet", f"{wheels.runtime}[server]"], src))
    installed = _installed(python)
    assert {"uvicorn", "click"} <= installed and not installed & {"mcpgen", "black", "jinja2"}, sorted(
        installed
    )
    port = free_port()
    with running_server(
        [str(python), "-m", "weather_server", "--http", "--port", str(port)],
        port,
        cwd=src,
        env={"PYTHONPATH": ""},
    ) as server:
        wait_for_port(port, server)
        out = ok(run([python, "-c", CALL_HTTP, f"http://127.0.0.1:{port}/mcp"], src))
    assert json.loads(out) == _expected_reading()


def test_a_fresh_clone_imports_the_runtime_without_a_build_step(tmp_path: Path) -> None:
    """The blocking twins are in git: a clone's runtime/ imports as it is, no install or build."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    ok(run(["git", "clone", "--quiet", "--no-local", ROOT, clone], tmp_path))
    program = (
        "import mcpgen_runtime.client as c, mcpgen_runtime.transport._sync.streamable_http as t; "
        "print(c.Client.__module__, c.__file__, t.__file__, sep='\\n')"
    )
    module, *files = ok(run([sys.executable, "-c", program], clone / "runtime")).split()
    assert module == "mcpgen_runtime.client._sync.client"
    assert all(Path(file).is_relative_to(clone / "runtime") for file in files), files
