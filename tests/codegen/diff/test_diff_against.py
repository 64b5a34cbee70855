"""`mcpgen diff --against REV`: a spec compared with itself as committed in a real git repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

TOOL = {"name": "get_weather", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MCPGEN_ALLOW_BREAKING"}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        PYTHONPATH=os.pathsep.join([str(ROOT / "runtime"), str(ROOT)]),
    )
    return env


def _run(
    cwd: Path, env: dict[str, str], *args: str, command: str = "diff"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen.cli", command, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _write(path: Path, tools: list[dict[str, object]]) -> None:
    path.write_text(json.dumps({"tools": tools}, indent=2) + "\n", "utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "repo"
    (path / "specs").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    env = _env(tmp_path / "home")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, env=env, check=True)
    return path, env


def _commit(path: Path, env: dict[str, str]) -> None:
    subprocess.run(["git", "add", "-A"], cwd=path, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=path, env=env, check=True)


def test_against_head_finds_a_breaking_change_and_accepts_it_on_request(
    repo: tuple[Path, dict[str, str]],
) -> None:
    path, env = repo
    spec = path / "specs" / "w.json"
    _write(spec, [TOOL])
    result = _run(path, env, "--against", "HEAD", "specs/w.json")  # no commit yet: all new
    assert result.returncode == 0, result.stderr
    assert "has no commit yet" in result.stderr and "nothing to compare" in result.stderr
    _commit(path, env)
    changed = json.loads(json.dumps(TOOL))
    changed["inputSchema"]["required"] = ["city"]
    _write(spec, [changed])
    result = _run(path, env, "--against", "HEAD", "specs/w.json")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "HEAD:specs/w.json" in result.stdout and "get_weather" in result.stdout
    assert "breaking" in result.stdout and "MCPGEN_ALLOW_BREAKING=1" in result.stderr
    result = _run(path, env, "--against", "HEAD", "specs/w.json", "--allow-breaking")
    assert result.returncode == 0 and "accepted" in result.stderr and "breaking" in result.stdout
    result = _run(path, {**env, "MCPGEN_ALLOW_BREAKING": "1"}, "--against", "HEAD", "specs/w.json")
    assert result.returncode == 0 and "accepted" in result.stderr
    # from another directory, the repository holding the file is the one asked
    result = _run(path.parent, env, "--against", "HEAD", str(spec), "--format", "json")
    assert result.returncode == 1 and json.loads(result.stdout)["old"] == "HEAD:specs/w.json"


def test_against_errors_are_clear(repo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    path, env = repo
    _write(path / "specs" / "w.json", [TOOL])
    _commit(path, env)
    _write(path / "specs" / "new.json", [TOOL])
    result = _run(path, env, "--against", "HEAD", "specs/new.json")
    assert result.returncode == 0, result.stderr
    assert "specs/new.json did not exist at HEAD" in result.stderr and "nothing to compare" in result.stderr
    result = _run(path, env, "--against", "v9.9", "specs/w.json")
    assert result.returncode == 2 and "--against v9.9: unknown revision" in result.stderr
    assert "Traceback" not in result.stderr
    result = _run(path, env, "--against", "--help", "specs/w.json")
    assert result.returncode == 2
    outside = tmp_path / "outside"
    outside.mkdir()
    _write(outside / "w.json", [TOOL])
    result = _run(outside, env, "--against", "HEAD", "w.json")
    assert result.returncode == 2 and "not in a git repository" in result.stderr
    result = _run(path, env, "--against", "HEAD", "specs/w.json", "specs/new.json")
    assert result.returncode == 2 and "give no NEW" in result.stderr
    result = _run(path, env, "--against", "HEAD")
    assert result.returncode == 2 and "needs a FILE" in result.stderr


SERVERS = """\
[[tool.mcpgen.targets]]
source = "specs/w.json"
kind = "client"
output = "src"
package = "w_client"

[[tool.mcpgen.targets]]
source = "specs/w.json"
kind = "server"
output = "src"
package = "w_server"

[[tool.mcpgen.targets]]
source = "specs/w.json"
kind = "server"
output = "other"
package = "w_server"
"""


def _generate(path: Path, env: dict[str, str], *args: str) -> None:
    result = _run(path, env, *args, command="generate")
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_added_tool_is_compatible_for_servers_once_every_server_target_handles_it(
    repo: tuple[Path, dict[str, str]],
) -> None:
    """Issue 33: an added tool breaks a server target only while its handlers.py has no method for it."""
    path, env = repo
    (path / "pyproject.toml").write_text(SERVERS, "utf-8")
    _write(path / "specs" / "w.json", [TOOL])
    _generate(path, env)
    _commit(path, env)
    added = {"name": "get_forecast", "inputSchema": {"type": "object", "properties": {}}}
    _write(path / "specs" / "w.json", [TOOL, added])
    _generate(path, env)  # base.py binds get_forecast; neither handlers.py has a method for it
    for args in (("--all-targets", "--against", "HEAD"), ("--target", "w_server", "--against", "HEAD")):
        result = _run(path, env, *args)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "tool `get_forecast` added: a server must implement it (no handler for it yet" in result.stdout
    # one server target stubbed: the other still cannot serve it
    handlers = path / "other" / "w_server" / "handlers.py"
    before = handlers.read_bytes()
    _generate(path, env, "--add-stubs")
    handlers.write_bytes(before)
    result = _run(path, env, "--all-targets", "--against", "HEAD")
    assert result.returncode == 1 and "no handler for it yet" in result.stdout, result.stdout
    _generate(path, env, "--add-stubs")
    result = _run(path, env, "--all-targets", "--against", "HEAD", "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    (change,) = json.loads(result.stdout)["changes"]
    assert change["kind"] == "tool-added" and change["server"] == "compatible"
    line = next(
        n for n, text in enumerate(handlers.read_text("utf-8").splitlines(), 1) if "def get_forecast(" in text
    )
    assert f"src/w_server/handlers.py:{line}, other/w_server/handlers.py:{line}" in change["reason"]
    # a file compared without targets knows no handlers: an added tool still breaks servers
    result = _run(path, env, "--against", "HEAD", "specs/w.json")
    assert result.returncode == 1 and "a server must implement it" in result.stdout
    assert "handler" not in result.stdout
