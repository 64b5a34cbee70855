"""Issue #21 trap 3: a spec change leaves the user's handlers.py behind, and everybody says so.

A project holds specs/weather.json and the repository's own weather_server handlers.py (copied, as a
user would keep it). The test removes `get_weather` from the spec and adds `get_forecast`, then runs
the real `mcpgen generate` / `--check` / `--add-stubs` and the real `python -m weather_server`:

- generate and --check name the line of handlers.py that uses `_m.GetWeatherInput` (error, exit 1:
  the package cannot import), the method that handles no tool any more (a note), and the tool class
  Server does not implement, with a stub to paste (a warning);
- the server refuses to start (exit 2, one line naming the name and handlers.py, no traceback);
- once the user deletes the dead method, the server starts and warns about `get_forecast`;
- `--add-stubs` appends the stub to class Server and leaves every other byte of the file as it was;
  then --check and the server are silent; without a `class Server` it refuses and changes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support import ROOT, run_mcpgen

PYPROJECT = """\
[[tool.mcpgen.targets]]
source = "specs/weather.json"
kind = "server"
output = "src"
package = "weather_server"
"""
FORECAST = {
    "name": "get_forecast",
    "description": 'Forecast for "days" ahead\n"""; import os  # not code',
    "inputSchema": {
        "type": "object",
        "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["location"],
    },
}


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT)])}


def _mcpgen(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_mcpgen(project, *args, env=_env())


def _serve(project: Path) -> subprocess.CompletedProcess[str]:
    """`python -m weather_server --stdio` with stdin closed at once: it starts (or refuses), then ends."""
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(project / "src"), env["PYTHONPATH"]])
    return subprocess.run(
        [sys.executable, "-m", "weather_server", "--stdio"],
        cwd=project,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "specs").mkdir()
    (project / "src" / "weather_server").mkdir(parents=True)
    shutil.copy(ROOT / "specs" / "weather.json", project / "specs" / "weather.json")
    shutil.copy(
        ROOT / "generated" / "weather_server" / "handlers.py",
        project / "src" / "weather_server" / "handlers.py",
    )
    (project / "pyproject.toml").write_text(PYPROJECT, "utf-8")
    return project


def _change_spec(project: Path, *, remove: str = "get_weather") -> None:
    spec = project / "specs" / "weather.json"
    data = json.loads(spec.read_text("utf-8"))
    data["tools"] = [tool for tool in data["tools"] if tool["name"] != remove] + [FORECAST]
    spec.write_text(json.dumps(data, indent=2) + "\n", "utf-8")


def _line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def test_removed_and_added_tools(tmp_path: Path) -> None:
    project = _project(tmp_path)
    handlers = project / "src" / "weather_server" / "handlers.py"
    first = _mcpgen(project, "generate")
    assert first.returncode == 0, first.stderr
    assert "handlers.py" not in first.stderr  # the copied handlers implement every tool
    served = _serve(project)
    assert served.returncode == 0 and "warning" not in served.stderr, served.stderr

    _change_spec(project)
    line = _line_of(handlers.read_text("utf-8"), "_m.GetWeatherInput")
    where = f"src/weather_server/handlers.py:{line}"
    broken = f"error: {where}: `_m.GetWeatherInput` is not defined in models.py any more"
    dead = f"note: {where}: method `get_weather` handles no tool any more"
    missing = (
        "warning: src/weather_server/handlers.py: class Server implements no method for 1 tool(s): "
        "'get_forecast'"
    )
    for args in (("generate",), ("generate", "--check")):
        result = _mcpgen(project, *args)
        assert result.returncode == 1, result.stdout + result.stderr
        for expected in (broken, dead, missing, "        async def get_forecast("):
            assert expected in result.stderr, (expected, result.stderr)
        # the description is a docstring in the stub, escaped as base.py escapes it: never code
        assert "\n    import os" not in result.stderr and "import os  # not code" in result.stderr
    assert "async def get_forecast(" in (project / "src" / "weather_server" / "base.py").read_text("utf-8")
    assert "1 failed" in _mcpgen(project, "generate", "--check").stdout

    served = _serve(project)
    assert served.returncode == 2, served.stderr
    assert served.stderr.strip().splitlines() == [
        f"weather_server: cannot start: {handlers}:{line} uses 'GetWeatherInput', which "
        "weather_server.models no longer defines (its tool was removed or renamed in the spec); "
        "change or delete that code (`mcpgen generate` lists every such place)"
    ]

    # the user deletes the dead method: the package imports again; get_forecast is still missing
    text = handlers.read_text("utf-8")
    start = text.index("    async def get_weather(self")
    end = text.index("    async def get_weather_data(")
    handlers.write_text(text[:start] + text[end:], "utf-8")
    check = _mcpgen(project, "generate", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert missing in check.stderr and "error" not in check.stderr
    served = _serve(project)
    assert served.returncode == 0, served.stderr
    assert (
        "weather_server: warning: handlers.py implements no method for 1 tool(s): 'get_forecast'; "
        'their calls answer "not implemented"'
    ) in served.stderr

    before = handlers.read_text("utf-8")
    stubbed = _mcpgen(project, "generate", "--add-stubs")
    assert stubbed.returncode == 0, stubbed.stderr
    assert "stubbed  src/weather_server/handlers.py: class Server now has a method for 'get_forecast'" in (
        stubbed.stdout
    )
    after = handlers.read_text("utf-8")
    assert after.startswith(before) and "async def get_forecast(" in after[len(before) :]
    assert after.endswith("        raise NotImplementedError\n")
    check = _mcpgen(project, "generate", "--check")
    assert check.returncode == 0 and "handlers.py" not in check.stderr, check.stdout + check.stderr
    served = _serve(project)
    assert served.returncode == 0 and "warning" not in served.stderr, served.stderr
    black = subprocess.run(
        [sys.executable, "-m", "black", "--check", "--line-length", "110", str(handlers)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert black.returncode == 0, black.stderr


def test_add_stubs_refuses_without_class_server(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert _mcpgen(project, "generate").returncode == 0
    handlers = project / "src" / "weather_server" / "handlers.py"
    renamed = handlers.read_text("utf-8").replace("class Server(ServerBase):", "class MyServer(ServerBase):")
    handlers.write_text(renamed, "utf-8")
    _change_spec(project, remove="")
    result = _mcpgen(project, "generate", "--add-stubs")
    assert result.returncode == 1
    assert "src/weather_server/handlers.py: has no top-level `class Server`" in result.stderr
    assert handlers.read_text("utf-8") == renamed
    served = _serve(project)
    assert served.returncode == 2 and "Traceback" not in served.stderr
    assert "defines no `class Server(ServerBase)`" in served.stderr
    assert "--add-stubs writes handlers.py" in _mcpgen(project, "generate", "--check", "--add-stubs").stderr


def test_a_fresh_scaffold_is_clean_for_every_spec(tmp_path: Path) -> None:
    """`generate` does not parse a handlers.py still equal to the scaffold it just built (a 1,000-tool
    server's three large modules): that is sound only if the check would find nothing in it."""
    from codegen.pipeline import build_server
    from codegen.write.handlers import check_handlers
    from tests.codegen.pipeline.test_generate import write_package
    from tests.codegen.pipeline.test_generate_typecheck import specs_to_check

    # every spec in specs/, the hostile list and corpus, a synthetic sample
    for key, spec in specs_to_check().items():
        package = build_server(spec, package=f"fresh_{key}")
        report = check_handlers(write_package(tmp_path, package), package.package, package.files, None)
        assert report is not None and report.clean, (key, report)


def _call(project: Path, tool: str, arguments: dict[str, object]) -> str:
    """One call of the generated server over stdio: the text of its result ("error: …" when isError)."""
    from mcpgen_runtime.client import Client

    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(project / "src"), env["PYTHONPATH"]])
    with Client.stdio([sys.executable, "-m", "weather_server", "--stdio"], env=env, cwd=project) as client:
        result = client.call_tool(tool, arguments)
    text = " ".join(getattr(block, "text", "") for block in result.content)
    return f"error: {text}" if result.is_error else text


def _edit_spec(project: Path, edit: Callable[[list[dict[str, Any]]], None]) -> None:
    spec = project / "specs" / "weather.json"
    data = json.loads(spec.read_text("utf-8"))
    edit(data["tools"])
    spec.write_text(json.dumps(data, indent=2) + "\n", "utf-8")


def test_each_drift_message_says_what_the_server_does(tmp_path: Path) -> None:
    """Issue 33: with the scaffold's `from __future__ import annotations`, a removed tool's model named in
    an annotation does not stop the server (a warning, not "cannot start"); named in a function body it
    fails that function's calls; a tool without a method answers "not implemented". Generating warns
    (exit 0), `--check` fails, and the server, started for real, does what the messages say."""
    project = _project(tmp_path)
    handlers = project / "src" / "weather_server" / "handlers.py"
    handlers.unlink()  # start from the scaffold mcpgen writes
    assert _mcpgen(project, "generate").returncode == 0
    text = handlers.read_text("utf-8")
    assert "from __future__ import annotations" in text
    body = "        raise NotImplementedError"
    at = text.index(body, text.index("async def calculate_sum("))
    text = text[:at] + "        return str(_m.GetCurrentTimeInput())" + text[at + len(body) :]
    handlers.write_text(text, "utf-8")
    _edit_spec(project, lambda tools: tools.remove(next(t for t in tools if t["name"] == "get_current_time")))
    _edit_spec(project, lambda tools: tools.append(FORECAST))

    where = "src/weather_server/handlers.py"
    used = _line_of(text, "_m.GetCurrentTimeInput()")
    annotated = _line_of(text, "args: _m.GetCurrentTimeInput")
    method = _line_of(text, "async def get_current_time(")
    gone = "`_m.GetCurrentTimeInput` is not defined in models.py any more (its tool was removed or renamed"
    call = (
        f"{where}:{used}: {gone} in the spec); the server starts, but `calculate_sum` fails when it reaches"
    )
    annotation = (
        f"{where}:{annotated}: {gone} in the spec); only in an annotation, which is never evaluated: the "
        "server starts, but type checkers report it"
    )
    dead = f"note: {where}:{method}: method `get_current_time` handles no tool any more"
    missing = (
        "class Server implements no method for 1 tool(s): 'get_forecast'; the server starts and their calls"
    )
    generated = _mcpgen(project, "generate")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    for expected in (f"warning: {call}", f"warning: {annotation}", dead, missing):
        assert expected in generated.stderr, (expected, generated.stderr)
    assert "cannot start" not in generated.stderr and "error" not in generated.stderr
    check = _mcpgen(project, "generate", "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert f"error: {call}" in check.stderr and f"error: {annotation}" in check.stderr

    served = _serve(project)
    assert served.returncode == 0, served.stderr
    assert "serving 6 tools" in served.stderr and "'get_forecast'" in served.stderr
    assert _call(project, "calculate_sum", {"a": 1, "b": 2}) == (
        "error: Tool 'calculate_sum' failed with an internal error (AttributeError)"
    )
    assert (
        _call(project, "get_forecast", {"location": "Oslo"})
        == "error: Tool 'get_forecast' is not implemented"
    )


def test_a_parameter_renamed_in_the_spec_but_read_by_a_handler(tmp_path: Path) -> None:
    """Issue 33: the spec renames get_weather's `location` to `city` while handlers.py still reads
    `args.location`: generating (both commands) warns with file and line, `--check` fails, and the
    call fails as said. The file is read with `ast`, never run."""
    project = _project(tmp_path)
    handlers = project / "src" / "weather_server" / "handlers.py"
    assert _mcpgen(project, "generate").returncode == 0

    def rename(tools: list[dict[str, Any]]) -> None:
        schema = next(t for t in tools if t["name"] == "get_weather")["inputSchema"]
        schema["properties"]["city"] = schema["properties"].pop("location")
        schema["required"] = ["city"]

    _edit_spec(project, rename)
    text = handlers.read_text("utf-8")
    first, end = _line_of(text, "async def get_weather("), _line_of(text, "async def get_weather_data(")
    lines = [n for n, line in enumerate(text.splitlines(), 1) if first < n < end and "args.location" in line]
    expected = [
        f"src/weather_server/handlers.py:{line}: get_weather reads args.location, which the spec no longer "
        "has (renamed? the input now has: city)"
        for line in lines
    ]
    assert len(expected) == 2
    for args in (("generate",), ("server", "specs/weather.json", "-o", "src", "--package", "weather_server")):
        result = _mcpgen(project, *args)
        assert result.returncode == 0, result.stdout + result.stderr
        said = [line for line in result.stderr.splitlines() if "args.location" in line]
        assert [line.split(": ", 1)[1].split("; ")[0] for line in said] == expected, result.stderr
        assert all(line.startswith("warning: ") for line in said)
        # get_weather_data reads args.location too, and its input still has it
        assert "get_weather_data reads" not in result.stderr
    check = _mcpgen(project, "generate", "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert f"error: {expected[0]}; the server starts, but its calls fail" in check.stderr
    assert _call(project, "get_weather", {"city": "Oslo"}) == (
        "error: Tool 'get_weather' failed with an internal error (AttributeError)"
    )
    handlers.write_text(text.replace("args.location", "args.city", 2), "utf-8")  # get_weather's two
    fixed = _mcpgen(project, "generate", "--check")
    assert fixed.returncode == 0 and "args." not in fixed.stderr, fixed.stdout + fixed.stderr
