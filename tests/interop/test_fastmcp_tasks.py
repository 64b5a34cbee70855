"""Interop with an independent implementation of the tasks extension: our client against FastMCP 4.1.4
with fastmcp-tasks (tests/peers/fastmcp_tasks_server.py, run by its own venv on loopback).

What FastMCP does, seen here: a `task=True` tool answers a client that declares the extension with
a CreateTaskResult (ttlMs 900000 by default, pollIntervalMs from the tool's TaskConfig); status
messages come from `ctx.report_progress`; a tool error ends the task `completed` with isError (as
the extension says); `tasks/cancel` makes it `cancelled` at once; an unknown id is -32602 with the
id echoed in the message; in-task input is the guard pattern (the tool returns an
InputRequiredResult, the task turns `input_required`, `tasks/update` runs the next leg), while an
imperative `ctx.elicit()` inside a task is refused by FastMCP.
"""

from __future__ import annotations

import asyncio
import json
import operator
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from mcpgen_runtime.client import AsyncClient, Client
from mcpgen_runtime.errors import TaskCancelledError, TaskNotFoundError, ToolError
from mcpgen_runtime.protocol.tasks import mask_task_id
from mcpgen_runtime.transport import AsyncHttpTransport
from tests.support import PYTHON, ROOT, free_port, needs_peer, running_server, subprocess_env

pytestmark = pytest.mark.timeout(90)

FASTMCP_PYTHON = ROOT / "tests" / "peers" / ".venv-fastmcp" / "bin" / "python"
PEER = str(ROOT / "tests" / "peers" / "fastmcp_tasks_server.py")


class Args(BaseModel):
    model_config = ConfigDict(extra="allow")


class Crunched(BaseModel):
    total: int
    steps: int


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    needs_peer(FASTMCP_PYTHON, "FastMCP with fastmcp-tasks")
    port = free_port()
    with running_server([str(FASTMCP_PYTHON), PEER, "--port", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def _accept(request: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


def test_a_plain_typed_call_polls_the_task_to_its_typed_result(url: str) -> None:
    progress: list[Any] = []
    with Client(url, on_progress=lambda *a: progress.append(a)) as client:
        crunched = client._call_structured("crunch", {"n": 10}, Args, Crunched)
        assert client._call("inline_add", {"a": 1, "b": 2}, Args).structured_content == {"result": 3}
    assert crunched == Crunched(total=55, steps=3)
    # FastMCP's statusMessage (from ctx.report_progress) as progress, as far as the polls caught it
    assert all(message.startswith("step ") for _, _, message in progress)


def test_async_plain_call_and_an_in_task_elicitation(url: str) -> None:
    asked: list[Any] = []

    def on_elicit(request: Any) -> dict[str, Any]:
        asked.append(request)
        return _accept(request)

    async def main() -> Any:
        async with AsyncClient(url, on_elicit=on_elicit) as client:
            return await client.call_tool("confirm", {"action": "delete"})

    result = asyncio.run(main())
    assert result.text == "delete: done"
    assert [request.message for request in asked] == ["Really delete?"]


def test_a_tool_error_in_a_task_is_a_tool_error(url: str) -> None:
    with Client(url) as client, pytest.raises(ToolError, match="exploded: no"):
        client._call("explode", {"why": "no"}, Args)


def test_start_handle_and_resume_by_id_from_a_second_process(url: str) -> None:
    with Client(url) as client:
        handle = client._start_task("crunch", {"n": 4}, Args, Crunched, operator.attrgetter("total"))
        assert handle.task_id is not None
        task_id = handle.task_id
    script = (
        "import json, sys\n"
        "from pydantic import BaseModel\n"
        "from mcpgen_runtime.client import Client\n"
        "class Crunched(BaseModel):\n    total: int\n    steps: int\n"
        "with Client(sys.argv[1]) as client:\n"
        "    handle = client._resume_task('crunch', sys.argv[2], Crunched)\n"
        "    print(json.dumps(handle.result().model_dump()))\n"
    )
    run = subprocess.run(
        [PYTHON, "-c", script, url, task_id],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(),
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"total": 10, "steps": 3}
    with Client(url) as client:  # and the first process's handle still reads it
        assert client._resume_task("crunch", task_id, Crunched, operator.attrgetter("total")).result() == 10


def test_cancel_through_a_handle_and_by_id(url: str) -> None:
    with Client(url) as client:
        handle = client._start_task("slow", {"seconds": 30}, Args)
        handle.cancel()
        deadline = time.monotonic() + 10
        while (state := handle.status()).status != "cancelled" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state.status == "cancelled"
        with pytest.raises(TaskCancelledError):
            handle.result()
        other = client._start_task("slow", {"seconds": 30}, Args)
        assert other.task_id is not None
        client.tasks.cancel(other.task_id)
        assert client.tasks.get(other.task_id).status == "cancelled"
        with pytest.raises(TaskNotFoundError) as caught:
            client.tasks.get("x" * 43)
        assert "x" * 43 not in str(caught.value) and mask_task_id("x" * 43) in str(caught.value)


def test_a_cancelled_async_plain_call_cancels_fastmcps_task(url: str) -> None:
    sent: list[dict[str, Any]] = []

    class Recording(AsyncHttpTransport):
        async def request(self, message: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            sent.append(message)
            return await super().request(message, *args, **kwargs)

        async def notify(self, message: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            sent.append(message)
            return await super().notify(message, *args, **kwargs)

    async def main() -> None:
        async with AsyncClient(transport=Recording(url)) as client:
            call = asyncio.ensure_future(client.call_tool("slow", {"seconds": 30}))
            deadline = time.monotonic() + 10
            while not any(m.get("method") == "tasks/get" for m in sent) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)  # until the call waits on its task
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call

    asyncio.run(main())
    [cancel] = [m for m in sent if m.get("method") == "tasks/cancel"]
    assert not [m for m in sent if m.get("method") == "notifications/cancelled"]
    with Client(url) as client:
        assert client.tasks.get(cancel["params"]["taskId"]).status == "cancelled"


def test_over_stdio_too() -> None:
    needs_peer(FASTMCP_PYTHON, "FastMCP with fastmcp-tasks")
    with Client.stdio([str(FASTMCP_PYTHON), PEER, "--stdio"], on_elicit=_accept) as client:
        assert client._call_structured("crunch", {"n": 3}, Args, Crunched) == Crunched(total=6, steps=3)
        assert client.call_tool("confirm", {"action": "x"}).text == "x: done"
        handle = client._start_task("slow", {"seconds": 30}, Args)
        handle.cancel()
        assert handle.status().status == "cancelled"
