"""Tasks across processes sharing one real Redis (issue 34): a task created through one server process
is read, answered, and cancelled through another; a worker killed with SIGKILL leaves its task
`failed` once its lease lapses (a short lease here: `TaskOptions.lease_s`)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator

import httpx
import pytest

from mcpgen_runtime.server.core.tasks.ledger import WORKER_STOPPED
from tests.redis_server import RedisServer, running_redis
from tests.runtime.server.tasks.wire import PLAIN, call, get, listen_messages, result, wait_for
from tests.support import PYTHON, free_port, running_server

LEASE_S = 1.0


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with running_redis() as server:
        yield server


@contextlib.contextmanager
def replica(redis: RedisServer, lease_s: float = LEASE_S) -> Iterator[tuple[str, int]]:
    port = free_port()
    args = [PYTHON, "-m", "tests.runtime.server.tasks.tasks_app", str(port), redis.url, str(lease_s)]
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


def test_a_replica_stopped_with_sigterm_fails_its_tasks_at_once(
    redis: RedisServer, pair: tuple[str, str]
) -> None:
    _, survivor = pair
    with httpx.Client(timeout=10) as http, replica(redis, lease_s=30) as (stopping, pid):
        with httpx.Client(timeout=10) as once:  # closed first: no idle connection holds the drain up
            task_id = call(once, stopping, "sleepy", {"seconds": 30})["taskId"]
        stopped_at = time.monotonic()
        os.kill(pid, signal.SIGTERM)  # drains (nothing in flight), then fails what still runs
        failed = wait_for(http, survivor, task_id, "failed", timeout=15)
        assert failed["error"] == {"code": -32603, "message": WORKER_STOPPED}
        assert time.monotonic() - stopped_at < 10  # long before the 30 s lease would lapse
