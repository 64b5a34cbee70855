"""The official SDK client (mcp==2.3.0) against our generated conformance server: multi-round-trip
elicitation answered by the SDK, caching hints on every page, progress — over HTTP and stdio.

MRTR-01/12/15/16/19 (the SDK answers our `input_required` and retries with our signed state),
CACHE-01/05 (hints on every tools/list page), PROG-01..05 (progress on the call's own stream).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import ROOT, free_port, running_server, subprocess_env

SDK_CLIENT = str(ROOT / "tests" / "peers" / "sdk_client.py")
SERVER = [sys.executable, "-m", "conformance_server"]


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    with running_server([*SERVER, "--http", "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def _sdk(target: list[str], *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, SDK_CLIENT, *args, *target],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(params=["http", "stdio"])
def target(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "http":
        return [request.getfixturevalue("http_url")]
    return ["--", *SERVER, "--stdio"]


def test_sdk_client_answers_our_elicitation_and_sees_cache_hints_and_progress(target: list[str]) -> None:
    out = _sdk(
        target,
        "--elicit-accept",
        '{"name": "Alice"}',
        "--progress",
        "--call",
        "test_input_required_result_elicitation",
        "{}",
        "--call",
        "test_tool_with_progress",
        "{}",
    )
    elicit, progress = out["calls"]
    # One round trip asked for the name; the SDK answered and retried with our requestState.
    assert out["elicitations"] == [
        {
            "message": "What is your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        }
    ]
    assert elicit["isError"] is False
    assert elicit["content"] == [{"type": "text", "text": "Hello, Alice!"}]
    # Caching hints on every page (CACHE-01), as configured for the conformance server.
    assert out["cache"] and all(page == {"ttlMs": 60000, "cacheScope": "public"} for page in out["cache"])
    # Progress reached the SDK's callback before the result, increasing (PROG-03).
    values = [note["progress"] for note in progress["progress"]]
    assert len(values) >= 3 and values == sorted(values), progress
    assert progress["isError"] is False


def test_sdk_client_without_elicitation_gets_missing_capability(target: list[str]) -> None:
    """Without a callback the SDK declares no elicitation capability: our server answers -32021
    (MRTR-13, BASE-35)."""
    out = _sdk(target, "--call", "test_input_required_result_elicitation", "{}")
    (call,) = out["calls"]
    assert out["elicitations"] == []
    assert call["error"]["code"] == -32021, call
