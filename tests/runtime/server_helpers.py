"""Shared bits for the server tests: message builders, the standard headers, a stdio peer."""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import threading
from typing import Any

from mcpgen_runtime.protocol.headers import encode_value
from tests.support import PYTHON, ROOT, subprocess_env

VERSION = "2026-07-28"
SERVER_MODULE = "tests.runtime.weather_server_app"
SPEC_TOOL_NAMES = [
    "get_weather",
    "get_weather_data",
    "list_users",
    "execute_sql",
    "calculate_sum",
    "get_current_time",
]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def answer(server: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A modern request handled by `server`'s sans-I/O dispatcher: its response."""
    outcome = run(server.handle_message(request(1, method, params)))
    assert outcome.response is not None
    response: dict[str, Any] = outcome.response
    return response


def result(server: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    response = answer(server, method, params)
    assert "result" in response, response
    got: dict[str, Any] = response["result"]
    return got


def meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities if capabilities is not None else {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcpgen-tests", "version": "0"},
        **extra,
    }


def request(id_: Any, method: str, params: dict[str, Any] | None = None, **meta_extra: Any) -> dict[str, Any]:
    params = dict(params or {})
    params.setdefault("_meta", meta(**meta_extra))
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def call(id_: Any, name: str, arguments: dict[str, Any] | None = None, **meta_extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return request(id_, "tools/call", params, **meta_extra)


def mcp_headers(message: dict[str, Any]) -> dict[str, str]:
    """What a conforming client sends with `message` (HDR-01, HDR-07, HDR-08, XHDR-18 for Region)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": message["method"],
    }
    params = message.get("params") or {}
    if message["method"] == "tools/call":
        headers["Mcp-Name"] = encode_value(params["name"])
        region = (params.get("arguments") or {}).get("region")
        if isinstance(region, str):
            headers["Mcp-Param-Region"] = encode_value(region)
    return headers


def sse_events(text: str) -> list[dict[str, Any]]:
    """The JSON messages of an SSE body (`data:` lines)."""
    events = []
    for block in text.split("\n\n"):
        data = [line[5:].strip() for line in block.splitlines() if line.startswith("data:")]
        if data:
            events.append(json.loads("".join(data)))
    return events


class StdioPeer:
    """The server as a real subprocess, spoken to in raw JSON lines."""

    def __init__(self, *args: str, module: str = SERVER_MODULE, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [PYTHON, "-m", module, "--stdio", *args],
            cwd=ROOT,
            env={**subprocess_env(), **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = b""
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr += line

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def recv_line(self, timeout: float = 10.0) -> bytes | None:
        return self.lines.get(timeout=timeout)

    def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        line = self.recv_line(timeout)
        assert line is not None, f"server closed stdout; stderr:\n{self.stderr.decode(errors='replace')}"
        assert line.endswith(b"\n") and line.count(b"\n") == 1  # STDIO-01
        message = json.loads(line)
        assert isinstance(message, dict)
        return message

    def close(self, timeout: float = 10.0) -> int:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise
