"""Handles on tasks (the tasks extension): `AsyncTaskHandle[T]`, a typed view of one tool call's
task, and `AsyncTasks` (`client.tasks`), the methods for any task by id. `TaskHandle` / `Tasks`
(`_sync/tasks.py`) are their blocking twins.

A handle comes from `client.start.<tool>(...)` (`_start_task`: the call is sent, and the handle
holds the task the server made of it, or the result it answered at once: `task_id` None) or from
`client.resume.<tool>(task_id)` (`_resume_task`: no I/O until used; another process rebuilds the
same handle from the id). Every request goes through the client's driver (`_run`) and the flows of
task_flows.py; unlike a plain call, a handle whose wait is interrupted leaves the task running.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar

from pydantic import BaseModel

from ...content import ToolResult
from ...errors import ToolError
from ...protocol import tasks
from ...protocol.input_messages import ProgressCallback
from ...protocol.tasks import TaskState, mask_task_id
from ..input_responses import answers_wire
from ..task_flows import TaskWait
from .listen import AsyncSubscription

if TYPE_CHECKING:
    from ..core import ClientCore
    from ..steps import Flow

__all__ = ["AsyncTaskHandle", "AsyncTaskUpdates", "AsyncTasks"]

T = TypeVar("T")
R = TypeVar("R")


class _Driver(Protocol):
    """What a handle needs of its client (`AsyncClient`): the core, the per-call options and the driver."""

    _core: ClientCore
    _call_timeout: float | None
    _call_progress: ProgressCallback | None

    async def _run(self, flow: Flow[R]) -> R: ...

    def _listen_tasks(self, task_ids: tuple[str, ...]) -> AsyncSubscription: ...


class AsyncTaskHandle(Generic[T]):
    """One tool call's task. `task_id` None: the server answered at once (or predates tasks), and
    every method works on that answer without I/O.

    `status()` is one `tasks/get`; `wait(timeout)` polls until the task is terminal, or needs input no
    callback of the client answers (`respond` then answers it), and raises `TimeoutError` past
    `timeout` seconds (the task goes on); `result()` waits to the end and returns what the plain call
    returns (the tool's typed output), raising what it raises; `cancel()` is `tasks/cancel`."""

    def __init__(
        self,
        client: _Driver,
        tool: str,
        task_id: str | None,
        *,
        state: TaskState | None = None,
        immediate: ToolResult | None = None,
        output_model: type[BaseModel] | None = None,
        finish: Callable[[Any], Any] | None = None,
    ) -> None:
        self.tool = tool
        self.task_id = task_id
        self._client = client
        self._state = state
        self._immediate = immediate
        self._output_model = output_model
        self._finish = finish
        self._waiting = TaskWait()  # input keys answered through this handle, kept across waits

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.tool!r} task {mask_task_id(self.task_id)}>"

    @property
    def _timeout(self) -> float | None:
        client = self._client
        return client._core.timeout if client._call_timeout is None else client._call_timeout

    @property
    def _progress(self) -> ProgressCallback | None:
        client = self._client
        return client._core.on_progress if client._call_progress is None else client._call_progress

    async def status(self) -> TaskState:
        """The task now (one `tasks/get`); a completed snapshot of the answer when `task_id` is None."""
        if self.task_id is None:
            return self._answered()
        self._state = await self._client._run(self._client._core.tasks.get_flow(self.task_id, self._timeout))
        return self._state

    async def wait(self, timeout: float | None = None) -> TaskState:
        """Poll until the task is terminal or waits for input no callback answers; `TimeoutError`
        after `timeout` seconds (the task is left running)."""
        return await self._wait(timeout, stop_at_unanswerable=True)

    async def result(self) -> T:
        """Wait to the end: the tool's output, as the plain call returns it (`ToolError` for an
        isError result, `TaskFailedError` / `TaskCancelledError` for a task that ended so,
        `InputRequiredError` for input no callback answers)."""
        if self.task_id is None:
            assert self._immediate is not None
            return self._value(self._immediate)
        state = await self._wait(None, stop_at_unanswerable=False)
        return self._value(
            await self._client._run(self._client._core.tasks.end_flow(self.tool, state, self._timeout))
        )

    async def cancel(self) -> None:
        """`tasks/cancel`: cooperative, the task may still end otherwise (`status()` tells)."""
        if self.task_id is not None:
            await self._client._run(self._client._core.tasks.cancel_flow(self.task_id, self._timeout))

    async def respond(self, responses: Mapping[str, Any]) -> None:
        """Answer pending input requests by key (`tasks/update`): `ElicitResult`,
        `CreateMessageResult`, `ListRootsResult` or wire mappings."""
        if self.task_id is None:
            raise ValueError(f"tool {self.tool!r} answered at once: there is no task to respond to")
        wire = answers_wire(responses)
        await self._client._run(self._client._core.tasks.update_flow(self.task_id, wire, self._timeout))
        self._waiting.answered.update(wire)

    async def _wait(self, timeout: float | None, *, stop_at_unanswerable: bool) -> TaskState:
        if self.task_id is None:
            return self._answered()
        until = None if timeout is None else time.monotonic() + timeout
        state = self._state
        if state is None or state.terminal:
            state = await self.status()
        self._state = await self._client._run(
            self._client._core.tasks.wait_flow(
                self.tool,
                state,
                self._progress,
                timeout=self._timeout,
                waiting=self._waiting,
                until=until,
                stop_at_unanswerable=stop_at_unanswerable,
            )
        )
        return self._state

    def _answered(self) -> TaskState:
        assert self._immediate is not None
        return TaskState(
            task_id="",
            status="completed",
            created_at="",
            last_updated_at="",
            ttl_ms=None,
            result=self._immediate.model_dump(mode="json", by_alias=True, exclude_none=True),
        )

    def _value(self, result: ToolResult) -> T:
        """The plain call's value: ToolError for isError, the checked structured output, `finish`."""
        if result.is_error:
            raise ToolError(self.tool, result)
        value: Any = result
        if self._output_model is not None:
            value = self._client._core.checks.structured(self.tool, result, self._output_model)
        if self._finish is not None:
            value = self._finish(value)
        return value  # type: ignore[no-any-return]


class AsyncTasks:
    """`client.tasks`: any task by id (`get`, `cancel`, `respond`) and `listen(task_ids)`, a
    `subscriptions/listen` stream of `notifications/tasks` (each item's params parse with
    `protocol.tasks.parse_task`)."""

    def __init__(self, client: _Driver) -> None:
        self._client = client

    async def get(self, task_id: str) -> TaskState:
        core = self._client._core
        return await self._client._run(core.tasks.get_flow(task_id, core.timeout))

    async def cancel(self, task_id: str) -> None:
        core = self._client._core
        await self._client._run(core.tasks.cancel_flow(task_id, core.timeout))

    async def respond(self, task_id: str, responses: Mapping[str, Any]) -> None:
        core = self._client._core
        await self._client._run(core.tasks.update_flow(task_id, answers_wire(responses), core.timeout))

    def listen(self, task_ids: Sequence[str]) -> AsyncTaskUpdates:
        """`notifications/tasks` for `task_ids` as `TaskState`s (the server acknowledges only its
        principal's own; the others are in `.subscription.unsupported`, masked)."""
        return AsyncTaskUpdates(self._client._listen_tasks(tuple(task_ids)))


class AsyncTaskUpdates:
    """`client.tasks.listen(ids)`: a `subscriptions/listen` stream whose items are the
    `notifications/tasks` it carries, each a `TaskState` (the full task, as tasks/get returns it)."""

    def __init__(self, subscription: AsyncSubscription) -> None:
        self.subscription = subscription

    async def open(self) -> Self:
        await self.subscription.open()
        return self

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> TaskState:
        while True:
            message = await anext(self.subscription)
            if message.get("method") == tasks.NOTIFICATION:
                return tasks.parse_task(message.get("params"))

    async def aclose(self) -> None:
        await self.subscription.aclose()

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
