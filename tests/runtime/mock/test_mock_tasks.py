"""Tasks from the mock: a `task` rule or a tool marked `execution.taskSupport` answers a client that
declared the tasks extension with a task ending after a delay — the runtime's client against
`running_mock` on loopback HTTP and over stdio: a plain call polls to the end, a handle waits,
answers in-task input and cancels; a client without the extension gets the answer inline.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from mcpgen_runtime.client import Client
from mcpgen_runtime.errors import TaskCancelledError, TaskFailedError
from mcpgen_runtime.mock import ResponsesError, running_mock
from mcpgen_runtime.protocol.input_messages import ElicitRequest, ElicitResult
from mcpgen_runtime.protocol.tasks import EXTENSION
from tests.runtime.server_helpers import call, mcp_headers
from tests.support import subprocess_env

pytestmark = pytest.mark.timeout(60)

_ARGS = {"type": "object", "properties": {"n": {"type": "integer"}}}
TOOLS: list[dict[str, Any]] = [
    {"name": "crunch", "inputSchema": _ARGS},
    {"name": "marked", "inputSchema": _ARGS, "execution": {"taskSupport": "optional"}},
]
UNIT = {"type": "object", "properties": {"unit": {"type": "string", "enum": ["C", "F"]}}}
RESPONSES: dict[str, Any] = {
    "tools": {
        "crunch": [
            {
                "match": {"n": 1},
                "task": {"after_ms": 300, "status": "Crunching", "poll_interval_ms": 20},
                "text": "6",
            },
            {"match": {"n": 2}, "task": {"after_ms": 60_000, "poll_interval_ms": 20}, "text": "never"},
            {
                "match": {"n": 3},
                "task": {"poll_interval_ms": 20},
                "elicit": {"message": "Unit?", "schema": UNIT},
                "text": "asked",
            },
            {"match": {"n": 4}, "task": True, "rpc_error": {"code": -32603, "message": "Upstream down"}},
        ]
    }
}


class Args(BaseModel):
    n: int = 0


@pytest.mark.peer  # servers on loopback
def test_a_plain_call_polls_the_mocked_task_to_its_answer_after_the_delay() -> None:
    statuses: list[Any] = []
    with running_mock(TOOLS, responses=RESPONSES) as mock:
        with Client(mock.url, on_progress=lambda *a: statuses.append(a)) as client:
            started = time.monotonic()
            result = client.call_tool("crunch", {"n": 1})
            assert time.monotonic() - started >= 0.3
            assert result.text == "6"
            assert any("Crunching" in str(a) for a in statuses)
            with pytest.raises(TaskFailedError) as failed:  # rpc_error: the task fails with it
                client.call_tool("crunch", {"n": 4})
            assert failed.value.code == -32603
        assert [c.arguments for c in mock.calls] == [{"n": 1}, {"n": 4}]


@pytest.mark.peer  # servers on loopback
def test_a_handle_waits_and_cancels_and_a_marked_tool_is_a_task_by_default() -> None:
    with running_mock(TOOLS, responses=RESPONSES) as mock, Client(mock.url) as client:
        handle = client._start_task("crunch", {"n": 1}, Args)
        assert handle.task_id is not None
        first = handle.status()
        assert (first.status, first.status_message, first.poll_interval_ms) == ("working", "Crunching", 20)
        assert handle.wait(timeout=10).status == "completed"
        assert handle.result().text == "6"

        slow = client._start_task("crunch", {"n": 2}, Args)
        assert slow.task_id is not None
        with pytest.raises(TimeoutError):
            slow.wait(timeout=0.2)
        slow.cancel()
        assert slow.status().status == "cancelled"
        with pytest.raises(TaskCancelledError):
            slow.result()

        marked = client._start_task("marked", {"n": 7}, Args)  # no rule: a task with no delay
        assert marked.task_id is not None
        assert marked.result().text == 'mcpgen mock: marked called with {"n":7}'
        unmarked = client._start_task("crunch", {"n": 7}, Args)  # no rule, not marked: inline
        assert unmarked.task_id is None


@pytest.mark.peer  # servers on loopback
def test_a_client_without_the_extension_gets_the_same_answer_inline() -> None:
    with running_mock(TOOLS, responses=RESPONSES) as mock:
        for arguments in ({"name": "crunch", "arguments": {"n": 1}}, {"name": "marked", "arguments": {}}):
            message = call(1, arguments["name"], arguments["arguments"])
            body = httpx.post(mock.url, json=message, headers=mcp_headers(message), timeout=10).json()
            assert body["result"].get("resultType") != "task" and "content" in body["result"]
        with_tasks = call(2, "crunch", {"n": 1}, **{"io.modelcontextprotocol/clientCapabilities": {}})
        with_tasks["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {
            "extensions": {EXTENSION: {}}
        }
        body = httpx.post(mock.url, json=with_tasks, headers=mcp_headers(with_tasks), timeout=10).json()
        assert body["result"]["resultType"] == "task"


@pytest.mark.peer  # servers on loopback
def test_an_elicit_rule_asks_inside_the_task_through_tasks_update() -> None:
    asked: list[ElicitRequest] = []

    def on_elicit(request: ElicitRequest) -> ElicitResult:
        asked.append(request)
        return ElicitResult.accept({"unit": "C"})

    with running_mock(TOOLS, responses=RESPONSES) as mock:
        with Client(mock.url, on_elicit=on_elicit) as client:
            assert client.call_tool("crunch", {"n": 3}).text == "asked"
        assert [r.message for r in asked] == ["Unit?"]
        assert mock.calls[0].elicited == {"action": "accept", "content": {"unit": "C"}}

        # Elicitation declared, no callback: the handle stops at the request.
        with Client(mock.url, capabilities={"elicitation": {"form": {}}}) as client:
            handle = client._start_task("crunch", {"n": 3}, Args)
            state = handle.wait(timeout=10)
            assert state.status == "input_required" and state.input_requests is not None
            (key,) = state.input_requests
            handle.respond({key: {"action": "accept", "content": {"unit": "F"}}})
            assert handle.result().text == "asked"
        assert mock.calls[1].elicited == {"action": "accept", "content": {"unit": "F"}}


@pytest.mark.peer  # servers on loopback
def test_tasks_over_stdio() -> None:
    with running_mock(TOOLS, responses=RESPONSES, transport="stdio") as mock:
        assert mock.command is not None
        with Client.stdio(mock.command, env=subprocess_env()) as client:
            assert client.call_tool("crunch", {"n": 1}).text == "6"
            handle = client._start_task("crunch", {"n": 2}, Args)
            assert handle.task_id is not None
            handle.cancel()
            with pytest.raises(TaskCancelledError):
                handle.result()
        assert [c.arguments for c in mock.calls] == [{"n": 1}, {"n": 2}]


@pytest.mark.parametrize(
    ("task", "why"),
    [
        ({"after": "2s"}, "expected true or {after_ms"),
        ({"after_ms": -1}, "after_ms: expected milliseconds"),
        ({"after_ms": [5, 1]}, "after_ms: expected milliseconds"),
        ({"status": ""}, "status: expected a non-empty string"),
        ({"poll_interval_ms": 0}, "poll_interval_ms: expected whole milliseconds"),
        ("yes", "expected true or {after_ms"),
    ],
)
def test_a_bad_task_rule_stops_the_mock_naming_it(task: Any, why: str) -> None:
    bad = {"tools": {"crunch": [{"task": task}]}}
    with (
        pytest.raises(ResponsesError, match=r"tools\.crunch\[0\]\.task") as error,
        running_mock(TOOLS, responses=bad),
    ):
        pass
    assert why in str(error.value)
