"""Interop peer: the 2025-11-25 experimental tasks through the last 1.x release of the official MCP
Python SDK (mcp==1.30.0, `session.experimental`). Run it with tests/peers/.venv-sdk1's Python:

    python tests/peers/sdk1_tasks_client.py http://host:port/mcp

Against tests/runtime/server/tasks/tasks_app.py: initializes (2025-11-25), lists the tools, runs
`sleepy` as a task (polls `tasks/get`, fetches `tasks/result`), cancels a long one (and cancels it
again), runs `boom` as a task, and calls `required_sleepy` without a task. Prints one JSON object.
Only the SDK is used here; nothing from mcpgen.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError


async def _until_done(session: ClientSession, task_id: str) -> str:
    for _ in range(200):
        status = (await session.experimental.get_task(task_id)).status
        if status in ("completed", "failed", "cancelled"):
            return status
        await asyncio.sleep(0.05)
    return "timeout"


async def _run(url: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
        init = await session.initialize()
        out["protocolVersion"] = init.protocolVersion
        out["tasksCapability"] = (
            init.capabilities.tasks.model_dump(exclude_none=True) if init.capabilities.tasks else None
        )
        tools = (await session.list_tools()).tools
        out["execution"] = {t.name: t.execution.taskSupport for t in tools if t.execution is not None}

        created = await session.experimental.call_tool_as_task("sleepy", {"seconds": 0.3}, ttl=30_000)
        task_id = created.task.taskId
        out["created"] = {"status": created.task.status, "ttl": created.task.ttl}
        out["sleepy"] = await _until_done(session, task_id)
        result = await session.experimental.get_task_result(task_id, types.CallToolResult)
        out["sleepyResult"] = [block.text for block in result.content if isinstance(block, types.TextContent)]

        long = (await session.experimental.call_tool_as_task("sleepy", {"seconds": 30})).task.taskId
        cancelled = await session.experimental.cancel_task(long)
        out["cancelled"] = cancelled.status
        try:
            await session.experimental.cancel_task(long)
            out["cancelAgain"] = "accepted"
        except McpError as exc:
            out["cancelAgain"] = exc.error.code

        boom = (await session.experimental.call_tool_as_task("boom", {})).task.taskId
        out["boom"] = await _until_done(session, boom)
        boom_result = await session.experimental.get_task_result(boom, types.CallToolResult)
        out["boomIsError"] = boom_result.isError

        try:
            await session.call_tool("required_sleepy", {"seconds": 0})
            out["requiredInline"] = "accepted"
        except McpError as exc:
            out["requiredInline"] = exc.error.code
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_run(sys.argv[1]))))
