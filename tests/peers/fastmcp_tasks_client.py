"""Interop peer: a FastMCP 4.1.4 client with fastmcp-tasks (the tasks extension's client half) against
a server given by URL, run by tests/peers/.venv-fastmcp/bin/python (`make peers-deps`; never
imported by mcpgen).

    python tests/peers/fastmcp_tasks_client.py http://127.0.0.1:8000/mcp [--send-mcp-name]

FastMCP 4.1.4 sends `tasks/get`, `tasks/update` and `tasks/cancel` without the `Mcp-Name: <taskId>`
header the extension says a client MUST send over Streamable HTTP (its request models declare no
`name_param`), so a server that checks it refuses the first poll. `--send-mcp-name` declares it on
those three models (what a fixed FastMCP would send) so the rest of the exchange can be seen.

Drives the generated conformance server's task fixtures and prints one JSON object per step on
stdout (what the client saw; tests/interop/test_fastmcp_tasks_client.py checks them):

- `plain`: `client.call_tool("slow_compute", ...)`: FastMCP polls the task to its result itself.
- `handle`: `call_tool_task(...)` (the explicit handle): id, `status()`, `result()`.
- `cancel`: a long `slow_compute` as a handle, `cancel()`, then `status()` and `result()`.
- `elicit`: `confirm_delete` asks mid-task; FastMCP answers the `input_required` task through its
  `elicitation_handler` with `tasks/update`.
- `tool_error` / `protocol_error`: `failing_job` (completed with isError) and `protocol_error_job`
  (failed with a JSON-RPC error), through `call_tool`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from fastmcp import Client
from fastmcp.exceptions import ToolError
from fastmcp_tasks import client_models
from fastmcp_tasks.client import call_tool_task


def _text(result: Any) -> str | None:
    content = getattr(result, "content", None) or []
    return getattr(content[0], "text", None) if content else None


def emit(step: str, **seen: Any) -> None:
    print(json.dumps({"step": step, **seen}), flush=True)


async def main(url: str) -> None:
    asked: list[str] = []

    async def on_elicit(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
        asked.append(message)
        return {"confirm": True}

    async with Client(url, elicitation_handler=on_elicit, timeout=30) as client:
        plain = await client.call_tool("slow_compute", {"seconds": 0.3, "label": "plain"})
        emit("plain", text=_text(plain), is_error=plain.is_error)

        task = await call_tool_task(client, "slow_compute", {"seconds": 0.5, "label": "handle"})
        first = await task.status()
        done = await task.result()
        final = await task.status()
        emit(
            "handle",
            task_id=task.task_id,
            ttl_ms=task.create_result.ttl_ms,
            first=first.status,
            status_message=first.status_message,
            text=_text(done),
            final=final.status,
        )

        long = await call_tool_task(client, "slow_compute", {"seconds": 30, "label": "cancelled"})
        await long.cancel()
        after = await long.status()
        try:
            await long.result()
            raised = None
        except ToolError as exc:
            raised = str(exc)
        emit("cancel", status=after.status, raised=raised)

        confirmed = await client.call_tool("confirm_delete", {"filename": "notes.txt"})
        emit("elicit", text=_text(confirmed), asked=asked)

        for step, tool in (("tool_error", "failing_job"), ("protocol_error", "protocol_error_job")):
            try:
                result = await client.call_tool(tool, {})
                emit(step, raised=None, text=_text(result))
            except ToolError as exc:
                emit(step, raised=str(exc))


def send_mcp_name() -> None:
    """Make FastMCP's task requests carry `Mcp-Name: <taskId>` (mcp's ClientSession reads `name_param`)."""
    for model in (
        client_models.GetTaskRequest,
        client_models.UpdateTaskRequest,
        client_models.CancelTaskRequest,
    ):
        model.name_param = "taskId"


if __name__ == "__main__":
    if "--send-mcp-name" in sys.argv[2:]:
        send_mcp_name()
    asyncio.run(main(sys.argv[1]))
