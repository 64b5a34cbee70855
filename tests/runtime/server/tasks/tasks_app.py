"""A server with task-capable tools for the tasks tests, run as a real HTTP process:

    python -m tests.runtime.server.tasks.tasks_app PORT [STORE_URL] [LEASE_S]

Tools: `sleepy` (optional task support: sleeps `seconds`, reports progress, answers "slept"),
`asker` (per-call `ctx.run_as_task`, then one elicitation per round, `rounds` times, keys reused by
the handler), `inline_or_task` (unmarked; asks for a task per call), `boom` (optional; raises a
plain exception), `big` (optional; a result past the store's value bound), `stubborn` (optional;
ignores the first cancellation and returns), `cancel_probe` (optional; remembers the cancellations
its handler saw, which `cancelled_seen` lists), `chatty` (optional; a status message past the bound).
Tokens `alice-token` and `bob-token` authenticate two principals; without one a caller is anonymous.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcpgen_runtime.server import BearerAuth, ServerConfig, TaskOptions, ToolContext, ToolServer

STATE_SECRET = "tasks-tests-shared-state-secret-0123456789"
# Two principals by token; requests without a token are anonymous (a third owner).
PRINCIPALS = {"alice-token": "alice", "bob-token": "bob"}
FORM = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def _tool(name: str, properties: dict[str, Any] | None = None, support: str | None = None) -> dict[str, Any]:
    definition: dict[str, Any] = {
        "name": name,
        "inputSchema": {"type": "object", "properties": properties or {}},
    }
    if support is not None:
        definition["execution"] = {"taskSupport": support}
    return definition


async def sleepy(args: dict[str, Any], ctx: ToolContext) -> str:
    seconds = float(args.get("seconds", 0.2))
    await ctx.report_progress(0, 2)
    await asyncio.sleep(seconds / 2)
    await ctx.report_progress(1, 2, "half way")
    await asyncio.sleep(seconds / 2)
    return f"slept {seconds:g}"


async def asker(args: dict[str, Any], ctx: ToolContext) -> str:
    await ctx.run_as_task(ttl_ms=args.get("ttl_ms"))
    answers = []
    for _ in range(int(args.get("rounds", 1))):
        answer = await ctx.elicit("Say something", FORM)
        answers.append(str(answer.get("answer")))
    return "answers: " + ", ".join(answers)


async def inline_or_task(args: dict[str, Any], ctx: ToolContext) -> str:
    became = await ctx.run_as_task(status_message="started")
    await asyncio.sleep(0.05)
    return f"task={became} in_task={ctx.in_task}"


async def boom(args: dict[str, Any], ctx: ToolContext) -> str:
    await asyncio.sleep(0.01)
    raise KeyError("secret detail")


async def big(args: dict[str, Any], ctx: ToolContext) -> str:
    await asyncio.sleep(0.01)
    return "x" * (1024 * 1024 + 10)


async def stubborn(args: dict[str, Any], ctx: ToolContext) -> str:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        return "finished anyway"  # cooperative cancellation: the record still says cancelled
    return "slept"


CANCELLED: list[str] = []  # what `cancel_probe` saw, read back with `cancelled_seen`


async def cancel_probe(args: dict[str, Any], ctx: ToolContext) -> str:
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        CANCELLED.append(str(args.get("label")))
        raise
    return "not cancelled"


async def chatty(args: dict[str, Any], ctx: ToolContext) -> str:
    await ctx.set_status("x" * 10_000)
    await asyncio.sleep(30)
    return "done"


async def cancelled_seen(args: dict[str, Any], ctx: ToolContext) -> str:
    return ",".join(CANCELLED)


def make_server(
    store: str | None = None, lease_s: float = 30.0, max_in_flight: int = 100, shutdown_grace_s: float = 10.0
) -> ToolServer:
    config = ServerConfig(
        name="tasks-tests",
        shutdown_grace_s=shutdown_grace_s,
        store=store,
        state_secrets=(STATE_SECRET,),
        tasks=TaskOptions(lease_s=lease_s, max_in_flight=max_in_flight),
        auth=BearerAuth(PRINCIPALS.get, required=False),
    )
    server = ToolServer(config)
    server.add_tool(_tool("sleepy", {"seconds": {"type": "number"}}, "optional"), sleepy, notify=False)
    server.add_tool(
        _tool("asker", {"rounds": {"type": "integer"}, "ttl_ms": {"type": "integer"}}), asker, notify=False
    )
    server.add_tool(_tool("inline_or_task"), inline_or_task, notify=False)
    server.add_tool(_tool("boom", support="optional"), boom, notify=False)
    server.add_tool(_tool("big", support="optional"), big, notify=False)
    server.add_tool(_tool("stubborn", support="optional"), stubborn, notify=False)
    server.add_tool(
        _tool("required_sleepy", {"seconds": {"type": "number"}}, "required"), sleepy, notify=False
    )
    server.add_tool(
        _tool("cancel_probe", {"label": {"type": "string"}}, "optional"), cancel_probe, notify=False
    )
    server.add_tool(_tool("cancelled_seen"), cancelled_seen, notify=False)
    server.add_tool(_tool("chatty", support="optional"), chatty, notify=False)
    return server


if __name__ == "__main__":
    port = int(sys.argv[1])
    store = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
    lease = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
    in_flight = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    grace = float(sys.argv[5]) if len(sys.argv) > 5 else 10.0
    make_server(store, lease, in_flight, grace).run_http("127.0.0.1", port)
