"""Interop peer: the 2025-11-25 experimental tasks of the official SDK 1.30.0 (its low-level `Server`
with `experimental.enable_tasks()`), run by tests/support.py `SDK1_PYTHON` over Streamable HTTP.

    tests/peers/.venv-sdk1/bin/python tests/peers/sdk1_tasks_server.py --port 8765   # /mcp

Tools (`execution.taskSupport` in tools/list): `crunch` (optional: a task when the client asks,
status messages, then structured output), `must_task` (required: -32601 without the `task` param),
`confirm` (optional: asks the user with `elicitation/create` from inside the task), `explode`
(optional: an isError result, which makes a legacy task `failed`), `slow` (optional: sleeps),
`plain` (no execution: never a task).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import uvicorn
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import CallToolResult, TextContent, Tool, ToolExecution
from starlette.applications import Starlette
from starlette.routing import Mount

OBJECT = {"type": "object", "properties": {"n": {"type": "integer"}}}
MODES = {
    "crunch": "optional",
    "must_task": "required",
    "confirm": "optional",
    "explode": "optional",
    "slow": "optional",
}


def build() -> Server:
    server: Server = Server("sdk1-tasks")
    server.experimental.enable_tasks()

    @server.list_tools()
    async def list_tools() -> list[Tool]:
        tools = [
            Tool(name=name, inputSchema=OBJECT, execution=ToolExecution(taskSupport=mode))
            for name, mode in MODES.items()
        ]
        return [*tools, Tool(name="plain", inputSchema=OBJECT)]

    def text(value: str, *, error: bool = False, structured: dict[str, Any] | None = None) -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text=value)], isError=error, structuredContent=structured
        )

    async def run(name: str, arguments: dict[str, Any], task: ServerTaskContext | None) -> CallToolResult:
        n = int(arguments.get("n", 3))
        if name in ("crunch", "must_task"):
            for step in range(1, 3):
                if task is not None:
                    await task.update_status(f"step {step}")
                await anyio.sleep(0.05)
            return text(str(n * (n + 1) // 2), structured={"total": n * (n + 1) // 2})
        if name == "confirm" and task is None:
            return text("not confirmed: ask for a task")
        if name == "confirm":
            answer = await task.elicit(
                message="Really?",
                requestedSchema={
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                },
            )
            ok = answer.action == "accept" and bool((answer.content or {}).get("ok"))
            return text("confirmed" if ok else "declined")
        if name == "explode":
            return text("exploded", error=True)
        if name == "slow":
            await anyio.sleep(30)
            return text("slept")
        return text(f"plain {n}")

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        ctx = server.request_context
        ctx.experimental.validate_task_mode(MODES.get(name))  # -32601 for required without a task
        if not ctx.experimental.is_task:
            return await run(name, arguments, None)

        async def work(task: ServerTaskContext) -> CallToolResult:
            return await run(name, arguments, task)

        return await ctx.experimental.run_task(work)

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    manager = StreamableHTTPSessionManager(app=build())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    app = Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
