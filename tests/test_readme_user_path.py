"""The README's quickstart, followed as a new user would, in a clean venv and a fresh project; then the
documented next steps (issue 21's "done when", issue 33's quickstart).

Install the two wheels the way the quickstart says (built once per session, tests/wheels.py); scaffold
a server, implement one tool with the README's own line, serve it by hand, generate a typed client from
the live server and call it with the README's own program and from a shell; write the README's
`.mcp.json`, list it and generate a client from it, and call through that one over stdio. Every command
run is checked to be the README's (the port aside). Then, in a second project: `[tool.mcpgen]` targets
as docs/how-to/generate.md shows them and `mcpgen generate`, the `mcp_mock` example of
docs/how-to/mock.md with its responses file passes under pytest, and the `mcpgen-diff` hook refuses a
commit that adds a required argument even after regeneration (docs/how-to/pre-commit.md). The hook's
configuration is a `repo: local` copy of .pre-commit-hooks.yaml (no network), its entry pointed at the
venv's `mcpgen`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT, free_port, wait_for_port
from tests.test_precommit import local_config
from tests.wheels import Wheels, ok

pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

README = (ROOT / "README.md").read_text("utf-8")
QUICKSTART = README[README.index("## Quickstart") : README.index("\n## ", README.index("## Quickstart") + 1)]
DOCS = ROOT / "docs" / "how-to"


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{re.escape(language)}\n(.*?)^```", text, re.M | re.S)


def shell_lines() -> str:
    """The quickstart's shell commands, continuation lines joined."""
    return "\n".join(blocks(QUICKSTART, "sh")).replace("\\\n    ", "")


def readme_command(command: str) -> list[str]:
    assert command in shell_lines(), f"not the README's quickstart any more: {command}"
    return shlex.split(command)


def test_the_readme_quickstart_then_targets_mock_and_the_diff_hook(tmp_path: Path, wheels: Wheels) -> None:
    project = tmp_path / "weather-app"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    venv_bin = project / ".venv" / "bin"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV", "MYPYPATH")
    }
    env.update(
        HOME=str(home),
        PRE_COMMIT_HOME=str(home / "pre-commit"),
        PATH=f"{venv_bin}{os.pathsep}{env.get('PATH', '')}",  # what `. .venv/bin/activate` does
        VIRTUAL_ENV=str(project / ".venv"),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_NOSYSTEM="1",
    )

    def run(
        *args: str | Path, cwd: Path = project, extra: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(arg) for arg in args],
            cwd=cwd,
            env={**env, **(extra or {})},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    # Set-up: a venv, the two wheels from their directory (the README's ../mcpgen/dist), the example spec.
    dist = wheels.generator.parent
    install = readme_command(
        "pip install --find-links ../mcpgen/dist ../mcpgen/dist/mcpgen-*.whl 'mcpgen-runtime[server,cli]'"
    )
    ok(run("python3", "-m", "venv", ".venv"))
    ok(run(venv_bin / "pip", "install", "--quiet", "--find-links", dist, wheels.generator, install[-1]))
    (project / "specs").mkdir()
    shutil.copy(ROOT / "specs" / "weather.json", project / "specs" / "weather.json")

    # 1. Scaffold a server and implement one tool with the README's line.
    ok(run(*readme_command("mcpgen server specs/weather.json -o src --package weather_server")))
    [body] = [block.strip() for block in blocks(QUICKSTART, "{.python .excerpt}")]
    handlers = project / "src" / "weather_server" / "handlers.py"
    source = handlers.read_text("utf-8")
    method = source.index("async def get_weather_data(")
    stub = source.index("raise NotImplementedError", method)
    handlers.write_text(source[:stub] + body + source[stub + len("raise NotImplementedError") :], "utf-8")

    # 2. Run it by hand (PYTHONPATH=src).
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    serve = readme_command("python -m weather_server --http --port 8000")
    server = subprocess.Popen(
        [*serve[:-1], str(port)],
        cwd=project,
        env={**env, "PYTHONPATH": "src"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, server)
        # 3. A typed client from the live server, called from Python and from a shell.
        generate = readme_command("mcpgen client http://127.0.0.1:8000/mcp -o src --package weather_client")
        ok(run(*[url if arg.startswith("http://") else arg for arg in generate]))
        [program] = blocks(QUICKSTART, "python")
        (project / "call.py").write_text(program.replace("http://127.0.0.1:8000/mcp", url), "utf-8")
        called = ok(run("python", "call.py", extra={"PYTHONPATH": "src"}))
        shell = readme_command(
            "python -m weather_client --url http://127.0.0.1:8000/mcp get-weather-data --location Berlin"
        )
        from_shell = ok(
            run(*[url if arg.startswith("http://") else arg for arg in shell], extra={"PYTHONPATH": "src"})
        )
    finally:
        server.terminate()
        stderr = server.communicate(timeout=30)[1].decode(errors="replace")
    assert called == "21.5 sunny\n", called
    assert json.loads(from_shell) == {"temperature": 21.5, "conditions": "sunny", "humidity": 40}
    assert f"on http://127.0.0.1:{port}/mcp" in stderr, stderr

    # 4. A typed client from the README's MCP config file; its server started over stdio.
    [config] = blocks(QUICKSTART, "json")
    (project / ".mcp.json").write_text(config, "utf-8")
    listed = ok(run(*readme_command("mcpgen servers --config .mcp.json")))
    assert re.search(r"weather\s+stdio\s+python", listed), listed
    ok(
        run(
            *readme_command(
                "mcpgen client --config .mcp.json --server weather -o src --package weather_stdio_client"
            )
        )
    )
    stdio_call = readme_command(
        "python -m weather_stdio_client --stdio 'python -m weather_server --stdio' "
        "get-weather-data --location Berlin"
    )
    through_stdio = ok(run(*stdio_call, extra={"PYTHONPATH": "src"}))
    assert json.loads(through_stdio) == {"temperature": 21.5, "conditions": "sunny", "humidity": 40}

    # Next steps, in a second project: targets as "Generate bindings" shows them, `mcpgen generate`.
    app = tmp_path / "targets-app"
    (app / "specs").mkdir(parents=True)
    (app / "tests").mkdir()
    shutil.copy(ROOT / "specs" / "weather.json", app / "specs" / "weather.json")
    # The page's first toml block: the weather targets (later ones show single options, e.g. filters).
    targets = blocks((DOCS / "generate.md").read_text("utf-8"), "toml")[0]
    assert "specs/weather.json" in targets
    (app / "pyproject.toml").write_text(
        '[project]\nname = "weather-app"\nversion = "0"\n\n' + targets, "utf-8"
    )
    ok(run("mcpgen", "generate", cwd=app))
    assert (app / "src" / "weather_client" / "client.py").is_file()
    assert (app / "src" / "weather_server" / "handlers.py").is_file()

    # Testing without the server: docs/how-to/mock.md's pytest example passes, beside its responses file.
    ok(run("pip", "install", "--quiet", "--find-links", dist, "mcpgen-runtime[mock]", "pytest", "pre-commit"))
    mock_page = (DOCS / "mock.md").read_text("utf-8")
    [responses] = [block for block in blocks(mock_page, "yaml") if block.startswith("defaults:")]
    [mock_test] = [block for block in blocks(mock_page, "python") if "@pytest.mark.mcp_mock" in block]
    (app / "tests" / "responses.yaml").write_text(responses, "utf-8")
    (app / "tests" / "test_weather.py").write_text(mock_test, "utf-8")
    tested = run(
        "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests",
        cwd=app,
        extra={"PYTHONPATH": "src"},
    )
    assert tested.returncode == 0 and "1 passed" in tested.stdout, (
        tested.stdout[-3000:] + tested.stderr[-2000:]
    )

    # Keeping bindings fresh: the diff hook blocks a breaking change even after regeneration.
    (app / ".pre-commit-config.yaml").write_text(local_config("mcpgen-diff", venv_bin / "mcpgen"), "utf-8")
    ok(run("git", "init", "-q", "-b", "main", cwd=app))
    ok(run("pre-commit", "install", cwd=app))
    ok(run("git", "add", "-A", cwd=app))
    ok(run("git", "commit", "-q", "-m", "bindings", cwd=app))
    spec = json.loads((app / "specs" / "weather.json").read_text("utf-8"))
    [get_weather] = [tool for tool in spec["tools"] if tool["name"] == "get_weather"]
    get_weather["inputSchema"]["properties"]["units"] = {"type": "string"}
    get_weather["inputSchema"]["required"] = [*get_weather["inputSchema"].get("required", []), "units"]
    (app / "specs" / "weather.json").write_text(json.dumps(spec, indent=2) + "\n", "utf-8")
    ok(run("mcpgen", "generate", cwd=app))
    ok(run("git", "add", "-A", cwd=app))
    refused = run("git", "commit", "-q", "-m", "units", cwd=app)
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "get_weather" in refused.stdout + refused.stderr
    assert run("git", "rev-list", "--count", "HEAD", cwd=app).stdout.strip() == "1"
