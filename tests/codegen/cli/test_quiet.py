"""-q/--quiet on every `mcpgen` command: warnings, notes and progress lines are left out; errors, a
command's output, its last line (the counts) and its exit code are not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from codegen.cli import main
from tests.support import ROOT

SHAPES = ROOT / "specs" / "shapes.json"  # parameters Python names differently: rename warnings


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        found.append((prefix + name, command))
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix}{name} ")
    return found


def test_every_command_takes_quiet() -> None:
    assert isinstance(main, click.Group)
    commands = _commands(main)
    assert len(commands) >= 12
    for name, command in [("mcpgen", main), *commands]:
        opts = [param.opts for param in command.params if isinstance(param, click.Option)]
        assert ["-q", "--quiet"] in opts, name


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(SHAPES, tmp_path / "shapes.json")
    return tmp_path


def test_client_quiet_prints_the_count_line_only(project: Path) -> None:
    code, out, err = _run("client", "shapes.json", "-o", "loud")
    assert code == 0 and "MCPGEN-RENAMED" in err and "created" in out
    code, out, err = _run("client", "shapes.json", "-o", "out", "-q")
    assert code == 0, err
    assert err == ""
    assert out.splitlines() == [out.splitlines()[-1]] and "tool(s) generated, 0 excluded" in out
    assert (project / "out" / "shapes_client" / "client.py").is_file()
    # the group's -q works as well
    code, out, err = _run("-q", "server", "shapes.json", "-o", "out")
    assert code == 0 and err == "" and len(out.splitlines()) == 1, out + err


def test_quiet_keeps_errors_and_the_exit_code(project: Path) -> None:
    bad = {"tools": [{"name": "broken", "inputSchema": {"type": "string"}}]}
    (project / "bad.json").write_text(json.dumps(bad), "utf-8")
    code, out, err = _run("client", "bad.json", "-o", "out", "--quiet")
    assert code == 1
    assert "error" in err and "not usable" in err
    code, out, _err = _run("validate", "bad.json", "-q")
    assert code == 1 and "error" in out and "not usable" in out
    code, out, _err = _run("validate", "shapes.json", "-q")
    assert code == 0 and "MCPGEN-RENAMED" not in out and out.splitlines()[-1].endswith("warning(s)")


def test_generate_quiet(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[[tool.mcpgen.targets]]\nsource = "shapes.json"\nkind = "client"\noutput = "gen"\n'
        'package = "shapes_client"\n',
        "utf-8",
    )
    code, out, err = _run("generate", "-q")
    assert code == 0 and err == "", err
    assert out.splitlines() == [
        "29 tool(s) generated, 0 excluded (in the 1 of 1 target(s) that did not fail)"
    ]
    code, out, err = _run("generate", "--check", "-q")
    assert code == 0 and err == "" and "fresh:" not in out
    assert out.splitlines()[0] == "0 stale, 1 up to date, 0 failed (of 1 targets)"
    (project / "gen" / "shapes_client" / "client.py").write_text("# edited\n", "utf-8")
    code, out, err = _run("generate", "--check", "-q")
    assert code == 1 and "stale: gen/shapes_client" in out  # what fails the check is still said
