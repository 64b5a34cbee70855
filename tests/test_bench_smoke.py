"""The benchmarks still run: `python -m bench --quick` (about a second of each), against real servers.

Not a measurement: it checks that every benchmark starts its servers, gets correct replies (the
load generator verifies them, in both eras), fills its table and writes RESULTS.md. FastMCP and the uvloop
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
        [
            sys.executable,
            "-m",
            "bench",
            "--quick",
            "--variants",
            "h11",
            "--skip",
            "gen",
            "--out",
            str(out),
            "--data-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=380,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = out.read_text()
    for heading in (
        "## Servers: throughput side by side",
        "## Clients: one sequential call",
        "## Round trips",
        "## Parts (CPU per operation",
        "## Legacy era (initialize-based revisions)",
        "### Servers: legacy `tools/call` throughput",
        "### Clients: one sequential call in a legacy session",
        "### Idle legacy sessions: server memory",
        "## OpenTelemetry: off, unconfigured, on",
    ):
        assert heading in text, heading
    for row in (
        "mcpgen (generated bench_server)",
        "SDK MCPServer (defaults)",
        "SDK MCPServer (json_response=True)",
        "bare ASGI (ceiling)",
        "raw POST, blocking socket (baseline)",
        "mcpgen Client (generated, sync)",
        "mcpgen AsyncClient (generated)",
        "SDK mcp.Client (async)",
        "2025-11-25 (session)",
        "raw legacy POST in a session, blocking socket (baseline)",
        'mcpgen Client (generated, sync, era="legacy")',
        'mcpgen AsyncClient (generated, era="legacy")',
        'SDK mcp.Client (async, mode="legacy")',
    ):
        assert row in text, row
    assert "throughput h11 c=8:" in text
    assert "client overhead ours-sync:" in text and "client overhead ours-async:" in text
    assert "legacy throughput h11 c=8:" in text and "legacy vs SDK 2.3.0 h11 c=8:" in text
    assert "client overhead ours-sync-legacy:" in text and "client overhead ours-async-legacy:" in text
    assert "idle legacy session (asgi):" in text and "10000 sessions" in text

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

    legacy = results["legacy-server"]["summary"]
    for row in legacy:  # the load generator checked the replies of every session
        assert row["errors"] == 0, row
        assert row["rps"] > 0, row
    assert {(r["server"], r["era"]) for r in legacy} == {
        ("ours", "modern"),
        ("ours", "legacy"),
        ("sdk", "legacy"),
        ("sdk-json", "legacy"),
    }
    legacy_engines = results["legacy-client"]["engines"]
    assert legacy_engines["ours-sync-legacy"] == legacy_engines["ours-async-legacy"] == "http11"
    assert {r["client"] for r in results["legacy-client"]["summary"]} == {
        "raw-legacy",
        "ours-sync-legacy",
        "ours-async-legacy",
        "sdk-legacy",
    }
    assert [r["sessions"] for r in results["legacy-sessions"]["rows"]] == [10_000, 10_000]

    scaled = results["scale"]  # bench/scale.py: replicas behind the shipped nginx.conf
    assert "## Scale-out: replicas behind nginx (bench/scale.py)" in text
    assert scaled["rows"][0]["setup"] == "1 replica, direct, in-memory store (reference)"
    if not scaled["skipped"]:
        assert [(r["store"], r["rate_limit"]) for r in scaled["rows"] if not r["proxy"]] == [
            ("memory", False),
            ("memory", True),
            ("redis", False),
            ("redis", True),
        ]
        assert [(r["replicas"], r["store"]) for r in scaled["rows"] if r["proxy"]] == [
            (1, "redis"),
            (2, "redis"),
        ]
        assert any("the Redis store costs" in line for line in scaled["verdicts"])
    for row in scaled["rows"]:
        assert row["errors"] == 0 and row["rps"] > 0, row

    polls = results["tasks"]  # bench/task_poll.py: a tasks/get poll beside a tools/call
    assert "## Tasks: a `tasks/get` poll beside a `tools/call` (bench/task_poll.py)" in text
    for row in polls["summary"]:  # the load generator checked each task's status in the replies
        assert row["errors"] == 0 and row["rps"] > 0, row
    stores = ["memory"] if polls["skipped"] else ["memory", "redis"]
    assert [(r["store"], r["request"]) for r in polls["summary"] if r["store"] in stores] == [
        (store, request)
        for store in stores
        for request in ("tools/call", "tasks/get working", "tasks/get completed")
    ]
    assert any("`tasks/get working` on the memory store" in line for line in polls["verdicts"])
