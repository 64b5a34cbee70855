"""A client's huge text does not become huge spans (issue 31, item 6; span_values.py).

The weather server runs as `serve_main` runs it, in a subprocess with the real OpenTelemetry SDK
and a batch processor in front of a slow exporter (batched_spans_app.py): every span waits in the
processor's queue, as it does in front of a slow collector. Each of 40 requests carries a 3 MiB
resource URI (span name and `mcp.resource.uri`) and a 512 KiB request id. Unbounded, each queued
span held ~6.5 MiB (+250 MiB for the 40, measured); cut to the documented sizes, the server's RSS
grows by a few MiB at most, and the requests are answered in seconds.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.runtime.server_helpers import mcp_headers, request
from tests.support import PYTHON, free_port, subprocess_env, wait_for_port

pytestmark = pytest.mark.timeout(120)

URI_BYTES = 3 * 1024 * 1024
REQUESTS = 40
RSS_GROWTH_LIMIT_KIB = 40 * 1024  # unbounded spans: ~260,000 KiB
TIME_LIMIT_S = 30.0  # quiet: ~1.5 s for the 40


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"{field} not in /proc/{pid}/status")


def _huge_read(index: int) -> tuple[bytes, dict[str, str]]:
    message = request(
        f"{index}-" + "i" * (512 * 1024), "resources/read", {"uri": "file:///" + "u" * URI_BYTES}
    )
    return json.dumps(message).encode(), mcp_headers(message)


def test_huge_uris_and_ids_stay_out_of_queued_spans(tmp_path: Path) -> None:
    port = free_port()
    env = {**subprocess_env(), "MCPGEN_TEST_EXPORT_DELAY": "600", "MCPGEN_TEST_SPANS": str(tmp_path / "s")}
    proc = subprocess.Popen(
        [PYTHON, "-m", "tests.hostile.batched_spans_app", "--http", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        with httpx.Client(timeout=30) as http:
            for index in range(3):  # warm: imports, allocator arenas, the connection
                body, headers = _huge_read(index)
                http.post(url, content=body, headers=headers)
            rss_before = _status_kib(proc.pid, "VmRSS")
            started = time.monotonic()
            for index in range(REQUESTS):
                body, headers = _huge_read(index)
                reply = http.post(url, content=body, headers=headers)
                assert reply.status_code in (200, 400), reply.status_code  # answered, whatever it says
            elapsed = time.monotonic() - started
        growth = _status_kib(proc.pid, "VmRSS") - rss_before
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGKILL)  # the slow exporter would hold a clean exit for minutes
        proc.wait()
        assert proc.stderr is not None
        stderr = proc.stderr.read().decode(errors="replace")
    assert "Traceback" not in stderr, stderr[-3000:]
    assert elapsed < TIME_LIMIT_S, elapsed
    assert growth < RSS_GROWTH_LIMIT_KIB, f"RSS grew by {growth} KiB for {REQUESTS} queued spans"
