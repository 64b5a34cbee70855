"""OpenTelemetry of tasks (the tasks extension), with the real SDK's in-memory exporter: the server's
background run of a task is a span of its own (`task {tool}`, INTERNAL, a new trace) LINKED to the
`tools/call` span that created it, with its final status and never the task id; `tasks/get` and
`tasks/cancel` are spans as other methods; a plain call's polls are children of its `tools/call`
span. Server: the mock (a real ToolServer) under uvicorn on loopback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import BaseModel

from mcpgen_runtime import telemetry
from mcpgen_runtime.client import Client
from mcpgen_runtime.errors import TaskCancelledError, TaskFailedError
from mcpgen_runtime.mock import MockServer, parse_responses
from mcpgen_runtime.server import ServerConfig, ToolContext, ToolServer
from mcpgen_runtime.tools import tool_table
from tests.runtime._client_helpers import LiveServer
from tests.runtime.telemetry.conftest import Recorded
from tests.runtime.telemetry.test_otel import child_of, one

pytestmark = [pytest.mark.timeout(60), pytest.mark.peer]  # servers on loopback

TOOLS = [{"name": "crunch", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]
FAST = {"poll_interval_ms": 20}
RULES = [
    {"match": {"n": 1}, "task": {**FAST, "after_ms": 100, "status": "Crunching"}, "text": "6"},
    {"match": {"n": 2}, "task": FAST, "rpc_error": {"code": -32603, "message": "Upstream down"}},
    {"match": {"n": 3}, "task": {**FAST, "after_ms": 60_000}, "text": "never"},
]


class Args(BaseModel):
    n: int


@pytest.fixture
def live() -> Iterator[LiveServer]:
    responses = parse_responses({"tools": {"crunch": RULES}}, tool_table(TOOLS))
    with LiveServer(MockServer(TOOLS, responses=responses)) as server:
        yield server


def task_spans(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return [s for s in spans if s.name == "task crunch"]


def ended(count: int) -> Any:
    return lambda spans: len(task_spans(spans)) >= count


def test_a_tasks_run_is_its_own_span_linked_to_the_call_and_polls_are_children(
    otel: Recorded, live: LiveServer
) -> None:
    with Client(live.url) as client:
        assert client.call_tool("crunch", {"n": 1}).text == "6"
    spans = otel.wait_for(ended(1))
    call = one(spans, "tools/call crunch", SpanKind.CLIENT)
    served = one(spans, "tools/call crunch", SpanKind.SERVER)
    assert child_of(served, call)
    polls = [s for s in spans if s.name == "tasks/get" and s.kind == SpanKind.CLIENT]
    assert polls and all(child_of(poll, call) for poll in polls)  # the wait is one operation
    served_polls = [s for s in spans if s.name == "tasks/get" and s.kind == SpanKind.SERVER]
    assert served_polls and all(any(child_of(s, p) for p in polls) for s in served_polls)
    assert call.end_time is not None and all(p.end_time <= call.end_time for p in polls)  # type: ignore[operator]

    (run,) = task_spans(spans)
    assert run.kind == SpanKind.INTERNAL and run.parent is None  # a trace of its own
    assert run.context is not None and served.context is not None
    assert run.context.trace_id != served.context.trace_id
    assert [link.context.span_id for link in run.links] == [served.context.span_id]
    attributes = dict(run.attributes or {})
    assert attributes["mcp.task.status"] == "completed" and attributes["gen_ai.tool.name"] == "crunch"
    assert run.status.status_code == StatusCode.UNSET
    assert call.status.status_code == StatusCode.UNSET


def test_a_failed_task_and_a_cancelled_one(otel: Recorded, live: LiveServer) -> None:
    with Client(live.url) as client:
        with pytest.raises(TaskFailedError):
            client.call_tool("crunch", {"n": 2})
        handle = client._start_task("crunch", {"n": 3}, Args)
        handle.cancel()
        with pytest.raises(TaskCancelledError):
            handle.result()
    spans = otel.wait_for(ended(2))
    failed, cancelled = sorted(task_spans(spans), key=lambda s: s.start_time or 0)
    assert dict(failed.attributes or {})["mcp.task.status"] == "failed"
    assert failed.status.status_code == StatusCode.ERROR
    assert dict(failed.attributes or {})["error.type"] == "-32603"
    assert dict(cancelled.attributes or {})["mcp.task.status"] == "cancelled"
    assert cancelled.status.status_code == StatusCode.UNSET
    calls = [s for s in spans if s.name == "tools/call crunch" and s.kind == SpanKind.CLIENT]
    plain = min(calls, key=lambda s: s.start_time or 0)
    assert plain.status.status_code == StatusCode.ERROR  # the plain call's error is its operation's
    one(spans, "tasks/cancel", SpanKind.SERVER)


@pytest.mark.parametrize("era", ["modern", "legacy"])  # legacy: 2025-11-25 `{"task": {...}}`
def test_no_span_holds_the_task_id_even_with_content_captured(otel: Recorded, era: str) -> None:
    marked = [{**TOOLS[0], "execution": {"taskSupport": "optional"}}]
    responses = parse_responses({"tools": {"crunch": RULES}}, tool_table(marked))
    telemetry.set_capture_content(True)
    try:
        with LiveServer(MockServer(marked, responses=responses)) as live, Client(live.url, era=era) as client:
            assert client.call_tool("crunch", {"n": 1}).text == "6"  # first: the era is known
            handle = client._start_task("crunch", {"n": 1}, Args)
            assert handle.result().text == "6"
    finally:
        telemetry.set_capture_content(False)
    task_id = handle.task_id
    assert task_id is not None
    spans = otel.wait_for(ended(2 if era == "modern" else 1))  # legacy: a plain call runs inline
    assert any("gen_ai.tool.call.arguments" in (s.attributes or {}) for s in spans)  # capture was on
    for span in spans:
        assert task_id not in span.name
        assert not any(task_id in str(value) for value in (span.attributes or {}).values()), span.name


def test_a_handler_that_asked_for_its_task_traces_inside_the_tasks_span(otel: Recorded) -> None:
    async def work(arguments: dict[str, Any], ctx: ToolContext) -> str:
        await ctx.run_as_task(poll_interval_ms=20)
        with trace.get_tracer("handler").start_as_current_span("inside"):
            await asyncio.sleep(0.05)
        return "done"

    server = ToolServer(ServerConfig(name="tasks-otel", version="1"))
    server.add_tool({"name": "work", "inputSchema": {"type": "object"}}, work, notify=False)
    with LiveServer(server) as live, Client(live.url) as client:
        assert client.call_tool("work", {}).text == "done"
    spans = otel.wait_for(lambda spans: any(s.name == "task work" for s in spans))
    run = one(spans, "task work", SpanKind.INTERNAL)
    assert child_of(one(spans, "inside", SpanKind.INTERNAL), run)
