"""Raw JSON-RPC over httpx for the tasks tests (the runtime client's task support is separate)."""

from __future__ import annotations

import itertools
import json
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
    token: str | None = None,
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
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    field = _NAMED.get(method)
    if name is not None:
        headers["Mcp-Name"] = name
    elif field is not None:
        headers["Mcp-Name"] = str(params[field])
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
    return client.post(url, json=body, headers=headers)


def _answer(client: httpx.Client, url: str, method: str, params: dict[str, Any] | None, kw: Any) -> Any:
    response = send(client, url, method, params, **kw)
    return response, response.json()


def result(
    client: httpx.Client, url: str, method: str, params: dict[str, Any] | None = None, **kw: Any
) -> Any:
    _, body = _answer(client, url, method, params, kw)
    assert "result" in body, body
    return body["result"]


def error(
    client: httpx.Client, url: str, method: str, params: dict[str, Any] | None = None, **kw: Any
) -> Any:
    """(HTTP status, the JSON-RPC error)."""
    response, body = _answer(client, url, method, params, kw)
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


def listen_messages(
    client: httpx.Client,
    url: str,
    task_ids: list[str],
    *,
    until: str | None,
    timeout: float = 10.0,
    token: str | None = None,
) -> list[dict[str, Any]]:
    """Open a subscriptions/listen stream for `task_ids` and collect its messages until a
    notifications/tasks with status `until` arrives (None: the first message, its acknowledgment)."""
    params = {
        "notifications": {"taskIds": task_ids},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": TASKS,
        },
    }
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": "subscriptions/listen", "params": params}
    headers = {
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": "subscriptions/listen",
        "Accept": "application/json, text/event-stream",
    }
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    with client.stream("POST", url, json=body, headers=headers) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            assert time.monotonic() < deadline, messages
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            messages.append(message)
            if until is None:  # the acknowledgment is enough
                break
            if message.get("method") == "notifications/tasks" and message["params"]["status"] == until:
                break
    return messages
