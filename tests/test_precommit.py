"""The hooks in .pre-commit-hooks.yaml, run by the real `pre-commit` against a temporary git repository.

The repository holds a spec, a pyproject.toml with [tool.mcpgen] targets and the generated bindings.
Its .pre-commit-config.yaml is a `repo: local` copy of this repository's hook definitions (same id,
entry, pass_filenames, always_run) with `language: system` and the entry pointed at this
checkout's `mcpgen`, so no network is needed (`language: python` would pip-install mcpgen).

    mcpgen           stale bindings fail the commit; `mcpgen generate` fixes it
    mcpgen-generate  stale bindings are regenerated; the commit fails once, then passes when staged
    mcpgen-diff      a spec change since HEAD that breaks clients or servers of its tools fails the
                     commit, regenerated or not; MCPGEN_ALLOW_BREAKING=1 accepts one
    mcpgen-diff-commit-msg  the same at the commit-msg stage: a `Mcpgen-Allow-Breaking:` trailer accepts one
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support import ROOT

BIN = Path(sys.executable).parent
MCPGEN = BIN / "mcpgen"
PRE_COMMIT = BIN / "pre-commit"

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or not PRE_COMMIT.exists() or not MCPGEN.exists(),
    reason="needs git, and pre-commit and mcpgen installed in the venv (make install)",
)

PYPROJECT = """\
[project]
name = "bindings-demo"
version = "0"

[[tool.mcpgen.targets]]
source = "specs/weather.json"
kind = "client"
output = "src"
package = "weather_client"

[[tool.mcpgen.targets]]
source = "specs/weather.json"
kind = "server"
output = "src"
package = "weather_server"
"""


def _hooks() -> dict[str, dict[str, object]]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    return {hook["id"]: hook for hook in hooks}


def local_config(hook_id: str, mcpgen: Path = MCPGEN) -> str:
    """A `repo: local` copy of one of .pre-commit-hooks.yaml's hooks, run with `mcpgen` (no network)."""
    hook = dict(_hooks()[hook_id])
    entry = str(hook["entry"])
    assert entry.split()[0] == "mcpgen"
    hook["entry"] = str(mcpgen) + entry[len("mcpgen") :]
    hook["language"] = "system"
    hook.pop("additional_dependencies", None)  # what pre-commit installs beside mcpgen: nothing, here
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}, sort_keys=False)


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        home = path.parent / f"{path.name}-home"
        home.mkdir()
        self.env = {
            **os.environ,
            "HOME": str(home),  # no user git or pre-commit configuration leaks in
            "PRE_COMMIT_HOME": str(home / "pre-commit"),
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_CONFIG_NOSYSTEM": "1",
            "PYTHONPATH": str(ROOT),
        }

    def run(self, *args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(a) for a in args],
            cwd=self.path,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"{args} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def commit(self, message: str) -> subprocess.CompletedProcess[str]:
        self.run("git", "add", "-A")
        return self.run("git", "commit", "-q", "-m", message, check=False)


def _make_repo(tmp_path: Path, hook_id: str, hook_type: str = "pre-commit") -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.path.mkdir()
    (repo.path / "specs").mkdir()
    shutil.copy(ROOT / "specs" / "weather.json", repo.path / "specs" / "weather.json")
    (repo.path / "pyproject.toml").write_text(PYPROJECT, "utf-8")
    (repo.path / ".pre-commit-config.yaml").write_text(local_config(hook_id), "utf-8")
    repo.run("git", "init", "-q", "-b", "main")
    repo.run(PRE_COMMIT, "install", "--hook-type", hook_type)
    repo.run(MCPGEN, "generate")
    result = repo.commit("bindings")
    assert result.returncode == 0, result.stdout + result.stderr
    return repo


def _edit_spec(repo: Repo) -> None:
    spec = repo.path / "specs" / "weather.json"
    data = json.loads(spec.read_text("utf-8"))
    data["tools"][0]["description"] = "Get the weather, now described differently."
    spec.write_text(json.dumps(data, indent=2) + "\n", "utf-8")


def test_hooks_file() -> None:
    hooks = _hooks()
    assert set(hooks) == {"mcpgen", "mcpgen-generate", "mcpgen-diff", "mcpgen-diff-commit-msg"}
    for hook_id, hook in hooks.items():
        assert hook["language"] == "python" and hook["always_run"] is True
        # the commit-msg stage passes the message file, which is the one argument it reads
        assert hook["pass_filenames"] is (hook_id == "mcpgen-diff-commit-msg")
    assert hooks["mcpgen-diff-commit-msg"]["stages"] == ["commit-msg"]
    assert hooks["mcpgen-diff-commit-msg"]["entry"] == "mcpgen diff --all-targets --against HEAD --commit-msg"
    assert hooks["mcpgen"]["entry"] == "mcpgen generate --check"
    assert hooks["mcpgen-generate"]["entry"] == "mcpgen generate"
    assert hooks["mcpgen-diff"]["entry"] == "mcpgen diff --all-targets --against HEAD"


def test_check_hook_fails_stale_bindings(tmp_path: Path) -> None:
    repo = _make_repo(tmp_path, "mcpgen")
    _edit_spec(repo)
    result = repo.commit("change the spec only")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "mcpgen bindings are fresh" in output and "Failed" in output
    assert "stale: src/weather_client" in output and "described differently" in output
    repo.run(MCPGEN, "generate")
    result = repo.commit("change the spec and regenerate")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout + result.stderr
    # a hand edit of generated code is caught too
    client = repo.path / "src" / "weather_client" / "client.py"
    client.write_text(
        client.read_text("utf-8").replace("def get_weather(", "def get_weather_edited("), "utf-8"
    )
    result = repo.commit("edit generated code")
    assert result.returncode != 0 and "differs  src/weather_client/client.py" in result.stdout + result.stderr


def test_generate_hook_regenerates(tmp_path: Path) -> None:
    repo = _make_repo(tmp_path, "mcpgen-generate")
    _edit_spec(repo)
    result = repo.commit("change the spec only")
    assert result.returncode != 0
    assert "files were modified by this hook" in result.stdout + result.stderr
    assert "described differently" in (repo.path / "src" / "weather_client" / "client.py").read_text("utf-8")
    result = repo.commit("with regenerated bindings")
    assert result.returncode == 0, result.stdout + result.stderr
    assert repo.run("git", "status", "--porcelain").stdout == ""


def test_diff_hook_fails_breaking_spec_changes_only(tmp_path: Path) -> None:
    repo = _make_repo(tmp_path, "mcpgen-diff")
    _edit_spec(repo)  # a description: cosmetic
    result = repo.commit("reword a tool")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cosmetic" in result.stdout + result.stderr or "Passed" in result.stdout + result.stderr
    spec = repo.path / "specs" / "weather.json"
    data = json.loads(spec.read_text("utf-8"))
    data["tools"] = [tool for tool in data["tools"] if tool["name"] != "list_users"]
    spec.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    result = repo.commit("drop a tool")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "mcpgen diff (breaking tool changes)" in output and "tool `list_users` removed" in output


def _require_units(repo: Repo) -> None:
    """The user's change of issue #21: a new required property on get_weather."""
    spec = repo.path / "specs" / "weather.json"
    data = json.loads(spec.read_text("utf-8"))
    tool = next(tool for tool in data["tools"] if tool["name"] == "get_weather")
    tool["inputSchema"]["properties"]["units"] = {"type": "string", "enum": ["metric", "imperial"]}
    tool["inputSchema"].setdefault("required", []).append("units")
    spec.write_text(json.dumps(data, indent=2) + "\n", "utf-8")


def test_diff_hook_refuses_a_breaking_change_after_regeneration(tmp_path: Path) -> None:
    """Issue #21 trap 2: edit the spec, `mcpgen generate && git add -A`, commit. tools.json now equals the
    spec, but the hook compares with the spec as committed at HEAD, so the commit is still refused."""
    repo = _make_repo(tmp_path, "mcpgen-diff")  # the first commit: no HEAD yet, nothing to compare
    _require_units(repo)
    repo.run(MCPGEN, "generate")
    result = repo.commit("require units")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "mcpgen diff (breaking tool changes)" in output and "Failed" in output
    assert "get_weather" in output and "required property `units` added" in output
    assert "HEAD:specs/weather.json" in output and "MCPGEN_ALLOW_BREAKING=1" in output
    assert repo.run("git", "rev-list", "--count", "HEAD").stdout.strip() == "1"
    # accepted on purpose, for this commit only
    repo.env["MCPGEN_ALLOW_BREAKING"] = "1"
    result = repo.commit("require units (breaking on purpose)")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "accepted" in output or "Passed" in output
    del repo.env["MCPGEN_ALLOW_BREAKING"]
    assert repo.run("git", "rev-list", "--count", "HEAD").stdout.strip() == "2"
    # a change that breaks nobody passes without it
    _edit_spec(repo)
    repo.run(MCPGEN, "generate")
    result = repo.commit("reword a tool")
    assert result.returncode == 0, result.stdout + result.stderr
    assert repo.run("git", "rev-list", "--count", "HEAD").stdout.strip() == "3"


def test_commit_msg_hook_accepts_a_breaking_change_with_a_trailer(tmp_path: Path) -> None:
    """The trailer works at the commit-msg stage, where git has written the message (a pre-commit
    stage hook runs before it exists)."""
    repo = _make_repo(tmp_path, "mcpgen-diff-commit-msg", hook_type="commit-msg")
    _require_units(repo)
    repo.run(MCPGEN, "generate")
    repo.run("git", "add", "-A")
    result = repo.run("git", "commit", "-q", "-m", "require units", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "required property `units` added" in output and "Mcpgen-Allow-Breaking: <why>" in output
    # a trailer-looking line in the subject is not a trailer
    result = repo.run("git", "commit", "-q", "-m", "Mcpgen-Allow-Breaking: no", check=False)
    assert result.returncode != 0, result.stdout + result.stderr
    result = repo.run(
        "git",
        "commit",
        "-q",
        "-m",
        "require units",
        "-m",
        "Mcpgen-Allow-Breaking: every caller sends units since v2",
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert repo.run("git", "rev-list", "--count", "HEAD").stdout.strip() == "2"
    _edit_spec(repo)  # cosmetic: passes without a trailer
    repo.run(MCPGEN, "generate")
    result = repo.commit("reword a tool")
    assert result.returncode == 0, result.stdout + result.stderr


def test_diff_hook_accepts_an_added_tool_once_its_handler_exists(tmp_path: Path) -> None:
    """Issue 33: adding a tool breaks the server target until handlers.py has a method for it; after
    `mcpgen generate --add-stubs` the commit goes through."""
    repo = _make_repo(tmp_path, "mcpgen-diff")
    spec = repo.path / "specs" / "weather.json"
    data = json.loads(spec.read_text("utf-8"))
    city = {"city": {"type": "string"}}
    data["tools"].append({"name": "get_forecast", "inputSchema": {"type": "object", "properties": city}})
    spec.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    repo.run(MCPGEN, "generate")
    result = repo.commit("add get_forecast")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "tool `get_forecast` added: a server must implement it" in output and "--add-stubs" in output
    repo.run(MCPGEN, "generate", "--add-stubs")
    result = repo.commit("add get_forecast with its handler")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert repo.run("git", "rev-list", "--count", "HEAD").stdout.strip() == "2"
