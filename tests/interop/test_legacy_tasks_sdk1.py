"""The 2025-11-25 experimental tasks against the official SDK 1.30.0, which has them (its low-level
`Server` with `experimental.enable_tasks()`: tests/peers/sdk1_tasks_server.py, run by its own venv).

What the SDK does, seen here: `initialize` declares `tasks.requests.tools.call`; tools/list shows
`execution.taskSupport`; a call with the `task` parameter answers `{"task": {...}}` (`ttl` null,
`pollInterval` 500); a `required` tool called without it is -32601; in-task input is an
`elicitation/create` the server sends while `tasks/result` is pending (the task shows
`input_required`); an isError result makes the task `failed` and `tasks/result` returns that
result; task ids are scoped to the session that made them (another session's `tasks/get` is an error),
so a legacy task cannot be resumed from another process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.errors import ProtocolError, TaskCancelledError, TaskNotFoundError, ToolError
from tests.support import ROOT, SDK1_PYTHON, free_port, needs_peer, running_server

pytestmark = pytest.mark.timeout(90)

PEER = str(ROOT / "tests" / "peers" / "sdk1_tasks_server.py")
RELATED = "io.modelcontextprotocol/related-task"  # the SDK tags a task's result with its id


class Args(BaseModel):
    model_config = ConfigDict(extra="allow")


class Total(BaseModel):
    total: int


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    needs_peer(SDK1_PYTHON, "the official SDK 1.30.0 venv")
    port = free_port()
    with running_server([str(SDK1_PYTHON), PEER, "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp/"


def _confirm(request: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


def test_a_required_tool_is_called_as_a_task_and_an_optional_one_inline(url: str) -> None:
    with Client(url) as client:  # the first call finds out the server is legacy, and the tool requires a task
        required = client._call_structured("must_task", {"n": 4}, Args, Total)
        inline = client.call_tool("crunch", {"n": 4})
        again = client.call_tool("must_task", {"n": 3})
    assert required == Total(total=10)
    assert inline.structured_content == {"total": 10} and RELATED not in (inline.meta or {})
    assert again.structured_content == {"total": 6} and RELATED in (again.meta or {})


def test_a_started_handle_polls_tasks_get_and_fetches_tasks_result(url: str) -> None:
    with Client(url, on_elicit=_confirm) as client:
        handle = client._start_task("crunch", {"n": 5}, Args, Total)
        assert handle.task_id is not None
        assert handle.status().status in ("working", "completed")
        assert handle.wait(timeout=10).status == "completed"
        assert handle.result() == Total(total=15)
        asking = client._start_task("confirm", {}, Args)
        assert asking.wait(timeout=10).status == "input_required"  # legacy input comes with tasks/result
        assert asking.result().text == "confirmed"
        plain = client._start_task("plain", {}, Args)  # no execution.taskSupport: answered at once
        assert plain.task_id is None and plain.result().text == "plain 3"


def test_the_first_start_of_a_client_told_it_is_legacy_makes_a_task(url: str) -> None:
    with Client(url, era="legacy") as client:  # no handshake yet when the first call is a start
        handle = client._start_task("crunch", {"n": 2}, Args, Total)
        assert handle.task_id is not None
        assert handle.result() == Total(total=3)


def test_failed_with_is_error_is_a_tool_error_and_cancel_cancels(url: str) -> None:
    with Client(url) as client:
        with pytest.raises(ToolError, match="exploded"):
            client._start_task("explode", {}, Args).result()
        slow = client._start_task("slow", {}, Args)
        slow.cancel()
        assert slow.status().status == "cancelled"
        with pytest.raises(TaskCancelledError):
            slow.result()
        slow.cancel()  # a finished task: nothing to do (the SDK answers -32602)
        with pytest.raises(ProtocolError, match="no tasks/update"):
            slow.respond({"x": {"action": "decline"}})


def test_async_handle_with_in_task_elicitation(url: str) -> None:
    async def main() -> str:
        async with AsyncClient(url, on_elicit=_confirm) as client:
            handle = await client._start_task("confirm", {}, Args)
            return (await handle.result()).text

    assert asyncio.run(main()) == "confirmed"


def test_before_2025_11_25_a_handle_completes_at_once(url: str) -> None:
    with Client(url, era="legacy", legacy_version="2025-06-18") as client:
        handle = client._start_task("crunch", {"n": 2}, Args, Total)
        assert handle.task_id is None
        assert handle.status().status == "completed" and handle.result() == Total(total=3)


def test_a_legacy_task_is_bound_to_its_session(url: str) -> None:
    with Client(url) as first:
        handle = first._start_task("slow", {}, Args)
        assert handle.task_id is not None
        with Client(url) as second, pytest.raises(TaskNotFoundError):
            second.tasks.get(handle.task_id)
        handle.cancel()
