"""The README's user path, followed in a clean venv and a fresh project (issue 21's "done when").

Install the two wheels the way "Install" says (built once per session, tests/wheels.py), plus
pytest and pre-commit as a project would have them; then, in a new git repository:
`[tool.mcpgen]` targets and `mcpgen generate` ("Using it"), `python -m weather_server` serves and a
generated client calls it, a pytest file using the `mcp_mock` fixture as "Testing without the
server" shows passes, and the `mcpgen-diff` hook refuses a commit that adds a required argument
even after regeneration ("Keeping bindings fresh"). The hook's configuration is a `repo: local`
copy of .pre-commit-hooks.yaml (no network), its entry pointed at the venv's `mcpgen`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT, free_port, wait_for_port
from tests.test_precommit import local_config
from tests.wheels import Wheels, new_venv, ok

pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

PYPROJECT = """\
[project]
name = "weather-app"
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

# The README's pytest example, with the responses file it names.
MOCK_TEST = """\
import pytest

@pytest.mark.mcp_mock(package="weather_client", seed=7, responses="tests/responses.yaml")
def test_forecast(mcp_mock):
    data = mcp_mock.client.get_weather_data(location="Berlin")      # typed, validated
    assert data.conditions == "sunny"
    mcp_mock.assert_calls([("get_weather_data", {"location": "Berlin"})])
"""
RESPONSES = """\
tools:
  get_weather_data:
    - match: {location: Berlin}
      structured: {temperature: 21.5, conditions: sunny, humidity: 40}
"""
CALL = """\
import json, sys
from weather_client import Client
with Client(sys.argv[1]) as client:
    print(json.dumps(client.get_weather_data("Berlin").model_dump()))
"""


def test_the_readme_path_from_install_to_a_blocked_breaking_change(tmp_path: Path, wheels: Wheels) -> None:
    python = new_venv(tmp_path / "venv", f"{wheels.generator}[mock]", wheels.runtime, "pytest", "pre-commit")
    venv_bin = python.parent
    project = tmp_path / "weather-app"
    (project / "specs").mkdir(parents=True)
    (project / "tests").mkdir()
    shutil.copy(ROOT / "specs" / "weather.json", project / "specs" / "weather.json")
    (project / "pyproject.toml").write_text(PYPROJECT, "utf-8")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "MYPYPATH")
    }
    env.update(
        HOME=str(home),
        PRE_COMMIT_HOME=str(home / "pre-commit"),
        PATH=f"{venv_bin}{os.pathsep}{env.get('PATH', '')}",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_NOSYSTEM="1",
    )

    def run(*args: str | Path, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(arg) for arg in args],
            cwd=project,
            env={**env, **(extra or {})},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    # Using it: generate every target.
    ok(run("mcpgen", "generate"))
    assert (project / "src" / "weather_client" / "client.py").is_file()
    assert (project / "src" / "weather_server" / "handlers.py").is_file()

    # Implement one tool as "A generated server" shows, in the user's handlers.py.
    handlers = project / "src" / "weather_server" / "handlers.py"
    stub = '        """Get current weather data for a location"""\n        raise NotImplementedError\n'
    implemented = (
        '        """Get current weather data for a location"""\n'
        '        return _m.GetWeatherDataOutput(temperature=21.5, conditions="sunny", humidity=40)\n'
    )
    assert handlers.read_text("utf-8").count(stub) == 1
    handlers.write_text(handlers.read_text("utf-8").replace(stub, implemented), "utf-8")

    # Serve by hand and call through the generated client (PYTHONPATH=src, as "Using it" says).
    port = free_port()
    server = subprocess.Popen(
        [python, "-m", "weather_server", "--http", "--port", str(port)],
        cwd=project,
        env={**env, "PYTHONPATH": "src"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, server)
        called = ok(run(python, "-c", CALL, f"http://127.0.0.1:{port}/mcp", extra={"PYTHONPATH": "src"}))
    finally:
        server.terminate()
        stderr = server.communicate(timeout=30)[1].decode(errors="replace")
    assert json.loads(called) == {"temperature": 21.5, "conditions": "sunny", "humidity": 40}
    assert "weather_server: serving 6 tools on http://127.0.0.1:" in stderr, stderr

    # Testing without the server: the README's mcp_mock example passes under pytest.
    (project / "tests" / "responses.yaml").write_text(RESPONSES, "utf-8")
    (project / "tests" / "test_weather.py").write_text(MOCK_TEST, "utf-8")
    tested = run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", extra={"PYTHONPATH": "src"})
    assert tested.returncode == 0 and "1 passed" in tested.stdout, (
        tested.stdout[-3000:] + tested.stderr[-2000:]
    )

    # Keeping bindings fresh: the diff hook blocks a breaking change even after regeneration.
    (project / ".pre-commit-config.yaml").write_text(
        local_config("mcpgen-diff", venv_bin / "mcpgen"), "utf-8"
    )
    ok(run("git", "init", "-q", "-b", "main"))
    ok(run("pre-commit", "install"))
    ok(run("git", "add", "-A"))
    ok(run("git", "commit", "-q", "-m", "bindings"))
    spec = json.loads((project / "specs" / "weather.json").read_text("utf-8"))
    [get_weather] = [tool for tool in spec["tools"] if tool["name"] == "get_weather"]
    get_weather["inputSchema"]["properties"]["units"] = {"type": "string"}
    get_weather["inputSchema"]["required"] = [*get_weather["inputSchema"].get("required", []), "units"]
    (project / "specs" / "weather.json").write_text(json.dumps(spec, indent=2) + "\n", "utf-8")
    ok(run("mcpgen", "generate"))
    ok(run("git", "add", "-A"))
    refused = run("git", "commit", "-q", "-m", "units")
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "get_weather" in refused.stdout + refused.stderr
    assert run("git", "rev-list", "--count", "HEAD").stdout.strip() == "1"
