"""Raw JSON-RPC over httpx for the tasks tests (the runtime client's task support is separate)."""

from __future__ import annotations

import itertools
import time
from typing import Any

import httpx

from mcpgen_runtime.protocol.tasks import EXTENSION

VERSION = "2026-07-28"
TASKS = {"extensions": {EXTENSION: {}}, "elicitation": {}}
PLAIN: dict[str, Any] = {"elicitation": {}}
_ids = itertools.count(1)
_NAMED = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


def send(
    client: httpx.Client,
    url: str,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    caps: dict[str, Any] = TASKS,
    name: str | None = None,
) -> httpx.Response:
    params = dict(params or {})
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
    }
    headers = {
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
        "Accept": "application/json, text/event-stream",
    }
    field = _NAMED.get(method)
    if name is not None:
        headers["Mcp-Name"] = name
    elif field is not None:
        headers["Mcp-Name"] = str(params[field])
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
    return client.post(url, json=body, headers=headers)


def result(
    client: httpx.Client, url: str, method: str, params: dict[str, Any] | None = None, **kw: Any
) -> Any:
    response = send(client, url, method, params, **kw)
    body = response.json()
    assert "result" in body, body
    return body["result"]


def error(
    client: httpx.Client, url: str, method: str, params: dict[str, Any] | None = None, **kw: Any
) -> Any:
    response = send(client, url, method, params, **kw)
    body = response.json()
    assert "error" in body, body
    return response.status_code, body["error"]


def call(
    client: httpx.Client, url: str, tool: str, arguments: dict[str, Any] | None = None, **kw: Any
) -> Any:
    return result(client, url, "tools/call", {"name": tool, "arguments": arguments or {}}, **kw)


def get(client: httpx.Client, url: str, task_id: str) -> dict[str, Any]:
    task: dict[str, Any] = result(client, url, "tasks/get", {"taskId": task_id})
    return task


def wait_for(
    client: httpx.Client, url: str, task_id: str, *statuses: str, timeout: float = 10.0
) -> dict[str, Any]:
    """Poll tasks/get until the task has one of `statuses` (a terminal one also ends the wait)."""
    deadline = time.monotonic() + timeout
    while True:
        task = get(client, url, task_id)
        if task["status"] in statuses or task["status"] in ("completed", "failed", "cancelled"):
            return task
        if time.monotonic() > deadline:
            raise AssertionError(f"task never reached {statuses}: {task}")
        time.sleep(0.02)
