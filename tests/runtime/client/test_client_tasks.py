"""A plain tool call the server answers with a task (the tasks extension): it declares the extension,
polls tasks/get to the end, answers input through the callbacks, reports status messages, maps the
end to the tool's result or an error, and cancels the task when the caller gives up — against a
scripted tasks server on loopback (tests/runtime/task_peer.py) for the wire conditions, both drivers.
The independent server (FastMCP with fastmcp-tasks) is tests/interop/test_fastmcp_tasks.py.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from mcpgen_runtime.client import AsyncClient, AsyncTaskHandle, Client, TaskHandle
from mcpgen_runtime.client.task_flows import MAX_POLL_INTERVAL, MIN_POLL_INTERVAL, TTL_GRACE, _next_interval
from mcpgen_runtime.errors import (
    InputRequiredError,
    InputRequiredRoundsExceededError,
    ProtocolError,
    RequestTimeoutError,
    TaskCancelledError,
    TaskError,
    TaskFailedError,
    TaskNotFoundError,
    ToolError,
)
from mcpgen_runtime.protocol.subscriptions import SubscriptionWarning
from mcpgen_runtime.protocol.tasks import EXTENSION, TaskState, mask_task_id
from tests.runtime._client_drivers import MODES, driver
from tests.runtime.task_peer import SECRET_PREFIX, TaskPeer

pytestmark = [pytest.mark.timeout(60), pytest.mark.peer]  # servers on loopback


@pytest.fixture
def peer() -> Iterator[TaskPeer]:
    with TaskPeer() as server:
        yield server


def _answer_name(request: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def clients(peer: TaskPeer, **options: Any) -> tuple[Any, Any]:
    return lambda: Client(peer.url, **options), lambda: AsyncClient(peer.url, **options)


@pytest.mark.parametrize("mode", MODES)
def test_a_task_answer_is_polled_to_the_tools_result_with_status_messages(peer: TaskPeer, mode: str) -> None:
    progress: list[tuple[Any, ...]] = []
    with driver(mode, *clients(peer, on_progress=lambda *a: progress.append(a))) as drv:
        result = drv("call_tool", "crunch", {"n": 3})
        drv("discover", refresh=True)
    assert result.structured_content == {"total": 6}
    assert progress == [(1, None, "step 1"), (2, None, "step 2")]
    [call] = peer.bodies("tools/call")
    assert EXTENSION in call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
    gets = peer.requests("tasks/get")
    assert len(gets) == 3
    task_id = gets[0].body["params"]["taskId"]
    for get in gets:  # routing header, and the extension declared on every tasks/* request
        assert get.headers["mcp-name"] == task_id and get.headers["mcp-method"] == "tasks/get"
        assert (
            EXTENSION
            in get.body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
        )
    # never listed on a request that cannot get a task back
    assert (
        "extensions"
        not in peer.bodies("server/discover")[0]["params"]["_meta"][
            "io.modelcontextprotocol/clientCapabilities"
        ]
    )


@pytest.mark.parametrize("mode", MODES)
def test_input_required_is_answered_once_with_tasks_update(peer: TaskPeer, mode: str) -> None:
    asked: list[Any] = []

    def on_elicit(request: Any) -> dict[str, Any]:
        asked.append(request)
        return _answer_name(request)

    with driver(mode, *clients(peer, on_elicit=on_elicit)) as drv:
        result = drv("call_tool", "ask", {})
    assert result.text == "hello Ada"
    assert len(asked) == 1 and asked[0].message == "Your name?"  # the key seen again is not re-answered
    [update] = peer.requests("tasks/update")
    assert update.body["params"]["inputResponses"] == {
        "name": {"action": "accept", "content": {"name": "Ada"}}
    }
    assert update.headers["mcp-name"] == update.body["params"]["taskId"]


@pytest.mark.parametrize("mode", MODES)
def test_input_no_callback_answers_cancels_the_task_and_raises(peer: TaskPeer, mode: str) -> None:
    with (
        driver(mode, *clients(peer, capabilities={"elicitation": {}})) as drv,
        pytest.raises(InputRequiredError, match="needs input the client cannot give") as caught,
    ):
        drv("call_tool", "ask", {})
    assert SECRET_PREFIX not in str(caught.value)
    assert len(peer.requests("tasks/cancel")) == 1


@pytest.mark.parametrize("mode", MODES)
def test_failed_task_raises_task_failed_error_with_the_id_masked(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv, pytest.raises(TaskFailedError) as caught:
        drv("call_tool", "fail", {})
    exc = caught.value
    assert exc.code == -32050 and exc.data == {"why": "x"} and exc.task_id.startswith(SECRET_PREFIX)
    assert SECRET_PREFIX not in str(exc)  # the message shows the id masked


@pytest.mark.parametrize("mode", MODES)
def test_completed_with_is_error_raises_tool_error_from_typed_calls(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv:
        assert drv("call_tool", "tool_error", {}).is_error  # the raw call returns it, as inline
        with pytest.raises(ToolError, match="bad input"):
            drv("_call", "tool_error", {}, NoArgs)


@pytest.mark.parametrize("mode", MODES)
def test_unknown_task_id_is_task_not_found_with_the_id_masked(peer: TaskPeer, mode: str) -> None:
    secret = SECRET_PREFIX + "never-made-" + "y" * 20
    with driver(mode, *clients(peer)) as drv, pytest.raises(TaskNotFoundError) as caught:
        drv.run(lambda client: client._run(client._core.tasks.get_flow(secret)))
    assert caught.value.task_id == secret and caught.value.code == -32602
    assert SECRET_PREFIX not in str(caught.value)  # the server echoed it; the message masks it


@pytest.mark.parametrize("mode", MODES)
def test_a_task_answer_to_anything_but_tools_call_is_a_protocol_error(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv, pytest.raises(ProtocolError, match="only tools/call"):
        drv("read_resource", "file:///x")


@pytest.mark.parametrize("mode", MODES)
def test_max_time_bounds_the_wait_and_cancels_the_task(peer: TaskPeer, mode: str) -> None:
    started = time.monotonic()
    with (
        driver(mode, *clients(peer)) as drv,
        pytest.raises(RequestTimeoutError, match="did not finish within") as caught,
    ):
        drv("call_tool", "forever", {"interval_ms": 3_600_000}, max_time=0.5)  # an hour between polls
    assert time.monotonic() - started < 5
    assert SECRET_PREFIX not in str(caught.value)
    [cancel] = peer.requests("tasks/cancel")
    assert cancel.headers["mcp-name"] == cancel.body["params"]["taskId"]


def test_a_cancelled_async_call_sends_tasks_cancel_never_notifications_cancelled(peer: TaskPeer) -> None:
    async def main() -> None:
        async with AsyncClient(peer.url) as client:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call_tool("forever", {}), 0.3)

    asyncio.run(main())
    [cancel] = peer.requests("tasks/cancel")
    [task_id] = peer.tasks
    assert cancel.body["params"]["taskId"] == task_id and peer.tasks[task_id].cancelled
    assert not peer.requests("notifications/cancelled")


def test_a_callback_that_raises_cancels_the_task(peer: TaskPeer) -> None:
    def on_elicit(request: Any) -> Any:
        raise KeyboardInterrupt  # the user pressed Ctrl-C at the prompt

    with Client(peer.url, on_elicit=on_elicit) as client, pytest.raises(KeyboardInterrupt):
        client.call_tool("ask", {})
    assert len(peer.requests("tasks/cancel")) == 1
    assert not peer.requests("notifications/cancelled")


@pytest.mark.parametrize("mode", MODES)
def test_poll_interval_is_honoured_and_a_zero_one_is_raised_to_the_floor(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv:
        drv("call_tool", "crunch", {"interval_ms": 0})
        drv("call_tool", "crunch", {"interval_ms": 150})
    fast, slow = (peer.polled_at[task_id] for task_id in peer.tasks)
    assert min(b - a for a, b in itertools.pairwise(fast)) >= MIN_POLL_INTERVAL * 0.9
    assert min(b - a for a, b in itertools.pairwise(slow)) >= 0.15 * 0.9


def test_poll_interval_bounds() -> None:
    def state(ms: int | None) -> TaskState:
        return TaskState("t", "working", "", "", None, poll_interval_ms=ms)

    assert _next_interval(state(0), 0.05)[0] == MIN_POLL_INTERVAL
    assert _next_interval(state(3_600_000), 0.05)[0] == MAX_POLL_INTERVAL
    assert _next_interval(state(250), 0.05)[0] == 0.25
    assert _next_interval(state(None), 0.05) == (0.05, 0.1)  # none given: a short start, doubling


# -- handles: _start_task / _resume_task / client.tasks -----------------------------------------


class Crunched(BaseModel):
    total: int


class NoArgs(BaseModel):
    model_config = ConfigDict(extra="allow")


@pytest.mark.parametrize("mode", MODES)
def test_a_started_handle_waits_and_returns_the_typed_result(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv:
        handle = drv("_start_task", "crunch", {}, NoArgs, Crunched, operator.attrgetter("total"))
        assert isinstance(handle, TaskHandle | AsyncTaskHandle)
        assert (
            handle.tool == "crunch"
            and handle.task_id is not None
            and handle.task_id.startswith(SECRET_PREFIX)
        )
        assert SECRET_PREFIX not in repr(handle)
        first = drv.run(lambda _: handle.status())
        assert first.status == "working" and first.status_message == "step 1"
        final = drv.run(lambda _: handle.wait(timeout=10))
        assert final.status == "completed" and final.result is not None
        assert drv.run(lambda _: handle.result()) == 6  # the structured output, checked, then `finish`
    assert not peer.requests("tasks/cancel")


@pytest.mark.parametrize("mode", MODES)
def test_resume_by_id_rebuilds_the_same_handle(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv:
        started = drv("_start_task", "crunch", {}, NoArgs, Crunched)
    with driver(mode, *clients(peer)) as other:  # another client: nothing shared but the id
        resumed = other.client._resume_task("crunch", started.task_id, Crunched)
        assert resumed.task_id == started.task_id
        assert other.run(lambda _: resumed.result()) == Crunched(total=6)


@pytest.mark.parametrize("mode", MODES)
def test_wait_returns_at_input_no_callback_answers_and_respond_answers_it(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer, capabilities={"elicitation": {}})) as drv:
        handle = drv("_start_task", "ask", {}, NoArgs)
        state = drv.run(lambda _: handle.wait(timeout=10))
        assert state.status == "input_required" and set(state.input_requests or {}) == {"name"}
        drv.run(lambda _: handle.respond({"name": {"action": "accept", "content": {"name": "Bo"}}}))
        assert drv.run(lambda _: handle.result()).text == "hello Bo"  # the key seen again is not re-asked
    assert len(peer.requests("tasks/update")) == 1


@pytest.mark.parametrize("mode", MODES)
def test_wait_timeout_raises_timeout_error_and_leaves_the_task(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv:
        handle = drv("_start_task", "forever", {}, NoArgs)
        with pytest.raises(TimeoutError):
            drv.run(lambda _: handle.wait(timeout=0.2))
        assert not peer.requests("tasks/cancel")
        drv.run(lambda _: handle.cancel())
        assert drv.run(lambda _: handle.status()).status == "cancelled"
        with pytest.raises(TaskCancelledError):
            drv.run(lambda _: handle.result())
    [cancel] = peer.requests("tasks/cancel")
    assert cancel.headers["mcp-name"] == handle.task_id


@pytest.mark.parametrize("mode", MODES)
def test_a_call_answered_at_once_gives_a_handle_without_a_task(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv:
        handle = drv("_start_task", "inline", {}, NoArgs)
        assert handle.task_id is None
        state = drv.run(lambda _: handle.status())
        assert state.status == "completed" and state.result is not None
        assert state.result["content"] == [{"type": "text", "text": "inline"}]
        assert drv.run(lambda _: handle.wait()).status == "completed"
        assert drv.run(lambda _: handle.result()).text == "inline"
        drv.run(lambda _: handle.cancel())  # nothing to cancel
    assert not peer.requests("tasks/get") and not peer.requests("tasks/cancel")


@pytest.mark.parametrize("mode", MODES)
def test_client_tasks_get_cancel_respond_by_id(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv:
        handle = drv("_start_task", "ask", {}, NoArgs)
        task_id = handle.task_id
        assert drv.run(lambda c: c.tasks.get(task_id)).status == "input_required"
        drv.run(lambda c: c.tasks.respond(task_id, {"name": {"action": "accept", "content": {"name": "Cy"}}}))
        drv.run(lambda c: c.tasks.cancel(task_id))
        with pytest.raises(TaskNotFoundError):
            drv.run(lambda c: c.tasks.get("nope"))
    assert [r.body["method"] for r in peer.server.requests if r.body["method"].startswith("tasks/")] == [
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "tasks/get",
    ]


@pytest.mark.parametrize("mode", MODES)
def test_client_tasks_listen_yields_task_states(peer: TaskPeer, mode: str) -> None:
    with driver(mode, *clients(peer)) as drv:
        handle = drv("_start_task", "fail", {}, NoArgs)
        secret = SECRET_PREFIX + "not-mine"

        def collect(client: Any) -> Any:
            if isinstance(client, AsyncClient):

                async def run() -> Any:
                    async with client.tasks.listen([handle.task_id, secret]) as updates:
                        return [state async for state in updates], updates.subscription.unsupported

                return run()
            with client.tasks.listen([handle.task_id, secret]) as updates:
                return list(updates), updates.subscription.unsupported

        with pytest.warns(SubscriptionWarning) as warned:
            states, unsupported = drv.run(collect)
    [state] = states
    assert state.task_id == handle.task_id and state.status == "failed" and state.error is not None
    assert unsupported == [f"task {mask_task_id(secret)}"]  # named masked
    assert all(SECRET_PREFIX not in str(w.message) for w in warned)
    [listen] = peer.bodies("subscriptions/listen")
    assert listen["params"]["notifications"] == {"taskIds": [handle.task_id, secret]}
    assert EXTENSION in listen["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]


@pytest.mark.parametrize("mode", MODES)
def test_a_task_past_its_ttl_is_given_up_on(peer: TaskPeer, mode: str) -> None:
    started = time.monotonic()
    with (
        driver(mode, *clients(peer)) as drv,
        pytest.raises(TaskError, match="past its ttlMs of 200 ms") as caught,
    ):
        drv("call_tool", "forever", {"ttl_ms": 200, "interval_ms": 50})
    assert time.monotonic() - started < 200 / 1000 + TTL_GRACE + 2
    assert SECRET_PREFIX not in str(caught.value)


@pytest.mark.parametrize("mode", MODES)
def test_input_rounds_of_a_task_are_bounded(peer: TaskPeer, mode: str) -> None:
    with (
        driver(mode, *clients(peer, on_elicit=_answer_name, max_input_rounds=2)) as drv,
        pytest.raises(InputRequiredRoundsExceededError, match="after 2 rounds"),
    ):
        drv("call_tool", "nag", {})
    assert len(peer.requests("tasks/update")) == 2
    assert len(peer.requests("tasks/cancel")) == 1  # the call gave up on its task
