"""Era detection against stdio servers that start slowly (STDIO-13/14, VER-07): the server
sleeps before it reads stdin, so the `server/discover` probe's wait (`PROBE_TIMEOUT`, made short
here) passes first and the client sends `initialize`. A modern answer to the probe that arrives
then settles the era as modern (the handshake is abandoned); a late ordinary error, or none, keeps
the fallback. Real subprocesses: tests/peers/slow_start.py, and the official SDK 2.x server
started behind a `sleep`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcpgen_runtime.client.legacy_flows as legacy_flows
from mcpgen_runtime.transport.asyncio_stdio import AsyncStdioTransport
from tests.runtime._client_drivers import MODES, Driver, driver
from tests.support import PYTHON, ROOT

pytestmark = pytest.mark.timeout(90)

PEER = ROOT / "tests" / "peers" / "slow_start.py"
SDK_PEER = ROOT / "tests" / "peers" / "sdk_server.py"
PROBE_WAIT = 0.3  # the probe's wait in these tests
DELAY = 1.1  # the servers' start, past the probe's wait: 2 loaded cores need 0.35 s (0.2 s failed)


@pytest.fixture(autouse=True)
def short_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(legacy_flows, "PROBE_TIMEOUT", PROBE_WAIT)


def slow(tmp_path: Path, era: str, delay: float = DELAY) -> tuple[list[str], Path]:
    log = tmp_path / "received.jsonl"
    return [PYTHON, str(PEER), "--delay", str(delay), "--era", era, "--log", str(log)], log


def methods(log: Path) -> list[str | None]:
    return [json.loads(line).get("method") for line in log.read_text().splitlines()]


@pytest.fixture(params=MODES)
def connect(request: pytest.FixtureRequest) -> Iterator[Any]:
    from mcpgen_runtime.client import AsyncClient, Client

    opened: list[Any] = []

    def make(command: list[str]) -> Driver:
        manager = driver(
            request.param,
            lambda: Client.stdio(command, timeout=30),
            lambda: AsyncClient.stdio(command, timeout=30),
        )
        drv = manager.__enter__()
        opened.append(manager)
        return drv

    yield make
    for manager in reversed(opened):
        manager.__exit__(None, None, None)


def test_a_slow_modern_server_is_modern_stdio13(connect: Any, tmp_path: Path) -> None:
    command, log = slow(tmp_path, "modern")
    drv = connect(command)
    assert drv("discover")["serverInfo"]["name"] == "slow-start"  # the late answer, not asked again
    assert drv.client.era == "modern"
    assert drv("call_tool", "anything").text == "ok (modern)"
    assert drv("call_tool", "anything").text == "ok (modern)"
    seen = methods(log)
    # the probe, its cancellation, the abandoned `initialize` (never cancelled), then modern calls
    assert seen[:3] == ["server/discover", "notifications/cancelled", "initialize"]
    assert seen[3:] == ["tools/call", "tools/call"]
    assert "notifications/initialized" not in seen
    assert "_meta" in json.loads(log.read_text().splitlines()[-1])["params"]  # modern `_meta`


def test_a_late_probe_answer_while_initialize_is_pending_is_no_protocol_error(
    connect: Any, tmp_path: Path
) -> None:
    """A dual-era server answers both: the probe's late DiscoverResult comes first and wins; the
    `initialize` reply that follows is a late reply, dropped (CANCEL-10)."""
    command, log = slow(tmp_path, "dual")
    drv = connect(command)
    assert drv("call_tool", "anything").text == "ok (dual)"
    assert drv.client.era == "modern"
    assert drv("call_tool", "again").text == "ok (dual)"
    seen = methods(log)
    assert seen == ["server/discover", "notifications/cancelled", "initialize", "tools/call", "tools/call"]


def test_a_refused_initialize_after_a_silent_probe_probes_again_ver07(connect: Any, tmp_path: Path) -> None:
    """No late answer to the probe, and `initialize` refused with a modern error: the server is
    alive now, so it is asked once more, and answers as the modern server it is."""
    command, log = slow(tmp_path, "modern-drops-probe")
    drv = connect(command)
    assert drv("call_tool", "anything").text == "ok (modern-drops-probe)"
    assert drv.client.era == "modern"
    seen = methods(log)
    assert seen == [
        "server/discover",
        "notifications/cancelled",
        "initialize",
        "server/discover",
        "tools/call",
    ]


@pytest.mark.parametrize("era", ["legacy-error", "legacy-silent"])
def test_a_slow_legacy_server_stays_legacy_stdio14(connect: Any, tmp_path: Path, era: str) -> None:
    """A late ordinary error to the probe (or none) changes nothing: the handshake goes on."""
    command, log = slow(tmp_path, era)
    drv = connect(command)
    assert drv("call_tool", "anything").text == f"ok ({era})"
    assert drv.client.era == "legacy"
    assert drv("call_tool", "again").text == f"ok ({era})"
    seen = methods(log)
    assert seen == [
        "server/discover",
        "notifications/cancelled",
        "initialize",
        "notifications/initialized",
        "tools/call",
        "tools/call",
    ]
    assert "_meta" not in json.loads(log.read_text().splitlines()[-1])["params"]


def test_the_official_sdk_started_late_is_modern(connect: Any) -> None:
    """The reported failure: the SDK 2.x server answers the probe late, then refuses `initialize`
    with -32022; before the fix the client had settled on legacy and failed."""
    command = ["sh", "-c", f'sleep {DELAY}; exec "$0" "$@"', PYTHON, str(SDK_PEER), "--stdio"]
    drv = connect(command)
    result = drv("call_tool", "get_weather", {"location": "Rome"})
    assert result.text == "Weather in Rome: sunny, 22C"
    assert drv.client.era == "modern"


def test_the_asyncio_transport_hears_a_late_reply_read_before_the_request(tmp_path: Path) -> None:
    """Its reader task may read the probe's answer before `initialize` is sent: `also` finds it
    among the late replies it remembers, and the request is then not sent at all."""
    command, log = slow(tmp_path, "dual", delay=0.5)

    async def run() -> None:
        transport = AsyncStdioTransport(command)
        try:
            probe = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}
            with pytest.raises(Exception, match="no response"):
                await transport.request(probe, {}, timeout=0.1)
            await asyncio.sleep(1.5)  # the answer arrives meanwhile, awaited by nobody
            late = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}}
            reply, _ = await transport.request(late, {}, timeout=5, also=lambda m: m.get("id") == 1)
            assert reply["id"] == 1 and "supportedVersions" in reply["result"]
        finally:
            await transport.aclose()

    asyncio.run(run())
    assert methods(log) == ["server/discover", "notifications/cancelled"]
