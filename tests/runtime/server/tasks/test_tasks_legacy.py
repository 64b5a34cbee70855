"""The 2025-11-25 experimental tasks in legacy sessions, driven by the official SDK 1.30.0's
`session.experimental` (tests/peers/sdk1_tasks_client.py): the `tasks` capability, tools'
`execution.taskSupport`, `task`-augmented calls, tasks/get, tasks/result, tasks/cancel (an ended task
refused), an isError result failing its task, a required tool refused without a task."""

from __future__ import annotations

import json
import subprocess

from tests.support import ROOT, SDK1_PYTHON, needs_peer


def test_the_official_sdk_1x_runs_tools_as_2025_11_25_tasks(url: str) -> None:
    needs_peer(SDK1_PYTHON, "the official SDK 1.30.0 venv")
    run = subprocess.run(
        [str(SDK1_PYTHON), "-W", "ignore", str(ROOT / "tests/peers/sdk1_tasks_client.py"), url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout)
    assert out["protocolVersion"] == "2025-11-25"
    assert out["tasksCapability"] == {"requests": {"tools": {"call": {}}}, "cancel": {}}
    assert out["execution"]["sleepy"] == "optional" and out["execution"]["required_sleepy"] == "required"
    assert "inline_or_task" not in out["execution"]
    assert out["created"] == {"status": "working", "ttl": 30000}
    assert (out["sleepy"], out["sleepyResult"]) == ("completed", ["slept 0.3"])
    assert (out["cancelled"], out["cancelAgain"]) == ("cancelled", -32602)
    assert (out["boom"], out["boomIsError"]) == ("failed", True)
    assert out["requiredInline"] == -32601
