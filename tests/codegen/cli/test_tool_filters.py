"""Issue 35, item 1: tool filters (`--include-tools GLOB`, `--exclude-tools GLOB`; a target's
`include_tools` / `exclude_tools`) on `client`, `server`, `snapshot`, `diff`, `mock` and `generate`.

A filtered-out tool is absent from the bindings, the command line and tools.json; it is not an
exclusion (`--strict` ignores it; the count line counts it apart); a glob matching nothing is a
warning naming it; filters leaving no tool are an error; the manifest records the filters and
`generate --check` goes stale when they change. Everything runs the real `mcpgen`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.spec import ToolFilter
from codegen.write.manifest import recorded_filters
from tests.support import run_mcpgen, subprocess_env


def _tool(name: str, **properties: object) -> dict[str, object]:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "inputSchema": {"type": "object", "properties": properties or {"q": {"type": "string"}}},
    }


BROKEN = {"n": {"type": "integer", "minimum": "zero"}}  # SCHEMA-07: an error, or an exclusion
SPEC = {
    "tools": [
        _tool("get_weather"),
        _tool("get_forecast"),
        _tool("Get_Secret"),
        _tool("delete_city", **BROKEN),
        _tool("list_cities"),
    ]
}


def _names(package: Path) -> list[str]:
    return [tool["name"] for tool in json.loads((package / "tools.json").read_text("utf-8"))["tools"]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "spec.json").write_text(json.dumps(SPEC, indent=2), "utf-8")
    return tmp_path


def test_glob_semantics_are_fnmatch_on_the_wire_name_case_sensitive_include_then_exclude() -> None:
    kept = ToolFilter.of(["get_*", "list_?ities"], ["*forecast"])
    assert [n for n in ("get_weather", "get_forecast", "Get_Secret", "list_cities") if kept.keeps(n)] == [
        "get_weather",
        "list_cities",
    ]
    assert ToolFilter.of(exclude=["[Gg]et_*"]).keeps("list_cities") and not ToolFilter.of(
        exclude=["[Gg]et_*"]
    ).keeps("Get_Secret")
    assert ToolFilter.of(["b", "a", "a"]) == ToolFilter(("a", "b"))  # order and repeats never matter
    assert ToolFilter.of(["x"]).keeps(None) is False and ToolFilter.of(exclude=["x"]).keeps(None) is True


def test_client_keeps_only_the_filtered_tools_in_bindings_cli_and_tools_json(project: Path) -> None:
    done = run_mcpgen(
        project,
        *("client", "spec.json", "-o", "out", "--package", "wx"),
        *("--include-tools", "get_*", "--include-tools", "list_*", "--exclude-tools", "get_forecast"),
    )
    assert done.returncode == 0, done.stderr
    # delete_city is broken but filtered out: never validated, so neither an error nor an exclusion
    assert done.stdout.splitlines()[-1] == "spec.json: 2 tool(s) generated, 0 excluded, 3 filtered out"
    package = project / "out" / "wx"
    assert _names(package) == ["get_weather", "list_cities"]  # case-sensitive: Get_Secret is not get_*
    client = (package / "client.py").read_text("utf-8")
    assert "def get_weather(" in client and "def list_cities(" in client
    assert "get_forecast" not in client and "delete_city" not in client and "Get_Secret" not in client
    assert "get_forecast" not in (package / "__main__.py").read_text("utf-8")
    shown = subprocess.run(
        [sys.executable, "-m", "wx", "--help"],
        cwd=project / "out",
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "get-weather" in shown.stdout or "get_weather" in shown.stdout
    assert "forecast" not in shown.stdout and "delete" not in shown.stdout
    manifest = json.loads((package / ".mcpgen-manifest.json").read_text("utf-8"))
    assert manifest["filters"] == {"include_tools": ["get_*", "list_*"], "exclude_tools": ["get_forecast"]}
    assert recorded_filters(package) == ToolFilter.of(["get_*", "list_*"], ["get_forecast"])
    # without filters the manifest says nothing of them, and the count line is as it always was
    again = run_mcpgen(project, "client", "spec.json", "-o", "out", "--package", "wx", "--skip-invalid")
    assert again.returncode == 0, again.stderr
    assert "filters" not in json.loads((package / ".mcpgen-manifest.json").read_text("utf-8"))
    assert again.stdout.splitlines()[-1].startswith("spec.json: 4 tool(s) generated, 1 excluded (")
    assert recorded_filters(package) == ToolFilter()


def test_filtered_tools_are_not_exclusions_under_strict_and_pointers_stay_those_of_the_file(
    project: Path,
) -> None:
    checked = run_mcpgen(
        project, "validate", "spec.json", "--strict", "--exclude-tools", "delete_*", "--exclude-tools", "x"
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "MCPGEN-FILTER: exclude glob 'x' matches no tool" in checked.stdout.splitlines()[0]
    assert (
        checked.stdout.splitlines()[-1]
        == "spec.json: 4 tool(s) usable, 0 excluded, 1 filtered out, 1 warning(s)"
    )
    strict = run_mcpgen(
        project, "server", "spec.json", "-o", "out", "--strict", "--exclude-tools", "delete_city"
    )
    assert strict.returncode == 0, strict.stderr
    assert strict.stdout.splitlines()[-1] == "spec.json: 4 tool(s) generated, 0 excluded, 1 filtered out"
    assert "delete_city" not in (project / "out" / "spec_server" / "base.py").read_text("utf-8")
    # a tool kept after filtered ones is still named by its place in the file (/tools/3)
    kept = run_mcpgen(project, "client", "spec.json", "-o", "out2", "--include-tools", "delete_*")
    assert kept.returncode == 1
    assert "tool 'delete_city' at /tools/3/inputSchema/properties/n/minimum: SCHEMA-07" in kept.stderr


def test_a_glob_matching_nothing_warns_and_filters_leaving_nothing_fail(project: Path) -> None:
    warned = run_mcpgen(
        project, "client", "spec.json", "-o", "out", "--include-tools", "get_w*", "--exclude-tools", "nope*"
    )
    assert warned.returncode == 0, warned.stderr
    assert (
        "spec.json: warning: at /tools: MCPGEN-FILTER: exclude glob 'nope*' matches no tool (a typo?); "
        "listed: 'get_weather', 'get_forecast', 'Get_Secret', 'delete_city', 'list_cities'"
    ) in warned.stderr.splitlines()
    quiet = run_mcpgen(
        project,
        "-q",
        "client",
        "spec.json",
        "-o",
        "out",
        "--exclude-tools",
        "nope*",
        "--exclude-tools",
        "del*",
    )
    assert quiet.returncode == 0 and "MCPGEN-FILTER" not in quiet.stderr
    for args in (["--include-tools", "GET_*"], ["--exclude-tools", "*"]):
        nothing = run_mcpgen(project, "client", "spec.json", "-o", "empty", *args)
        assert nothing.returncode == 1
        assert "error: spec.json: the tool filters (" in nothing.stderr
        assert "leave none of its 5 tool(s): nothing to generate" in nothing.stderr
        assert not (project / "empty").exists()


def test_the_names_a_warning_lists_are_bounded(tmp_path: Path) -> None:
    long = "t" * 500
    tools = [_tool(f"{long}{index:02}") for index in range(15)]
    (tmp_path / "many.json").write_text(json.dumps({"tools": tools}), "utf-8")
    done = run_mcpgen(tmp_path, "snapshot", "many.json", "-o", "saved.json", "--exclude-tools", "zz")
    assert done.returncode == 0, done.stderr
    (warning,) = [line for line in done.stderr.splitlines() if "MCPGEN-FILTER" in line]
    assert warning.endswith(f"{('t' * 60)!r} and 5 more") and warning.count("'" + "t" * 60 + "'") == 10
    assert len(warning) < 1000


def test_snapshot_saves_only_the_filtered_tools(project: Path) -> None:
    done = run_mcpgen(project, "snapshot", "spec.json", "-o", "saved.json", "--exclude-tools", "*_cit*")
    assert done.returncode == 0, done.stderr
    assert "saved 3 tool(s) (2 filtered out) from spec.json" in done.stdout
    saved = json.loads((project / "saved.json").read_text("utf-8"))
    assert [tool["name"] for tool in saved["tools"]] == ["get_weather", "get_forecast", "Get_Secret"]


def test_diff_against_a_revision_filters_both_sides(project: Path) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "spec.json"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "spec"], cwd=project, check=True)
    now = {"tools": [t for t in SPEC["tools"] if t["name"] != "list_cities"]}
    (project / "spec.json").write_text(json.dumps(now), "utf-8")
    whole = run_mcpgen(project, "diff", "--against", "HEAD", "spec.json")
    assert whole.returncode == 1 and "list_cities" in whole.stdout
    filtered = run_mcpgen(project, "diff", "--against", "HEAD", "spec.json", "--exclude-tools", "list_*")
    assert filtered.returncode == 0, filtered.stdout + filtered.stderr
    assert "list_cities" not in filtered.stdout


def test_a_client_project_holds_only_the_filtered_tools(project: Path) -> None:
    done = run_mcpgen(project, "client", "spec.json", "--project", "proj", "--include-tools", "get_weather")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "spec.json: 1 tool(s) generated, 0 excluded, 4 filtered out"
    readme = (project / "proj" / "README.md").read_text("utf-8")
    assert "get_weather" in readme and "list_cities" not in readme and "get_forecast" not in readme
    assert recorded_filters(project / "proj" / "src" / "spec_client") == ToolFilter(("get_weather",))


def test_diff_compares_the_filtered_tools_on_both_sides(project: Path) -> None:
    changed = {"tools": [t for t in SPEC["tools"] if t["name"] != "list_cities"]}  # list_cities removed
    (project / "new.json").write_text(json.dumps(changed), "utf-8")
    whole = run_mcpgen(project, "diff", "spec.json", "new.json")
    assert whole.returncode == 1 and "list_cities" in whole.stdout
    only_get = run_mcpgen(project, "diff", "spec.json", "new.json", "--include-tools", "get_*")
    assert only_get.returncode == 0, only_get.stdout + only_get.stderr
    assert "list_cities" not in only_get.stdout
    # a glob matching nothing on either side is said; one matching a tool of the old side is not
    missing = run_mcpgen(
        project, "diff", "spec.json", "new.json", "--exclude-tools", "list_*", "--exclude-tools", "zz"
    )
    assert "exclude glob 'zz' matches no tool" in missing.stderr and "'list_*'" not in missing.stderr


PYPROJECT = """\
[[tool.mcpgen.targets]]
source = "spec.json"
kind = "client"
output = "src"
package = "wx_client"
{filters}
[[tool.mcpgen.targets]]
source = "spec.json"
kind = "server"
output = "src"
package = "wx_server"
{filters}"""


def test_a_target_with_filters_is_generated_checked_and_stale_when_a_filter_changes(project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(PYPROJECT.format(filters='include_tools = ["get_*"]\nexclude_tools = ["*cast"]'))
    done = run_mcpgen(project, "generate")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "2 tool(s) generated, 0 excluded, 8 filtered out (in the 2 of 2 target(s) that did not fail)"
    )
    for package in ("wx_client", "wx_server"):
        assert _names(project / "src" / package) == ["get_weather"]
        assert recorded_filters(project / "src" / package) == ToolFilter(("get_*",), ("*cast",))
    fresh = run_mcpgen(project, "generate", "--check")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    assert "0 stale, 2 up to date, 0 failed" in fresh.stdout
    # the same tools from other filters: still stale, the manifest records how the package was made
    pyproject.write_text(PYPROJECT.format(filters='include_tools = ["get_w*"]'))
    stale = run_mcpgen(project, "generate", "--check")
    assert stale.returncode == 1
    assert "2 stale, 0 up to date, 0 failed" in stale.stdout
    assert ".mcpgen-manifest.json" in stale.stdout and "tools.json" not in stale.stdout
    # other tools: tools.json changes too, and the tool change is said
    pyproject.write_text(PYPROJECT.format(filters='include_tools = ["get_*", "list_*"]'))
    stale = run_mcpgen(project, "generate", "--check")
    assert stale.returncode == 1 and "tools.json" in stale.stdout
    assert "list_cities" in stale.stdout
    assert run_mcpgen(project, "generate").returncode == 0
    assert _names(project / "src" / "wx_client") == ["get_weather", "get_forecast", "list_cities"]
    assert run_mcpgen(project, "generate", "--check").returncode == 0
    # `mcpgen diff --target` compares with the target's filters: a filtered tool's change is not one
    source = json.loads((project / "spec.json").read_text("utf-8"))
    source["tools"] = [t for t in source["tools"] if t["name"] != "Get_Secret"]
    (project / "spec.json").write_text(json.dumps(source), "utf-8")
    compared = run_mcpgen(project, "diff", "--target", "wx_client", "--fail-on", "any")
    assert compared.returncode == 0, compared.stdout + compared.stderr
    refused = run_mcpgen(project, "diff", "--target", "wx_client", "--include-tools", "x")
    assert refused.returncode == 2 and "give no --include-tools or --exclude-tools" in refused.stderr


def test_target_filters_must_be_lists_of_globs(project: Path) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT.format(filters='include_tools = "get_*"'))
    done = run_mcpgen(project, "generate")
    assert done.returncode == 1 and "'include_tools' must be a list" in done.stderr
    (project / "pyproject.toml").write_text(PYPROJECT.format(filters='exclude_tools = [""]'))
    done = run_mcpgen(project, "generate")
    assert done.returncode == 1 and "'exclude_tools' must be a list of non-empty glob strings" in done.stderr


def test_a_filter_leaving_a_target_no_tool_fails_that_target(project: Path) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT.format(filters='include_tools = ["nothing_*"]'))
    done = run_mcpgen(project, "generate")
    assert done.returncode == 1
    assert (
        "target #1 (client 'wx_client' from spec.json): spec.json: the tool filters (include " in done.stderr
    )
    assert (
        done.stdout.splitlines()[-1]
        == "0 tool(s) generated, 0 excluded (in the 0 of 2 target(s) that did not fail)"
    )
    assert not (project / "src").exists()


def test_mock_serves_only_the_filtered_tools(project: Path) -> None:
    from mcpgen_runtime.client import Client

    command = [
        sys.executable,
        *("-m", "codegen.cli", "mock", str(project / "spec.json"), "--stdio"),
        *("--include-tools", "get_*", "--exclude-tools", "get_forecast"),
    ]
    with Client.stdio(command, env=subprocess_env(), timeout=30) as client:
        assert [tool["name"] for tool in client.list_all_tools()] == ["get_weather"]
        assert client.call_tool("get_weather", {"q": "Berlin"}).is_error is False
    refused = run_mcpgen(project, "mock", "--replay", "spec.json", "--include-tools", "x")
    assert refused.returncode == 2 and "--record and --replay pass every exchange through" in refused.stderr


def test_diff_of_a_package_directory_is_its_tools_json_with_its_recorded_filters(project: Path) -> None:
    made = run_mcpgen(
        project,
        "client",
        "spec.json",
        "-o",
        "out",
        "--package",
        "wx",
        "--exclude-tools",
        "list_*",
        "--exclude-tools",
        "delete_*",
    )
    assert made.returncode == 0, made.stderr
    changed = json.loads(json.dumps(SPEC))
    changed["tools"] = [t for t in changed["tools"] if t["name"] != "list_cities"]  # filtered out: no change
    changed["tools"][0]["inputSchema"]["required"] = ["q"]  # get_weather: now requires q (breaking)
    (project / "new.json").write_text(json.dumps(changed), "utf-8")
    shorthand = run_mcpgen(project, "diff", "out/wx", "new.json", "--format", "json")
    longhand = run_mcpgen(
        project,
        "diff",
        "out/wx/tools.json",
        "new.json",
        "--format",
        "json",
        "--exclude-tools",
        "list_*",
        "--exclude-tools",
        "delete_*",
    )
    assert shorthand.returncode == longhand.returncode == 1, shorthand.stderr
    assert json.loads(shorthand.stdout) == json.loads(longhand.stdout)
    assert "get_weather" in shorthand.stdout and "list_cities" not in shorthand.stdout
    refused = run_mcpgen(project, "diff", "out/wx", "new.json", "--include-tools", "get_*")
    assert refused.returncode == 2 and "generated with" in refused.stderr
    (project / "empty").mkdir()
    not_a_package = run_mcpgen(project, "diff", "empty", "new.json")
    assert not_a_package.returncode == 2 and "without tools.json" in not_a_package.stderr
