"""The client's half of the tasks extension as flows, without I/O (`TaskFlows`, a member of `ClientCore`).

A `tools/call` answered with a `CreateTaskResult` (`resultType: "task"`) becomes a task the client
polls with `tasks/get` until it is terminal (shared/spec/extensions/tasks.mdx):

- `pollIntervalMs` is honoured within [`MIN_POLL_INTERVAL`, `MAX_POLL_INTERVAL`] seconds; a task
  without one is polled after `FIRST_POLL_DELAY`, doubling up to `DEFAULT_POLL_INTERVAL`.
- each poll is one request bounded by the call's per-request timeout; the whole wait by the
  call's `max_time` (a `Deadline`), else by the task's own `ttlMs` (counted from when this client
  first saw the task, so clock skew does not matter) plus `TTL_GRACE`.
- `input_required`: each input request not answered before (keys are unique over a task's life)
  is answered by the client's callbacks, and the answers sent with `tasks/update`; at most
  `max_input_rounds` updates per wait.
- `statusMessage` changes are reported to the progress callback (`progress` counts the changes).
- `tasks/get|update|cancel` carry `Mcp-Name: <taskId>` (the `name` of the request); a -32602 answer
  is `TaskNotFoundError`. Every message shows the id masked (`mask_task_id`).

Legacy 2025-11-25 servers (experimental tasks, when `initialize` declared
`tasks.requests.tools.call`): a call carries the `task` parameter where the tool's
`execution.taskSupport` asks for it (`required`: every call; `optional`: `_start_task`), the task
comes back nested (`{"task": {...}}`, `ttl` / `pollInterval`), `tasks/get` polls it, and
`tasks/result` fetches the end (the tool's result, or the JSON-RPC error of a failed task); input
arrives as the server's own requests while `tasks/result` is pending (legacy_peer_requests.py).
Older revisions have no tasks: a call is answered at once.

The sleeps between polls are `InputNeeded` steps without calls (the driver sleeps `delay`). Steps
yielded while a plain call waits on its task carry `abort`, the `tasks/cancel` the driver sends
when the caller interrupts the call (a cancelled asyncio task, Ctrl-C, a callback that raised).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol, TypeVar

from ..content import ToolResult
from ..errors import (
    InputRequiredError,
    McpRuntimeError,
    ProtocolError,
    RemoteError,
    RequestTimeoutError,
    TaskCancelledError,
    TaskError,
    TaskFailedError,
    TaskNotFoundError,
)
from ..protocol import jsonrpc, tasks
from ..protocol.input_messages import InputRequest, ProgressCallback
from ..protocol.tasks import TaskState, TaskStatus, mask_task_id
from ..tools import ToolSpec
from ..transport.limits import Deadline, Timeout
from .input_responses import InputNeeded, answer_wire, check_declared, check_rounds, parse_request
from .legacy_flows import LEGACY, FlowOwner, LegacyFlows
from .steps import Flow, Notify, Outgoing
from .tool_checks import tool_result

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "MAX_POLL_INTERVAL",
    "MIN_POLL_INTERVAL",
    "TaskFlows",
    "TaskWait",
]

T = TypeVar("T")

MIN_POLL_INTERVAL: Final = 0.05  # seconds: a smaller (or zero) pollIntervalMs is raised to this
MAX_POLL_INTERVAL: Final = 30.0  # seconds: a larger pollIntervalMs is cut to this
FIRST_POLL_DELAY: Final = 0.05  # no pollIntervalMs: the first poll after this, doubling ...
DEFAULT_POLL_INTERVAL: Final = 1.0  # ... up to this
TTL_GRACE: Final = 1.0  # seconds past a task's ttlMs before a waiting client gives up on it
ABORT_TIMEOUT: Final = 5.0  # seconds a best-effort tasks/cancel may take
LEGACY_TASKS_SINCE: Final = "2025-11-25"  # the first revision with (experimental) tasks


class _Owner(FlowOwner, Protocol):
    """What `TaskFlows` needs of its `ClientCore` beyond what `LegacyFlows` does: the round limit,
    the tool table (a legacy tool's `execution`), per-method `_meta` and headers, listing tools, and
    the legacy handshake (before a legacy client's first call decides on the `task` parameter)."""

    max_input_rounds: int
    legacy: LegacyFlows
    tools: Mapping[str, ToolSpec]
    default_partition: str | None

    def _headers(self, method: str, name: str | None) -> Mapping[str, str]: ...

    def meta_for(self, method: str) -> Mapping[str, Any]: ...

    def list_all_flow(
        self, max_pages: int = 1000, *, partition: str | None = None, refresh: bool = False
    ) -> Flow[list[dict[str, Any]]]: ...


class TaskWait:
    """What one wait on a task remembers between polls (a handle keeps it across waits): the input
    keys already answered, the last status reported, and when the task was first seen."""

    __slots__ = ("answered", "first_seen", "reported", "reports")

    def __init__(self) -> None:
        self.answered: set[str] = set()
        self.first_seen = time.monotonic()
        self.reported: tuple[str, str | None] | None = None
        self.reports = 0


class TaskFlows:
    """The tasks methods and the polling loop of one `ClientCore` (its member `tasks`)."""

    def __init__(self, core: _Owner) -> None:
        self.core = core

    # -- the three methods ------------------------------------------------------------

    def _task_request_flow(
        self, method: str, params: dict[str, Any], timeout: Timeout
    ) -> Flow[dict[str, Any]]:
        task_id = params["taskId"]
        try:
            return (yield from self.core.request_flow(method, params, name=task_id, timeout=timeout))
        except RemoteError as exc:
            if exc.code != -32602:
                raise
            remote = masked(exc.message, task_id)
            raise TaskNotFoundError(
                f"{method}: the server does not know task {mask_task_id(task_id)} "
                f"(never created, expired, or another principal's): {remote:.200}",
                task_id=task_id,
                code=exc.code,
                data=exc.data,
            ) from None

    def get_flow(self, task_id: str, timeout: Timeout = None) -> Flow[TaskState]:
        """One `tasks/get` (never cached)."""
        result = yield from self._task_request_flow(tasks.GET, {"taskId": task_id}, timeout)
        state = tasks.parse_task(result, legacy=self.core.era == LEGACY)
        if state.task_id != task_id:
            raise ProtocolError(f"tasks/get for task {mask_task_id(task_id)} answered another task")
        return state

    def update_flow(self, task_id: str, responses: Mapping[str, Any], timeout: Timeout = None) -> Flow[None]:
        """`tasks/update` with `inputResponses` (wire answers by input request key)."""
        if self.core.era == LEGACY:
            raise ProtocolError(
                f"task {mask_task_id(task_id)}: a 2025-11-25 server has no tasks/update; it asks for input "
                "with its own requests while tasks/result is pending, which result() answers through the "
                "client's callbacks"
            )
        yield from self._task_request_flow(
            tasks.UPDATE, {"taskId": task_id, "inputResponses": dict(responses)}, timeout
        )

    def cancel_flow(self, task_id: str, timeout: Timeout = None) -> Flow[None]:
        """`tasks/cancel` (cooperative: the task may still end otherwise). Cancelling a finished
        task does nothing, in both eras (a 2025-11-25 server answers it -32602)."""
        try:
            yield from self._task_request_flow(tasks.CANCEL, {"taskId": task_id}, timeout)
        except TaskNotFoundError:
            if self.core.era != LEGACY:
                raise
            state = yield from self.get_flow(task_id, timeout)  # still TaskNotFoundError when unknown
            if not state.terminal:
                raise

    def cancel_quietly_flow(self, task_id: str) -> Flow[None]:
        """`tasks/cancel` when a call gives up on its task: a failure to send it is not the caller's error."""
        with contextlib.suppress(McpRuntimeError):
            yield from self.cancel_flow(task_id, self._abort_timeout())

    def abort_step(self, task_id: str) -> Outgoing:
        """The `tasks/cancel` a driver sends, best effort, when the caller interrupts a wait."""
        params = {"taskId": task_id, "_meta": self.core.meta_for(tasks.CANCEL)}
        message = jsonrpc.request(next(self.core._ids), tasks.CANCEL, params)
        return Outgoing(message, self.core._headers(tasks.CANCEL, task_id), self._abort_timeout())

    def _abort_timeout(self) -> float:
        timeout = self.core.timeout
        return ABORT_TIMEOUT if timeout is None else min(timeout, ABORT_TIMEOUT)

    # -- waiting ----------------------------------------------------------------------

    def wait_flow(
        self,
        tool: str,
        state: TaskState,
        progress: ProgressCallback | None,
        *,
        timeout: Timeout,
        waiting: TaskWait,
        until: float | None = None,
        stop_at_unanswerable: bool = False,
    ) -> Flow[TaskState]:
        """Poll until the task is terminal. Input it asks for is answered by the callbacks; input
        no callback answers raises `InputRequiredError`, or (`stop_at_unanswerable`) returns the
        state. `until` (a `time.monotonic()` instant) ends the wait with `TimeoutError`; a
        `Deadline` timeout ends it with `RequestTimeoutError` (the call's `max_time`)."""
        task_id = state.task_id
        rounds = 0
        delay = FIRST_POLL_DELAY
        while True:
            self._report(state, progress, waiting)
            if state.terminal:
                return state
            if state.status == "input_required" and self.core.era == LEGACY:
                return state  # legacy input comes as the server's requests during tasks/result
            if state.status == "input_required":
                pending = {
                    key: value
                    for key, value in (state.input_requests or {}).items()
                    if key not in waiting.answered
                }
                if pending:
                    calls = self._plan_input(tool, task_id, pending, stop_at_unanswerable)
                    if calls is None:
                        return state
                    rounds += 1
                    check_rounds(
                        rounds, self.core.max_input_rounds, f"tool {tool!r}: task {mask_task_id(task_id)}"
                    )
                    answers = yield InputNeeded(calls)
                    responses = {key: answer_wire(request, answers[key]) for key, _, request in calls}
                    yield from self.update_flow(task_id, responses, timeout)
                    waiting.answered.update(responses)
            interval, delay = _next_interval(state, delay)
            interval = self._bounded(tool, state, interval, timeout, until, waiting)
            yield InputNeeded([], interval)
            self._bounded(tool, state, 0.0, timeout, until, waiting)  # the end may have come while asleep
            state = yield from self.get_flow(task_id, timeout)

    def _bounded(
        self,
        tool: str,
        state: TaskState,
        interval: float,
        timeout: Timeout,
        until: float | None,
        waiting: TaskWait,
    ) -> float:
        """The pause before the next poll, cut to what the wait has left; past its end, the error."""
        now = time.monotonic()
        what = f"tool {tool!r}: task {mask_task_id(state.task_id)}"
        if until is not None:
            if now >= until:
                raise TimeoutError(f"{what} is still {state.status}")
            interval = min(interval, until - now)
        if isinstance(timeout, Deadline):
            left = timeout.end - now
            if left <= 0:
                raise RequestTimeoutError(f"{what} did not finish within {timeout}")
            interval = min(interval, left)
        if state.ttl_ms is not None and now - waiting.first_seen > state.ttl_ms / 1000 + TTL_GRACE:
            raise TaskError(
                f"{what} is still {state.status} past its ttlMs of {state.ttl_ms} ms; "
                "the server no longer keeps it",
                task_id=state.task_id,
            )
        return interval

    def _plan_input(
        self, tool: str, task_id: str, pending: Mapping[str, Any], stop_at_unanswerable: bool
    ) -> list[tuple[str, Callable[[Any], Any], InputRequest]] | None:
        """A callback for each pending input request; None (or `InputRequiredError`) when one has none."""
        calls: list[tuple[str, Callable[[Any], Any], InputRequest]] = []
        requests: dict[str, InputRequest] = {}
        missing: list[str] = []
        for key, value in pending.items():
            request = parse_request(key, value, method="tools/call", name=tool)
            check_declared(request, self.core.capabilities)
            requests[key] = request
            callback = self.core.input_callbacks.get(request.method)
            if callback is None:
                missing.append(f"{key!r} ({request.method})")
            else:
                calls.append((key, callback, request))
        if not missing:
            return calls
        if stop_at_unanswerable:
            return None
        raise InputRequiredError(
            f"tool {tool!r}: task {mask_task_id(task_id)} needs input the client cannot give: "
            f"{', '.join(missing)}; start it with client.start.<tool>(...) and answer with "
            "handle.respond(...)",
            input_requests=dict(pending),
            request_state=None,
            requests=requests,
            tool=tool,
        )

    @staticmethod
    def _report(state: TaskState, progress: ProgressCallback | None, waiting: TaskWait) -> None:
        """A new status or statusMessage to the progress callback (progress: how many so far)."""
        seen = (state.status, state.status_message)
        if progress is None or seen == waiting.reported:
            return
        waiting.reported = seen
        if state.status_message is None:
            return
        waiting.reports += 1
        progress(waiting.reports, None, state.status_message)

    # -- the end of a task --------------------------------------------------------------

    def call_flow(
        self, tool: str, state: TaskState, progress: ProgressCallback | None, *, timeout: Timeout
    ) -> Flow[ToolResult]:
        """A plain call's wait on the task it got: the tool's result, or the task's error. A call
        that gives up (its `max_time`, a transport failure, input it cannot give) cancels the task;
        one the caller interrupts has the driver cancel it (`abort`)."""
        try:
            return (
                yield from aborting(
                    self._wait_to_end_flow(tool, state, progress, timeout), self.abort_step(state.task_id)
                )
            )
        except (TaskError, GeneratorExit):  # GeneratorExit: the driver closes it, and sends the abort
            raise
        except BaseException:
            # McpRuntimeError, or raised by the flow's own code before it yielded an abortable step:
            # a progress callback (Ctrl-C while the CreateTaskResult's status message is shown)
            yield from self.cancel_quietly_flow(state.task_id)
            raise

    def _wait_to_end_flow(
        self, tool: str, state: TaskState, progress: ProgressCallback | None, timeout: Timeout
    ) -> Flow[ToolResult]:
        final = yield from self.wait_flow(tool, state, progress, timeout=timeout, waiting=TaskWait())
        return (yield from self.end_flow(tool, final, timeout))

    def end_flow(self, tool: str, state: TaskState, timeout: Timeout) -> Flow[ToolResult]:
        """The tool's result of a task the wait left: terminal (modern), or terminal or waiting
        for input (legacy: `tasks/result` delivers both)."""
        if self.core.era != LEGACY or state.status == "cancelled":
            return outcome(tool, state)
        try:
            result = yield from self._task_request_flow(
                tasks.LEGACY_RESULT, {"taskId": state.task_id}, timeout
            )
        except TaskNotFoundError:
            raise
        except RemoteError as exc:  # a failed task's own error
            error = {"code": exc.code, "message": exc.message, "data": exc.data}
            return outcome(tool, _ended(state, "failed", error=error))
        return tool_result(tool, result)

    # -- legacy: whether a call carries the `task` parameter ------------------------------

    def legacy_task_flow(self, tool: str, *, start: bool) -> Flow[dict[str, Any] | None]:
        """The `task` parameter of a call to a 2025-11-25 server with tasks for tool calls: where the
        tool's `execution.taskSupport` is `required`, or `optional` and the caller starts a task
        (`start`). The tool's definition comes from the tool table (listed first if it is not there)."""
        core = self.core
        if core.era == LEGACY and core.handshake is None:  # the first request of a legacy client
            yield from core.legacy.era_retried_flow()
        handshake = core.handshake
        if core.era != LEGACY or handshake is None or handshake.protocol_version < LEGACY_TASKS_SINCE:
            return None
        offered = handshake.capabilities.get("tasks")
        requests = offered.get("requests") if isinstance(offered, Mapping) else None
        tools = requests.get("tools") if isinstance(requests, Mapping) else None
        if not (isinstance(tools, Mapping) and isinstance(tools.get("call"), Mapping)):
            return None
        if tool not in core.tools:
            yield from core.list_all_flow(partition=core.default_partition)
        spec = core.tools.get(tool)
        execution = spec.definition.get("execution") if spec is not None else None
        mode = execution.get("taskSupport") if isinstance(execution, Mapping) else None
        if mode == "required" or (mode == "optional" and start):
            return {}
        return None


def outcome(tool: str, state: TaskState) -> ToolResult:
    """A terminal task as the tool's result (`completed`), or its error."""
    if state.status == "completed":
        if state.result is None:
            raise ProtocolError(
                f"tool {tool!r}: task {mask_task_id(state.task_id)} completed without a result"
            )
        return tool_result(tool, state.result)
    if state.status == "failed":
        error = state.error or {"code": -32603, "message": "the task failed without an error"}
        text = masked(str(error.get("message")), state.task_id)
        raise TaskFailedError(
            f"tool {tool!r}: task {mask_task_id(state.task_id)} failed: [{error.get('code')}] {text:.300}",
            task_id=state.task_id,
            error=error,
        )
    if state.status == "cancelled":
        raise TaskCancelledError(
            f"tool {tool!r}: task {mask_task_id(state.task_id)} was cancelled"
            + (f": {masked(state.status_message, state.task_id):.300}" if state.status_message else ""),
            task_id=state.task_id,
        )
    raise ProtocolError(f"tool {tool!r}: task {mask_task_id(state.task_id)} is not finished ({state.status})")


def _ended(state: TaskState, status: TaskStatus, *, error: dict[str, Any]) -> TaskState:
    return TaskState(
        task_id=state.task_id,
        status=status,
        created_at=state.created_at,
        last_updated_at=state.last_updated_at,
        ttl_ms=state.ttl_ms,
        error=error,
    )


def masked(text: str, task_id: str) -> str:
    """A peer's text with the task id in it masked (servers echo ids in their messages)."""
    return text.replace(task_id, mask_task_id(task_id)) if task_id else text


def _next_interval(state: TaskState, delay: float) -> tuple[float, float]:
    """(the pause before the next poll, the next default pause)."""
    if state.poll_interval_ms is not None:
        return min(max(state.poll_interval_ms / 1000, MIN_POLL_INTERVAL), MAX_POLL_INTERVAL), delay
    return delay, min(delay * 2, DEFAULT_POLL_INTERVAL)


def aborting(flow: Flow[T], abort: Outgoing) -> Flow[T]:
    """`flow`, with `abort` on every step it yields (what the driver sends if the caller interrupts)."""
    try:
        step = next(flow)
        while True:
            if not isinstance(step, Notify):
                step.abort = abort
            try:
                reply = yield step
            except BaseException as exc:
                step = flow.throw(exc)
            else:
                step = flow.send(reply)
    except StopIteration as done:
        value: T = done.value
        return value
