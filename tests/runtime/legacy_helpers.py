"""A raw client of the initialize-based Streamable HTTP wire (2025-11-25 / 2025-06-18 / 2025-03-26),
written from the spec pages, for the legacy server tests: it sends exactly what a test says and
shows every event it gets back (ids, priming events, retry values), so the tests can check the
server byte by byte where the SDK peers would hide it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

LATEST = "2025-11-25"


@dataclass
class Event:
    """One SSE event: its id, retry value and data (empty for a priming event)."""

    id: str | None
    data: str
    retry: int | None = None

    @property
    def message(self) -> dict[str, Any] | None:
        return json.loads(self.data) if self.data else None


def iter_events(lines: Iterator[str]) -> Iterator[Event]:
    """SSE events as a browser's EventSource dispatches them (comments skipped)."""
    event_id: str | None = None
    data: list[str] | None = None
    retry: int | None = None
    for line in lines:
        if line == "":
            if data is not None:
                yield Event(event_id, "\n".join(data), retry)
            event_id, data, retry = None, None, None
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "id":
            event_id = value
        elif name == "data":
            data = [*(data or []), value]
        elif name == "retry":
            retry = int(value)


def request(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(id_: Any, name: str, arguments: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return request(id_, "tools/call", params)


Answer = Callable[[dict[str, Any]], dict[str, Any] | None]


@dataclass
class Exchange:
    """What came back for one POST: the status, the response, and every SSE event before it."""

    status: int
    headers: httpx.Headers
    response: dict[str, Any] | None
    events: list[Event] = field(default_factory=list)

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return [
            m for m in (e.message for e in self.events) if m is not None and "method" in m and "id" not in m
        ]

    @property
    def requests(self) -> list[dict[str, Any]]:
        return [m for m in (e.message for e in self.events) if m is not None and "method" in m and "id" in m]

    @property
    def result(self) -> dict[str, Any]:
        assert self.response is not None and "result" in self.response, self.response
        result: dict[str, Any] = self.response["result"]
        return result


class LegacySession:
    """One session as a legacy client holds it: initialize, then every request with its headers."""

    def __init__(
        self,
        http: httpx.Client,
        *,
        version: str = LATEST,
        capabilities: dict[str, Any] | None = None,
        token: str | None = None,
        send_version: bool | None = None,
    ) -> None:
        self.http = http
        self.version = version
        self.capabilities = capabilities if capabilities is not None else {}
        self.token = token
        # 2025-03-26 clients send no MCP-Protocol-Version header.
        self.send_version = send_version if send_version is not None else version >= "2025-06-18"
        self.session_id: str | None = None
        self.negotiated: str | None = None
        self.initialize_result: dict[str, Any] | None = None

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.negotiated is not None and self.send_version:
            headers["MCP-Protocol-Version"] = self.negotiated
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        headers.update(extra)
        return headers

    def initialize(self, *, initialized: bool = True) -> dict[str, Any]:
        params = {
            "protocolVersion": self.version,
            "capabilities": self.capabilities,
            "clientInfo": {"name": "legacy-raw", "version": "0"},
        }
        response = self.http.post("", json=request(0, "initialize", params), headers=self.headers())
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        body = response.json()
        self.initialize_result = body["result"]
        self.negotiated = body["result"]["protocolVersion"]
        if initialized:
            assert self.post(notification("notifications/initialized")).status_code == 202
        return dict(body["result"])

    def post(self, message: Any, **headers: str) -> httpx.Response:
        return self.http.post("", content=json.dumps(message).encode(), headers=self.headers(**headers))

    def exchange(self, message: dict[str, Any], answer: Answer | None = None, **headers: str) -> Exchange:
        """POST `message` and read the reply to its end, answering server-to-client requests with
        `answer(request) -> result` (None: leave it unanswered) through separate POSTs."""
        with self.http.stream(
            "POST", "", content=json.dumps(message).encode(), headers=self.headers(**headers)
        ) as response:
            if not response.headers.get("content-type", "").startswith("text/event-stream"):
                response.read()
                body = response.json() if response.content else None
                return Exchange(response.status_code, response.headers, body)
            events: list[Event] = []
            final: dict[str, Any] | None = None
            for event in iter_events(response.iter_lines()):
                events.append(event)
                received = event.message
                if received is None:
                    continue
                if "method" in received and "id" in received and answer is not None:
                    result = answer(received)
                    if result is not None:
                        reply = {"jsonrpc": "2.0", "id": received["id"], "result": result}
                        assert self.post(reply).status_code == 202
                elif "id" in received and "method" not in received and received["id"] == message.get("id"):
                    final = received
            return Exchange(response.status_code, response.headers, final, events)

    def get(self, **headers: str) -> httpx.Response:
        return self.http.get(
            "", headers={k: v for k, v in self.headers(**headers).items() if k != "Content-Type"}
        )

    def delete(self) -> httpx.Response:
        return self.http.delete("", headers={k: v for k, v in self.headers().items() if k != "Content-Type"})
