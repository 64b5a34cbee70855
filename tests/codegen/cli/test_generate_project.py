"""Generated code as it lands in a user's project: their formatter leaves it alone, every checkout
writes the same bytes.

Each test builds a fresh project in a temporary directory (its own `.git` marker, so neither black
nor mcpgen looks above it; no user-level black configuration) and runs the real `mcpgen` and
`black` commands there:

- with no pyproject.toml, or one without [tool.black], the code is laid out for black's defaults
  (88): plain `black --check .` passes on clients, servers and the handlers.py scaffold;
- `[tool.black] line-length` (and target-version) is followed, `[tool.mcpgen]` and `--line-length`
  override it, and after the user's `black .` `mcpgen generate --check` is still green;
- a style the layout engine does not model (`skip-magic-trailing-comma`) goes through black;
- the header names a file source relative to the project root, so two checkouts at different
  paths generate byte-identical packages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from codegen.cli.config import ConfigError, project_style
from codegen.render.python.black_format import Style
from tests.support import ROOT

BIN = Path(sys.executable).parent
MCPGEN = BIN / "mcpgen"
SPECS = ("weather.json", "shapes.json", "conformance.json")


def _env(home: Path) -> dict[str, str]:
    # no user-level black configuration (~/.config/black) can leak in
    return {**os.environ, "XDG_CONFIG_HOME": str(home / ".config"), "HOME": str(home)}


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=_env(cwd), capture_output=True, text=True, timeout=300, check=False
    )


def _project(root: Path, pyproject: str | None) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "specs").mkdir()
    for name in SPECS:
        shutil.copy(ROOT / "specs" / name, root / "specs" / name)
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject, "utf-8")
    return root


def _black(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "black", *args, "."], project)


def _generate_each(project: Path, *extra: str) -> None:
    for name in SPECS:
        for kind in ("client", "server"):
            done = _run([str(MCPGEN), kind, f"specs/{name}", "-o", "src", *extra], project)
            assert done.returncode == 0, done.stderr


def _code_lines(path: Path) -> list[str]:
    """The lines of a module that hold no string literal or comment (black can split those)."""
    text = path.read_text("utf-8")
    with path.open("rb") as fh:
        tokens = list(tokenize.tokenize(fh.readline))
    spoken = {
        row
        for tok in tokens
        if tok.type in (tokenize.STRING, tokenize.COMMENT)
        for row in range(tok.start[0], tok.end[0] + 1)
    }
    return [line for number, line in enumerate(text.splitlines(), start=1) if number not in spoken]


def _longest_line(project: Path, package: str = "") -> int:
    return max(len(line) for path in (project / "src" / package).rglob("*.py") for line in _code_lines(path))


def test_black_defaults_leave_a_fresh_project_unchanged(tmp_path: Path) -> None:
    project = _project(tmp_path / "fresh", None)
    _generate_each(project)
    assert (project / "src" / "shapes_server" / "handlers.py").is_file()
    checked = _black(project, "--check")
    assert checked.returncode == 0, checked.stderr
    assert "would be left unchanged" in checked.stderr
    assert 80 < _longest_line(project) <= 88


CUSTOM = """\
[project]
name = "demo"
requires-python = ">=3.11"

[tool.black]
line-length = {length}
{extra}

[[tool.mcpgen.targets]]
source = "specs/shapes.json"
kind = "client"
output = "src"
package = "shapes_client"

[[tool.mcpgen.targets]]
source = "specs/shapes.json"
kind = "server"
output = "src"
package = "shapes_server"

[[tool.mcpgen.targets]]
source = "specs/conformance.json"
kind = "client"
output = "src"
package = "conformance_client"
"""


@pytest.mark.parametrize(
    ("length", "extra"),
    [
        (100, ""),
        (79, 'target-version = ["py311", "py312"]'),
        (120, "skip-magic-trailing-comma = true"),
        (88, "preview = true"),
    ],
)
def test_black_table_is_followed_and_check_stays_green_after_black(
    tmp_path: Path, length: int, extra: str
) -> None:
    project = _project(tmp_path / "custom", CUSTOM.format(length=length, extra=extra))
    generated = _run([str(MCPGEN), "generate"], project)
    assert generated.returncode == 0, generated.stderr
    assert length - 12 < _longest_line(project) <= length
    checked = _black(project, "--check")
    assert checked.returncode == 0, checked.stderr
    formatted = _black(project)
    assert formatted.returncode == 0 and "1 file reformatted" not in formatted.stderr, formatted.stderr
    fresh = _run([str(MCPGEN), "generate", "--check"], project)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "0 stale, 3 up to date" in fresh.stdout


def test_line_length_overrides(tmp_path: Path) -> None:
    """[tool.mcpgen] line-length (every target, then one target) and --line-length beat [tool.black]."""
    pyproject = (
        CUSTOM.format(length=100, extra="")
        .replace("[[tool.mcpgen.targets]]", "[tool.mcpgen]\nline-length = 95\n\n[[tool.mcpgen.targets]]", 1)
        .replace('package = "conformance_client"', 'package = "conformance_client"\nline-length = 90')
    )
    project = _project(tmp_path / "override", pyproject)
    assert _run([str(MCPGEN), "generate"], project).returncode == 0
    widths = {pkg: _longest_line(project, pkg) for pkg in ("shapes_client", "conformance_client")}
    assert 88 < widths["shapes_client"] <= 95 and widths["conformance_client"] <= 90
    fresh = _run([str(MCPGEN), "generate", "--check"], project)
    assert fresh.returncode == 0, fresh.stdout
    # the style is part of each target's input key: a new line length makes the targets stale
    (project / "pyproject.toml").write_text(
        pyproject.replace("line-length = 95", "line-length = 99"), "utf-8"
    )
    stale = _run([str(MCPGEN), "generate", "--check"], project)
    assert stale.returncode == 1 and "2 stale, 1 up to date" in stale.stdout, stale.stdout
    flag = _run(
        [str(MCPGEN), "client", "specs/shapes.json", "-o", "src/cli", "--line-length", "120"], project
    )
    assert flag.returncode == 0, flag.stderr
    assert 100 < _longest_line(project, "cli") <= 120
    refused = _run(
        [str(MCPGEN), "client", "specs/shapes.json", "-o", "src/cli", "--line-length", "5"], project
    )
    assert refused.returncode == 2 and "line-length must be a whole number" in refused.stderr


def test_project_style_reads_the_table_black_reads(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    inner = outer / "pkg" / "sub"
    inner.mkdir(parents=True)
    (outer / "pyproject.toml").write_text(
        '[tool.black]\nline-length = 101\ntarget-version = ["PY312", "py311"]\n'
    )
    (outer / "pkg" / "pyproject.toml").write_text(
        '[project]\nname = "x"\n'
    )  # no [tool.black]: black looks further up
    assert project_style(inner / "not-yet") == Style(line_length=101, target_versions=("py311", "py312"))
    (outer / "pkg" / ".git").mkdir()  # a repository root: black stops here, with its defaults
    assert project_style(inner) == Style()
    assert project_style(inner, line_length=70) == Style(line_length=70)
    (outer / "pkg" / "pyproject.toml").write_text('[tool.black]\nline-length = "long"\n')
    with pytest.raises(ConfigError, match="line-length must be a whole number"):
        project_style(inner)
    (outer / "pkg" / "pyproject.toml").write_text('[tool.black]\ntarget-version = ["py2"]\n')
    with pytest.raises(ConfigError, match="target-version must be a list"):
        project_style(inner)


def test_two_checkouts_generate_identical_bytes(tmp_path: Path) -> None:
    """The same project at two paths (and mcpgen run from different directories) writes the same bytes."""
    pyproject = CUSTOM.format(length=88, extra="")
    first = _project(tmp_path / "a" / "checkout", pyproject)
    second = _project(tmp_path / "elsewhere" / "deeper" / "clone", pyproject)
    assert _run([str(MCPGEN), "generate"], first).returncode == 0
    assert (
        _run(
            [str(MCPGEN), "generate", "--pyproject", str(second / "pyproject.toml")], second / "specs"
        ).returncode
        == 0
    )
    for project in (first, second):  # one-off commands: an absolute source path, relative output
        done = _run([str(MCPGEN), "server", str(project / "specs" / "weather.json"), "-o", "src"], project)
        assert done.returncode == 0, done.stderr

    def tree(root: Path) -> dict[str, bytes]:
        return {
            path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted((root / "src").rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
        }

    assert tree(first) == tree(second)
    header = (first / "src" / "weather_server" / "base.py").read_text().splitlines()[0]
    assert " from specs/weather.json (sha256 " in header, header
    assert str(tmp_path) not in "".join(text.decode() for text in tree(first).values())
