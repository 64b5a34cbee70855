"""Three replicas of a generated server behind the shipped nginx configuration, on the Redis
store (harness.py): probes through the proxy, and a steady load of sequential and concurrent calls
(the runtime client, through nginx) while a replica dies (SIGKILL) or drains (SIGTERM).

What must hold: no completed call is lost or wrong; every call that fails surfaces as a
retryable error, and calling again succeeds on a surviving replica; a client with `retries`
(allowed to resend calls that may have run: `retry_unsafe`) sees no failure at all; a graceful
SIGTERM fails nothing.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import httpx

from mcpgen_runtime.client import AsyncClient
from mcpgen_runtime.content import ToolResult
from mcpgen_runtime.errors import McpRuntimeError
from tests.cluster.harness import Cluster

FAST = "test_simple_text"
FAST_TEXT = "This is a simple text response for testing."
SLOW = "test_tool_with_progress"  # ~100 ms on an SSE stream: calls in flight when a replica goes
SLOW_TEXT = "Progress test completed (0, 50, 100 of 100)."
EXPECTED = {FAST: FAST_TEXT, SLOW: SLOW_TEXT}


@dataclass
class Call:
    tool: str
    result: ToolResult | None
    error: McpRuntimeError | None


def _ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    pass


def _text(result: ToolResult) -> Any:
    return None if result.is_error or not result.content else getattr(result.content[0], "text", None)


async def _steady_load(
    url: str, *, seconds: float, event: Any, retries: int = 0, concurrent: int = 4
) -> list[Call]:
    """One client calling FAST back to back, and `concurrent` clients calling SLOW (progress on,
    so each reply is a stream), for `seconds`; `event()` runs in a thread a third of the way in."""
    calls: list[Call] = []
    stop = asyncio.Event()

    async def worker(tool: str) -> None:
        async with AsyncClient(url, retries=retries, timeout=15, on_progress=_ignore_progress) as client:
            # Both tools may run twice; a plain client knows no annotations, so the caller says so
            # (a call cut by the kill, or nginx's 502 for it, is resent only then: retry_policy.py).
            caller = client.with_options(retry_unsafe=True)
            while not stop.is_set():
                try:
                    calls.append(Call(tool, await caller.call_tool(tool, {}), None))
                except McpRuntimeError as exc:
                    calls.append(Call(tool, None, exc))

    workers = [asyncio.create_task(worker(FAST))] + [
        asyncio.create_task(worker(SLOW)) for _ in range(concurrent)
    ]
    await asyncio.sleep(seconds / 3)
    await asyncio.to_thread(event)
    await asyncio.sleep(seconds * 2 / 3)
    stop.set()
    await asyncio.gather(*workers)
    return calls


def _check_completed(calls: list[Call]) -> None:
    for call in calls:
        if call.result is not None:
            assert _text(call.result) == EXPECTED[call.tool], call  # completed means complete and right


async def _retry(url: str, failed: list[Call]) -> None:
    async with AsyncClient(url, timeout=15) as client:
        for call in failed:
            result = await client.call_tool(call.tool, {})
            assert _text(result) == EXPECTED[call.tool]


def test_probes_through_nginx(cluster: Cluster) -> None:
    with httpx.Client(base_url=cluster.base, timeout=5) as http:
        for _ in range(len(cluster.replicas)):  # round robin: each replica answers once
            assert http.get("/healthz").json() == {"status": "ok"}
            assert http.get("/readyz").status_code == 200
    for replica in cluster.replicas:  # each on the shared store: the load tests below run on Redis
        ready = httpx.get(f"http://{replica.address}/readyz", timeout=5)
        assert (ready.status_code, ready.json()) == (200, {"status": "ready", "checks": ["store"]})


def test_sigkill_under_load_loses_no_completed_call(cluster: Cluster) -> None:
    victim = cluster.replicas[1]
    calls = asyncio.run(_steady_load(cluster.url, seconds=3.0, event=victim.kill))
    assert not victim.alive
    _check_completed(calls)
    failed = [call for call in calls if call.error is not None]
    for call in failed:
        assert call.error is not None and call.error.retryable, (type(call.error).__name__, str(call.error))
    asyncio.run(_retry(cluster.url, failed))  # a retry reaches a survivor
    completed = [call for call in calls if call.result is not None]
    assert len(completed) > 50, len(completed)  # the load went on after the kill
    late = [call for call in calls[len(calls) * 2 // 3 :] if call.error is not None]
    assert not late, late  # nginx stopped sending work to the dead replica


def test_sigkill_with_client_retries_fails_nothing(cluster: Cluster) -> None:
    victim = cluster.replicas[2]
    calls = asyncio.run(_steady_load(cluster.url, seconds=3.0, event=victim.kill, retries=2))
    _check_completed(calls)
    assert [call.error for call in calls if call.error is not None] == []


def test_sigterm_under_load_fails_nothing(cluster: Cluster) -> None:
    victim = cluster.replicas[0]

    def drain() -> None:
        victim.terminate()
        assert victim.proc is not None
        started = time.monotonic()
        victim.proc.wait(10)
        assert (
            time.monotonic() - started < 8
        )  # drained (pooled connections close within nginx's 4 s), not cut at the 10 s grace

    calls = asyncio.run(_steady_load(cluster.url, seconds=3.0, event=drain))
    _check_completed(calls)
    failed = [(call.tool, call.error) for call in calls if call.error is not None]
    assert failed == [], cluster.nginx_errors()[-3000:]
    assert len(calls) > 50


def test_calls_in_flight_on_a_killed_replica_fail_retryable(cluster: Cluster) -> None:
    """Nine streamed calls at once spread over the three replicas; one replica dies under them."""
    victim = cluster.replicas[1]

    async def burst() -> list[Call]:
        async def one(client: AsyncClient) -> Call:
            try:
                return Call(SLOW, await client.call_tool(SLOW, {}), None)
            except McpRuntimeError as exc:
                return Call(SLOW, None, exc)

        clients = [AsyncClient(cluster.url, timeout=15, on_progress=_ignore_progress) for _ in range(9)]
        try:
            for client in clients:  # connected and warm, so the calls start together
                await client.call_tool(FAST, {})
            calls = asyncio.gather(*(one(client) for client in clients))
            await asyncio.sleep(0.04)  # every call is in a replica's handler now (each takes ~100 ms)
            await asyncio.to_thread(victim.kill)
            return list(await calls)
        finally:
            for client in clients:
                await client.aclose()

    calls = asyncio.run(burst())
    _check_completed(calls)
    failed = [call for call in calls if call.error is not None]
    assert failed, "no call was in flight on the killed replica"
    for call in failed:
        assert call.error is not None and call.error.retryable, (type(call.error).__name__, str(call.error))
    asyncio.run(_retry(cluster.url, failed))
