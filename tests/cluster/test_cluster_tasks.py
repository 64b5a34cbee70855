"""Tasks across processes sharing one real Redis (issue 34): a task created through one server process
is read, answered, and cancelled through another; a worker killed with SIGKILL leaves its task
`failed` once its lease lapses (a short lease here: `TaskOptions.lease_s`). And the cluster of
harness.py (3 replicas of the generated conformance server behind nginx, `--task-lease` short through
MCPGEN_TASK_LEASE) under 100 tasks while one replica is SIGKILLed: none lost, none stuck."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from mcpgen_runtime.client import AsyncClient, AsyncTaskHandle
from mcpgen_runtime.errors import McpRuntimeError
from mcpgen_runtime.protocol.tasks import TaskState, mask_task_id
from mcpgen_runtime.server.cli import TASK_LEASE_ENV
from mcpgen_runtime.server.core.tasks.ledger import WORKER_STOPPED
from tests.cluster.harness import Cluster, running_cluster
from tests.redis_server import RedisServer, running_redis
from tests.runtime.server.tasks.wire import PLAIN, call, get, listen_messages, result, wait_for
from tests.support import PYTHON, free_port, running_server

LEASE_S = 1.0


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


@contextlib.contextmanager
def replica(redis: RedisServer, lease_s: float = LEASE_S, grace_s: float = 10.0) -> Iterator[tuple[str, int]]:
    port = free_port()
    app = "tests.runtime.server.tasks.tasks_app"
    args = [PYTHON, "-m", app, str(port), redis.url, str(lease_s), "100", str(grace_s)]
    with running_server(args, port) as proc:
        yield f"http://127.0.0.1:{port}/mcp", proc.pid


@pytest.fixture(scope="module")
def pair(redis: RedisServer) -> Iterator[tuple[str, str]]:
    with replica(redis) as (a, _), replica(redis) as (b, _):
        yield a, b


def test_a_task_made_on_one_replica_is_read_answered_and_cancelled_on_another(pair: tuple[str, str]) -> None:
    a, b = pair
    with httpx.Client(timeout=10) as http:
        task_id = call(http, a, "asker")["taskId"]
        asked = wait_for(http, b, task_id, "input_required")
        [key] = asked["inputRequests"]
        answer = {"action": "accept", "content": {"answer": "from b"}}
        result(http, b, "tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
        done = wait_for(http, b, task_id, "completed")  # the worker on A read the answer given to B
        assert done["result"]["content"][0]["text"] == "answers: from b"
        assert get(http, a, task_id) == get(http, b, task_id)

        probe = call(http, a, "cancel_probe", {"label": "across"})["taskId"]
        assert get(http, b, probe)["status"] == "working"
        result(http, b, "tasks/cancel", {"taskId": probe})
        assert get(http, a, probe)["status"] == "cancelled"  # at once, on every replica
        deadline = time.monotonic() + 5
        while "across" not in call(http, a, "cancelled_seen", caps=PLAIN)["content"][0]["text"]:
            assert time.monotonic() < deadline, "the handler on A never saw the cancellation sent to B"
            time.sleep(0.02)


def test_a_killed_worker_leaves_its_task_failed_once_the_lease_lapses(
    redis: RedisServer, pair: tuple[str, str]
) -> None:
    _, survivor = pair
    with httpx.Client(timeout=10) as http, replica(redis) as (doomed, pid):
        task_id = call(http, doomed, "sleepy", {"seconds": 30})["taskId"]
        assert get(http, survivor, task_id)["status"] == "working"
        killed_at = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        failed = wait_for(http, survivor, task_id, "failed", timeout=LEASE_S * 3 + 5)
        assert failed["status"] == "failed"
        assert failed["error"] == {"code": -32603, "message": WORKER_STOPPED}
        assert time.monotonic() - killed_at < LEASE_S + 3  # no later than the lease (plus polling)
        assert get(http, survivor, task_id)["status"] == "failed"  # and it stays so


def test_a_listen_stream_on_one_replica_hears_a_task_running_on_another(pair: tuple[str, str]) -> None:
    a, b = pair
    with httpx.Client(timeout=10) as http:
        task_id = call(http, a, "sleepy", {"seconds": 0.5})["taskId"]
        messages = listen_messages(http, b, [task_id], until="completed")
        assert messages[0]["params"]["notifications"] == {"taskIds": [task_id]}
        final = messages[-1]["params"]
        assert final["taskId"] == task_id and final["result"]["content"][0]["text"] == "slept 0.5"


def test_a_listen_stream_hears_a_dead_workers_task_fail(redis: RedisServer, pair: tuple[str, str]) -> None:
    _, survivor = pair
    with httpx.Client(timeout=10) as http, replica(redis) as (doomed, pid):
        task_id = call(http, doomed, "sleepy", {"seconds": 30})["taskId"]
        os.kill(pid, signal.SIGKILL)  # nobody announces this: the stream's periodic read notices
        messages = listen_messages(http, survivor, [task_id], until="failed", timeout=LEASE_S * 4 + 5)
        assert messages[-1]["params"]["error"]["message"] == WORKER_STOPPED


def test_a_replica_stopped_with_sigterm_lets_its_tasks_finish_within_the_grace(
    redis: RedisServer, pair: tuple[str, str]
) -> None:
    """A rolling deploy: the draining replica's tasks get the shutdown grace to finish (their
    results kept for every replica); only those still running after it fail, with the clear error,
    at the grace — not at once, and not when their 30 s leases would lapse."""
    _, survivor = pair
    grace_s = 3.0
    with httpx.Client(timeout=10) as http, replica(redis, lease_s=30, grace_s=grace_s) as (stopping, pid):
        with httpx.Client(timeout=10) as once:  # closed first: no idle connection holds the drain up
            quick = call(once, stopping, "sleepy", {"seconds": 1})["taskId"]
            slow = call(once, stopping, "sleepy", {"seconds": 30})["taskId"]
        stopped_at = time.monotonic()
        os.kill(pid, signal.SIGTERM)
        done = wait_for(http, survivor, quick, "completed", timeout=10)
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "slept 1"
        assert time.monotonic() - stopped_at < grace_s
        assert get(http, survivor, slow)["status"] == "working"  # still within the grace
        failed = wait_for(http, survivor, slow, "failed", timeout=15)
        assert failed["error"] == {"code": -32603, "message": WORKER_STOPPED}
        assert grace_s - 0.5 < time.monotonic() - stopped_at < grace_s + 5  # at the grace, not the lease


def _ready(url: str) -> bool:
    try:
        return httpx.get(url.replace("/mcp", "/readyz"), timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def test_a_second_ctrl_c_cuts_the_tasks_grace_short(redis: RedisServer, pair: tuple[str, str]) -> None:
    _, survivor = pair
    with httpx.Client(timeout=10) as http, replica(redis, lease_s=30, grace_s=30) as (stopping, pid):
        with httpx.Client(timeout=10) as once:
            task_id = call(once, stopping, "sleepy", {"seconds": 60})["taskId"]
        os.kill(pid, signal.SIGTERM)  # the drain: the task may take up to 30 s ...
        deadline = time.monotonic() + 5
        while _ready(stopping):  # draining: readiness 503, then the listener closed
            assert time.monotonic() < deadline, "the replica never started draining"
            time.sleep(0.02)
        stopped_at = time.monotonic()
        os.kill(pid, signal.SIGINT)  # ... until a second Ctrl-C
        failed = wait_for(http, survivor, task_id, "failed", timeout=10)
        assert failed["error"] == {"code": -32603, "message": WORKER_STOPPED}
        assert time.monotonic() - stopped_at < 5


# ---- 100 tasks on the generated conformance server: 3 replicas behind nginx, one killed ----------

CLUSTER_LEASE_S = 2.0  # the replicas' `--task-lease` (MCPGEN_TASK_LEASE), so the kill resolves quickly
TASKS = 100
CANCELLED_EVERY = 7  # every 7th task is cancelled (through nginx: any replica)
SETTLED = ("completed", "failed", "cancelled")


@pytest.fixture(scope="module")
def leased_cluster() -> Iterator[Cluster]:
    with running_cluster(3, env={TASK_LEASE_ENV: str(CLUSTER_LEASE_S)}) as cluster:
        yield cluster


class SlowComputeInput(BaseModel):  # the conformance server's slow_compute arguments
    seconds: float
    label: str


@dataclass
class Tracked:
    """One task as the test saw it: its handle, when it should end, and every status read."""

    handle: AsyncTaskHandle[Any]
    seconds: float
    started: float
    seen: list[tuple[float, TaskState]] = field(default_factory=list)

    @property
    def last(self) -> TaskState:
        return self.seen[-1][1]


async def _start_all(client: AsyncClient, durations: list[float]) -> list[Tracked]:
    async def one(i: int, seconds: float) -> Tracked:
        args = {"seconds": seconds, "label": f"t{i}"}
        handle = await client._start_task("slow_compute", args, SlowComputeInput)
        assert handle.task_id is not None, "slow_compute answered without a task"
        return Tracked(handle, seconds, time.monotonic())

    return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(durations))))


async def _poll_until_settled(
    client: AsyncClient, tracked: list[Tracked], deadline: float
) -> dict[int, BaseException]:
    """Read every unsettled task (tasks/get through nginx, spread over the replicas) until all have
    settled or `deadline`; the errors of reads that failed, by task index."""
    errors: dict[int, BaseException] = {}

    async def read(i: int, task: Tracked) -> None:
        try:
            state = await task.handle.status()
        except McpRuntimeError as exc:
            errors[i] = exc
            return
        task.seen.append((time.monotonic(), state))

    while time.monotonic() < deadline:
        open_ = [(i, t) for i, t in enumerate(tracked) if not t.seen or t.last.status not in SETTLED]
        if not open_:
            break
        await asyncio.gather(*(read(i, t) for i, t in open_))
        await asyncio.sleep(0.25)
    return errors


@pytest.mark.timeout(60)
def test_a_hundred_tasks_across_replicas_all_settle_when_one_replica_dies(leased_cluster: Cluster) -> None:
    """100 slow_compute tasks (2-5 s) through nginx with the runtime client's handles, polled across
    the replicas, every 7th cancelled, one replica SIGKILLed a second in: each task settles —
    completed with its result, cancelled as asked, or (the dead replica's) failed with the clear
    error once its lease lapsed. No read says not-found, nothing stays working past lease + margin."""
    cluster = leased_cluster
    victim = cluster.replicas[1]
    rng = random.Random(34)
    durations = [round(rng.uniform(2.0, 5.0), 2) for _ in range(TASKS)]

    async def run() -> tuple[list[Tracked], dict[int, BaseException], float]:
        async with AsyncClient(cluster.url, timeout=15, retries=2) as client:
            tracked = await _start_all(client, durations)
            for task in tracked[::CANCELLED_EVERY]:
                await task.handle.cancel()
            await asyncio.sleep(1.0)  # every task is running somewhere now
            await asyncio.to_thread(victim.kill)
            killed_at = time.monotonic()
            errors = await _poll_until_settled(client, tracked, time.monotonic() + 25)
            return tracked, errors, killed_at

    tracked, errors, killed_at = asyncio.run(run())
    assert not errors, {i: f"{type(e).__name__}: {e}" for i, e in errors.items()}  # never not-found
    unsettled = [
        t.handle.task_id and mask_task_id(t.handle.task_id) for t in tracked if t.last.status not in SETTLED
    ]
    assert not unsettled, unsettled

    cancelled_indexes = set(range(0, TASKS, CANCELLED_EVERY))
    outcomes: Counter[str] = Counter()
    for i, task in enumerate(tracked):
        state = task.last
        outcomes[state.status] += 1
        if i in cancelled_indexes:
            assert state.status == "cancelled", (i, state)  # cancelled long before its end; stays so
        elif state.status == "completed":
            assert state.result is not None
            assert state.result["content"][0]["text"] == f"Computed t{i} in {task.seconds:g} s."
        else:
            assert state.status == "failed", (i, state)
            assert state.error == {"code": -32603, "message": WORKER_STOPPED}
        # Stuck: still `working` past its own end (plus margin) and past the lease after the kill.
        for when, seen in task.seen:
            if seen.status == "working":
                limit = max(task.started + task.seconds, killed_at + CLUSTER_LEASE_S) + 3.0
                assert when < limit, (i, when - killed_at, task.seconds)
    assert outcomes["failed"] > 0, outcomes  # the kill hit running tasks ...
    assert outcomes["completed"] > TASKS // 3, outcomes  # ... and the survivors finished theirs
    assert sum(outcomes.values()) == TASKS

    # The same end on every surviving replica, read directly.
    with httpx.Client(timeout=10) as http:
        for replica in (cluster.replicas[0], cluster.replicas[2]):
            for task in tracked[::9]:
                assert task.handle.task_id is not None
                assert get(http, replica.url, task.handle.task_id)["status"] == task.last.status
