"""The benchmarks still run: `python -m bench --quick` (about a second of each), against real servers.

Not a measurement: it checks that every benchmark starts its servers, gets correct replies (the
load generator verifies them), fills its table and writes RESULTS.md. FastMCP and the uvloop
variant are optional here (`make bench-deps` installs them); the rest must run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT, subprocess_env

pytestmark = pytest.mark.timeout(400)


def test_make_bench_quick(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--variants", "h11", "--skip", "gen", "--out", str(out),
         "--data-dir", str(tmp_path)],
        cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=380,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = out.read_text()
    for heading in ("## Servers: throughput side by side", "## Clients: one sequential call", "## Round trips",
                    "## Parts (CPU per operation"):
        assert heading in text, heading
    for row in ("mcpgen (generated bench_server)", "SDK MCPServer (defaults)", "SDK MCPServer (json_response=True)",
                "bare ASGI (ceiling)", "raw POST, blocking socket (baseline)", "mcpgen Client (generated, sync)",
                "mcpgen AsyncClient (generated)", "SDK mcp.Client (async)"):
        assert row in text, row
    assert "throughput h11 c=8:" in text
    assert "client overhead ours-sync:" in text and "client overhead ours-async:" in text

    [stamp] = tmp_path.glob("*-quick-all.json")
    results = json.loads(stamp.read_text())
    for row in results["server"]["summary"]:
        assert row["errors"] == 0, row
        assert row["rps"] > 0, row
    assert {r["server"] for r in results["server"]["summary"]} >= {"ours", "sdk", "sdk-json", "bare"}
    engines = results["client"]["engines"]
    assert engines["ours-sync"] == engines["ours-async"] == "http11"
    assert engines["ours-httpx"] == "httpx"
    assert all(r.get("ok", False) or "error" in r for r in results["roundtrips"]), results["roundtrips"]
