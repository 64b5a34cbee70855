"""Issue #21 trap 5: one bad tool of a third-party server no longer blocks the others.

A spec holds one valid and one invalid tool. Strict (the default) fails naming the error and writes
nothing; `--skip-invalid` (`client`, `server`, `generate`) or a target's `skip_invalid = true` writes the
valid tool only and warns with the tool, the pointer and the rule; `generate --check` stays green.
Everything runs the real `mcpgen` in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support import run_mcpgen

SPEC = {
    "tools": [
        {
            "name": "good_tool",
            "description": "Works.",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
        {
            "name": "bad_tool",
            "description": "Broken upstream.",
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}},
        },
    ]
}
WARNING = (
    "spec.json: warning: tool 'bad_tool' at /tools/1/inputSchema/properties/n/minimum: SCHEMA-07: "
    "not a valid 2020-12 schema: 'zero' is not of type 'number'; the tool is skipped (--skip-invalid)"
)
PYPROJECT = """\
[[tool.mcpgen.targets]]
source = "spec.json"
kind = "client"
output = "src"
package = "third_client"
{extra}
[[tool.mcpgen.targets]]
source = "spec.json"
kind = "server"
output = "src"
package = "third_server"
{extra}"""


def _mcpgen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_mcpgen(cwd, *args)


def _project(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "spec.json").write_text(json.dumps(SPEC, indent=2), "utf-8")
    (tmp_path / "pyproject.toml").write_text(PYPROJECT.format(extra=extra), "utf-8")
    return tmp_path


def _tool_names(package: Path) -> list[str]:
    return [tool["name"] for tool in json.loads((package / "tools.json").read_text("utf-8"))["tools"]]


def test_strict_by_default_and_skip_invalid_on_request(tmp_path: Path) -> None:
    project = _project(tmp_path)
    for kind in ("client", "server"):
        strict = _mcpgen(project, kind, "spec.json", "-o", "out", "--package", f"third_{kind}")
        assert strict.returncode == 1, strict.stderr
        assert "tool 'bad_tool' at /tools/1/inputSchema/properties/n/minimum: SCHEMA-07" in strict.stderr
        assert "not usable: 1 error(s) in 1 tool(s)" in strict.stderr and "--skip-invalid" in strict.stderr
        assert not (project / "out").exists()
    for kind in ("client", "server"):
        result = _mcpgen(
            project, kind, "spec.json", "-o", "out", "--package", f"third_{kind}", "--skip-invalid"
        )
        assert result.returncode == 0, result.stderr
        assert WARNING in result.stderr.splitlines()
        assert _tool_names(project / "out" / f"third_{kind}") == ["good_tool"]
    assert "def good_tool(" in (project / "out" / "third_client" / "client.py").read_text("utf-8")
    assert "bad_tool" not in (project / "out" / "third_client" / "client.py").read_text("utf-8")
    assert "def good_tool(" in (project / "out" / "third_server" / "base.py").read_text("utf-8")


def test_generate_with_the_target_option_and_the_flag(tmp_path: Path) -> None:
    project = _project(tmp_path)
    strict = _mcpgen(project, "generate")
    assert strict.returncode == 1 and "SCHEMA-07" in strict.stderr and not (project / "src").exists()
    flagged = _mcpgen(project, "generate", "--skip-invalid")
    assert flagged.returncode == 0, flagged.stderr
    assert WARNING in flagged.stderr.splitlines()
    assert _tool_names(project / "src" / "third_client") == ["good_tool"]
    assert _tool_names(project / "src" / "third_server") == ["good_tool"]
    for _ in range(2):  # stable: the same answer every time, nothing written
        check = _mcpgen(project, "generate", "--check", "--skip-invalid")
        assert check.returncode == 0, check.stdout + check.stderr
        assert "0 stale, 2 up to date, 0 failed" in check.stdout
    # without the option the target is strict again: --check fails instead of calling it fresh
    check = _mcpgen(project, "generate", "--check")
    assert check.returncode == 1 and "SCHEMA-07" in check.stderr


def test_target_option_skip_invalid(tmp_path: Path) -> None:
    project = _project(tmp_path, extra="skip_invalid = true\n")
    result = _mcpgen(project, "generate")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines().count(WARNING) == 1  # once per source, not once per target
    assert _tool_names(project / "src" / "third_server") == ["good_tool"]
    check = _mcpgen(project, "generate", "--check")
    assert check.returncode == 0 and "0 stale, 2 up to date, 0 failed" in check.stdout
    (project / "pyproject.toml").write_text(PYPROJECT.format(extra="skip_invalid = 1\n"), "utf-8")
    bad = _mcpgen(project, "generate")
    assert bad.returncode == 1 and "'skip_invalid' must be a bool" in bad.stderr
