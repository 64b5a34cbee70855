"""The canary: a secret a config file passes with `${env:…}` reaches the server, and appears in no
generated file, snapshot, output line or error message of mcpgen.

The server is a generated one (`mcpgen server`, handlers.py written here) that proves it got the
secret without saying it: over stdio it refuses to start unless `CANARY_TOKEN` (set only through
the config file's `env`) hashes to the expected digest; over HTTP it requires
`Authorization: Bearer <secret>` (a `BearerAuth`), so listing its tools succeeds only when the
file's header went out. A careless variant prints the token it got to stderr and exits: mcpgen's
error must show `***` in its place.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import PYTHON, ROOT, free_port, running_server

SECRET = "canary-7f3c9a1e5b2d-do-not-leak"
LITERAL = "literal-canary-4e8d20b6-in-the-file"  # written in the file itself, as Claude Desktop users do
SPEC = {
    "tools": [
        {
            "name": "whoami",
            "description": "What the server was given",
            "inputSchema": {"type": "object", "properties": {}},
        }
    ]
}
HANDLERS = """\
import hashlib
import os
import sys

from mcpgen_runtime.server import BearerAuth, ServerConfig, ToolContext, ToolReturn

from . import models as _m
from .base import ServerBase

_EXPECTED = os.environ["CANARY_SHA256"]


def _matches(value: str | None) -> bool:
    return value is not None and hashlib.sha256(value.encode()).hexdigest() == _EXPECTED


if "--stdio" in sys.argv:
    token = os.environ.get("CANARY_TOKEN")
    if os.environ.get("CANARY_CARELESS") or not _matches(token):
        sys.stderr.write(f"refusing to start: CANARY_TOKEN is {token!r}\\n")  # as a careless server would
        sys.exit(3)


class Server(ServerBase):
    _server_config_ = ServerConfig(
        name="canary", auth=BearerAuth(lambda token: "caller" if _matches(token) else None)
    )

    async def whoami(self, args: _m.WhoamiInput, ctx: ToolContext) -> ToolReturn:
        seen = (ctx.headers or {}).get("x-canary") or os.environ.get("CANARY_TOKEN", "")
        return f"seen {seen}"
"""


@pytest.fixture(scope="module")
def canary_server(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated server package's directory (DIR/canary_server/)."""
    base = tmp_path_factory.mktemp("canary-server")
    spec = base / "canary.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    done = subprocess.run(
        [PYTHON, "-m", "codegen.cli", "server", str(spec), "-o", str(base), "--package", "canary_server"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (base / "canary_server" / "handlers.py").write_text(HANDLERS, encoding="utf-8")
    return base


def server_pythonpath(canary_server: Path) -> str:
    return os.pathsep.join([str(canary_server), str(ROOT / "runtime"), str(ROOT)])


@pytest.fixture(scope="module")
def canary_url(canary_server: Path) -> Iterator[str]:
    port = free_port()
    env = {"CANARY_SHA256": hashlib.sha256(SECRET.encode()).hexdigest()}
    with running_server(
        [PYTHON, "-m", "canary_server", "--http", "--port", str(port)],
        port,
        cwd=canary_server,
        env={**env, "PYTHONPATH": server_pythonpath(canary_server)},
    ):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def project(tmp_path: Path, canary_server: Path, canary_url: str) -> Path:
    """A project whose .mcp.json (Claude Code's shape) names the canary server three ways."""
    stdio_env = {"CANARY_TOKEN": "${env:CANARY_SECRET}", "PYTHONPATH": server_pythonpath(canary_server)}
    config = {
        "mcpServers": {
            "canary-stdio": {
                "type": "stdio",
                "command": PYTHON,
                "args": ["-m", "canary_server", "--stdio"],
                "env": stdio_env,
            },
            "canary-http": {
                "type": "http",
                "url": canary_url,
                "headers": {"Authorization": "Bearer ${env:CANARY_SECRET}", "X-Canary": "${CANARY_SECRET}"},
            },
            "careless-stdio": {
                "command": PYTHON,
                "args": ["-m", "canary_server", "--stdio"],
                "env": {**stdio_env, "CANARY_CARELESS": "1"},
            },
            "careless-literal": {
                "command": PYTHON,
                "args": ["-m", "canary_server", "--stdio"],
                "env": {**stdio_env, "CANARY_TOKEN": LITERAL},
            },
        }
    }
    (tmp_path / ".mcp.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        "[tool.mcpgen]\n"
        "[[tool.mcpgen.targets]]\n"
        'source = ".mcp.json#canary-http"\nkind = "client"\noutput = "gen"\npackage = "canary_client"\n',
        encoding="utf-8",
    )
    return tmp_path


def mcpgen(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(project),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT)]),
        "CANARY_SECRET": SECRET,
        "CANARY_SHA256": hashlib.sha256(SECRET.encode()).hexdigest(),
    }
    return subprocess.run(
        [PYTHON, "-m", "codegen.cli", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def assert_no_canary(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text and LITERAL not in text, text[-2000:]


def test_the_secret_reaches_the_server_and_nothing_mcpgen_writes_or_says(project: Path) -> None:
    said: list[str] = []
    for name in ("canary-stdio", "canary-http"):
        done = mcpgen(project, "client", "--config", ".mcp.json", "--server", name, "-o", "out")
        said += [done.stdout, done.stderr]
        assert done.returncode == 0, done.stderr  # the server refuses to list without the secret
        snap = mcpgen(project, "snapshot", "--config", ".mcp.json", "--server", name, "-o", f"{name}.json")
        said += [snap.stdout, snap.stderr]
        assert snap.returncode == 0, snap.stderr
        assert [t["name"] for t in json.loads((project / f"{name}.json").read_text())["tools"]] == ["whoami"]
    validate = mcpgen(project, "validate", ".mcp.json#canary-http")
    generate = mcpgen(project, "generate")
    check = mcpgen(project, "generate", "--check")
    listed = mcpgen(project, "servers", "--config", ".mcp.json")
    for done in (validate, generate, check, listed):
        assert done.returncode == 0, done.stdout + done.stderr
        said += [done.stdout, done.stderr]
    header = (project / "out" / "canary_stdio_client" / "client.py").read_text().splitlines()[0]
    assert header.startswith("# Generated by mcpgen ") and " from .mcp.json#canary-stdio (sha256 " in header
    generated_header = (project / "gen" / "canary_client" / "client.py").read_text().splitlines()[0]
    assert " from .mcp.json#canary-http (sha256 " in generated_header
    files = [p for p in project.rglob("*") if p.is_file() and p.name != ".mcp.json"]
    assert len(files) >= 25  # three packages and two snapshots
    assert_no_canary(*said, *(p.read_text(encoding="utf-8", errors="replace") for p in files))
    # The generated client reaches the same server with the same secret: it was the real one.
    url = json.loads((project / ".mcp.json").read_text())["mcpServers"]["canary-http"]["url"]
    script = (
        "from canary_http_client import Client\n"
        f"with Client({url!r}, headers={{'Authorization': 'Bearer {SECRET}', 'X-Canary': 'sent'}}) as c:\n"
        "    print(c.whoami().text)\n"
    )
    run = subprocess.run(
        [PYTHON, "-c", script],
        env={"PYTHONPATH": os.pathsep.join([str(project / "out"), str(ROOT / "runtime"), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0 and run.stdout.strip() == "seen sent", run.stderr


@pytest.mark.parametrize("name", ["careless-stdio", "careless-literal"])
def test_a_server_that_prints_the_secret_gets_it_starred_in_the_error(project: Path, name: str) -> None:
    done = mcpgen(project, "client", "--config", ".mcp.json", "--server", name, "-o", "out")
    assert done.returncode == 1
    assert f".mcp.json#{name}: server/discover failed: server process exited (code 3)" in done.stderr
    assert "refusing to start: CANARY_TOKEN is '***'" in done.stderr
    assert_no_canary(done.stdout, done.stderr)
    assert not (project / "out").exists()


def test_a_wrong_secret_is_refused_by_the_server_and_not_shown(project: Path) -> None:
    config = json.loads((project / ".mcp.json").read_text())
    config["mcpServers"]["canary-http"]["headers"] = {"Authorization": f"Bearer {LITERAL}"}
    (project / ".mcp.json").write_text(json.dumps(config), encoding="utf-8")
    done = mcpgen(project, "client", "--config", ".mcp.json", "--server", "canary-http", "-o", "out")
    assert done.returncode == 1 and ".mcp.json#canary-http: " in done.stderr and "401" in done.stderr
    assert_no_canary(done.stdout, done.stderr)


def test_an_unset_variable_names_file_server_and_pointer_not_a_value(project: Path) -> None:
    done = subprocess.run(
        [
            PYTHON,
            "-m",
            "codegen.cli",
            "client",
            "--config",
            ".mcp.json",
            "--server",
            "canary-http",
            "-o",
            "out",
        ],
        cwd=project,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "error: .mcp.json: server 'canary-http' at /mcpServers/canary-http/headers/Authorization: "
        "MCPGEN-CONFIG: environment variable 'CANARY_SECRET' is not set (used as ${env:CANARY_SECRET})"
    )


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip("POSIX paths and environments")
