"""MCP config files as sources, end to end: each format, from a file shaped as its tool writes it
(tests/interop/mcp_configs/) and laid where that tool keeps it, yields working typed clients.

- `everything`: the npm reference server over stdio, started as the file says (`command` found on
  PATH, `args`, `env`).
- `weather`: the checked-in generated server (`python -m weather_server --http`, uvicorn on
  loopback), reached at the file's URL with the file's headers.

`mcpgen servers` lists them with HOME pointed at a temporary directory; `mcpgen client --config FILE
--all -o DIR` generates one package per server, and a program imports both and calls a tool of each.
Nothing is mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.interop._support import WEATHER_NAMES
from tests.support import NODE, ROOT, SERVER_EVERYTHING, free_port, needs_peer, running_server

CONFIGS = Path(__file__).with_name("mcp_configs")
BIN = ROOT / "conformance" / "node_modules" / ".bin"  # mcp-server-everything, as `npm i -g` would put it
WEATHER_KEY = "weather-key-for-tests"

# (format, fixture, where the tool keeps it: "project/..." or "home/...")
FORMATS = [
    ("claude-desktop", "claude_desktop_config.json", "home/.config/Claude/claude_desktop_config.json"),
    ("cursor", "cursor_mcp.json", "project/.cursor/mcp.json"),
    ("claude-code", "claude_code.mcp.json", "project/.mcp.json"),
    ("windsurf", "windsurf_mcp_config.json", "home/.codeium/windsurf/mcp_config.json"),
    ("vscode", "vscode_mcp.json", "project/.vscode/mcp.json"),
    ("codex", "codex_config.toml", "home/.codex/config.toml"),
]


@pytest.fixture(scope="module")
def weather_port(our_http_url: str) -> int:
    return int(our_http_url.rsplit(":", 1)[1].split("/")[0])


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory: pytest.TempPathFactory, weather_port: int) -> Iterator[Path]:
    """A home directory and a project, each config file where its tool keeps it."""
    needs_peer(NODE, "Node 22 beside the conformance harness")
    needs_peer(SERVER_EVERYTHING, "@modelcontextprotocol/server-everything")
    root = tmp_path_factory.mktemp("configs")
    for _fmt, fixture, where in FORMATS:
        target = root / where
        target.parent.mkdir(parents=True, exist_ok=True)
        text = (CONFIGS / fixture).read_text(encoding="utf-8")
        target.write_text(text.replace("@PORT@", str(weather_port)), encoding="utf-8")
    yield root


def mcpgen_env(root: Path, **extra: str) -> dict[str, str]:
    """What a user's shell would have: HOME, PATH with node and the server's command, the keys."""
    return {
        "HOME": str(root / "home"),
        "PATH": os.pathsep.join([str(BIN), str(NODE.parent), "/usr/bin", "/bin"]),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "runtime"), str(ROOT)]),
        "EVERYTHING_API_KEY": "everything-key-for-tests",
        "WEATHER_API_KEY": WEATHER_KEY,
        "MCPGEN_INPUT_WEATHER_KEY": WEATHER_KEY,
        **extra,
    }


def mcpgen(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codegen.cli", *args],
        cwd=root / "project",
        env=env or mcpgen_env(root),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_mcpgen_servers_lists_every_well_known_file(laid_out: Path) -> None:
    done = mcpgen(laid_out, "servers", "--json")
    assert done.returncode == 0, done.stderr
    found = {item["file"]: item for item in json.loads(done.stdout)}
    assert set(found) == {
        ".mcp.json",
        os.path.join(".cursor", "mcp.json"),
        os.path.join(".vscode", "mcp.json"),
        "~/.config/Claude/claude_desktop_config.json",
        "~/.codeium/windsurf/mcp_config.json",
        "~/.codex/config.toml",
    }
    for item in found.values():
        kinds = {server["name"]: server["transport"] for server in item["servers"]}
        assert kinds["everything"] == "stdio" and kinds["weather"] == "http", item
    assert found["~/.codex/config.toml"]["host"] == "Codex"
    windsurf = found["~/.codeium/windsurf/mcp_config.json"]["servers"]
    assert [s["name"] for s in windsurf if s["disabled"]] == ["switched-off"]
    text = mcpgen(laid_out, "servers")
    assert text.returncode == 0 and "everything  stdio  mcp-server-everything (+1 argument(s))" in text.stdout
    assert WEATHER_KEY not in text.stdout + done.stdout  # headers are never shown


@pytest.mark.parametrize(("fmt", "fixture", "where"), FORMATS, ids=[f[0] for f in FORMATS])
def test_each_format_yields_working_typed_clients(
    laid_out: Path, weather_port: int, fmt: str, fixture: str, where: str
) -> None:
    out = laid_out / "out" / fmt
    config = laid_out / where
    done = mcpgen(laid_out, "client", "--config", str(config), "--all", "-o", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    generated = sorted(p.name for p in out.iterdir())
    assert generated == ["everything_client", "weather_client"], done.stdout
    # the header records FILE#NAME: under the home directory as ~/..., else relative to the output
    recorded = "~/" + where[5:] if where.startswith("home/") else os.path.relpath(config, out)
    header = (out / "weather_client" / "client.py").read_text(encoding="utf-8").splitlines()[0]
    assert f" from {recorded}#weather (sha256 " in header, header
    script = (
        "import sys\n"
        "from everything_client import Client as Everything\n"
        "from weather_client import Client as Weather\n"
        f"with Everything.stdio({[str(NODE), str(SERVER_EVERYTHING), 'stdio']!r}) as c:\n"
        "    print(c.echo('hello').text)\n"
        f"with Weather('http://127.0.0.1:{weather_port}/mcp') as w:\n"
        "    data = w.get_weather_data('Berlin')\n"
        "    print(type(data).__name__, data.conditions)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PYTHONPATH": os.pathsep.join([str(out), str(ROOT / "runtime"), str(ROOT)]),
            "PATH": "/usr/bin:/bin",
        },
        check=False,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "Echo: hello"
    assert lines[1].startswith("GetWeatherDataOutput ")
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert WEATHER_KEY not in text and "everything-key-for-tests" not in text, path


def test_mock_and_diff_take_a_config_files_server(laid_out: Path) -> None:
    """`mcpgen mock --config FILE --server NAME` serves that server's tools; `mcpgen diff` compares
    two servers named FILE#NAME."""
    from mcpgen_runtime.client import Client

    cursor = laid_out / "project" / ".cursor" / "mcp.json"
    port = free_port()
    command = [sys.executable, "-m", "codegen.cli", "mock", "--config", str(cursor), "--server", "weather"]
    with (
        running_server([*command, "--port", str(port)], port, cwd=laid_out, env=mcpgen_env(laid_out)),
        Client(f"http://127.0.0.1:{port}/mcp", tools=()) as client,
    ):
        names = [tool["name"] for tool in client.list_all_tools()]
    assert names == WEATHER_NAMES
    same = mcpgen(laid_out, "diff", f"{cursor}#weather", ".mcp.json#weather")
    assert same.returncode == 0, same.stderr
    assert "no changes" in same.stdout.lower(), same.stdout
    other = mcpgen(laid_out, "diff", f"{cursor}#weather", ".mcp.json#everything", "--fail-on", "any")
    assert other.returncode == 1 and "get_weather" in other.stdout


def test_an_sse_server_of_claude_codes_file(tmp_path: Path) -> None:
    """`"type": "sse"`: the npm reference server on the deprecated HTTP+SSE transport (GET /sse),
    reached through the client's fallback, for generation and for the generated client."""
    needs_peer(NODE, "Node 22 beside the conformance harness")
    needs_peer(SERVER_EVERYTHING, "@modelcontextprotocol/server-everything")
    port = free_port()
    (tmp_path / "project").mkdir()
    url = f"http://127.0.0.1:{port}/sse"
    config = {"mcpServers": {"everything-sse": {"type": "sse", "url": url}}}
    (tmp_path / "project" / ".mcp.json").write_text(json.dumps(config), encoding="utf-8")
    with running_server([str(NODE), str(SERVER_EVERYTHING), "sse"], port, env={"PORT": str(port)}):
        done = mcpgen(tmp_path, "client", "--config", ".mcp.json", "--server", "everything-sse", "-o", "out")
        assert done.returncode == 0, done.stderr
        script = (
            "from everything_sse_client import Client\n"
            f"with Client({url!r}) as c:\n    print(c.echo('hi').text)\n"
        )
        run = subprocess.run(
            [sys.executable, "-c", script],
            env={
                "PYTHONPATH": os.pathsep.join(
                    [str(tmp_path / "project" / "out"), str(ROOT / "runtime"), str(ROOT)]
                )
            },
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert run.returncode == 0 and run.stdout.strip() == "Echo: hi", run.stderr
