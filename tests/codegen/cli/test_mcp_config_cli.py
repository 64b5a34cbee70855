"""The command line of config-file sources: `--config FILE --server NAME`, `client --all`, `mcpgen servers`.

Servers here are the checked-in generated weather_server over stdio (real processes); the formats
against server-everything and HTTP are tests/interop/test_mcp_config_sources.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from codegen import RELEASE
from codegen.cli import main
from codegen.cli.naming import package_names

ROOT = Path(__file__).resolve().parents[3]
WEATHER_STDIO = {
    "command": sys.executable,
    "args": ["-m", "weather_server", "--stdio"],
    "env": {"PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT), str(ROOT / "generated")])},
}


def run(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME and the current directory in a temporary tree: no real config file is read."""
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(project)
    return home


def test_package_names_are_identifiers_and_never_collide() -> None:
    names = package_names(
        ["github", "my-server", "my_server", "My Server", "1st", "", "json", "ünï"], "client"
    )
    assert names == {
        "github": "github_client",
        "my-server": "my_server_client",
        "my_server": "my_server_2_client",
        "My Server": "my_server_3_client",
        "1st": "mcp_1st_client",
        "": "mcp_client",
        "json": "json_client",
        "ünï": "uni_client",
    }
    assert all(name.isidentifier() for name in names.values())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["client", "--server", "x", "-o", "out"], "--server NAME needs --config FILE"),
        (["client", "--config", "mcp.json", "-o", "out"], "--config mcp.json needs --server NAME"),
        (["client", "spec.json", "--config", "mcp.json", "--server", "a", "-o", "o"], "not several"),
        (["client", "--config", "mcp.json", "--server", "a", "--header", "A: b", "-o", "o"], "--header"),
        (["client", "--all", "-o", "out"], "--all needs --config FILE"),
        (["client", "--config", "mcp.json", "--all", "--package", "p", "-o", "o"], "give no --package"),
        (["client", "--config", "mcp.json", "--all", "--server", "a", "-o", "o"], "give no SOURCE, --server"),
        (["client", "--config", "mcp.json", "--all"], "--all needs -o/--output DIR"),
        (["snapshot", "--config", "mcp.json", "-o", "s.json"], "needs --server NAME"),
        (["mock", "--server", "a"], "--server NAME needs --config FILE"),
    ],
)
def test_usage_errors(runner: CliRunner, home: Path, args: list[str], message: str) -> None:
    Path("mcp.json").write_text('{"mcpServers": {"a": {"command": "x"}}}', encoding="utf-8")
    Path("spec.json").write_text('{"tools": []}', encoding="utf-8")
    code, _out, err = run(runner, *args)
    assert code == 2 and message in err, err


def test_servers_lists_project_and_user_files_never_values(runner: CliRunner, home: Path) -> None:
    secret = "sk-live-0123456789"
    Path(".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "gh": {
                        "command": "/opt/bin/github-mcp",
                        "args": ["--token", secret],
                        "env": {"T": secret},
                    },
                    "api": {
                        "type": "http",
                        "url": f"https://u:{secret}@api.example.com/mcp?key={secret}",
                        "headers": {"Authorization": f"Bearer {secret}"},
                    },
                }
            }
        ),
        encoding="utf-8",
    )
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('[mcp_servers.docs]\nurl = "https://docs.example/mcp"\n')
    code, out, err = run(runner, "servers")
    assert code == 0, err
    assert out.splitlines() == [
        ".mcp.json (project, Claude Code): 2 server(s)",
        "  gh   stdio  github-mcp (+2 argument(s))",
        "  api  http   https://api.example.com/mcp",
        "",
        "~/.codex/config.toml (user, Codex): 1 server(s)",
        "  docs  http   https://docs.example/mcp",
    ]
    assert secret not in out + err
    code, out, _err = run(runner, "servers", "--json")
    assert code == 0 and secret not in out
    assert [item["file"] for item in json.loads(out)] == [".mcp.json", "~/.codex/config.toml"]


def test_servers_with_nothing_to_read(runner: CliRunner, home: Path) -> None:
    code, out, _err = run(runner, "servers")
    assert code == 0 and out.startswith("no MCP config files found")


def test_servers_reports_a_broken_file_and_lists_the_rest(runner: CliRunner, home: Path) -> None:
    Path(".mcp.json").write_text('{"mcpServers": {"a": {"command": "x"}}', encoding="utf-8")
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers": {"b": {"url": "http://h/mcp"}}}')
    code, out, err = run(runner, "servers")
    assert code == 1
    assert err.startswith(
        f"error: {Path('.mcp.json').resolve()}: MCPGEN-CONFIG: invalid JSON at line 1 column"
    )
    assert "~/.cursor/mcp.json (user, Cursor): 1 server(s)" in out


def test_client_all_generates_every_enabled_server_and_reports_the_failing_one(
    runner: CliRunner, home: Path
) -> None:
    Path(".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "weather": WEATHER_STDIO,
                    "weather-too": WEATHER_STDIO,
                    "broken": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(4)"]},
                    "off": {"command": "does-not-exist", "disabled": True},
                }
            }
        ),
        encoding="utf-8",
    )
    code, out, err = run(runner, "client", "--config", ".mcp.json", "--all", "-o", "out")
    assert code == 1
    assert sorted(p.name for p in Path("out").iterdir()) == ["weather_client", "weather_too_client"]
    assert "skipped  .mcp.json#off: disabled in the file" in out
    assert "2 of 3 server(s) generated into out" in out
    assert "error: .mcp.json#broken: " in err and "server process exited (code 4)" in err
    header = Path("out/weather_too_client/client.py").read_text().splitlines()[0]
    assert " from ../.mcp.json#weather-too (sha256 " in header


def test_one_server_by_name_and_by_file_hash_name(runner: CliRunner, home: Path) -> None:
    Path("pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    Path(".mcp.json").write_text(json.dumps({"mcpServers": {"weather": WEATHER_STDIO}}), encoding="utf-8")
    code, out, err = run(runner, "client", "--config", ".mcp.json", "--server", "weather", "-o", "a")
    assert code == 0, err
    assert (
        Path("a/weather_client/client.py")
        .read_text()
        .splitlines()[0]
        .startswith(f"# Generated by mcpgen {RELEASE} from .mcp.json#weather (sha256 ")
    )
    code, out, err = run(runner, "validate", ".mcp.json#weather")
    assert code == 0 and ".mcp.json#weather: 6 tool(s) usable" in out, err
    # the same bytes, whichever way the server was named
    code, _out, err = run(runner, "client", ".mcp.json#weather", "-o", "a")
    assert code == 0 and "up to date" in _out, err
    code, _out, err = run(runner, "server", "--config", ".mcp.json", "--server", "weather", "-o", "s")
    assert code == 0, err
    assert (
        Path("s/weather_server/base.py")
        .read_text()
        .splitlines()[0]
        .startswith(f"# Generated by mcpgen {RELEASE} from .mcp.json#weather (sha256 ")
    )


def test_the_server_runs_in_the_project_of_its_file(tmp_path: Path) -> None:
    """A project file's stdio server starts in that project (`${workspaceFolder}`), whatever the
    current directory: here its relative script path works only from there."""
    project = tmp_path / "proj"
    (project / "tools").mkdir(parents=True)
    (project / "tools" / "serve.py").write_text(
        "import runpy\nrunpy.run_module('weather_server', run_name='__main__')\n"
    )
    config = {"mcpServers": {"w": {**WEATHER_STDIO, "args": ["tools/serve.py", "--stdio"]}}}
    (project / ".mcp.json").write_text(json.dumps(config), encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codegen.cli",
            "validate",
            "--config",
            str(project / ".mcp.json"),
            "--server",
            "w",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].endswith(".mcp.json#w: 6 tool(s) usable, 0 excluded, 0 warning(s)")


def test_servers_shows_control_characters_spelled_out(runner: CliRunner, home: Path) -> None:
    Path(".mcp.json").write_text(
        json.dumps({"mcpServers": {"evil\x1b[2J": {"command": "/bin/x\x1b]0;title\x07"}}}), encoding="utf-8"
    )
    code, out, _err = run(runner, "servers")
    assert code == 0 and "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b[2J  stdio  x\\x1b]0;title\\x07" in out


def test_a_target_reading_a_config_files_server(runner: CliRunner, home: Path) -> None:
    """`source = "FILE#NAME"` in [tool.mcpgen]: generate, --check and diff --target start the server."""
    Path(".mcp.json").write_text(json.dumps({"mcpServers": {"weather": WEATHER_STDIO}}), encoding="utf-8")
    Path("pyproject.toml").write_text(
        '[[tool.mcpgen.targets]]\nsource = ".mcp.json#weather"\nkind = "client"\noutput = "gen"\n'
        'package = "weather_client"\n',
        encoding="utf-8",
    )
    code, out, err = run(runner, "generate")
    assert code == 0, err
    header = Path("gen/weather_client/client.py").read_text().splitlines()[0]
    assert " from .mcp.json#weather (sha256 " in header
    code, out, err = run(runner, "generate", "--check")
    assert code == 0 and "0 stale, 1 up to date" in out, out + err
    code, out, err = run(runner, "diff", "--target", "weather_client")
    assert code == 0, out + err
    Path(".mcp.json").write_text(json.dumps({"mcpServers": {"other": WEATHER_STDIO}}), encoding="utf-8")
    code, out, err = run(runner, "generate", "--check")
    assert code == 1 and "server 'weather' at /mcpServers: MCPGEN-CONFIG: no server named 'weather'" in err
