"""Tasks through `mcpgen mock --record` and `--replay`: the generated conformance server (a real
task-capable server, `slow_compute` and `confirm_delete`) recorded through the proxy — tools/call ->
CreateTaskResult, the tasks/get polls, tasks/update, tasks/cancel — with its task ids written as
`task-N`, then replayed to the runtime's client: a plain call and a start handle complete, polls
beyond the recorded ones repeat the last state. Faults hit polls like other requests.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from mcpgen_runtime.client import Client, ElicitResult
from mcpgen_runtime.errors import ServiceUnavailableError, TaskCancelledError
from mcpgen_runtime.mock import running_mock, task_ids
from mcpgen_runtime.mock.cassette import load_cassette
from mcpgen_runtime.mock.faults import FaultInjector, Faults
from mcpgen_runtime.mock.task_ids import TaskIdNames
from mcpgen_runtime.protocol.meta import PROTOCOL_VERSION_KEY
from tests.runtime.mock.test_record_replay import mcpgen_mock, serving
from tests.support import free_port, running_server

pytestmark = pytest.mark.timeout(120)

SLOW = {"seconds": 1.2, "label": "pi"}


class Anything(BaseModel):
    model_config = ConfigDict(extra="allow")


def session(url: str, ids: list[str]) -> list[Any]:
    """A plain task call, one in-task elicitation and a started-then-cancelled task."""

    def confirm(request: Any) -> ElicitResult:
        return ElicitResult.accept({"confirm": True})

    with Client(url, on_elicit=confirm) as client:
        plain = client.call_tool("slow_compute", SLOW).text
        asked = client.call_tool("confirm_delete", {"filename": "a.txt"}).text
        handle = client._start_task("slow_compute", {"seconds": 60, "label": "long"}, Anything)
        assert handle.task_id is not None
        ids.append(handle.task_id)
        handle.cancel()
        with pytest.raises(TaskCancelledError):
            handle.result()
    return [plain, asked]


@pytest.mark.peer  # servers on loopback
def test_a_task_server_recorded_then_replayed_without_its_task_ids(tmp_path: Path) -> None:
    cassette = tmp_path / "tasks.yaml"
    port = free_port()
    server = [sys.executable, "-m", "conformance_server", "--http", "--port", str(port)]
    live_ids: list[str] = []
    with running_server(server, port):
        upstream = f"http://127.0.0.1:{port}/mcp"
        with serving(mcpgen_mock("--record", upstream, "-o", str(cassette))) as proxy:
            live = session(proxy, live_ids)
    assert live == ["Computed pi in 1.2 s.", "Deleted a.txt."]

    text = cassette.read_text()
    assert live_ids and live_ids[0] not in text  # the secret never reaches the file
    methods = [e["request"]["method"] for e in load_cassette(cassette).exchanges]
    assert {"tools/call", "tasks/get", "tasks/update", "tasks/cancel"} <= set(methods)
    polled = [e for e in load_cassette(cassette).exchanges if e["request"]["method"].startswith("tasks/")]
    assert {e["request"]["params"]["taskId"] for e in polled} == {"task-1", "task-2", "task-3"}
    assert {e["headers"]["mcp-name"] for e in polled} == {"task-1", "task-2", "task-3"}

    with running_mock(cassette=cassette) as replay:
        replayed_ids: list[str] = []
        assert session(replay.url, replayed_ids) == live  # type: ignore[arg-type]
        assert replayed_ids == ["task-3"] and replay.misses == []
    with running_mock(cassette=cassette) as replay:
        # A handle that polls more often than the recording did: the n-th poll gets the n-th recorded
        # answer, then the last one again. era: the recording began with tools/call, no discovery.
        with Client(replay.url, era="modern") as client:
            handle = client._start_task("slow_compute", SLOW, Anything)
            assert handle.task_id == "task-1"
            states = [handle.status().status for _ in range(4)]  # more polls than were recorded
            assert states[0] == "working" and states[-1] == "completed"
            assert handle.result().text == "Computed pi in 1.2 s."
        assert replay.misses == []


def _poll_failing_seed() -> int:
    """A seed whose error rate 0.5 lets the first tools/call through and fails its first poll."""
    meta = {"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}  # a modern request (the key's era)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "crunch", "arguments": {}, **meta},
    }
    poll = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": "any-random-id", **meta}}
    for seed in range(200):
        injector = FaultInjector(Faults(seed=seed, error_rate=0.5))
        if not injector.decide(call).error and injector.decide(poll).error:
            return seed
    raise AssertionError("no seed")


@pytest.mark.peer  # servers on loopback
def test_an_injected_503_on_a_poll_is_retried_or_surfaced() -> None:
    tools = [{"name": "crunch", "inputSchema": {"type": "object"}}]
    responses = {"tools": {"crunch": [{"task": {"after_ms": 100, "poll_interval_ms": 20}, "text": "done"}]}}
    seed = _poll_failing_seed()
    with running_mock(tools, responses=responses, seed=seed, faults={"error_rate": 0.5}) as mock:
        with Client(mock.url) as client, pytest.raises(ServiceUnavailableError):
            client.call_tool("crunch", {})  # no retries: the failed poll is the call's error
        assert mock.injector is not None and mock.injector.injected["error"] >= 1
    with running_mock(tools, responses=responses, seed=seed, faults={"error_rate": 0.5}) as mock:
        with Client(mock.url, retries=5) as client:
            assert client.call_tool("crunch", {}).text == "done"  # the poll sent again
        assert mock.injector is not None and mock.injector.injected["error"] >= 1


def test_faults_on_polls_depend_on_the_order_of_tasks_not_their_random_ids() -> None:
    def polls(task_ids: list[str]) -> list[bool]:
        injector = FaultInjector(Faults(seed=3, error_rate=0.5))
        return [
            injector.decide(
                {"jsonrpc": "2.0", "id": n, "method": "tasks/get", "params": {"taskId": task_id}}
            ).error
            for n, task_id in enumerate(task_ids * 8)
        ]

    assert polls(["x7Hq2mP0aZ", "Lk3vN8wQ1c"]) == polls(["another-id-1", "another-id-2"])
    assert len(set(polls(["a", "b"]))) == 2  # still a mix of failures and successes


def test_task_ids_are_named_where_they_stand_and_inside_text_only_when_long() -> None:
    names = TaskIdNames()
    long_id = "Zk3v_N8wQ1c-Hq2mP0aZyX4r"
    created = names.rename({"result": {"resultType": "task", "taskId": long_id, "status": "working"}})
    assert created["result"]["taskId"] == "task-1"
    echoed = names.rename({"message": f"task {long_id} is working", "other": long_id, "n": 1})
    assert echoed == {"message": "task task-1 is working", "other": "task-1", "n": 1}
    short = names.rename({"taskId": "7"})
    assert short == {"taskId": "task-2"}
    assert names.rename({"arguments": {"label": "7"}}) == {"arguments": {"label": "7"}}  # any word


def test_the_ids_remembered_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_ids, "MAX_NAMED", 3)
    names = TaskIdNames()
    for n in range(5):
        names.rename({"taskId": f"peer-chosen-id-{n:04d}"})
    assert len(names._names) == 3  # the oldest forgotten first
    assert names.task_id("peer-chosen-id-0004") == "task-5"
