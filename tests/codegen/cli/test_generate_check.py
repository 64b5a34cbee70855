"""`mcpgen generate` / `generate --check` on a [tool.mcpgen] project, through the real CLI.

- unchanged outputs keep their bytes and modification times; `--check` writes nothing, exits 0 when
  fresh and 1 with a short unified diff when stale;
- the freshness shortcut (manifest input key + file digests) is sound: it skips building only when
  nothing can differ, and still catches hand edits, deleted files, spec edits and generator changes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from codegen import cli, pipeline
from codegen.cli import stages
from codegen.write.manifest import MANIFEST_NAME
from tests.support import ROOT

PROJECT = """\
[project]
name = "demo"

[[tool.mcpgen.targets]]
source = "specs/shapes.json"
kind = "client"
output = "gen"
package = "demo_client"

[[tool.mcpgen.targets]]
source = "specs/shapes.json"
kind = "server"
output = "gen"
package = "demo_server"
"""


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # mcpgen prints paths relative to where it runs
    (tmp_path / "specs").mkdir()
    shutil.copy(ROOT / "specs" / "shapes.json", tmp_path / "specs" / "shapes.json")
    (tmp_path / "pyproject.toml").write_text(PROJECT, "utf-8")
    return tmp_path


def _run(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli.main, ["generate", *args, "--pyproject", str(project / "pyproject.toml")])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def _snapshot(project: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(project)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted((project / "gen").rglob("*"))
        if p.is_file()
    }


def _no_build(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("built although the target is fresh")

    monkeypatch.setattr(stages, "build_package", refuse)


def test_generate_then_check(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = _run(project)
    assert code == 0, out
    manifest = json.loads((project / "gen" / "demo_server" / MANIFEST_NAME).read_text())
    assert manifest["user_files"] == [
        "Dockerfile",
        "deploy/compose.yaml",
        "deploy/nginx.conf",
        "handlers.py",
    ] and set(manifest["sha256"]) == set(manifest["files"])
    before = _snapshot(project)
    _no_build(monkeypatch)  # fresh targets are answered from the manifest alone
    code, out = _run(project, "--check")
    assert code == 0 and "0 stale, 2 up to date" in out, out
    code, out = _run(project)
    assert code == 0 and out.count("up to date") == 2, out
    assert _snapshot(project) == before  # nothing written, mtimes kept


def test_hand_edit_is_caught(project: Path) -> None:
    assert _run(project)[0] == 0
    (models,) = [  # the `_models/` module of the tool (models.py only names the class)
        path
        for path in (project / "gen" / "demo_client" / "_models").glob("t*.py")
        if "class NoArgsInput(" in path.read_text()
    ]
    models.write_text(models.read_text().replace("class NoArgsInput(", "class Edited("), "utf-8")
    before = _snapshot(project)
    code, out = _run(project, "--check")
    assert code == 1, out
    assert "stale: gen/demo_client" in out and f"differs  gen/demo_client/_models/{models.name}" in out
    assert "-class Edited(BaseModel):" in out and "+class NoArgsInput(BaseModel):" in out  # a unified diff
    assert "1 stale, 1 up to date" in out and "run `mcpgen generate`" in out
    assert _snapshot(project) == before  # --check wrote nothing
    assert _run(project)[0] == 0
    assert _run(project, "--check")[0] == 0


def test_unchanged_files_keep_their_mtime_when_one_changes(project: Path) -> None:
    assert _run(project)[0] == 0
    client = project / "gen" / "demo_client" / "client.py"
    client.write_text(client.read_text() + "# edit\n", "utf-8")
    models = project / "gen" / "demo_client" / "models.py"
    models_mtime = models.stat().st_mtime_ns
    assert _run(project)[0] == 0
    assert not client.read_text().endswith("# edit\n")
    assert models.stat().st_mtime_ns == models_mtime


def test_deleted_and_added_files(project: Path) -> None:
    assert _run(project)[0] == 0
    (project / "gen" / "demo_server" / "handlers.py").unlink()
    code, out = _run(project, "--check")
    assert code == 1 and "handlers.py" in out
    assert _run(project)[0] == 0
    (project / "gen" / "demo_client" / "tools.json").unlink()
    code, out = _run(project, "--check")
    assert code == 1 and "missing  gen/demo_client/tools.json" in out


def test_spec_edit_is_caught(project: Path) -> None:
    assert _run(project)[0] == 0
    spec = project / "specs" / "shapes.json"
    data = json.loads(spec.read_text("utf-8"))
    data["tools"][0]["description"] = "A changed description."
    spec.write_text(json.dumps(data), "utf-8")
    code, out = _run(project, "--check")
    assert code == 1 and "A changed description." in out


def test_generator_change_without_output_change(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new generator that writes the same bytes: --check builds, compares and passes; generate
    refreshes the manifest's key only (no other file is touched)."""
    assert _run(project)[0] == 0
    before = _snapshot(project)
    monkeypatch.setattr(pipeline, "generator_fingerprint", lambda: "another generator")
    code, out = _run(project, "--check")
    assert code == 0 and "0 stale, 2 up to date" in out, out
    assert _snapshot(project) == before
    assert _run(project)[0] == 0
    after = _snapshot(project)
    changed = sorted(name for name in after if after[name] != before[name])
    assert changed == [f"gen/{p}/{MANIFEST_NAME}" for p in ("demo_client", "demo_server")]


def test_plain_client_command_keeps_the_cache(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`mcpgen client` into a `generate` target writes the same files and keeps the manifest's key."""
    assert _run(project)[0] == 0
    before = _snapshot(project)
    result = CliRunner().invoke(
        cli.main, ["client", "specs/shapes.json", "-o", "gen", "--package", "demo_client"]
    )
    assert result.exit_code == 0, result.output
    assert _snapshot(project) == before
    _no_build(monkeypatch)
    assert _run(project, "--check")[0] == 0


def test_spec_edit_report_is_compact(project: Path) -> None:
    """Issue #21 trap 7a: four spec edits change every file's header (the spec's sha256); the report
    says so once per target, diffs only what else changed, and leaves tools.json to the tool summary."""
    assert _run(project)[0] == 0
    spec = project / "specs" / "shapes.json"
    data = json.loads(spec.read_text("utf-8"))
    tools = {tool["name"]: tool for tool in data["tools"]}
    tools["no_args"]["description"] = "A changed description."
    tools["enums"]["description"] = "Enums, edited."
    tools["nested_objects"]["inputSchema"]["properties"]["added"] = {"type": "boolean"}
    tools["consts"]["title"] = "Constants"
    spec.write_text(json.dumps(data), "utf-8")
    code, out = _run(project, "--check")
    assert code == 1, out
    lines = out.splitlines()
    assert "Generated by mcpgen" not in out and "sha256 " not in out  # no header line diffed
    for package in ("demo_client", "demo_server"):
        assert f"  details: mcpgen diff --target {package}" in lines
        assert f"  differs  gen/{package}/tools.json (the tool changes above)" in lines
    headers = [line for line in lines if line.startswith("  header   ")]
    # models modules of consecutive tools (lazy bindings): five named, the rest counted
    assert (
        headers
        == [
            "  header   only the first-line header (the spec's sha256) differs in: __init__.py, __main__.py, "
            "_models/__init__.py, _models/t0008.py, _models/t0012.py and 2 more"
        ]
        * 2
    )
    # the client's _tasks.py (the task namespaces) differs too: the new parameter of nested_objects
    assert lines.count("  files: 4 differ, 7 differ only in the header") == 1
    assert lines.count("  files: 3 differ, 7 differ only in the header") == 1
    assert "    +    added: bool | None = None" in lines  # the diff of what changed is there (models.py)
    assert "A changed description." in out
    # was 250 lines with every header and tools.json diffed; 135 since the client's _tasks.py (the
    # changed method's `start` twins) is diffed too
    assert len(lines) < 150, out


def test_a_write_that_fails_is_reported_for_its_target_and_the_next_is_written(project: Path) -> None:
    """Each package is written by a forked copy while the next target builds (cli/generate.py
    `_Writing`): a refused write is still reported for its own target, in order, and the other
    target is written."""
    (project / "gen").mkdir()
    in_the_way = project / "gen" / "demo_client"
    in_the_way.write_text("a file where the package would go\n", "utf-8")
    code, output = _run(project)
    assert code == 1
    refused = output.index("error: target #1 (client 'demo_client' from specs/shapes.json): ")
    assert "exists and is not a directory" in output[refused:].splitlines()[0]
    assert refused < output.index("gen/demo_server: 15 created")
    assert in_the_way.read_text("utf-8") == "a file where the package would go\n"
    assert (project / "gen" / "demo_server" / "base.py").is_file()


def test_a_stale_target_that_also_fails_is_counted_once(project: Path) -> None:
    """`--check` once printed `1 stale, -1 up to date, 1 failed (of 1 targets)`: a stale server
    target whose handlers.py uses a name the spec no longer defines was counted stale and failed.
    Now it is counted as failed only, and the counts add up to the targets."""
    assert _run(project)[0] == 0
    handlers = project / "gen" / "demo_server" / "handlers.py"
    handlers.write_text(handlers.read_text("utf-8") + "from .models import NotAModel\n", "utf-8")
    spec = project / "specs" / "shapes.json"
    data = json.loads(spec.read_text("utf-8"))
    data["tools"][0]["description"] = "A changed description."
    spec.write_text(json.dumps(data), "utf-8")
    code, out = _run(project, "--check")
    assert code == 1, out
    assert "stale: gen/demo_server" in out and "stale: gen/demo_client" in out
    assert "1 stale, 0 up to date, 1 failed (of 2 targets)" in out, out
    assert "-1" not in out


def test_the_pyproject_option_is_pyproject_and_the_old_spelling_is_refused(project: Path) -> None:
    config = str(project / "pyproject.toml")
    for args in (["generate", "--config", config], ["diff", "--all-targets", "--config", config]):
        result = CliRunner().invoke(cli.main, args)
        assert result.exit_code == 2, result.output
        assert f"--pyproject {config}" in result.output, result.output
    assert _run(project)[0] == 0  # `_run` passes --pyproject
    result = CliRunner().invoke(cli.main, ["diff", "--all-targets", "--pyproject", config])
    assert result.exit_code == 0, result.output
    assert "--config" not in CliRunner().invoke(cli.main, ["generate", "--help"]).output
