"""Resource subscriptions are bounded (issue 31, item 2), against a real server process: the
hand-written surfaces server (tests/runtime/surfaces_server_app.py, whose `file:///{+path}` template
serves any `file:///` URI) over HTTP and stdio, with its default limits.

- legacy `resources/subscribe` of 3 MiB URIs is refused and keeps nothing; a URI nothing serves is
  refused; a session's URIs stop at `max_resource_subscription_bytes` (64 KiB);
- `subscriptions/listen` streams carrying 3 MB of URIs each acknowledge (and keep) at most 64 KiB
  of served URIs, and leave out those nothing serves;
- one stdio connection holds at most `max_listen_streams` (16) listen streams.

Each asserts the wall time and the server's RSS growth (VmRSS, /proc), with margins for a loaded
two-core machine that the unbounded code clearly exceeds.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.runtime import legacy_helpers as legacy
from tests.runtime.server_helpers import mcp_headers, request
from tests.support import PYTHON, ROOT, free_port, running_server, subprocess_env

pytestmark = pytest.mark.timeout(120)

SERVER = "tests.runtime.surfaces_server_app"
MIB = 1024 * 1024
MAX_BYTES = 64 * 1024  # LegacySessionOptions.max_resource_subscription_bytes (default)
MAX_URI = 8192  # ServerConfig.max_uri_length (default)
MAX_STREAMS = 16  # ServerConfig.max_listen_streams (default)
SUB_ID = "io.modelcontextprotocol/subscriptionId"


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def http_server() -> Iterator[tuple[str, int]]:
    port = free_port()
    with running_server([PYTHON, "-m", SERVER, "--http", "--port", str(port)], port) as proc:
        yield f"http://127.0.0.1:{port}/mcp", proc.pid


def test_legacy_subscribe_keeps_no_huge_unserved_or_surplus_uri(http_server: tuple[str, int]) -> None:
    url, pid = http_server
    with httpx.Client(base_url=url, timeout=30) as http:
        session = legacy.LegacySession(http)
        session.initialize()
        rss_before = _rss_kib(pid)
        started = time.monotonic()
        for i in range(30):  # 3 MiB each, under the 4 MiB body limit: +87 MiB when kept
            huge = f"file:///{i}/" + "a" * (3 * MIB)
            answer = session.exchange(legacy.request(i + 1, "resources/subscribe", {"uri": huge}))
            assert answer.response is not None and answer.response["error"]["code"] == -32602
        took = time.monotonic() - started
        unserved = session.exchange(legacy.request(99, "resources/subscribe", {"uri": "nothing://served"}))
        assert unserved.response is not None
        assert unserved.response["error"]["code"] == -32002  # resource not found (2025 revisions)
        assert unserved.response["error"]["data"] == {"uri": "nothing://served"}

        kept: list[str] = []
        for i in range(40):  # 8,000-byte served URIs until the session's 64 KiB are used
            uri = f"file:///{i:04}/" + "b" * (8000 - 13)
            answer = session.exchange(legacy.request(100 + i, "resources/subscribe", {"uri": uri}))
            assert answer.response is not None
            if "error" in answer.response:
                assert answer.response["error"]["code"] == -32602
                assert "Too many resource subscriptions" in answer.response["error"]["message"]
                break
            kept.append(uri)
        assert len(kept) == MAX_BYTES // 8000  # 8 fit; the ninth is refused
        # Unsubscribing frees room for another.
        session.exchange(legacy.request(200, "resources/unsubscribe", {"uri": kept[0]}))
        again = session.exchange(legacy.request(201, "resources/subscribe", {"uri": "note://readme"}))
        assert again.result == {}
        grown_mib = (_rss_kib(pid) - rss_before) / 1024
    assert took < 30, took  # ~1 s quiet: 90 MiB sent and refused
    assert grown_mib < 24, grown_mib


async def _listen(port: int, id_: int, uris: list[str]) -> tuple[asyncio.StreamWriter, dict[str, Any]]:
    """Open a listen stream on its own connection; return it with the acknowledgment's filter."""
    message = request(id_, "subscriptions/listen", {"notifications": {"resourceSubscriptions": uris}})
    body = json.dumps(message).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in mcp_headers(message).items())
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=8 * MIB)
    writer.write(
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body
    )
    await writer.drain()
    status = await reader.readline()
    assert b" 200 " in status, status
    while True:
        line = await reader.readline()
        assert line, "the stream closed before its acknowledgment"
        if line.startswith(b"data:"):
            event = json.loads(line[5:])
            assert event["method"] == "notifications/subscriptions/acknowledged"
            assert event["params"]["_meta"][SUB_ID] == id_
            return writer, event["params"]["notifications"]


def test_listen_streams_keep_at_most_their_share_of_served_uris(http_server: tuple[str, int]) -> None:
    url, pid = http_server
    port = int(url.split(":")[2].split("/")[0])
    served = [f"file:///{i:05}/" + "c" * (3000 - 14) for i in range(1000)]  # 3 MB of served URIs
    uris = ["nothing://a", "nothing://b", *served]

    async def scenario() -> tuple[list[dict[str, Any]], float, float]:
        rss_before = _rss_kib(pid)
        started = time.monotonic()
        # One after another: what stays is what the open streams keep, not a burst's transient peak.
        opened = [await _listen(port, i, uris) for i in range(1, 21)]
        took = time.monotonic() - started
        grown = (_rss_kib(pid) - rss_before) / 1024
        for writer, _ in opened:
            writer.close()
        return [ack for _, ack in opened], took, grown

    acks, took, grown_mib = asyncio.run(scenario())
    for ack in acks:
        kept = ack["resourceSubscriptions"]
        assert "nothing://a" not in kept and "nothing://b" not in kept  # SUB-03: not served, left out
        assert kept == served[: len(kept)]  # in order, the first that fit
        assert sum(len(u) for u in kept) <= MAX_BYTES < sum(len(u) for u in served[: len(kept) + 1])
    assert took < 30, took  # ~1 s quiet for 60 MB of requests
    assert grown_mib < 48, grown_mib  # unbounded: every stream keeps its 3 MB (+120 MiB and more)


def test_one_stdio_connection_holds_at_most_max_listen_streams() -> None:
    proc = subprocess.Popen(
        [PYTHON, "-m", SERVER, "--stdio"],
        cwd=ROOT,
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(request(0, "tools/list")).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0  # started: measure from here
        big = [f"file:///{i:05}/" + "d" * 2986 for i in range(1000)]  # 3 MB per stream
        started = time.monotonic()
        rss_before = _rss_kib(proc.pid)
        acknowledged: set[int] = set()
        refused: set[int] = set()
        for id_ in range(1, MAX_STREAMS + 5):
            message = request(id_, "subscriptions/listen", {"notifications": {"resourceSubscriptions": big}})
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
            got = json.loads(proc.stdout.readline())  # its acknowledgment, or its refusal
            if got.get("method") == "notifications/subscriptions/acknowledged":
                kept = got["params"]["notifications"]["resourceSubscriptions"]
                assert kept == big[: len(kept)] and sum(map(len, kept)) <= MAX_BYTES
                acknowledged.add(got["params"]["_meta"][SUB_ID])
            else:
                assert got["error"]["code"] == -32600 and "listen streams" in got["error"]["message"]
                refused.add(got["id"])
        took = time.monotonic() - started
        grown_mib = (_rss_kib(proc.pid) - rss_before) / 1024
    finally:
        proc.kill()
        proc.wait()
    assert acknowledged == set(range(1, MAX_STREAMS + 1)) and refused == set(
        range(MAX_STREAMS + 1, MAX_STREAMS + 5)
    )
    assert took < 30, took
    assert grown_mib < 48, grown_mib  # unbounded: every stream keeps its 3 MB (+100 MiB and more)
