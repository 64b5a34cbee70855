"""Interop peer: FastMCP 4.1.4 with fastmcp-tasks (the tasks extension, `io.modelcontextprotocol/tasks`),
run by tests/peers/.venv-fastmcp/bin/python (`make peers-deps`; never imported by mcpgen).

    python tests/peers/fastmcp_tasks_server.py --port 8765    # Streamable HTTP at /mcp
    python tests/peers/fastmcp_tasks_server.py --stdio

Its task backend is Docket's in-memory one (one process). Tools, all `task=True` unless said:
`crunch` (structured output after a few status messages), `slow` (runs until cancelled),
`explode` (raises: a tool error), `confirm` (asks the user mid-task with the guard pattern:
returns an `InputRequiredResult`, re-run with the answers), `inline_add` (never a task).
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import timedelta

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from pydantic import BaseModel

FAST = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=50))


class Crunched(BaseModel):
    total: int
    steps: int


def build() -> FastMCP:
    server = FastMCP("fastmcp-tasks-peer")
    server.add_extension(TasksExtension(url="memory://"))

    @server.tool(task=FAST, description="Sum 1..n in a few steps, reporting each")
    async def crunch(n: int, ctx: Context) -> Crunched:
        steps = 3
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
            await asyncio.sleep(0.05)
        return Crunched(total=n * (n + 1) // 2, steps=steps)

    @server.tool(task=FAST, description="Sleep for `seconds` (cancel it)")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "slept"

    @server.tool(task=FAST, description="Always fails")
    async def explode(why: str) -> str:
        raise ToolError(f"exploded: {why}")

    @server.tool(task=FAST, description="Ask the user to confirm, inside the task")
    async def confirm(action: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
        answers = ctx.input_responses
        if not answers or "confirm" not in answers:
            ask = mcp_types.ElicitRequest(
                params=mcp_types.ElicitRequestFormParams(
                    message=f"Really {action}?",
                    requested_schema={
                        "type": "object",
                        "properties": {"ok": {"type": "boolean"}},
                        "required": ["ok"],
                    },
                )
            )
            return mcp_types.InputRequiredResult(input_requests={"confirm": ask})
        answer = answers["confirm"]
        content = getattr(answer, "content", None) or {}
        return f"{action}: {'done' if content.get('ok') else 'declined'}"

    @server.tool(description="Add two numbers (never a task)")
    def inline_add(a: int, b: int) -> int:
        return a + b

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--stdio", action="store_true")
    args = parser.parse_args()
    if args.stdio:
        build().run(transport="stdio", show_banner=False)
    else:
        build().run(transport="http", host="127.0.0.1", port=args.port, path="/mcp", show_banner=False)


if __name__ == "__main__":
    main()
