"""Helpers for the client feature tests: scripted flows, and our servers served in-process.

`drive(flow, *replies)` runs a `ClientCore` flow without I/O: each `Outgoing` is answered by
the next scripted reply (its id filled in), each `InputNeeded` by `answer(step)`; it returns
the flow's value and what it sent. `LiveServer` serves a `ToolServer` with uvicorn on a
thread and records every request as the server received it (Mcp-Method, headers, body) and
every client disconnect — so tests count requests *at a real server*.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from mcpgen_runtime import _json
from mcpgen_runtime.client import Flow, Outgoing
from mcpgen_runtime.client.input_responses import InputNeeded
from mcpgen_runtime.errors import McpRuntimeError
from mcpgen_runtime.server import ToolServer
from tests.support import ROOT, free_port, wait_for_port

GENERATED = ROOT / "generated"
if str(GENERATED) not in sys.path:  # the checked-in bindings (weather_client, conformance_client, …)
    sys.path.insert(0, str(GENERATED))

from weather_client import AsyncClient as WeatherAsyncClient  # noqa: E402  (generated)
from weather_client import Client as WeatherClient  # noqa: E402
from weather_server.handlers import Server as WeatherServer  # noqa: E402

__all__ = [
    "DONE",
    "LiveServer",
    "Received",
    "WeatherAsyncClient",
    "WeatherClient",
    "WeatherServer",
    "drive",
    "elicit_request",
    "irr",
]


def irr(requests: dict[str, Any] | None = None, state: str | None = None) -> dict[str, Any]:
    """A scripted `input_required` result."""
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return {"result": result}


def elicit_request(message: str = "Your name?", **properties: str) -> dict[str, Any]:
    props = {name: {"type": kind} for name, kind in (properties or {"name": "string"}).items()}
    return {
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": {"type": "object", "properties": props}},
    }


DONE = {"result": {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}}


def drive(
    flow: Flow[Any],
    *replies: dict[str, Any] | McpRuntimeError,
    answer: Callable[[InputNeeded], dict[str, Any]] | None = None,
) -> tuple[Any, list[Outgoing]]:
    """Run `flow` against scripted replies (an exception is thrown into the flow, as drivers do)."""
    sent: list[Outgoing] = []
    steps: list[InputNeeded] = []
    pending = iter(replies)
    try:
        step = next(flow)
        while True:
            if isinstance(step, Outgoing):
                sent.append(step)
                reply = next(pending)
                if isinstance(reply, McpRuntimeError):
                    step = flow.throw(reply)
                else:
                    step = flow.send(({**reply, "jsonrpc": "2.0", "id": step.message["id"]}, 200))
            else:
                steps.append(step)
                assert answer is not None, f"unexpected input step {step!r}"
                step = flow.send(answer(step))
    except StopIteration as done:
        return done.value, sent


@dataclass
class Received:
    method: str | None
    headers: dict[str, str]
    body: Any


@dataclass
class LiveServer:
    """`server` (a ToolServer) on http://127.0.0.1:<port>/mcp, recording what it receives."""

    server: ToolServer
    requests: list[Received] = field(default_factory=list)
    disconnects: int = 0

    def __post_init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        inner = self.server.asgi_app()

        async def app(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await inner(scope, receive, send)
                return
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            chunks: list[bytes] = []

            async def recording_receive() -> Any:
                message = await receive()
                if message["type"] == "http.request":
                    chunks.append(message.get("body", b""))
                    if not message.get("more_body"):
                        try:
                            body = _json.loads(b"".join(chunks))
                        except ValueError:
                            body = None
                        method = body.get("method") if isinstance(body, dict) else None
                        self.requests.append(Received(method, headers, body))
                elif message["type"] == "http.disconnect":
                    self.disconnects += 1
                return message

            await inner(scope, recording_receive, send)

        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error", lifespan="off")
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._uvicorn.run, name="live-server", daemon=True)
        self.loop: asyncio.AbstractEventLoop | None = None

    def __enter__(self) -> LiveServer:
        self._thread.start()
        wait_for_port(self.port)
        return self

    def __exit__(self, *exc: object) -> None:
        self._uvicorn.should_exit = True
        self._thread.join(10)

    def count(self, method: str) -> int:
        return sum(1 for r in self.requests if r.method == method)

    @contextlib.contextmanager
    def recording(self) -> Iterator[list[Received]]:
        self.requests = []
        yield self.requests


@contextlib.contextmanager
def generated_client(folder: Path, package: str, tools: list[dict[str, Any]]) -> Iterator[Any]:
    """The client package `mcpgen client` generates from `tools` into `folder`, imported (and
    forgotten again afterwards)."""
    import importlib
    import json

    from tests.support import run_mcpgen

    source = folder / "tools.json"
    source.write_text(json.dumps({"tools": tools}), "utf-8")
    done = run_mcpgen(folder, "client", str(source), "-o", str(folder), "--package", package)
    assert done.returncode == 0, done.stderr[-3000:]
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(package)
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m.partition(".")[0] == package]:
            del sys.modules[name]
