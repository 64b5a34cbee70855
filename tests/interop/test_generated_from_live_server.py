"""Proof, scenario 4: `mcpgen snapshot URL` and `mcpgen client URL` against the live SDK server.

Both run as subprocesses of `.venv/bin/mcpgen`; the peer lists 9 tools over 3 pages (page 2
behind the cursor ""). The client generated from the live listing is then imported in a fresh
interpreter and calls the same server.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.interop._support import SDK_NAMES, WEATHER_TOOLS, Client
from tests.support import PYTHON, subprocess_env

pytestmark = pytest.mark.timeout(60)

MCPGEN = str(Path(PYTHON).parent / "mcpgen")
PACKAGE = "live_weather_client"

# Runs in a fresh interpreter with the generated package on PYTHONPATH; prints one JSON object.
PROBE = textwrap.dedent("""
    import asyncio, inspect, json, sys
    from mcpgen_runtime.errors import ToolError
    from live_weather_client import AsyncClient, Client, models

    url = sys.argv[1]
    methods = [n for n, f in vars(Client).items() if inspect.isfunction(f) and not n.startswith("_")]
    out = {"methods": sorted(methods)}
    with Client(url) as client:
        data = client.get_weather_data("Oslo")
        out["data_type"] = type(data).__qualname__
        out["data_is_model"] = isinstance(data, models.GetWeatherDataOutput)
        out["data"] = data.model_dump()
        out["users"] = [type(u).__qualname__ for u in client.list_users()]
        out["sql"] = client.execute_sql(region="us-west1", query="SELECT 1").text
        try:
            client.report_error("disk on fire")
        except ToolError as exc:
            out["tool_error"] = exc.result.text

    async def main():
        async with AsyncClient(url) as client:
            return (await client.get_weather_data("Lima")).model_dump()

    out["async_data"] = asyncio.run(main())
    print(json.dumps(out))
""")


def mcpgen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [MCPGEN, *args], cwd=cwd, env=subprocess_env(), capture_output=True, text=True, timeout=45
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("live")


def test_snapshot_holds_every_listed_tool(sdk_http_url: str, workdir: Path) -> None:
    """PAGE-04/06/07, TOOLS-02: the snapshot holds all 9 tools from all 3 pages, in listing order,
    each definition exactly as listed (x-mcp-header, draft-07 $schema, array outputSchema)."""
    done = mcpgen("snapshot", sdk_http_url, "-o", "snap.json", cwd=workdir)
    assert done.stdout.strip() == f"saved 9 tool(s) from {sdk_http_url} to snap.json"
    tools = json.loads((workdir / "snap.json").read_text())["tools"]
    assert [tool["name"] for tool in tools] == SDK_NAMES
    assert tools[: len(WEATHER_TOOLS)] == WEATHER_TOOLS
    with Client(sdk_http_url) as client:  # the same listing, read by the runtime client page by page
        assert tools == client.list_all_tools()


def test_client_generated_from_live_server_calls_it(sdk_http_url: str, workdir: Path) -> None:
    """XHDR-01/18, TOOLS-19/22: `mcpgen client URL` writes a package that imports in a fresh
    interpreter, has one method per listed tool, and calls the same server with typed results
    (execute_sql succeeds over HTTP, so the live definitions drive Mcp-Param-Region)."""
    done = mcpgen("client", sdk_http_url, "-o", "out", "--package", PACKAGE, cwd=workdir)
    package = workdir / "out" / PACKAGE
    # seven top-level files (_tasks.py: the task namespaces), then _models/: its __init__.py and
    # modules of consecutive tools (lazy)
    modules = len(list((package / "_models").glob("t*.py")))
    assert 1 <= modules <= len(SDK_NAMES)
    assert f"out/{PACKAGE}: {7 + 1 + modules} created" in done.stdout
    assert sorted(p.name for p in package.iterdir() if p.is_file()) == [
        ".mcpgen-manifest.json",
        "__init__.py",
        "__main__.py",
        "_tasks.py",
        "client.py",
        "models.py",
        "py.typed",
        "tools.json",
    ]
    assert f"from {sdk_http_url} " in (package / "client.py").read_text().splitlines()[0]
    assert [t["name"] for t in json.loads((package / "tools.json").read_text())["tools"]] == SDK_NAMES

    env = subprocess_env()
    env["PYTHONPATH"] = f"{workdir / 'out'}:{env['PYTHONPATH']}"
    probe = subprocess.run(
        [PYTHON, "-c", PROBE, sdk_http_url], cwd=workdir, env=env, capture_output=True, text=True, timeout=45
    )
    assert probe.returncode == 0, probe.stderr[-4000:]
    out: dict[str, Any] = json.loads(probe.stdout)
    assert out["methods"] == sorted(SDK_NAMES)
    assert (out["data_type"], out["data_is_model"]) == ("GetWeatherDataOutput", True)
    assert out["data"] == {"temperature": 21.5, "conditions": "Sunny in Oslo", "humidity": 40.0}
    assert out["async_data"] == {"temperature": 21.5, "conditions": "Sunny in Lima", "humidity": 40.0}
    assert out["users"] == ["ListUsersOutputItem", "ListUsersOutputItem"]
    assert out["sql"] == "Executed 'SELECT 1' in region us-west1: 2 rows"
    assert out["tool_error"] == "Error executing tool report_error: disk on fire"


def test_snapshot_of_the_generated_server_round_trips_the_spec(our_http_url: str, workdir: Path) -> None:
    """TOOLS-02/04, PAGE-04: snapshotting our generated server (3 pages of 2) gives back
    specs/weather.json's definitions exactly, in order — the spec survives spec -> server -> wire."""
    done = mcpgen("snapshot", our_http_url, "-o", "ours.json", cwd=workdir)
    assert done.stdout.strip() == f"saved 6 tool(s) from {our_http_url} to ours.json"
    assert json.loads((workdir / "ours.json").read_text())["tools"] == WEATHER_TOOLS


def test_header_names_a_live_server_by_its_display_url(sdk_http_url: str, workdir: Path) -> None:
    """The header records a live source as its URL without credentials, query or fragment."""
    scheme, rest = sdk_http_url.split("://", 1)
    secret_url = f"{scheme}://reader:s3cret-pass@{rest}?token=t0ken-value#frag"
    mcpgen("client", secret_url, "-o", "secret", "--package", "secret_client", cwd=workdir)
    package = workdir / "secret" / "secret_client"
    header = (package / "client.py").read_text().splitlines()[0]
    assert f" from {sdk_http_url} (sha256 " in header, header
    every_file = "".join(path.read_text() for path in package.iterdir() if path.is_file())
    assert "s3cret" not in every_file and "t0ken" not in every_file and "reader" not in every_file
