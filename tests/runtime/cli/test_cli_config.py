"""`cli = "NAME"` on a `[tool.mcpgen]` client target: the generated command line calls itself NAME,
and `mcpgen generate` names the `[project.scripts]` line that installs it until the project has it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT, subprocess_env

MCPGEN = Path(sys.executable).parent / "mcpgen"
TARGET = """
[[tool.mcpgen.targets]]
source = "weather.json"
kind = "{kind}"
output = "out"
package = "wx_client"
cli = "{cli}"
"""


def project(tmp_path: Path, *, kind: str = "client", cli: str = "wx", scripts: str = "") -> Path:
    shutil.copy(ROOT / "specs" / "weather.json", tmp_path / "weather.json")
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "demo"\nversion = "1"\n{scripts}\n' + TARGET.format(kind=kind, cli=cli), "utf-8"
    )
    return tmp_path


def generate(directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MCPGEN), "generate"], cwd=directory, capture_output=True, text=True, timeout=120
    )


def test_the_name_is_the_commands_and_the_script_line_is_named(tmp_path: Path) -> None:
    done = generate(project(tmp_path))
    assert done.returncode == 0, done.stderr
    assert (
        "note: to install the command 'wx', add to [project.scripts] of the distribution that ships "
        'wx_client: wx = "wx_client.__main__:main"'
    ) in done.stdout
    assert (
        'run_cli(Client, _TOOLS, prog="wx", models=_m)'
        in (tmp_path / "out" / "wx_client" / "__main__.py").read_text()
    )
    env = {**subprocess_env(), "PYTHONPATH": f"{tmp_path / 'out'}:{subprocess_env()['PYTHONPATH']}"}
    shown = subprocess.run(
        [sys.executable, "-c", "from wx_client.__main__ import main; main()", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0 and shown.stdout.startswith("Usage: wx [OPTIONS] COMMAND [ARGS]...")


def test_no_note_once_the_script_is_declared(tmp_path: Path) -> None:
    done = generate(project(tmp_path, scripts='[project.scripts]\nwx = "wx_client.__main__:main"\n'))
    assert done.returncode == 0, done.stderr
    assert "note:" not in done.stdout


@pytest.mark.parametrize(("kind", "cli"), [("server", "wx"), ("client", "bad name"), ("client", "-x")])
def test_bad_names_and_server_targets_are_refused(tmp_path: Path, kind: str, cli: str) -> None:
    done = generate(project(tmp_path, kind=kind, cli=cli))
    assert done.returncode != 0
    assert "a console-script name" in done.stderr
