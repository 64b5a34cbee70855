"""A scripted tasks-extension server for the client's task tests: a real HTTP server on loopback
(`ScriptedHttpServer`) whose `tools/call` answers a `CreateTaskResult` and whose `tasks/get`
walks each task through a script, for the wire conditions an independent server
(tests/peers/fastmcp_tasks_server.py) does not produce on demand: an hour-long pollIntervalMs,
input asked again after it was answered, ids echoed in errors, a task answer to resources/read.

Tools (the task's script, one entry per `tasks/get`; the last one repeats):
- `crunch`: working "step 1", working "step 2", completed `{"total": 6}` (structured).
- `ask`: input_required (key `name`) until a tasks/update answers it, then that same key once more
  (eventual consistency: a client must not answer it twice), then completed "hello <name>".
- `fail`: failed with a JSON-RPC error; `tool_error`: completed with isError.
- `nag`: input_required with a new key at every poll (for the round limit).
- `forever`: working for ever. Arguments of any task: `ttl_ms` (its ttlMs, default 60000) and
  `interval_ms` (its pollIntervalMs, default 20).
- `inline`: an ordinary result (no task).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tests.runtime._client_drivers import Recorded, Reply, ScriptedHttpServer, error, result

SECRET_PREFIX = "SeCrEtTaskId-"
NAME_REQUEST = {
    "method": "elicitation/create",
    "params": {
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


@dataclass
class Task:
    task_id: str
    tool: str
    arguments: dict[str, Any]
    polls: int = 0
    status: str = "working"
    answers: dict[str, Any] = field(default_factory=dict)
    asked_again: bool = False
    cancelled: bool = False


class TaskPeer:
    """`with TaskPeer() as peer:` serves at `peer.url`; `peer.server.requests` records every POST."""

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.polled_at: dict[str, list[float]] = {}
        self.server = ScriptedHttpServer(self.app)
        self.url = self.server.url

    def __enter__(self) -> TaskPeer:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)

    def bodies(self, method: str) -> list[dict[str, Any]]:
        return self.server.bodies(method)

    def requests(self, method: str) -> list[Recorded]:
        return [
            r for r in self.server.requests if isinstance(r.body, dict) and r.body.get("method") == method
        ]

    # -- the server ------------------------------------------------------------------

    def app(self, recorded: Recorded) -> Reply:
        body = recorded.body
        method = body.get("method")
        params = body.get("params") or {}
        if "id" not in body:
            return Reply(status=202)
        with self.lock:
            if method == "server/discover":
                return result(
                    body,
                    {
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
                        "serverInfo": {"name": "task-peer", "version": "1"},
                    },
                )
            if method == "tools/call":
                return self._call(body, params)
            if method == "subscriptions/listen":
                return self._listen(body, params)
            if method == "resources/read":
                return result(body, self._wire(self._new("crunch", {}), "task"))
            if method in ("tasks/get", "tasks/update", "tasks/cancel"):
                task = self.tasks.get(params.get("taskId", ""))
                if task is None:
                    return error(body, -32602, f"Unknown task: {params.get('taskId')}", status=200)
                if method == "tasks/get":
                    self.polled_at.setdefault(task.task_id, []).append(time.monotonic())
                    task.polls += 1
                    return result(body, self._wire(task, "complete"))
                if method == "tasks/update":
                    task.answers.update(params.get("inputResponses") or {})
                    return result(body, {"resultType": "complete"})
                task.cancelled = True
                if task.status not in ("completed", "failed"):
                    task.status = "cancelled"
                return result(body, {"resultType": "complete"})
            return error(body, -32601, f"no method {method}", status=200)

    def _listen(self, body: dict[str, Any], params: dict[str, Any]) -> Reply:
        """An SSE stream: the acknowledgment (known ids only), one notifications/tasks per known
        task (its state now), then the end of the subscription."""
        asked = (params.get("notifications") or {}).get("taskIds") or []
        known = [task_id for task_id in asked if task_id in self.tasks]
        messages: list[dict[str, Any]] = [
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {"notifications": {"taskIds": known}},
            }
        ]
        for task_id in known:
            task = self.tasks[task_id]
            state = self._wire(task, "complete")
            del state["resultType"]
            messages.append({"jsonrpc": "2.0", "method": "notifications/tasks", "params": state})
        messages.append({"jsonrpc": "2.0", "id": body["id"], "result": {}})
        events = [f"event: message\ndata: {json.dumps(message)}\n\n".encode() for message in messages]
        return Reply(content_type="text/event-stream", chunks=events)

    def _new(self, tool: str, arguments: dict[str, Any]) -> Task:
        task = Task(f"{SECRET_PREFIX}{next(self.ids)}-{'x' * 24}", tool, arguments)
        self.tasks[task.task_id] = task
        return task

    def _call(self, body: dict[str, Any], params: dict[str, Any]) -> Reply:
        tool = params.get("name", "")
        arguments = params.get("arguments") or {}
        if tool == "inline":
            return result(body, {"content": [{"type": "text", "text": "inline"}]})
        return result(body, self._wire(self._new(tool, arguments), "task"))

    def _wire(self, task: Task, result_type: str) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "resultType": result_type,
            "taskId": task.task_id,
            "createdAt": "2026-07-28T00:00:00Z",
            "lastUpdatedAt": "2026-07-28T00:00:00Z",
            "ttlMs": task.arguments.get("ttl_ms", 60000),
            "pollIntervalMs": task.arguments.get("interval_ms", 20),
        }
        if result_type == "complete" and not task.cancelled:
            self._advance(task, wire)
        wire["status"] = task.status
        return wire

    def _advance(self, task: Task, wire: dict[str, Any]) -> None:
        """The task's state at this poll (tasks/get only)."""
        if task.tool == "crunch":
            if task.polls < 3:
                wire["statusMessage"] = f"step {task.polls}"
            else:
                task.status = "completed"
                wire["result"] = {
                    "content": [{"type": "text", "text": '{"total": 6}'}],
                    "structuredContent": {"total": 6},
                }
        elif task.tool == "ask":
            if "name" not in task.answers or not task.asked_again:
                task.asked_again = "name" in task.answers  # asked once more after the answer
                task.status = "input_required"
                wire["inputRequests"] = {"name": NAME_REQUEST}
            else:
                task.status = "completed"
                name = task.answers["name"].get("content", {}).get("name")
                wire["result"] = {"content": [{"type": "text", "text": f"hello {name}"}]}
        elif task.tool == "nag":  # a new input key at every poll
            task.status = "input_required"
            wire["inputRequests"] = {f"name-{task.polls}": NAME_REQUEST}
        elif task.tool == "fail":
            task.status = "failed"
            wire["error"] = {"code": -32050, "message": f"boom in {task.task_id}", "data": {"why": "x"}}
        elif task.tool == "tool_error":
            task.status = "completed"
            wire["result"] = {"content": [{"type": "text", "text": "bad input"}], "isError": True}
