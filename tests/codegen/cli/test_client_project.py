"""`mcpgen client --project DIR` and a `[tool.mcpgen]` target's `project`, in process: what is
written where, where the name and version come from and how bad ones are refused, and whose lines
are whose when regenerating (tests/test_project_wheel.py builds, installs and runs the result).
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from codegen.cli import main
from codegen.render.project import markdown_text, runtime_requirement
from codegen.spec import server_info_of
from mcpgen_runtime._version import __version__ as runtime_version
from tests.support import ROOT

WEATHER = ROOT / "specs" / "weather.json"


def _mcpgen(*args: str | Path, cwd: Path | None = None) -> Result:
    """`mcpgen ARGS` in process, in `cwd` when given."""
    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [str(arg) for arg in args], catch_exceptions=False)
    finally:
        os.chdir(before)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def _spec_with_info(tmp_path: Path, info: object) -> Path:
    doc = json.loads(WEATHER.read_text("utf-8"))
    doc["_meta"] = {"io.modelcontextprotocol/serverInfo": info}
    spec = tmp_path / "saved.json"
    spec.write_text(json.dumps(doc), "utf-8")
    return spec


def test_project_layout_metadata_and_script(tmp_path: Path) -> None:
    project = tmp_path / "weather"
    result = _mcpgen("client", WEATHER, "--project", project)
    assert result.exit_code == 0, result.output
    files = _tree(project)
    assert {
        "pyproject.toml",
        "README.md",
        "src/weather_client/py.typed",
        "src/weather_client/client.py",
    } <= set(files)
    doc = tomllib.loads(files["pyproject.toml"].decode())
    assert doc["project"]["name"] == "weather-client"  # no serverInfo in the file: the package, kebab case
    assert doc["project"]["version"] == "0.1.0"
    assert doc["project"]["requires-python"] == ">=3.11"
    assert doc["project"]["dependencies"] == [runtime_requirement(runtime_version)]
    assert doc["project"]["scripts"] == {"weather-client": "weather_client.__main__:main"}
    assert doc["build-system"]["build-backend"] == "hatchling.build"
    assert doc["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/weather_client"]
    main_py = files["src/weather_client/__main__.py"].decode()
    assert "def main() -> None:" in main_py and "prog='weather-client'" in main_py.replace('"', "'")
    readme = files["README.md"].decode()
    for tool in json.loads(WEATHER.read_text("utf-8"))["tools"]:
        assert f"### {markdown_text(tool['name'])}\n" in readme
    assert "def get_weather_data(self, location: str) -> models.GetWeatherDataOutput: ..." in readme
    assert 'result = client.execute_sql(region="...", query="...")' in readme
    # -o is not needed, and both together are refused
    both = _mcpgen("client", WEATHER, "--project", project, "-o", tmp_path / "out")
    assert both.exit_code == 2 and "either -o/--output DIR or --project DIR" in both.output


def test_name_and_version_from_the_saved_server_info_or_the_flags(tmp_path: Path) -> None:
    spec = _spec_with_info(tmp_path, {"name": "Acme.Weather", "version": "2.3.0rc1"})
    result = _mcpgen("client", spec, "--project", tmp_path / "p1", "--package", "acme")
    assert result.exit_code == 0, result.output
    doc = tomllib.loads((tmp_path / "p1" / "pyproject.toml").read_text("utf-8"))
    assert (doc["project"]["name"], doc["project"]["version"]) == ("acme-weather-client", "2.3.0rc1")
    assert doc["project"]["scripts"] == {"acme": "acme.__main__:main"}
    result = _mcpgen(
        "client", spec, "--project", tmp_path / "p2", "--project-name", "acme-tools", "--project-version", "4"
    )
    assert result.exit_code == 0, result.output
    doc = tomllib.loads((tmp_path / "p2" / "pyproject.toml").read_text("utf-8"))
    assert (doc["project"]["name"], doc["project"]["version"]) == ("acme-tools", "4")


@pytest.mark.parametrize(
    ("info", "flags", "named"),
    [
        ({"name": "x\"\n[tool.evil]\nk = '"}, (), "--project-name"),
        ({"name": "ok", "version": "1.0\n[evil]"}, (), "--project-version"),
        ({"name": "ok", "version": "1.0+local"}, (), "--project-version"),
        ({}, ("--project-name", "-bad-"), "--project-name"),
        ({}, ("--project-version", "latest"), "--project-version"),
    ],
)
def test_a_name_or_version_that_cannot_be_published_is_refused_naming_the_flag(
    tmp_path: Path, info: dict[str, str], flags: tuple[str, ...], named: str
) -> None:
    spec = _spec_with_info(tmp_path, info)
    result = _mcpgen("client", spec, "--project", tmp_path / "p", *flags)
    assert result.exit_code == 1, result.output
    assert named in result.output, result.output
    assert not (tmp_path / "p").exists()  # nothing written


def test_hostile_server_info_is_ignored_when_the_flags_say_otherwise(tmp_path: Path) -> None:
    spec = _spec_with_info(tmp_path, {"name": "<script>", "version": "]]"})
    result = _mcpgen(
        "client", spec, "--project", tmp_path / "p", "--project-name", "safe", "--project-version", "1.0"
    )
    assert result.exit_code == 0, result.output
    text = (tmp_path / "p" / "pyproject.toml").read_text("utf-8")
    assert "<script>" not in text and "]]" not in text


_CONFIG = """\
[[tool.mcpgen.targets]]
source = "specs/weather.json"
kind = "client"
project = "clients/weather"
package = "weather_client"
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "weather.json").write_bytes(WEATHER.read_bytes())
    (tmp_path / "pyproject.toml").write_text(_CONFIG, "utf-8")
    result = _mcpgen("generate", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    return tmp_path


def _insert_after(path: Path, marker: str, lines: str) -> None:
    text = path.read_text("utf-8")
    assert text.count(marker) == 1
    path.write_text(text.replace(marker, marker + lines), "utf-8")


def test_user_sections_survive_regeneration_byte_for_byte(repo: Path) -> None:
    project = repo / "clients" / "weather"
    pyproject, readme = project / "pyproject.toml", project / "README.md"
    _insert_after(pyproject, "# >>> mcpgen: yours (dependencies)\n", '  "rich>=13",\n')
    _insert_after(
        pyproject,
        "# >>> mcpgen: yours (project)\n",
        'authors = [{ name = "Team" }]\nlicense = "MIT"\n\n[project.urls]\nHome = "https://example.com"\n',
    )
    _insert_after(readme, "<!-- >>> mcpgen: yours (about) -->\n", "Our prose, *with* `markup`.\n\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_mine.py").write_text("x = 1\n", "utf-8")
    before = _tree(project)
    check = _mcpgen("generate", "--check", cwd=repo)
    assert check.exit_code == 0 and "0 stale, 1 up to date" in check.output, check.output
    # a change of the tools regenerates the README's tool list; the user's lines stay
    spec = json.loads((repo / "specs" / "weather.json").read_text("utf-8"))
    spec["tools"][0]["description"] = "Now with a <b>new</b> description"
    (repo / "specs" / "weather.json").write_text(json.dumps(spec), "utf-8")
    assert _mcpgen("generate", "--check", cwd=repo).exit_code == 1
    result = _mcpgen("generate", cwd=repo)
    assert result.exit_code == 0, result.output
    after = _tree(project)
    assert after["tests/test_mine.py"] == before["tests/test_mine.py"]
    # the header names the new input; every other line, the user's included, is as it was
    assert after["pyproject.toml"].split(b"\n", 1)[1] == before["pyproject.toml"].split(b"\n", 1)[1]
    assert after["pyproject.toml"] != before["pyproject.toml"]
    assert b"Our prose, *with* `markup`." in after["README.md"]
    assert b"Now with a &lt;b&gt;new&lt;\\/b&gt; description" in after["README.md"]
    doc = tomllib.loads(after["pyproject.toml"].decode())
    assert doc["project"]["dependencies"] == [runtime_requirement(runtime_version), "rich>=13"]
    assert doc["project"]["urls"] == {"Home": "https://example.com"}


def test_an_edit_of_a_generated_line_is_stale_and_undone(repo: Path) -> None:
    pyproject = repo / "clients" / "weather" / "pyproject.toml"
    fresh = pyproject.read_bytes()
    pyproject.write_text(pyproject.read_text("utf-8").replace(">=3.11", ">=3.9"), "utf-8")
    check = _mcpgen("generate", "--check", cwd=repo)
    assert check.exit_code == 1, check.output
    assert (
        "differs  clients/weather/pyproject.toml" in check.output
        and '+requires-python = ">=3.11"' in check.output
    )
    readme = repo / "clients" / "weather" / "README.md"
    readme.write_text(readme.read_text("utf-8").replace("## Tools", "## Tools (edited)"), "utf-8")
    assert "README.md" in _mcpgen("generate", "--check", cwd=repo).output
    assert _mcpgen("generate", cwd=repo).exit_code == 0
    assert pyproject.read_bytes() == fresh
    assert _mcpgen("generate", "--check", cwd=repo).exit_code == 0


def test_a_removed_marker_or_invalid_toml_in_a_user_section_writes_nothing(repo: Path) -> None:
    project = repo / "clients" / "weather"
    pyproject = project / "pyproject.toml"
    _insert_after(pyproject, "# >>> mcpgen: yours (project)\n", "[project.scripts]\nmine = 'x:y'\n")
    before = _tree(project)
    result = _mcpgen("generate", cwd=repo)
    # (read first for its [tool.black], the project's formatter settings: either reading says why)
    assert result.exit_code == 1 and "Cannot declare ('project', 'scripts') twice" in result.output, (
        result.output
    )
    assert _tree(project) == before
    pyproject.write_text(
        pyproject.read_text("utf-8")
        .replace("# <<< mcpgen: yours (project)\n", "")
        .replace("[project.scripts]\nmine = 'x:y'\n", ""),
        "utf-8",
    )
    before = _tree(project)
    result = _mcpgen("generate", cwd=repo)
    assert result.exit_code == 1 and "markers of your section 'project'" in result.output, result.output
    assert _tree(project) == before
    assert "conflict" in _mcpgen("generate", "--check", cwd=repo).output


def test_a_pyproject_without_the_generated_header_is_never_overwritten(tmp_path: Path) -> None:
    project = tmp_path / "mine"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "mine"\n', "utf-8")
    result = _mcpgen("client", WEATHER, "--project", project)
    assert result.exit_code == 1 and "lacks mcpgen's generated header" in result.output, result.output
    assert _tree(project) == {"pyproject.toml": b'[project]\nname = "mine"\n'}


def test_every_generated_package_ships_py_typed() -> None:
    for package in sorted((ROOT / "generated").iterdir()):
        if package.is_dir():
            assert (package / "py.typed").read_bytes() == b"", package


def test_server_info_is_read_in_both_eras_shapes() -> None:
    info = {"name": "acme", "version": "1.2", "title": "Acme", "extra": {"nested": 1}}
    modern = {"tools": [], "_meta": {"io.modelcontextprotocol/serverInfo": info}}
    legacy = {"supportedVersions": ["2025-11-25"], "serverInfo": info}  # a legacy server's discover view
    expected = {"name": "acme", "version": "1.2", "title": "Acme"}  # strings only
    assert server_info_of(modern) == server_info_of(legacy) == expected
    assert server_info_of({"tools": []}) is None and server_info_of({"serverInfo": "x"}) is None


@pytest.mark.parametrize(
    ("version", "requirement"),
    [("0.1.0", ">=0.1,<1"), ("1.4.2.post1.dev7+g1a2b3c4", ">=1.4,<2"), ("0.0.post1.dev3", ">=0.0,<1")],
)
def test_the_runtime_requirement_spans_the_release_line(version: str, requirement: str) -> None:
    assert runtime_requirement(version) == f"mcpgen-runtime[cli]{requirement}"
